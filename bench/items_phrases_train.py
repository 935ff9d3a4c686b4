"""TRAIN phrase bank for bench/items_corpus.py (``--split train``).

The item extractor MAY be tuned on this bank and on corpora generated with ``--split train``.
Its held-out twin, bench/items_phrases_heldout.py, was written independently (other verbs,
other constructions, other due-date wordings) and must NOT be read or used for tuning: it is
what the reported held-out numbers measure.

Slots: ``{task}`` a verb phrase ("send the pricing sheet"), ``{obj}`` its object ("the pricing
sheet"), ``{due}`` a due phrase from :data:`DUE`, ``{name}`` the addressee's first name,
``{choice}`` / ``{alt}`` / ``{reason}`` / ``{topic}`` a decision's parts, ``{org}`` an
organization, ``{wd}`` a weekday, ``{date}`` a date written as :data:`DATE_FORMATS` says.
"""

from __future__ import annotations

# Things to deliver: (verb phrase with {obj}, object). Artifacts only, so "Here's {obj}" reads.
TASKS = [
    ("send {obj}", "the pricing sheet"), ("send over {obj}", "the pilot report"),
    ("share {obj}", "the Q3 forecast"), ("draft {obj}", "the statement of work"),
    ("put together {obj}", "the onboarding checklist"), ("write up {obj}", "the meeting notes"),
    ("get {obj} over", "the deck"), ("forward {obj}", "the signed NDA"),
    ("prepare {obj}", "the budget breakdown"), ("update {obj}", "the project timeline"),
    ("mail out {obj}", "the revised contract"), ("share {obj}", "the test results"),
    ("draft {obj}", "the press release"), ("put together {obj}", "the hiring plan"),
    ("write up {obj}", "the incident summary"), ("prepare {obj}", "the board slides"),
]

# Due phrases by what they mean (the generator computes the date; see its docstring).
DUE = {
    "weekday": ["by {wd}", "on {wd}", "before end of day {wd}"],
    "tomorrow": ["by tomorrow", "tomorrow"],
    "today": ["today", "by end of day today"],
    "this_week": ["this week", "by the end of this week"],
    "next_week": ["next week", "sometime next week"],
    "end_month": ["by end of month", "by the end of the month"],
    "date": ["by {date}", "on {date}"],
}
DATE_FORMATS = ["{d} {month}", "{month} {d}"]   # 14 April · April 14

# First-person commitments; {due} templates and undated ones.
COMMIT_DUE = [
    "I'll {task} {due}.",
    "I will {task} {due}.",
    "I can {task} {due}.",
    "Let me {task} {due}.",
    "I'm going to {task} {due}.",
    "I'll make sure to {task} {due}.",
    "I'll try to {task} {due} if that works for you.",
    "Happy to {task} {due}.",
    "I'll get back to you with {obj} {due}.",
    "We will {task} {due}.",
    "We'll {task} {due}.",
    "My team will {task} {due}.",
]
COMMIT_NODUE = [
    "I'll {task}.",
    "I will {task} once I'm back at my desk.",
    "Let me {task} and get back to you.",
    "I'll take care of {obj}.",
    "Leave it with me, I'll {task}.",
    "I'll circle back with {obj}.",
]

# Spoken commitments in a meeting turn.
SPOKEN_COMMIT = [
    "Okay, I can {task} {due}.",
    "I'll {task} {due}, no problem.",
    "Fine, I'll take that one and {task} {due}.",
    "Right, so I will {task} {due}.",
    "I'll {task} after this call.",
    "Let me {task} {due}.",
]

# Action-item lines in meeting notes; {who} is a name as the notes write it.
ACTION_LINES = [
    "- [ ] {who}: {task}",
    "- [ ] {who}: {task} {due}",
    "AI: {who} to {task}",
    "AI: {who} to {task} {due}",
    "- Action: {who} will {task}",
]

