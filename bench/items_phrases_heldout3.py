"""THIRD HELD-OUT phrase bank for bench/items_corpus.py (``--split heldout3``).

Do NOT tune the item extractor on this file or on corpora generated with ``--split heldout3``:
the extractor may be tuned on bench/items_phrases_train.py only. Both earlier held-out banks
had been seen by the people tuning the extractor when this one was written, so this bank was
written without reading the extractor's code and kept off the branches until its first
measurement (recorded in docs/benchmarks.md with the extractor commit it was taken at). Its
verbs, sentence shapes, due wordings and date formats are in none of the other three banks.

The slots are the train bank's (see its docstring); the date formats also use ``{mon}`` (the
month abbreviated, "Apr") and ``{dow}`` (the date's own weekday, "Monday").
"""

from __future__ import annotations

# Singular artifacts, so "{obj_cap} is coming your way" and "You should have {obj} now" read.
TASKS = [
    ("proofread {obj}", "the brochure copy"), ("knock together {obj}", "the seating plan"),
    ("flesh out {obj}", "the partner proposal"), ("translate {obj}", "the user guide"),
    ("export {obj}", "the retention report"), ("polish {obj}", "the keynote script"),
    ("fill in {obj}", "the supplier form"), ("hammer out {obj}", "the SLA wording"),
    ("map out {obj}", "the rollout schedule"), ("shoot over {obj}", "the wireframe deck"),
    ("price up {obj}", "the hardware order"), ("crunch {obj}", "the renewal model"),
    ("outline {obj}", "the training plan"), ("tidy up {obj}", "the release notes doc"),
    ("sign and return {obj}", "the data processing agreement"), ("redo {obj}", "the cost model"),
]

DUE = {
    "weekday": ["by {wd} lunchtime", "by COB {wd}", "sometime on {wd}", "{wd} morning",
                "for {wd}"],
    "tomorrow": ["by noon tomorrow", "tomorrow before lunch", "by tomorrow afternoon"],
    "today": ["by EOD", "this afternoon", "within the next few hours"],
    "this_week": ["by week's end", "by the end of the working week", "before Friday's out"],
    "next_week": ["by the end of next week", "next week sometime"],
    "end_month": ["by EOM", "by the close of the month", "before we close out the month"],
    "date": ["in time for {date}", "by midday on {date}", "by close on {date}"],
}
DATE_FORMATS = ["{mon} {d}", "{d} {mon}", "{dow}, {month} {d}", "{month} the {d_th}"]
# Apr 14 · 14 Apr · Monday, April 14 · April the 14th

COMMIT_DUE = [
    "I'll aim to {task} {due}.",
    "I should have {obj} ready for you {due}.",
    "I've got it on my list to {task} {due}.",
    "{obj_cap} is coming your way {due}.",
    "We're going to {task} {due}.",
    "We can have {obj} to you {due}.",
    "I'll look to {task} {due}.",
    "I'll ping you with {obj} {due}.",
    "On my side, I'll {task} {due}.",
    "Let me take a pass at {obj} and get it back to you {due}.",
    "No problem, I'll {task} {due} and let you know when it's done.",
    "I'll do my best to {task} {due}.",
]
COMMIT_NODUE = [
    "I'll take {obj} off your plate.",
    "Noted, I'll {task} as soon as I can.",
    "I'll make a start on {obj} and send it over when it's ready.",
    "I'll look after {obj}.",
    "I'm on {obj} now and will get it to you once it's finished.",
]

SPOKEN_COMMIT = [
    "Yep, I'll go ahead and {task} {due}.",
    "I'll take the action to {task} {due}.",
    "Mm, okay, I'll {task} {due} then.",
    "Fair enough, I'll {task} {due} and we can look at it next time.",
    "Sure thing, I'll {task} as soon as we hang up.",
    "Noted, I'll {task} {due}.",
]

ACTION_LINES = [
    "- {who} to {task} {due}",
    "- {task} — owner: {who}",
    "Follow-up: {who} to {task} {due}",
    "* [ ] {who} agreed to {task} {due}",
    "- {who} volunteered to {task}",
]

