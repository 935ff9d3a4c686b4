"""Reading one sentence: is it a commitment, an ask, a decision or a delivery — by its
structure, not by a list of verbs.

- **commitment**: a first-person subject (I, we, let me) + a future or willing modal (will,
  'll, shall, going to, can/happy to with a deadline or an addressee) + an action: the word
  after the modal is a verb (it always is, after a modal) that is not a state (be, have, know,
  think, see, hope …); or a named participant + will / present tense + action + a time in a
  summary or an action-item line.
- **ask**: a second-person request (could/can/would/will you + verb; would you mind + -ing;
  I need you to …) or an imperative led by "please" / a vocative ("Peter, please write it up"),
  or a question to "you" that asks for something.
- **decision**: a decision marker (Decision:, Decided:, Final answer:, the call is to, we've
  settled on / decided / agreed / are going with), never when negated, asked or conditional.
- **delivery**: first person + perfect/past of an action ("I've sent", "we just pushed"),
  "here's / attached / as promised", a one-word report ("Sent.", "Done —"), a passive result
  ("keys are merged", "the report is attached").

Never: questions that ask whether (should we …?), conditionals (if …, would, might), negations
(not, never, haven't, won't), vague third-party plans (expects to … at some point).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# States and attitudes: after a modal they promise nothing ("I'll be there", "we will see").
_STATES = frozenset("""be have know think see hope wish want need like love hate miss feel guess
assume suppose believe expect wait remember forget mind seem appear look sound understand mean
care bet doubt imagine recall agree disagree hear notice prefer enjoy appreciate regret keep stay
remain live die sleep survive rest pass talk speak chat meet discuss get go come leave
return say tell ask wonder consider cover happen work do""".split())
# ... but some of these become actions with what follows them.
_STATE_ACTIONS = re.compile(
    r"^(?:have (?:it|them|this|that|the|a|an|my|our|something|everything)\b.{0,80}?"
    r"\b(?:to you|over|ready|done|back|finished|out|up|for you|in your|by)\b|"
    r"be (?:sending|sharing|sending over|delivering|circulating|posting|uploading|drafting|"
    r"writing|preparing|putting|reaching out|following up|back (?:to you|with))|"
    r"take care of|get (?:it|this|that|them|the|a|an|you|back|my|our|something|everything|"
    r"started|going|on it)\b|go (?:ahead|through|over)\b|"
    r"do (?:it|that|this|the|a|my|our|some|an)\b|keep you (?:posted|updated|informed)|"
    r"come back to you|talk to (?!you soon)\w+ (?:about|re|regarding)\b|"
    r"tell (?:you|him|her|them)\b|ask (?:him|her|them|\w+ to)\b|"
    r"speak (?:to|with) \w+ (?:about|re)\b|work (?:on|through|out) (?:it|this|that|the|a)\b|"
    r"cover (?:it|this|that|the|for)\b|return (?:it|the|your|this|that)\b|"
    r"say (?:a few words|something)\b|look (?:into|at|over|through)\b|see (?:to it|that)\b)",
    re.IGNORECASE)
# Follow-ups that promise only with a date ("I'll circle back next week").
_FOLLOW_UP = re.compile(r"^(?:circle back|get back|follow up|follow-up|let (?:you|\w+) know|"
                        r"touch base|revert|keep you (?:posted|updated|informed)|be in touch|"
                        r"reach out|check (?:in|back)|ping)\b", re.IGNORECASE)
_HEDGE = frozenset("""probably maybe perhaps possibly likely""".split())
_ADVERBS = frozenset("""also then just definitely certainly still now quickly personally first
happily gladly gonna surely absolutely again soon immediately promptly shortly later today
tomorrow right actually really then once finally ever even""".split())
_NEG = re.compile(r"\b(?:not|never|no longer|n't|nobody|nothing|neither|nor|cannot|without)\b",
                  re.IGNORECASE)
_COND = re.compile(r"\b(?:if|unless|whether|in case|suppose|supposing|assuming|imagine|"
                   r"hypothetically|what if|otherwise|would|could have|might|should we|"
                   r"shall we|in theory|ideally|someday|some day|at some point|eventually|"
                   r"one day|some time)\b", re.IGNORECASE)
_I = r"(?:I|we|We)"
_MODAL = (r"(?:['’]ll|\s+will|\s+shall|['’]m\s+going\s+to|\s+am\s+going\s+to|"
          r"['’]re\s+going\s+to|\s+are\s+going\s+to|['’]m\s+gonna|\s+am\s+gonna|"
          r"\s+promise\s+to|\s+commit\s+to|['’]ll\s+make\s+sure\s+to|\s+will\s+make\s+sure\s+to|"
          r"\s+can|['’]m\s+happy\s+to|\s+am\s+happy\s+to|['’]re\s+happy\s+to|"
          r"['’]d\s+be\s+happy\s+to|\s+plan\s+to|\s+intend\s+to|['’]m\s+planning\s+to|"
          r"\s+am\s+planning\s+to|['’]re\s+planning\s+to|\s+offer\s+to|"
          r"['’]m\s+on\s+(?:it|the)\b[^.]{0,40}?\band\s+will|\s+volunteer\s+to)")
_COMMIT = re.compile(rf"(?<![\w'’])(?P<subj>{_I}|Let me|let me|Lemme|I['’]ll have|We['’]ll have|"
                     r"(?:My|my|Our|our) (?:team|people|group|office|side)|"
                     r"(?:^|(?<=, )|(?<=\. ))(?:Happy|happy|Glad|glad|Pleased|pleased) to)"
                     rf"(?P<modal>{_MODAL})?\s+(?P<rest>.+)$")
_ASK = re.compile(
    r"(?<![\w'’])(?:(?P<mind>would|do)\s+you\s+mind\s+(?P<ing>[a-z]+ing)|"
    r"(?P<modal>could|can|would|will|won['’]t)\s+you\s+(?:please\s+|kindly\s+|"
    r"possibly\s+|also\s+|quickly\s+|maybe\s+|perhaps\s+|still\s+)*(?:(?:be\s+able|have\s+time"
    r"|find\s+time|manage)\s+to\s+)?(?P<verb>[a-z]+)|"
    r"(?:I|we)\s+(?:need|want|['’]d\s+like|would\s+like|['’]d\s+love|would\s+appreciate\s+it\s+if)"
    r"\s+(?:you|[A-Z][a-z]+)\s+(?:to|could)\s+(?P<verb2>[a-z]+)|"
    r"(?:can|could|may)\s+I\s+(?:ask|get)\s+you\s+to\s+(?P<verb3>[a-z]+)|"
    r"(?:it\s+would\s+be\s+(?:great|helpful|good)|(?:I|we)\s+would\s+appreciate\s+it)\s+if\s+"
    r"you\s+could\s+(?P<verb4>[a-z]+)|"
    r"(?<![\w'’])(?:please|pls|kindly)\s+(?:do\s+)?(?P<verb5>[a-z]+)|"
    r"(?:any\s+chance\s+you\s+(?:could|can))\s+(?P<verb6>[a-z]+))",
    re.IGNORECASE)
# Imperatives after "please" that ask nothing of the reader.
_POLITE = frozenset("""find see note feel accept forgive excuse enjoy disregard ignore be
don't do let remember keep join visit click reply respond advise""".split())
_ASK_STATES = frozenset("""be believe imagine think tell know guess see hear like want need
say mind""".split())
_LET_KNOW = re.compile(r"\blet (?:me|us) know\b(?P<rest>.*)", re.IGNORECASE)
_BOILER = re.compile(r"\b(?:if you have any (?:questions|concerns|comments|problems)|"
                     r"if (?:you )?need anything|if there(?:'s| is) anything|any questions|"
                     r"if i can (?:be of|help)|any (?:other )?thoughts|"
                     r"do not hesitate|don't hesitate|feel free|how are you|how's it going|"
                     r"how was your|hope (?:you|all|this)|thanks? (?:you )?(?:for|again)|"
                     r"how (?:i|we) can help|if you need (?:more|any|further|additional|help)|"
                     r"if you(?:'d| would) like|read and follow|for (?:more )?information|"
                     r"https?://|www\.|unsubscribe|to be removed|mailing list|"
                     r"if you (?:wish|want) to|if you are interested|what you think|"
                     r"your thoughts|what do you think|notify the sender|intended recipient|"
                     r"delete (?:it|this|the (?:message|e-?mail))|how do you do|"
                     r"what do you say)\b|\?\?|!\?",
                     re.IGNORECASE)