# Requests addressed to someone.
ASK = [
    "Could you {task}?",
    "Can you {task} {due}?",
    "Would you be able to {task}?",
    "{name}, could you {task} when you get a chance?",
    "Please {task}.",
    "Please {task} {due}.",
    "Can you {task} for me?",
    "Any chance you could {task} {due}?",
    "I need you to {task} {due}.",
]

# Decisions: with and without the rejected alternative and the reason.
DECISION = [
    "We've settled on {choice} rather than {alt}.",
    "We've decided to go with {choice} for {topic}.",
    "The call is to use {choice} instead of {alt}, because {reason}.",
    "Final answer: {choice}.",
    "Decision: {choice} for {topic}, not {alt}.",
    "We agreed to go with {choice} over {alt} since {reason}.",
    "So we're going with {choice} for {topic}.",
    "We decided on {choice} because {reason}.",
]

# Lines that deliver on a commitment: same thread (no object needed) or a later one.
DELIVERY_SAME = [
    "Here's {obj}, as promised.",
    "As promised, {obj} is attached.",
    "Sent.",
    "Done — see the doc.",
    "Attached is {obj}.",
]
DELIVERY_LATER = [
    "Here's {obj} I promised last week.",
    "As promised, attached is {obj}.",
    "Following up with {obj} as promised.",
]

# A later message restating the writer's own promise (gold: still one item).
REPEAT = [
    "As I said, {commit_lower}",
    "Just to confirm: {commit_lower}",
]

# Replies that answer an ask without promising or delivering anything.
ANSWER = [
    "Yes, that's fine by me.",
    "Good question, the answer is yes.",
    "Sure thing, it's in the shared folder already.",
    "The short answer is no, but I understand why you ask.",
    "Already handled on our side.",
]

# Never an item.
HYPOTHETICAL = [
    "If the budget gets approved, I would {task}.",
    "In case legal signs off, we could {task}.",
    "Assuming the pilot goes well, I might {task} later.",
    "If we had more time, we'd {task}.",
]
OPEN_QUESTION = [
    "Should we move {topic} to {alt}?",
    "Do we want to switch {topic} to {alt}?",
    "What if we went with {alt} for {topic}?",
    "Is {alt} worth a look for {topic}?",
]
NEGATION = [
    "We haven't decided on {topic} yet.",
    "I won't be able to {task} this week, sorry.",
    "Nobody has committed to {obj} so far.",
    "We still don't have a decision on {topic}.",
]
THIRD_PARTY = [
    "The vendor expects to ship a fix at some point.",
    "{org} plans to revisit {topic} eventually.",
    "Apparently their legal team wants to look at it sometime.",
    "I heard {org} might publish something about {topic} later this year.",
]

# Neutral lines around the planted ones.
FILLER = [
    "Thanks for the quick turnaround.",
    "Hope your week is going well.",
    "Good to see you at the workshop.",
    "The numbers look reasonable to me.",
    "Thanks for looping me in.",
    "That matches what we saw last quarter.",
    "The team enjoyed the session.",
    "Nice work on the launch.",
    "It was a long week here.",
    "Appreciate the context.",
]
SPOKEN_FILLER = [
    "Okay, let's get started.",
    "The customer feedback was mostly positive.",
    "Last sprint went fine overall.",
    "Yeah, that makes sense to me.",
    "We saw a dip in signups in March.",
    "I think the numbers are solid.",
    "Right, moving on.",
    "That's a good point.",
    "The demo went well on Tuesday.",
]
GREETING = ["Hi {name},", "Hello {name},", "{name} —", "Dear {name},"]
SIGNOFF = ["Best,", "Thanks,", "Cheers,", "Regards,"]

# Bulk mail: item-like lines that must not become items.
NEWSLETTER = [
    "We'll send you our product roadmap next week!",
    "Could you take two minutes to fill in our survey?",
    "We've decided to retire the classic plan on 30 June.",
    "I'll personally answer every reply to this email.",
]
