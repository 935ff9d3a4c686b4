"""SECOND HELD-OUT phrase bank for bench/items_corpus.py (``--split heldout2``).

Do NOT tune the item extractor on this file or on corpora generated with ``--split heldout2``:
the extractor may be tuned on bench/items_phrases_train.py only. This bank was written late,
after the first held-out bank's scores had been seen by people working on the extractor, so
that one split stays unseen: its first measurement is recorded in docs/benchmarks.md with the
extractor commit it was taken at. Other verbs and constructions than both other banks.

The slots are the train bank's (see its docstring).
"""

from __future__ import annotations

TASKS = [
    ("write {obj}", "the renewal memo"), ("rework {obj}", "the org chart"),
    ("scan in {obj}", "the signed waiver"), ("drop off {obj}", "the hardware samples"),
    ("line up {obj}", "the customer references"), ("run {obj}", "the load test"),
    ("refresh {obj}", "the sales dashboard"), ("get together {obj}", "the expense report"),
    ("upload {obj}", "the final artwork"), ("collect {obj}", "the survey answers"),
    ("produce {obj}", "the capacity forecast"), ("record {obj}", "the product walkthrough"),
]

DUE = {
    "weekday": ["before {wd} is over", "on or before {wd}", "by {wd} evening"],
    "tomorrow": ["by this time tomorrow", "tomorrow at the latest"],
    "today": ["later today", "before close of business today"],
    "this_week": ["by Friday this week", "before the weekend"],
    "next_week": ["at some point next week", "next week at the latest"],
    "end_month": ["by the last day of the month", "before this month ends"],
    "date": ["by the {date}", "on the {date}"],
}
DATE_FORMATS = ["{d_th} of {month}"]   # the 14th of April

COMMIT_DUE = [
    "I'll have {obj} done {due}.",
    "Let me get {obj} to you {due}.",
    "I'm planning to {task} {due}.",
    "I will personally {task} {due}.",
    "{obj_cap} is on me, you'll get it {due}.",
    "Our commitment is to {task} {due}.",
    "I'll be sure to {task} {due}.",
    "Our team is going to {task} {due}.",
    "I'll get {obj} wrapped up {due}.",
]
COMMIT_NODUE = [
    "Let me handle {obj}.",
    "I'll deal with {obj} myself.",
    "I'll sort out {obj}.",
    "You can leave {obj} to me.",
]
SPOKEN_COMMIT = [
    "Okay, so I'm going to {task} {due}.",
    "I'll jump on that and {task} {due}.",
    "Leave that with me, I'll {task} {due}.",
    "So, action on me: {task} {due}.",
]
ACTION_LINES = [
    "- [ ] @{who} {task}",
    "- [ ] {who} will {task} {due}",
    "Owner {who}: {task} {due}",
    "Next step ({who}): {task}",
]
ASK = [
    "Could you please {task} {due}?",
    "{name}, would you {task}?",
    "Is there any chance you can {task}?",
    "Can you make sure to {task} {due}?",
    "Please could you {task}?",
    "It would help if you could {task} {due}.",
    "Would you {task} {due}, please?",
]
DECISION = [
    "We went with {choice}, not {alt}.",
    "It's decided: {choice} for {topic}.",
    "Our choice for {topic} is {choice}, since {reason}.",
    "We chose {choice} over {alt} because {reason}.",
    "We're sticking with {choice} rather than moving to {alt}.",
    "Conclusion: {choice}, and {alt} is rejected.",
    "{choice} has been approved for {topic}.",
]
DELIVERY_SAME = [
    "I've attached {obj} as I said.",
    "{obj_cap} is done and attached.",
    "Uploaded, it's all there now.",
]
DELIVERY_LATER = [
    "Sharing {obj} that I said I'd send.",
    "Here is {obj}, as I mentioned I would.",
]
REPEAT = [
    "Repeating myself, but {commit_lower}",
    "As mentioned earlier, {commit_lower}",
]
ANSWER = [
    "Thanks, that answers it.",
    "Good to know.",
    "Makes sense, thank you.",
]
HYPOTHETICAL = [
    "If they sign, I'd {task} straight away.",
    "Provided the numbers hold, we may {task}.",
    "Only if the board agrees would we {task}.",
]
OPEN_QUESTION = [
    "Would switching {topic} to {alt} be worth it?",
    "Any thoughts on {alt} for {topic}, or is that a bad idea?",
    "What do we lose by keeping {topic} as it is?",
]
NEGATION = [
    "We've not agreed anything on {topic}.",
    "No one has signed up to {task} yet.",
    "I haven't promised {obj} to anyone.",
]
THIRD_PARTY = [
    "{org} says they'll look into {topic} at some point.",
    "Their IT people may upgrade things eventually.",
    "The agency thinks it could maybe deliver in the autumn.",
]
FILLER = [
    "Long day of calls here.",
    "The office move went smoothly.",
    "Thanks again for lunch.",
    "That was a productive workshop.",
    "The new hires are settling in well.",
    "Congrats on the award.",
    "Nice to hear from you.",
    "I read the article you shared.",
]
SPOKEN_FILLER = [
    "Hi all, thanks for joining.",
    "Yep.",
    "The trial numbers look decent.",
    "Let's keep moving.",
    "Okay, that's clear.",
    "Revenue is tracking to plan.",
    "Right, got it.",
]
GREETING = ["Good morning {name},", "Hiya {name}!", "{name}, hello,"]
SIGNOFF = ["Kind regards,", "Talk soon,", "Thanks a lot,"]
NEWSLETTER = [
    "We will be in touch with exclusive offers next month.",
    "Can you spare a minute to rate us?",
    "Our board has decided to expand to three new cities.",
]