# Questions to "you" that ask for something: a thing ("do you have …"), a status ("did you get
# a chance to …"), information ("when can you …", "how do you …") — not "did you see …?".
_YOU_QUESTION = re.compile(
    r"^(?:[A-Z][\w'-]*,\s*)?(?:(?:do|does)\s+you\s+(?:still\s+)?have\b|"
    r"(?:did|have)\s+you\s+(?:get|had|have|manage|been able|got|find|found)\s+(?:a\s+chance|"
    r"time|to|the|a|an)\b|(?:are|were)\s+you\s+able\b|"
    r"(?:can|could|would|will)\s+you\b|"
    r"(?:when|where|what|which|who|how|why)\b.{0,80}\b(?:you|your)\b)",
    re.IGNORECASE)
_DECISION_HEAD = re.compile(
    r"^(?:\*\*)?(?:key\s+)?(?:decision|decided|decisions|resolution|resolved|outcome|conclusion|"
    r"agreed|agreement|final\s+(?:answer|decision|call|word)|verdict|the\s+call|ruling)"
    r"(?:\*\*)?\s*(?:\*\*)?[:—–-](?:\*\*)?\s*(?P<what>\S.*)$", re.IGNORECASE)
_DECISION = re.compile(
    r"(?<![\w'’])(?:(?:we|We|I|the team|The team|everyone|Everyone|all|All)(?:['’]ve|\s+have|"
    r"\s+had|\s+all|\s+finally|\s+now)*\s+(?P<v>decided|agreed|settled|chosen|chose|opted|"
    r"landed|concluded|resolved|picked|selected|committed|aligned)\b(?P<what>.*)|"
    r"(?:we|We)(?:['’]re|\s+are|['’]ll|\s+will)\s+(?:going|go|sticking|staying)\s+with\s+"
    r"(?P<what2>.+)|"
    r"(?:^|(?<=: ))(?:the|The|our|Our|my|My)\s+(?:final\s+)?"
    r"(?:decision|call|conclusion|verdict|choice)"
    r"\s+(?:is|was)\s+(?:to\s+|that\s+)?(?P<what3>.+)|"
    r"(?:it['’]s|it\s+is|it\s+was|it['’]s\s+been|that['’]s)\s+(?:been\s+)?"
    r"(?:decided|agreed|settled|final)\b[:,]?\s*(?P<what4>.*)|"
    r"(?:Let['’]s|let['’]s)\s+go\s+with\s+(?P<what5>.+)|"
    r"(?:final\s+answer|Final\s+answer)\s*[:—–-]\s*(?P<what6>.+))")