ASK = [
    "Do you have the bandwidth to {task} {due}?",
    "I was wondering if you could {task} {due}.",
    "Could I get you to {task} {due}?",
    "{name}, can I trouble you to {task}?",
    "If you could {task} {due}, that would be great.",
    "I'll need {obj} from you {due}.",
    "Can we get {obj} from you {due}?",
    "Could you possibly {task}?",
    "Do me a favour and {task}, would you?",
    "Would you be so kind as to {task}?",
]

DECISION = [
    "We're locking in {choice} for {topic}.",
    "We've landed on {choice} for {topic}, as {reason}.",
    "We've ditched {alt} in favour of {choice}.",
    "Consensus was {choice}, not {alt}.",
    "Signed off: {choice} for {topic}.",
    "On {topic}, we ruled out {alt} and went for {choice}.",
    "We're switching {topic} to {choice}, seeing as {reason}.",
    "The verdict on {topic}: {choice}.",
    "Having compared the two, it's {choice} rather than {alt}.",
    "Let's go with {choice} over {alt}, on the grounds that {reason}.",
]

DELIVERY_SAME = [
    "You should have {obj} now.",
    "That's gone out to you just now.",
    "I've dropped {obj} into the team folder.",
    "{obj_cap} has gone out to you.",
    "Done and dusted, the file is in the folder.",
]
DELIVERY_LATER = [
    "Closing the loop on {obj}: it's attached.",
    "Finally got {obj} finished, it's attached (sorry for the wait).",
    "Making good on my earlier note: {obj} is attached.",
]

REPEAT = [
    "To reiterate, {commit_lower}",
    "Still the plan: {commit_lower}",
    "Nothing has changed on my end: {commit_lower}",
]

ANSWER = [
    "We're all good on that front.",
    "Understood, thanks for flagging.",
    "Fair question, it's covered in the contract.",
    "I checked, and it's not an issue.",
    "Right, that's clear now.",
]

HYPOTHETICAL = [
    "If it comes to that, I suppose I could {task}.",
    "Worst case, I could always {task}.",
    "In theory we could {task}, but it's not a priority.",
    "I'd {task} if anyone asked, but nobody has.",
    "If {org} comes back to us, we could think about whether to {task}.",
]
OPEN_QUESTION = [
    "Could {alt} be the better fit for {topic}?",
    "How would {alt} stack up for {topic}?",
    "Is there a case for {alt} on {topic}?",
    "Why not {alt} for {topic}?",
    "Might {alt} work out cheaper for {topic} in the long run?",
]
NEGATION = [
    "{topic} is still up in the air.",
    "We're nowhere near a decision on {topic}.",
    "I'm unable to {task} until the audit is over.",
    "To be clear, I never said I'd {task}.",
]
THIRD_PARTY = [
    "Rumour has it {org} wants to change course on {topic} down the line.",
    "{org}'s procurement folks are supposedly reviewing things, no timeline given.",
    "The auditors mentioned they might take a look at {topic} in due course.",
    "According to the landlord, the lift will be fixed soon-ish.",
]

FILLER = [
    "Sorry for the slow reply, it's been hectic.",
    "Enjoyed catching up at the conference.",
    "Flights were delayed again, as usual.",
    "Looks like the rain has finally stopped.",
    "Your summary was spot on.",
    "The board meeting ran long.",
    "Glad the migration went quietly.",
    "Still recovering from the trade show.",
    "Loved the photos from the team dinner.",
    "Your write-up was really helpful.",
]
SPOKEN_FILLER = [
    "Okay, that's helpful context.",
    "Support tickets are down a bit.",
    "Honestly, the rollout was smoother than expected.",
    "Cool, cool.",
    "Sorry, go ahead.",
    "Churn is roughly where we expected.",
    "Good, next item on the agenda.",
    "Marketing is happy with the numbers.",
    "Uh-huh.",
]
GREETING = ["Hello again {name},", "Afternoon {name},", "Hi {name}, hope you're well.",
            "Dear {name} and team,"]
SIGNOFF = ["Best regards,", "Thanks so much,", "Take care,", "With thanks,"]

NEWSLETTER = [
    "We'll be rolling out dark mode to every account next Tuesday!",
    "Help us improve: would you answer three quick questions?",
    "Our founders have chosen to open a new office in Lisbon.",
    "I promise you'll love what we're launching this spring.",
]
