"""HELD-OUT phrase bank for bench/items_corpus.py (``--split heldout``).

Do NOT tune the item extractor on this file or on corpora generated with ``--split heldout``:
the extractor may be tuned on bench/items_phrases_train.py only. This bank was written apart
from the train bank — other verbs, other sentence shapes, other due-date wordings — so that its
scores say how well the extractor generalises to phrasings nobody tuned it on.

The slots are the train bank's (see its docstring).
"""

from __future__ import annotations

TASKS = [
    ("circulate {obj}", "the vendor shortlist"), ("pull together {obj}", "the churn analysis"),
    ("finalise {obj}", "the renewal quote"), ("send across {obj}", "the security questionnaire"),
    ("dig out {obj}", "the 2023 invoices"), ("mock up {obj}", "the landing page"),
    ("compile {obj}", "the reference list"), ("email {obj}", "the travel itinerary"),
    ("turn around {obj}", "the redlined MSA"), ("sketch out {obj}", "the migration plan"),
    ("pass along {obj}", "the recording"), ("package up {obj}", "the demo build"),
    ("assemble {obj}", "the due diligence pack"), ("type up {obj}", "the workshop minutes"),
]

DUE = {
    "weekday": ["no later than {wd}", "{wd} at the latest", "come {wd}", "by close of play {wd}"],
    "tomorrow": ["first thing tomorrow", "by tomorrow morning"],
    "today": ["before I log off today", "by tonight"],
    "this_week": ["before the week is out", "within the week"],
    "next_week": ["during next week", "in the course of next week"],
    "end_month": ["before the month is out", "by month-end"],
    "date": ["no later than {date}", "ahead of our {date} deadline"],
}
DATE_FORMATS = ["{month} {d_th}", "{d_th} {month}", "{iso}"]  # April 14th · 14th April · ISO

COMMIT_DUE = [
    "You'll have {obj} from me {due}.",
    "Expect {obj} in your inbox {due}.",
    "I'm on the hook to {task} {due}.",
    "Count on me to {task} {due}.",
    "I've blocked time to {task} {due}.",
    "I intend to {task} {due}.",
    "Our side will {task} {due}.",
    "I promise to {task} {due}.",
    "{obj_cap} will be with you {due}, from my end.",
    "I'll see to it that you get {obj} {due}.",
    "I shall {task} {due}.",
]
COMMIT_NODUE = [
    "I've got {obj}, consider it mine.",
    "I'll own {obj} from here.",
    "Consider it done: I'll {task}.",
    "Mine to do: {task}.",
    "I'm happy to be the one who will {task}.",
]

SPOKEN_COMMIT = [
    "Yeah, put me down for that, I'll {task} {due}.",
    "That one's mine, I'll {task} {due}.",
    "Sure, I should be able to {task} {due}.",
    "I can take it: I'll {task} {due}.",
    "Um, I'm going to {task} right after this.",
]

ACTION_LINES = [
    "- [ ] {task} ({who})",
    "- [ ] {who} — {task} {due}",
    "* Action item: {who} to {task}",
    "TODO {who}: {task} {due}",
    "- {who} owns: {task}",
]

ASK = [
    "Would it be possible for you to {task}?",
    "Any way you could {task} {due}?",
    "I'd be grateful if you could {task}.",
    "{name}, might you {task} {due}?",
    "Do you think you can {task} {due}?",
    "Can I ask you to {task}?",
    "Kindly {task} {due}.",
    "When you have a moment, could you {task}?",
]

DECISION = [
    "We're going ahead with {choice}; {alt} is off the table.",
    "After weighing it, {choice} won out over {alt} given that {reason}.",
    "Agreed: {choice} it is for {topic}.",
    "The decision on {topic} is {choice}.",
    "We picked {choice} and dropped {alt}, mainly because {reason}.",
    "Going forward we use {choice} for {topic}.",
    "{choice} is the winner, since {reason}.",
    "We opted for {choice} in place of {alt}.",
]

DELIVERY_SAME = [
    "Please find {obj} attached, like I said I would.",
    "{obj_cap} is now in the shared drive.",
    "All done, it's in your inbox.",
    "Just sent it over.",
    "There you go, {obj} as discussed.",
]
DELIVERY_LATER = [
    "Enclosed is {obj} I owed you.",
    "Circling back with {obj}, as I said I would.",
    "{obj_cap}, as discussed, is attached.",
]

REPEAT = [
    "Again, {commit_lower}",
    "To repeat what I wrote: {commit_lower}",
]

ANSWER = [
    "Happy to clarify: it runs through finance.",
    "Short version: we're fine either way.",
    "No objection from my side.",
    "That one is already covered in the plan.",
    "Noted, and yes, that works.",
]

HYPOTHETICAL = [
    "Were the deal to close, I'd {task}.",
    "Should procurement approve it, we might {task}.",
    "Suppose the timeline slips, then I could {task}.",
    "Had we known earlier, we would {task}.",
]
OPEN_QUESTION = [
    "Is it time to replace {topic} with {alt}?",
    "Would {alt} make more sense for {topic}?",
    "Are we sure about {topic}, or is {alt} better?",
    "I wonder whether {alt} would suit {topic} better?",
]
NEGATION = [
    "There's no decision yet on {topic}.",
    "I can't promise {obj} any time soon.",
    "Nothing is settled regarding {topic}.",
    "I'm not going to {task} before the review, I'm afraid.",
]
THIRD_PARTY = [
    "{org} will probably get to it one of these days.",
    "Word is their finance team might look at {topic} someday.",
    "The contractor hopes to finish at some stage.",
    "{org} is said to be rethinking {topic}, though nobody knows when.",
]

FILLER = [
    "Quick note from the road.",
    "The weather here has been great.",
    "Good chatting yesterday.",
    "Our Q2 numbers came in above plan.",
    "Thanks for your patience on this.",
    "The offsite was a success.",
    "Really useful conversation.",
    "The client seemed happy with the direction.",
    "Just landed back home.",
    "Interesting read, thanks.",
]
SPOKEN_FILLER = [
    "Can everyone hear me okay? Great.",
    "So, the churn numbers were flat.",
    "Mm-hm, agreed.",
    "The pilot users liked the new flow.",
    "Sorry, I was on mute.",
    "Traffic was up about ten percent.",
    "Okay, next topic.",
    "Interesting, I hadn't thought of that.",
    "We closed two deals last week.",
]
GREETING = ["Hey {name},", "Morning {name},", "{name},", "Hi there {name},"]
SIGNOFF = ["Warmly,", "Speak soon,", "All the best,", "Many thanks,"]

NEWSLETTER = [
    "Our team will email you the full report next Friday!",
    "Would you recommend us to a friend? Tell us here.",
    "We're moving all customers to the new dashboard in May.",
    "Expect our holiday catalogue in your inbox soon.",
]