_DECISION_NEG = re.compile(
    r"\b(?:not|n't|never|no|yet|still|undecided|tbd|to be decided|pending|need to|needs to|have to|"
    r"has to|must|should|will|would|could|might|may|can|whether|if|until|before|once|when|"
    r"unless)\s+(?:\w+\s+){0,2}?(?:decid|agree|settl|chos|choos|opt|land|conclu|resolv|go with)",
    re.IGNORECASE)
_REJECTED = re.compile(r"\b(?:rather than|instead of|as opposed to|in favou?r of|over)\s+"
                       r"(?P<alt>[^.;,()]+)", re.IGNORECASE)
_REJECT_HEAD = re.compile(r"^(?:\*\*)?(?:rejected|ruled out|not doing|discarded|dropped|"
                          r"considered and rejected|alternatives? (?:rejected|considered)|"
                          r"we rejected|we ruled out|we dropped|we decided against)"
                          r"(?:\*\*)?\s*[:—–-]?(?:\*\*)?\s*(?P<alts>\S.*)$", re.IGNORECASE)
_BECAUSE = re.compile(r"\b(?:because|since|given that|due to|as it|so that|the reason is)\s+"
                      r"(?P<why>[^.;]+)", re.IGNORECASE)
_SHORT_DONE = re.compile(
    r"^(?:all\s+)?(?:done|sent|merged|shipped|finished|completed|uploaded|submitted|posted|"
    r"fixed|delivered|pushed|published|deployed|booked|filed|signed|handled|forwarded)\b"
    r"\s*(?:[.!—–:-]|$|and\b|,)", re.IGNORECASE)
_DELIVER_CUE = re.compile(
    r"\b(?:as promised|as discussed,? (?:here|attached)|here(?:['’]s| is| are)\s+(?:the|my|our|"
    r"your|a|an|that|those|these|it)\b|attached (?:is|are|please find|you(?:['’]ll| will) find)|"
    r"please find attached|find attached|i(?:['’]ve| have) attached|attaching|enclosed (?:is|are)"
    r"|(?:is|are) attached)\b", re.IGNORECASE)
_DELIVER_PERFECT = re.compile(
    r"(?<![\w'’])(?:I|we|We)(?:['’]ve|\s+have|\s+just|\s+already|\s+now|\s+finally)+\s+"
    r"(?:(?:just|already|now|finally|also)\s+)*(?P<verb>[a-z]+)\b", re.IGNORECASE)
_PASSIVE = re.compile(r"\b(?:is|are|has been|have been|was|were|got)\s+"
                      r"(?:now\s+|all\s+|already\s+)?"
                      r"(?P<verb>[a-z]+(?:ed|en)|sent|done|live|out|ready|up|built|shipped|"
                      r"written|set up|sorted|in place)\b", re.IGNORECASE)
_PARTICIPLE_IRREGULAR = frozenset("""sent done made put set built written shared cut spent
sold paid won read run begun brought bought caught taught thought found given taken shown
drawn told held kept left lent lost meant met sped split spread struck swept understood
undertaken withdrawn wound got gotten""".split())
_NOT_DELIVERY_VERBS = frozenset("""been heard seen thought felt got gotten had meant told
understood noticed wondered wanted needed liked loved hoped tried decided agreed talked
spoken asked received learned learnt forgotten lost missed""".split())
_SOCIAL = re.compile(r"^(?:thanks|thank you|cheers|hi|hello|dear|best|regards|ok|okay|sure|"
                     r"great|perfect|good|yes|no)\b[,.!]?\s*$", re.IGNORECASE)

STOP = frozenset("""a an the and or but if of to in on at by for with from as is are was were be
been being it its this that these those i we you he she they me us him her them my our your
his their will would shall should can could may might must do does did have has had not no so
then than there here what which who whom when where why how all any each some just also about
into over up out off again more most very too please thanks thank get got make sure ll ve re
let know send sent done one two new by week today tomorrow monday tuesday wednesday thursday
friday next end month day""".split())


@dataclass(frozen=True)
class Cue:
    kind: str              # commitment | ask | decision | delivery
    text: str              # what was promised / asked / decided / delivered
    subject: str | None = None   # third-party name the sentence puts first ("Priya ships …")
    vocative: str | None = None  # the name the sentence addresses ("Peter, please …")
    rejected: tuple[str, ...] = ()
    because: str | None = None
    needs_due: bool = False  # a commitment that holds only with a due date
    note: str | None = None


def words(text: str) -> set[str]:
    """Content words, crudely stemmed (plural, -ed, -ing), for overlap tests."""
    out = set()
    for w in re.findall(r"[a-z0-9][a-z0-9-]*", text.casefold().replace("’", "'")):
        if w in STOP or (len(w) < 3 and not w.isdigit()):
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[: -len(suffix)]
                break
        out.add(w)
    return out


def clean(text: str) -> str:
    """A sentence without list markers, checkboxes and emphasis marks."""
    text = re.sub(r"^\s*(?:[-*+•]\s+|\d{1,2}[.)]\s+)?(?:\[[ xX]\]\s*)?", "", text)
    text = text.replace("**", "").replace("__", "")
    return " ".join(text.split()).strip()


def _first_word(rest: str) -> tuple[str, str]:
    """The first word after the modal, skipping adverbs, and what follows it."""
    tokens = rest.split()
    i = 0
    while i < len(tokens) and tokens[i].casefold().strip(",") in _ADVERBS:
        i += 1
    if i + 2 < len(tokens) and tokens[i].casefold() in ("try", "attempt", "aim") \
            and tokens[i + 1].casefold() == "to":
        i += 2  # "I'll try to send …": the promise is the sending
    if i >= len(tokens):
        return "", ""
    word = re.sub(r"[^a-z'-]", "", tokens[i].casefold())
    return word, " ".join(tokens[i:])


def _verbish(word: str) -> bool:
    """A word that can be a base-form verb after a modal: lowercase letters, no determiner,
    pronoun, preposition or number (structure already says it stands where a verb stands)."""
    return bool(re.fullmatch(r"[a-z][a-z-]{1,20}", word)) and word not in STOP_NOT_VERBS


STOP_NOT_VERBS = frozenset("""a an the this that these those it its my our your their his her
i we you he she they me us him them of to in on at by for with from as not no never also
probably maybe perhaps all both each some any very too so and or but than then there here
definitely""".split())


_REPORTED = re.compile(r"[\"“”]\s*,?\s*(?:he|she|they|[A-Z][a-z]+)\s+(?:said|says|added|told)\b|"
                       r"\b(?:said|says|told reporters|according to)\b.{0,40}[\"“]|^[\"“]")


def read(sentence: str, *, in_actions: bool = False, names: frozenset[str] = frozenset()
         ) -> list[Cue]:
    """The cues one sentence carries (usually none, at most one of each kind). ``names``:
    the first names and full names of the source's people (folded), for third-party
    commitments and vocatives; ``in_actions``: the sentence is a line of an action-item
    section or an action-item line ("- [ ] …", "AI: …")."""
    text = clean(sentence)
    if len(text) < 3 or len(text) > 600 or _REPORTED.search(text):
        return []
    out: list[Cue] = []
    decision = _decision(text)
    if decision is not None:
        out.append(decision)
        return out
    delivery = _delivery(text)
    if delivery is not None:
        out.append(delivery)
    if in_actions:
        if len(text.split()) >= 3 and not text.endswith("?"):
            out.append(Cue("commitment", text, subject=_action_owner(text, names)))
        return out
    commitment = _commitment(text, names)
    if commitment is not None and delivery is None:
        out.append(commitment)
    ask = _ask(text, names)
    if ask is not None and commitment is None:
        out.append(ask)
    return out


def _vocative(text: str, names: frozenset[str]) -> str | None:
    m = re.match(r"^(?:(?:hi|hey|ok|and|so|also|oh),?\s+)?(?P<n>[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?)"
                 r"\s*(?:--|[,:—–-])\s+", text)
    if m and (m.group("n").casefold() in names or (" " not in m.group("n")
              and _given_name(m.group("n")))):
        return m.group("n")
    m = re.search(r",\s*(?P<n>[A-Z][\w'’-]+)\s*[?.!]?$", text)
    if m and m.group("n").casefold() in names:
        return m.group("n")
    return None


def _given_name(word: str) -> bool:
    from kenning.builder import names as nm

    return nm.fold(word) in nm.given_names()


def _commitment(text: str, names: frozenset[str]) -> Cue | None:
    if text.endswith("?") or _NEG.search(text):
        return None
    m = _COMMIT.search(text)
    subject = None
    if m is not None and (m.group("modal") or m.group("subj").lower().startswith(
            ("let", "lem", "happy", "glad", "pleased")) or "have" in m.group("subj").lower()):
        before = text[: m.start()]
        if _COND.search(before) or re.search(r"\b(?:said|told|thought|hoped|wished|promised|"
                                             r"asked|wondered|mentioned|so that|in order|"
                                             r"until|before|after|unless|where|which|that|"
                                             r"than)\b\W*$", before, re.IGNORECASE):
            return None  # reported, or a clause of purpose / time ("so that I can …")
        if re.search(r"[a-z0-9]\s+so\s*$", before):
            return None  # "… by Tuesday so I can extend the offer" (not "Right, so I will …")
        modal = (m.group("modal") or "").strip().casefold().replace("’", "'")
        rest = m.group("rest")
        if _COND.search(rest.split(",")[0]) and not re.search(
                r"\bif (?:needed|necessary|possible|you (?:want|like)|that (?:works|suits|is ok)"
                r"|it helps)", rest):
            return None
        subj = m.group("subj").lower()
        if subj.endswith(" to"):
            modal = "'m happy to"
        if "have" in subj:
            word, tail = "have", "have " + rest
        else:
            word, tail = _first_word(rest)
        if subj.startswith(("let", "lem")) and word in ("me", "us", "you"):
            return None  # "let me know" is an ask, not a promise
        if not _verbish(word) or word in _HEDGE or (word in ("be", "have") and \
                not _STATE_ACTIONS.match(tail)):
            if word not in ("be", "have"):
                return None
            return None
        if word in _STATES and not _STATE_ACTIONS.match(tail):
            return None
        follow_up = bool(_FOLLOW_UP.match(tail)) and not re.search(
            r"^\S+(?: \S+)?\s+(?:back\s+)?(?:with|on|about|regarding|re)\s+(?:the|your|our|my|a|an|"
            r"this|that|those|these|some|more|details|numbers|figures|results|answers)\b", tail)
        needs_due = follow_up or modal in ("can", "'m happy to",
                                                               "am happy to", "'re happy to",
                                                               "'d be happy to", "plan to",
                                                               "'m planning to", "intend to")
        if modal in ("can", "'m happy to", "am happy to", "'re happy to", "'d be happy to") \
                and (re.search(r"\b(?:for|to|send|get|give|show)\s+you\b", tail)
                     or subj in ("happy to", "glad to", "pleased to")
                     or (modal != "can" and subj == "i")
                     or re.match(r"(?i)^(?:ok|okay|sure|yes|yep|fine|absolutely|of course|"
                                 r"no problem|will do|happy to help)\b", text)):
            needs_due = follow_up  # an offer made to someone / in answer to a request
        if subj.startswith(("let", "lem")):
            needs_due = needs_due or follow_up
        return Cue("commitment", text, needs_due=needs_due, vocative=_vocative(text, names))
    # A named participant with a plan in the future or the present ("Priya ships it this week",
    # "Sam will move the teams over in November", "Marta to draft the memo").
    for m3 in re.finditer(r"(?:^|[;:,]\s+|\band\s+)(?P<n>[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?)\s+"
                          r"(?P<m>will|'ll|’ll|is going to|to|shall)?\s*(?P<v>[a-z]+)\b", text):
        name = m3.group("n")
        if name.casefold() not in names and name.split()[0].casefold() not in names:
            continue
        verb = m3.group("v")
        if m3.group("m"):
            if not _verbish(verb) or verb in _STATES or verb in _HEDGE:
                continue
        elif not (verb.endswith("s") and not verb.endswith("ss") and _verbish(verb)
                  and verb[:-1] not in _STATES and verb[:-2] not in _STATES
                  and verb not in ("is", "was", "has", "does", "says", "thinks", "seems",
                                   "looks", "sounds", "wants", "needs", "likes", "knows",
                                   "hopes", "expects", "feels", "means", "asks", "agrees")):
            continue
        if _COND.search(text) or re.search(r"\b(?:expects?|hopes?|wants?|plans?|aims?) to\b",
                                           text):
            return None
        subject = name
        return Cue("commitment", text, subject=subject, needs_due=not m3.group("m"))
    return None


def _action_owner(text: str, names: frozenset[str]) -> str | None:
    """Whose action item: "Jonas: …", "Jonas to …", "… (Jonas)", "… — Jonas", "@jonas …",
    "Owner: Jonas"."""
    body = re.sub(r"^(?:AI|A/I|Action(?: item)?|TODO|To-?do|Follow-?up)\s*[:—–-]\s*", "", text,
                  flags=re.IGNORECASE)
    patterns = [r"^@?(?P<n>[A-Z][\w'’.-]+(?: [A-Z][\w'’-]+)?)\s*(?:[:—–-]|\bto\b|\bwill\b|"
                r"\bshould\b|\bowns\b|\bto own\b|\b[a-z]+s\b)",
                r"\((?:owner:\s*)?@?(?P<n>[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?)\)\s*[.]?$",
                r"[—–-]\s*@?(?P<n>[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?)\s*[.]?$",
                r"\b(?:owner|assignee|assigned to)\s*[:=]?\s*@?(?P<n>[A-Z][\w'’-]+"
                r"(?: [A-Z][\w'’-]+)?)"]
    for rx in patterns:
        m = re.search(rx, body)
        if m:
            name = m.group("n")
            if name.casefold() in names or name.split()[0].casefold() in names \
                    or (not names and name.casefold() not in STOP):
                return name
    return None


def _ask(text: str, names: frozenset[str]) -> Cue | None:
    from kenning.builder.items.dates import find_phrase

    if _BOILER.search(text) or _SOCIAL.match(text):
        return None
    vocative = _vocative(text, names)
    m = _ASK.search(text)
    if m is not None:
        verb = next((m.group(g) for g in ("verb", "ing", "verb2", "verb3", "verb4", "verb5",
                                          "verb6") if m.group(g)), "")
        verb = verb.casefold()
        before = text[: m.start()]
        if re.search(r"\b(?:if|whether|unless|when)\b", before, re.IGNORECASE):
            return None
        if re.search(r"\b(?:not|n't|never)\b", text[m.start(): m.end() + 12], re.IGNORECASE) \
                and not m.group("modal"):
            return None
        if m.group("verb5") is not None:
            if verb in _POLITE and not re.match(r"(?i)let (?:me|us) know\b",
                                                text[m.start("verb5"):]):
                return None
            if verb == "let" and not _LET_KNOW.search(text):
                return None
            if verb == "let" and _BOILER.search(text):
                return None
        elif verb in _ASK_STATES or not _verbish(verb):
            return None
        if m.group("modal") and m.group("modal").lower() in ("could", "would") and \
                re.match(r"\s*(?:like|prefer|want|rather)\b", text[m.end("verb") - len(verb):]):
            return None  # "would you like to …" is an offer
        return Cue("ask", text, vocative=vocative)
    if vocative and re.match(r"^[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?\s*[,:—–-]\s+"
                             r"(?:please\s+)?(?P<v>[a-z]+)\b", text) \
            and find_phrase(text) is not None:
        v = re.match(r"^[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?\s*[,:—–-]\s+(?:please\s+)?(?P<v>[a-z]+)",
                     text)
        assert v is not None
        if _verbish(v.group("v")) and v.group("v") not in STOP and v.group("v") not in _ASK_STATES \
                and not v.group("v").endswith(("ed", "ing")) and v.group("v") not in (
                    "thanks", "thank", "good", "great", "sure", "yes", "no"):
            return Cue("ask", text, vocative=vocative)
    if text.endswith("?") and _YOU_QUESTION.search(text) and len(text.split()) >= 4 \
            and not _COND.search(text):
        if re.search(r"\b(?:should|shall)\s+(?:we|i)\b", text, re.IGNORECASE):
            return None
        return Cue("ask", text, vocative=vocative)
    lk = _LET_KNOW.search(text)
    if lk and re.match(r"^(?:please\s+)?let (?:me|us) know\b", text, re.IGNORECASE) and \
            re.match(r"\s*(?:if|whether|what|when|which|who|how|by|your|asap|once)\b",
                     lk.group("rest"), re.IGNORECASE):
        return Cue("ask", text, vocative=vocative)
    return None


def _split_alternatives(text: str) -> tuple[str, ...]:
    text = re.sub(r"\([^)]*\)", "", text)
    parts = re.split(r";|\s+and\s+(?=(?:a|an|the|going|moving|using|keeping|adding|doing|"
                     r"switching)\b)|,\s+(?:and\s+|or\s+)?(?=(?:a|an|the)\s)", text)
    out = []
    for p in parts:
        p = " ".join(p.split()).strip(" .,:;—–-")
        if p:
            out.append(p)
    return tuple(out[:5])


def _decision(text: str) -> Cue | None:
    if text.endswith("?"):
        return None
    head = _DECISION_HEAD.match(text)
    what = None
    if head is not None:
        what = head.group("what")
    else:
        m = _DECISION.search(text)
        if m is None:
            return None
        before = text[: m.start()]
        if _COND.search(before) or re.search(r"\b(?:not|n't|never|no|yet|whether|if)\b\W*$",
                                             before):
            return None
        if _DECISION_NEG.search(text[max(0, m.start() - 30): m.end()]):
            return None
        if re.search(r"\b(?:believe|think|guess|suppose|assume|hope|wish|without|unless)\b",
                     text, re.IGNORECASE):
            return None
        if m.group("v") and text[m.start(): m.start() + 2] == "I " and m.group("v") in (
                "committed", "aligned", "agreed", "resolved", "concluded", "landed"):
            return None
        if m.group("v") and m.group("v") in ("landed",) and " on " not in text[m.end("v"):][:5]:
            return None
        if m.group("v") and m.group("v") == "agreed" and not re.match(
                r"\s+(?:to|that|on|upon)\b", text[m.end("v"):]):
            return None
        what = next((m.group(g) for g in ("what", "what2", "what3", "what4", "what5", "what6")
                     if m.group(g)), "")
        if not what or len(words(what)) < 1:
            return None
        if _NEG.search(text[max(0, m.start() - 25): m.start()]):
            return None
    if not what or (len(what.split()) < 2 and not (head is not None and re.match(
            r"(?i)(?:\*\*)?(?:final|decision|decided|verdict|agreed)", text))):
        return None
    rejected = tuple(" ".join(r.group("alt").split()) for r in _REJECTED.finditer(what))
    rejected += tuple(" ".join(r.group(1).split()) for r in
                      re.finditer(r"(?:,|;|\band)\s+(?:but\s+)?no(?:t)?\s+([^,.;]+)", what))
    because = _BECAUSE.search(text)
    return Cue("decision", text, rejected=rejected,
               because=" ".join(because.group("why").split()) if because else None)


def rejected_line(text: str) -> tuple[str, ...] | None:
    """The alternatives a "Rejected: …" line names (None when it is no such line)."""
    m = _REJECT_HEAD.match(clean(text))
    return _split_alternatives(m.group("alts")) if m else None


def _delivery(text: str) -> Cue | None:
    if text.endswith("?") or re.match(r"(?i)^(?:if|when|once|as soon as|unless)\b", text):
        return None
    if _SHORT_DONE.match(text) or _DELIVER_CUE.search(text):
        if re.search(r"\b(?:will|'ll|’ll|going to|not|n't)\b", text.split(",")[0]) and \
                not re.search(r"(?i)as promised|here(?:['’]s| is| are)|attached", text):
            return None
        return Cue("delivery", text)
    m = _DELIVER_PERFECT.search(text)
    if m is not None:
        verb = m.group("verb").casefold()
        if verb in _NOT_DELIVERY_VERBS or verb in STOP:
            return None
        if (verb.endswith("ed") or verb in _PARTICIPLE_IRREGULAR or verb.endswith("en")) \
                and not _NEG.search(text[m.start(): m.end() + 5]):
            return Cue("delivery", text)
    p = _PASSIVE.search(text)
    if p is not None and not _NEG.search(text) and len(text[: p.start()].split()) <= 6 \
            and not re.search(r"\b(?:will|would|should|could|might|may|must|need|needs|so|"
                              r"whether|if|that|which|what|how|when|asked|because|since)\b",
                              text[: p.start()], re.IGNORECASE) \
            and not re.match(r"(?i)(?:it|this|that|there|he|she|they|i|we|you)\b", text):
        verb = p.group("verb").casefold()
        if verb not in _NOT_DELIVERY_VERBS and verb not in ("used", "based", "interested",
                                                           "supposed", "concerned", "located",
                                                           "involved", "related", "scheduled",
                                                           "expected", "planned", "pleased",
                                                           "excited", "sorry", "happy"):
            return Cue("delivery", text)
    return None
