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
  settled on / decided / agreed / are going with), else the shape: a group or authority
  subject (we, the team/board/committee, everyone, management, consensus) + a choosing verb
  (a small class by LEMMA, with its particle) in a past or perfect form (lemminflect); an
  outcome noun (decision, consensus, verdict, outcome, resolution, approval, go-ahead …)
  heading the sentence or a label ("Signed off:", "Our call:"); the chosen thing as subject of
  a passive choice ("Porto has been approved for the offsite"); never when negated, asked,
  conditional, hedged, pending or someone else's.
- **delivery**: first person + perfect/past of an action ("I've sent", "we just pushed"),
  "here's / attached / as promised", a one-word report ("Sent.", "Done —"), a passive result
  ("keys are merged", "the report is attached").

Never: questions that ask whether (should we …?), conditionals (if …, would, might), negations
(not, never, haven't, won't), vague third-party plans (expects to … at some point).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

# States and attitudes: after a modal they promise nothing ("I'll be there", "we will see").
_STATES = frozenset("""be have know think see hope wish want need like love hate miss feel guess
assume suppose believe expect wait remember forget mind seem appear look sound understand mean
care bet doubt imagine recall agree disagree hear notice prefer enjoy appreciate regret keep stay
remain live die sleep survive rest wonder happen continue""".split())
# Pleasantries with an action verb that promise nothing ("talk soon", "see you there").
_PLEASANTRY = re.compile(r"\b(?:talk|speak|chat|catch up|touch base|see you|meet you)\s*(?:soon|"
                         r"later|then|there|again|shortly)?\s*[.!]*$|\bgo (?:home|to bed|now)\b|"
                         r"\b(?:come|go|get) (?:back )?(?:home|there|here)\b", re.IGNORECASE)
# ... but some of these become actions with what follows them.
_STATE_ACTIONS = re.compile(
    r"^(?:have (?:a|another) (?:look|go|crack|stab|think|word|chat|pass|read|listen|try)\b|"
    r"be sure to\b|be (?:able|ready) to\b|"
    r"have (?:it|them|this|that|the|a|an|my|our|something|everything)\b.{0,80}?"
    r"\b(?:to you|over|ready|done|back|finished|out|up|for you|in your|by)\b|"
    r"be (?!being\b|going\b|having\b|getting\b|thinking\b|hoping\b|looking\s+forward)"
    r"[a-z]+ing\b|be back (?:to you|with)\b|see to\b|"
    r"have (?:someone|somebody|my team|our team|(?-i:[A-Z][a-z]+))\s+[a-z]+\b|"
    r"take care of|get (?:it|this|that|them|the|a|an|you|back|my|our|something|everything|"
    r"together|"
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
_NEG = re.compile(r"\b(?:not|never|no longer|n't|nobody|nothing|neither|nor|cannot|without)\b|"
                  r"(?<=[a-z])n['’]t\b", re.IGNORECASE)
_COND = re.compile(r"\b(?:if|unless|whether|in case|suppose|supposing|assuming|imagine|"
                   r"hypothetically|what if|otherwise|would|could have|might|should we|"
                   r"shall we|in theory|ideally|someday|some day|eventually|"
                   # "at some point" is vague unless a time follows ("at some point next week")
                   r"at some point(?!\s+(?:next|this|later|today|tomorrow|tonight|before|"
                   r"during|on\s+(?:monday|tuesday|wednesday|thursday|friday)))|"
                   r"one day|some time)\b", re.IGNORECASE)
_I = r"(?:I|we|We)"
_MODAL = (r"(?:['’]ll|\s+will|\s+shall|['’]m\s+going\s+to|\s+am\s+going\s+to|"
          r"['’]re\s+going\s+to|\s+are\s+going\s+to|['’]m\s+gonna|\s+am\s+gonna|"
          r"\s+promise\s+to|\s+commit\s+to|['’]ll\s+make\s+sure\s+to|\s+will\s+make\s+sure\s+to|"
          r"\s+can|['’]m\s+happy\s+to|\s+am\s+happy\s+to|['’]re\s+happy\s+to|"
          r"['’]d\s+be\s+(?:happy|glad|pleased|delighted)\s+to|\s+plan\s+to|\s+intend\s+to|['’]m\s+planning\s+to|"
          r"\s+am\s+planning\s+to|['’]re\s+planning\s+to|\s+offer\s+to|"
          r"['’]m\s+on\s+(?:it|the)\b[^.]{0,40}?\band\s+will|\s+volunteer\s+to|"
          r"\s+aim\s+to|['’]m\s+aiming\s+to|\s+expect\s+to|['’]m\s+hoping\s+to|"
          r"['’]ll\s+be\s+able\s+to|\s+will\s+be\s+able\s+to|\s+undertake\s+to|"
          r"['’]ve\s+got\s+to|\s+have\s+got\s+to|\s+should\s+be\s+able\s+to|"
          r"['’]re\s+on\s+track\s+to|\s+are\s+on\s+track\s+to|['’]m\s+on\s+track\s+to|"
          r"\s+need\s+to|\s+have\s+to|\s+must|['’]m\s+due\s+to|"
          # a first-person group in the third person ("our team is going to …")
          r"\s+is\s+going\s+to|['’]s\s+going\s+to|\s+is\s+planning\s+to|\s+is\s+happy\s+to|"
          r"\s+is\s+on\s+track\s+to|\s+is\s+due\s+to)")
_COMMIT = re.compile(rf"(?<![\w'’])(?P<subj>{_I}|Let me|let me|Lemme|Let us(?! know)|"
                     r"let us(?! know)|I['’]ll have|We['’]ll have|"
                     r"(?:My|my|Our|our) (?:team|people|group|office|side)|"
                     r"(?:^|(?<=, )|(?<=\. ))(?:Happy|happy|Glad|glad|Pleased|pleased) to|"
                     r"(?:^|(?<=^will do, )|(?<=^Will do, )|(?<=^Ok, )|(?<=^OK, )|(?<=^Sure, ))"
                     r"(?:Will|will|Going to|going to|Gonna|gonna|"
                     r"Planning to|planning to|Aiming to|aiming to)(?=\s+[a-z])|"
                     r"(?:My|my|The|the|Our|our) (?:plan|commitment|promise|job|task|"
                     r"undertaking) is to|I['’]m|I am|We['’]re|We are)"
                     rf"(?P<modal>{_MODAL})?\s+(?P<rest>.+)$")
_ASK = re.compile(
    r"(?<![\w'’])(?:(?P<mind>would|do)\s+you\s+mind\s+(?P<ing>[a-z]+ing)|"
    r"(?:^|(?<=[,;:—–-] ))(?:mind)\s+(?P<ing2>[a-z]+ing)|"
    r"(?:could|can|may|might)\s+(?:I|we)\s+(?:please\s+)?(?:get|have|see|grab|borrow|receive)\s+"
    r"(?P<thing>(?:the|a|an|your|that|this|those|these|some|any|it|them)\b[^?]*)|"
    r"(?:would|will)\s+it\s+be\s+possible\s+(?:for\s+you\s+)?to\s+(?P<verb8>[a-z]+)|"
    r"is\s+(?:it|there\s+any\s+way)\s+(?:possible\s+)?(?:for\s+you\s+)?(?:to|that\s+you\s+"
    r"(?:could|can)|you\s+(?:could|can))\s+(?P<verb9>[a-z]+)|"
    r"(?:think|hoping|hope|wonder(?:ing)?\s+if|wonder(?:ing)?\s+whether|possible\s+that|"
    r"appreciate\s+it\s+if|grateful\s+if|great\s+if|helpful\s+if|ideal\s+if|love\s+it\s+if|"
    r"nice\s+if|good\s+if)\s+you\s+"
    r"(?:could|can|might|would)\s+(?:please\s+)?(?P<verb7>[a-z]+)|"
    r"(?P<modal>could|can|would|will|won['’]t|might)\s+you\s+(?:please\s+|kindly\s+|"
    r"possibly\s+|also\s+|quickly\s+|maybe\s+|perhaps\s+|still\s+)*(?:(?:be\s+able|have\s+time"
    r"|find\s+time|manage|be\s+so\s+kind\s+as|be\s+willing)\s+to\s+)?(?P<verb>[a-z]+)|"
    r"(?:I|we)\s+(?:need|want|['’]d\s+like|would\s+like|['’]d\s+love|would\s+appreciate\s+it\s+if)"
    r"\s+(?:you|(?-i:[A-Z][a-z]+))\s+(?:to|could)\s+(?P<verb2>[a-z]+)|"
    r"(?:can|could|may)\s+I\s+(?:ask|get)\s+you\s+to\s+(?P<verb3>[a-z]+)|"
    r"(?:it\s+would\s+be\s+(?:great|helpful|good)|(?:I|we)(?:\s+would|['’]d)\s+appreciate\s+it)"
    r"\s+if\s+"
    r"you\s+could\s+(?P<verb4>[a-z]+)|"
    r"(?<![\w'’])(?:please|pls|kindly)\s+(?:do\s+)?(?P<verb5>[a-z]+)|"
    r"(?:any\s+(?:chance|way)\s+you\s+(?:could|can|might))\s+(?P<verb6>[a-z]+))",
    re.IGNORECASE)
# Imperatives after "please" that ask nothing of the reader.
_POLITE = frozenset("""find see note feel accept forgive excuse enjoy disregard ignore be
don't do let remember keep join visit click reply respond advise""".split())
_ASK_STATES = frozenset("""be believe imagine think tell know guess see hear like want need
say mind""".split())
_LET_KNOW = re.compile(r"\blet (?:me|us) know\b(?P<rest>.*)", re.IGNORECASE)
_BOILER = re.compile(r"\b(?:if you have (?:any |further |more |other |additional )?(?:questions|"
                     r"concerns|comments|problems|issues)|"
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
    r"agreed|agreement|final\s+(?:answer|decision|call|word|pick|choice)|verdict|the\s+call|"
    r"ruling|chosen|choice|pick|plan\s+of\s+record|the\s+verdict|settled|locked|approved|"
    r"consensus|selected|picked|going\s+with|confirmed|finali[sz]ed)"
    r"(?:\s+(?:made|taken|reached|so\s+far))?"
    r"(?:\*\*)?\s*(?:\*\*)?(?:[:—–-]|->|→|=>)(?:\*\*)?\s*(?P<what>\S.*)$", re.IGNORECASE)
_DECISION = re.compile(
    r"(?<![\w'’])(?:(?:we|We|I|the team|The team|everyone|Everyone|the group|The group|"
    r"the board|The board|management|Management|leadership|Leadership)(?:['’]ve|\s+have|\s+has|"
    r"\s+had|\s+all|\s+finally|\s+now|\s+eventually|\s+ultimately|\s+officially)*\s+"
    r"(?P<v>decided|agreed|settled|chosen|chose|opted|landed|concluded|resolved|picked|selected|"
    r"committed|aligned|locked|signed\s+off|greenlit|green-lit|approved|standardi[sz]ed|"
    r"converged|gone|went|elected|plumped|committed|voted|determined|finali[sz]ed)\b(?P<what>.*)|"
    r"^(?:Agreed|Settled|Decided|Opted|Signed\s+off)\s+(?:to|on|upon|for|that)\s+(?P<what11>.+)|"
    r"(?:we|We)(?:['’]re|\s+are|['’]ll|\s+will|\s+shall)\s+(?:going\s+to\s+)?"
    r"(?:going|go|sticking|staying|stick|stay|proceeding|proceed|moving\s+(?:forward|ahead)|"
    r"move\s+(?:forward|ahead)|going\s+ahead|go\s+ahead|running|run|rolling|roll|"
    r"be\s+going)\s+(?:with|for)\s+(?P<what2>.+)|"
    r"(?:we|We)(?:['’]re|\s+are|['’]ll|\s+will)\s+(?:be\s+)?(?:switching|switch|"
    r"migrating|migrate|standardi[sz]ing|standardi[sz]e|consolidating|consolidate)\s+"
    r"(?:over\s+)?(?:to|on(?:to)?)\s+(?P<what15>.+)|"
    r"(?:we|We)(?:['’]re|\s+are)\s+(?:choosing|picking|opting\s+for|all\s+on\s+board\s+with|"
    r"aligned\s+on|on\s+board\s+with)\s+(?P<what16>.+)|"
    r"(?:everyone|Everyone|all|All)(?:['’]s|\s+is|\s+are)\s+(?:on\s+board|aligned)\s+(?:with|on)\s+"
    r"(?P<what17>.+)|"
    r"(?:^|(?<=: ))(?:the|The|a|A)\s+decision\s+(?:was|has\s+been)\s+(?:made|taken|reached)\s+"
    r"(?:to|that)\s+(?P<what18>.+)|"
    r"^(?:Going|Moving)\s+forward,?\s+(?:we|we['’]ll|we\s+will|all|everyone)\s+(?P<what19>.+)|"
    r"(?:Let['’]s|let['’]s)\s+(?:lock\s+in|go\s+ahead\s+with|commit\s+to|settle\s+on|"
    r"stick\s+with|standardi[sz]e\s+on)\s+(?P<what20>.+)|"
    r"(?:we|We|I)(?:['’]ve|\s+have)?\s+(?:made|taken|reached)\s+(?:the|a|our|my)\s+"
    r"(?:final\s+)?(?:call|decision)\s+(?:to|that|on)\s+(?P<what13>.+)|"
    r"^(?P<what14>(?:[\w&/+-]+\s){0,4}?[\w&/+-]+)\s+is\s+the\s+way\s+(?:to\s+go|forward)\b|"
    r"(?:^|(?<=: ))(?:the|The)\s+consensus\s+(?:is|was)\s+(?:to\s+|that\s+)?(?P<what12>.+)|"
    r"^(?:So,?\s+)?(?:we|We)(?:['’]ll|\s+will|['’]re\s+going\s+to|\s+are\s+going\s+to)?\s+"
    r"(?:keep|use|stay\s+on|stick\s+to|take|adopt|choose|build\s+on)\s+"
    r"(?P<what21>[^.;]+?\b(?:rather\s+than|instead\s+of)\b.+)|"
    r"(?:^|(?<=, )|(?<=: ))(?:Going|going|Proceeding|proceeding|Moving\s+(?:forward|ahead))"
    r"\s+with\s+(?P<what7>.+)|"
    r"(?:^|(?<=, )|(?<=: ))(?P<what8>[A-Z][\w .&/+-]{0,40}?)\s+it\s+is[.!]?$|"
    r"^(?P<what9>(?:[\w&/+-]+\s){0,5}?[\w&/+-]+)\s+(?:was|has\s+been|is)\s+(?:chosen|selected|"
    r"picked|adopted)\b(?P<over>.*)|"
    r"(?:^|(?<=: ))(?:the|The|our|Our)\s+(?:pick|choice|winner|plan\s+of\s+record|way\s+forward)"
    r"\s+is\s+(?P<what10>.+)|"
    r"(?:^|(?<=: ))(?:the|The|our|Our|my|My)\s+(?:final\s+)?"
    r"(?:decision|call|conclusion|verdict|choice)"
    r"(?:\s+(?:on|about|for|regarding)\s+(?P<on>[^,;]{1,40}?))?"
    r"\s+(?:is|was)\s+(?:to\s+|that\s+)?(?P<what3>.+)|"
    # the outcome told by the winner: "Zendesk is the winner", "Porto won out over Madrid"
    r"^(?P<what22>(?:[\w&/+-]+\s){0,4}?[\w&/+-]+)\s+(?:is|was)\s+the\s+(?:clear\s+)?"
    r"(?:winner|pick|choice|way\s+to\s+go)\b(?P<over22>.*)|"
    r"^(?P<what23>(?:[\w&/+-]+\s){0,4}?[\w&/+-]+)\s+(?:(?:won|wins)\s+out\s+(?:over|against)|"
    r"(?:came|comes)\s+out\s+(?:ahead\s+of|on\s+top\s+of)|prevail(?:ed|s)\s+over)\s+"
    r"(?P<over23>.+)|"
    r"(?:it['’]s|it\s+is|it\s+was|it['’]s\s+been|that['’]s)\s+(?:been\s+)?"
    r"(?:decided|agreed|settled|final)\b[:,]?\s*(?P<what4>.*)|"
    r"(?:Let['’]s|let['’]s)\s+go\s+with\s+(?P<what5>.+)|"
    r"(?:final\s+answer|Final\s+answer)\s*[:—–-]\s*(?P<what6>.+))")
_DECISION_NEG = re.compile(
    r"\b(?:not|n't|never|no|yet|still|undecided|tbd|to be decided|pending|need to|needs to|have to|"
    r"has to|must|should|will|would|could|might|may|can|whether|if|until|before|once|when|"
    r"unless)\s+(?:\w+\s+){0,2}?(?:decid|agree|settl|chos|choos|opt|land|conclu|resolv|go with)",
    re.IGNORECASE)
_REJECTED = re.compile(r"\b(?:rather than|instead of|as opposed to|over|and not|but not|not|"
                       r"in place of|in preference to|ahead of|beating(?: out)?|beat(?: out)?|"
                       r"vs\.?|versus)\s+(?P<alt>[^.;,()]+)", re.IGNORECASE)
_REJECT_HEAD = re.compile(r"^(?:\*\*)?(?:rejected|ruled out|not doing|discarded|dropped|"
                          r"considered and rejected|alternatives? (?:rejected|considered)|"
                          r"we rejected|we ruled out|we dropped|we decided against)"
                          r"(?:\*\*)?\s*[:—–-]?(?:\*\*)?\s*(?P<alts>\S.*)$", re.IGNORECASE)
_BECAUSE = re.compile(r"\b(?:because|since|given that|due to|as it|so that|the reason is)\s+"
                      r"(?P<why>[^.;]+)", re.IGNORECASE)
_SHORT_DONE = re.compile(
    r"^(?:(?:all|just|already|now|finally|ok|okay)[,]?\s+)*(?:done|sent|merged|shipped|finished|"
    r"completed|uploaded|submitted|posted|fixed|delivered|pushed|published|deployed|booked|filed|"
    r"signed|handled|forwarded|shared|emailed|mailed|circulated|wrapped\s+up|sorted)\b"
    r"(?:\s*(?:[.!—–:-]|$|and\b|,)|\s+(?:it|them|the|that|this|those|these|over|out|you|your|"
    r"a|an|my|our|off|across|along)\b)|"
    r"^(?:(?:that|it|this|everything)(?:['’]s|\s+is|\s+has\s+been)|all)\s+(?:now\s+)?(?:done|"
    r"sorted|finished|complete|completed|shipped|live|merged|sent|taken\s+care\s+of)\b|"
    r"^(?:(?:just|already)\s+)?took\s+care\s+of\b|"
    r"\b(?:it['’]s|they['’]re|should\s+be)\s+(?:now\s+)?in\s+your\s+inbox\b|"
    r"\byou\s+should\s+(?:now\s+)?have\s+(?:it|them|the)\b|"
    r"\b(?:it['’]s|they['’]re)\s+(?:now\s+)?(?:in|on)\s+the\s+(?:shared\s+)?(?:drive|folder)\b",
    re.IGNORECASE)
_DELIVER_CUE = re.compile(
    r"\b(?:as promised|as discussed,? (?:here|attached)|here(?:['’]s| is| are)\s+(?:the|my|our|"
    r"your|a|an|that|those|these|it)\b|attached (?:is|are|please find|you(?:['’]ll| will) find)|"
    r"please find attached|find attached|i(?:['’]ve| have) attached|attaching|enclosed (?:is|are)"
    r"|(?:is|are) attached|"
    # the back-reference to an earlier promise: "as I said I would", "the minutes I owed you"
    r"(?:as|like)\s+(?:I|we)\s+(?:said|promised|told\s+you|mentioned)\s+(?:I|we)\s+(?:would|['’]d)|"
    r"(?:I|we)\s+owed\s+you|"
    r"(?:please\s+)?find\s+(?:the|my|our|your)\b[^.;]{0,60}?\battached|"
    # a presentative with the thing: "There you go, the shortlist", "Circling back with the …"
    r"^(?:there|here)\s+you\s+(?:go|are)\b[,:—–-]?\s+(?:the|my|our|your|it)|"
    r"^(?:circling|coming|getting)\s+back\s+(?:to\s+you\s+)?with\s+(?:the|my|our|your)|"
    # a result in a place: "The renewal quote is now in the shared drive"
    r"^(?:the|my|our|your)\s+[^,;]{1,50}?\s+(?:is|are)\s+(?:now\s+)?(?:in|on|up\s+on)\s+"
    r"(?:the|your)\s+(?:shared\s+)?(?:drive|folder|inbox|repo|wiki|channel|tracker|portal))\b",
    re.IGNORECASE)
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
    about: tuple[str, ...] = ()  # decisions: the topic named ("… for the CRM")
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
    text = re.sub(r"\{(?:disfmarker|vocalsound|pause|nonvocalsound|gap|comment)[^}]*\}", " ", text)
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
    if not tokens[i][:1].islower():
        return "", ""  # "I'm going to San Francisco": a name, not a verb
    word = re.sub(r"[^a-z'-]", "", tokens[i].casefold())
    return word, " ".join(tokens[i:])


def _verbish(word: str) -> bool:
    """A word that can be a base-form verb after a modal: lowercase letters, no determiner,
    pronoun, preposition or number (structure already says it stands where a verb stands)."""
    return bool(re.fullmatch(r"[a-z][a-z-]{1,20}", word)) and word not in STOP_NOT_VERBS


STOP_NOT_VERBS = frozenset("""could would can will should might must may shall cannot
a an the this that these those it its my our your their his her
i we you he she they me us him them of to in on at by for with from as not no never also
probably maybe perhaps all both each some any very too so and or but than then there here
definitely""".split())


_VERB_CACHE: dict[str, bool] = {}


def is_verb(word: str) -> bool:
    """A dictionary test: ``word`` is the base form of an English verb (lemminflect's word
    lists, offline). Lowercase words only; unknown words are not verbs."""
    word = word.casefold()
    hit = _VERB_CACHE.get(word)
    if hit is None:
        import lemminflect  # lazy: its dictionary loads on first use

        lemmas = lemminflect.getAllLemmas(word)
        hit = word in lemmas.get("VERB", ()) and word not in STOP_NOT_VERBS
        _VERB_CACHE[word] = hit
    return hit


_LEMMA_CACHE: dict[str, str] = {}


def lemma(word: str) -> str:
    """The word's verb lemma when it is an inflected verb ("sent" → "send"), else its noun
    lemma ("invoices" → "invoice"), else the word."""
    w = word.casefold()
    out = _LEMMA_CACHE.get(w)
    if out is None:
        import lemminflect

        lemmas = lemminflect.getAllLemmas(w)
        out = (lemmas.get("VERB") or lemmas.get("NOUN") or lemmas.get("ADJ") or (w,))[0]
        _LEMMA_CACHE[w] = out
    return out


def lemmas(text: str) -> set[str]:
    """Content words as lemmas, for matching a delivery to its promise ("sent the deck" ↔
    "send the deck")."""
    out = set()
    for w in re.findall(r"[a-z0-9][a-z0-9-]*", text.casefold().replace("’", "'")):
        if w in STOP or (len(w) < 3 and not w.isdigit()):
            continue
        out.add(lemma(w))
    return out - STOP


_REPORTED = re.compile(r"[\"“”]\s*,?\s*(?:he|she|they|[A-Z][a-z]+)\s+(?:said|says|added|told)\b|"
                       r"\b(?:said|says|told reporters|according to)\b.{0,40}[\"“]|^[\"“]")


# Spoken promises about the talk itself ("I'll now present", "let me just check", "we will
# proceed to petitions"): immediate, not to-dos.
_IMMEDIATE = re.compile(r"\b(?:now|just|first|next|here|quickly|real quick|right now|right away|"
                        r"for a (?:second|moment|minute)|again|briefly|today's meeting)\b",
                        re.IGNORECASE)
_TALK = frozenset("""present explain start begin go move proceed continue talk say mention add
finish rise repeat answer respond ask introduce summarize summarise recap clarify elaborate
comment speak wrap close open conclude turn pass hand stop leave try read note switch play
come""".split())
_TALK_ASK = _TALK | frozenset("""give show bring explain tell repeat clarify draw describe
elaborate say hear see walk""".split())
_OBJECT = re.compile(r"\b(?:the|a|an|my|our|your|his|her|their|some|these|those|this|that)\s+"
                     r"(?!(?:one|way|point|thing|question|bit|time|moment|second|try|look|go|shot|stab)\b)[a-z0-9][\w-]+",
                     re.IGNORECASE)
_TAKE_AWAY = re.compile(r"\b(?:after|before|for)\s+(?:the|this|our)\s+(?:next\s+)?(?:meeting|"
                        r"call|session)|\boffline\b|\bby then\b|\bnext time\b|"
                        r"\b(?:send|email|e-mail|mail|forward|share|circulate)\b.{0,40}"
                        r"\b(?:me|us|everyone|the team|the group|round|around)\b",
                        re.IGNORECASE)


# Speech is long and loose: an item said aloud is a short sentence. Longer ones are speeches,
# questions put to a minister, or a run of design chatter the transcriber never broke up.
SPOKEN_MAX_WORDS = 35
# A clause that opens with one of these is subordinate ("because we decided …", "once we've
# chosen …"): a reason or a condition, not the decision itself.
_SUBORDINATE = re.compile(r"^(?:(?:and|but|so|well|um|uh|um|okay|ok|yeah|right|now)\W+)*"
                          r"(?:because|'cause|cause|since|once|as long as|as soon as|until|"
                          r"unless|when|whenever|if|whether|given|just 'cause)\b",
                          re.IGNORECASE)
# A yes/no question put by inversion ("are we going for …", "have we decided on …").
_INVERTED = re.compile(r"\b(?:are|have|did|do|were|had|shall|should|can|could|will)\s+we\b",
                       re.IGNORECASE)
_HOPE = re.compile(r"expect|hoping|aim", re.IGNORECASE)
_DUTY = re.compile(r"need|have|must|got|plan|intend|track|due", re.IGNORECASE)
# Being together is not a deliverable ("I'll meet you in half an hour").
_TOGETHER = frozenset("meet join see catch sit let thank assure reassure remind scare "
                      "commit".split())


def _spoken_decision(text: str) -> bool:
    """A decision said aloud counts when it is the group's ("we", or a marker such as
    "Decision:"), stated, not asked ("are we going for …"), not a reason or condition
    ("because we decided …"), not one person's choice ("I chose this for a couple
    reasons") and short enough to be a statement rather than a run of chatter."""
    if _DECISION_HEAD.match(text):
        return True
    if len(text.split()) > SPOKEN_MAX_WORDS + 10 or _SUBORDINATE.match(text):
        return False
    m = _DECISION.search(text)
    if m is None:
        return True  # another shape ("X it is", "after weighing it, X won out over Y")
    before = text[: m.start()]
    if _INVERTED.search(before + text[m.start(): m.start() + 12]):
        return False
    return not re.search(r"(?<![\w'’])I\b", text[max(0, m.start() - 4): m.start() + 2])


def _addressed(tail: str) -> bool:
    """The promised action reaches someone: "send you the figures", "get it to Sam",
    "… for the team", or a purpose clause naming who it is for ("so Copperline can see …").
    "take you through" / "tell you" are the talk (the verb is checked by the caller)."""
    if re.match(r"^\S+\s+(?:you|him|her|them)\b(?!\s+(?:through|over|"
                r"around|along|in|up|on|back|to)\b)", tail, re.IGNORECASE):
        return True
    if re.search(r"\b(?:to|for|with)\s+(?:you|everyone|everybody|the (?:team|group|client|"
                 r"board)|(?-i:[A-Z][a-z]+))\b", tail, re.IGNORECASE):
        return True
    if re.search(r"\b(?:in|into|on|to|onto)\s+(?:the|our|your)\s+(?:[\w-]+\s+){0,2}"
                 r"(?:folder|drive|wiki|channel|repo|repository|tracker|share)\b", tail,
                 re.IGNORECASE):
        return True  # a shared place everyone reads ("put the minutes in our project folder")
    return bool(re.search(r"\bso(?: that)?\s+(?-i:[A-Z][a-z]+)\b", tail))


def _spoken_keeps(cue: Cue, text: str, after_request: bool = False) -> bool:
    """A promise or ask said aloud in a meeting is an action item only when it is explicit:
    a short sentence; a promise in the first person singular ("I'll", or a named person in
    the third) with a future modal, on a thing that is not the talk itself, that names a
    time or reaches someone (an addressee, or who it is for); an ask that names a time,
    something to send or do after the meeting, or a named addressee with "please". "We will
    …" in speech is a plan or a speech ("we will always stand by that record"); "let me …"
    without a time is a turn of the talk ("let me pick up where my colleague left off")."""
    from kenning.builder.items.dates import find_phrase

    if len(text.split()) > SPOKEN_MAX_WORDS:
        return False
    dated = find_phrase(text) is not None
    if cue.kind == "ask":
        if re.match(r"^(?:\W*\w+\W+){0,3}?(?:what|how|where|which|who)\b", text, re.IGNORECASE):
            return False  # an open question ("What else can you do with a television?")
        if cue.vocative is None and not re.search(r"(?i)\byou\b", text):
            return False  # a fragment ("sometime this week again")
        m = _ASK.search(text)
        verb = (m.group("verb") or "").casefold() if m is not None else ""
        if verb in _TALK_ASK | _TOGETHER:
            return False  # the talk itself ("can you answer that question?")
        if dated or _TAKE_AWAY.search(text):
            return True
        if cue.vocative is not None and re.search(r"(?i)\bplease\b", text):
            return True
        if m is None or not m.group("modal") or _COND.search(text) or not verb:
            return False
        # "Can you check the budget?" asks for something definite; "can you zoom in a TV?"
        # with an indefinite object is the generic "you" of design talk.
        tail = text[m.end("verb"):]
        # "Could you confirm that that's …" asks for a statement: a clause, not a thing.
        if re.match(r"^\s+that(?:['’]s|\s+(?:that|the|it|he|she|they|we|you|i|this|there)\b)",
                    tail, re.IGNORECASE):
            return False
        return not _IMMEDIATE.search(text[m.start():][:40]) and bool(re.match(
            r"^\s+(?:(?:up|out|over|back|down|together|through|in)\s+)?"
            r"(?:the|your|this|that|these|those|my|our)\s+[a-z]", tail))
    if _COMMIT.search(text) is None:
        return cue.subject is not None and dated
    # "I can take it: I'll finalise the quote", "put me down for that, I'll compile …": the
    # promise may be any clause of the sentence.
    clauses = [c for c in re.split(r"\s*[:;—–]\s*|,\s+(?=I\b|I['’])", text) if c]
    return any(_spoken_promise(c, text, dated, after_request) for c in clauses)


def _spoken_promise(clause: str, text: str, dated: bool, after_request: bool) -> bool:
    m = _COMMIT.search(clause)
    if m is None:
        return False
    subj = m.group("subj")
    modal = m.group("modal") or ""
    if _HOPE.search(modal):
        return False  # an expectation or a hope, not a promise
    folded = subj.casefold().replace("’", "'")
    if folded in ("i'm", "i am", "we're", "we are") and not modal:
        return False  # "I'm presenting a petition today": the talk, as it happens
    if folded in ("we", "we're", "we are", "let us", "we'll have") and not dated:
        return False  # "we will …" with no time is a plan or a speech
    if not dated and (folded.startswith(("my ", "our ", "the ")) or _DUTY.search(modal)):
        return False  # an obligation or a team's plan, said aloud, with no time
    rest = m.group("rest")
    word, tail = _first_word(rest)
    if not word or (word == "be" and not dated):
        return False  # "I'll be splitting my time with …": a description of the turn
    # A talk verb that makes a new thing is an action ("I'll add a stats command so …"), and
    # one that hands a thing on ("pass along the recording", "turn around the redlined MSA").
    makes = bool(re.match(r"^\S+\s+(?:a|an|another|some)\s+[a-z]", tail)) and word in (
        "add", "open", "start", "write", "put")
    hands_on = word not in ("go", "come") and bool(re.match(
        r"^\S+\s+(?:over|along|around|on|in|out)\s+(?:the|my|our|your|this|that|these|those)"
        r"\s+[a-z]", tail))
    if (word in (_TALK_ASK | _TOGETHER) - {"take", "give", "bring", "send"}
            and not makes and not hands_on) or _IMMEDIATE.search(
                _without_due(rest).split(",")[0][:40]) or _IMMEDIATE.search(
                clause[: m.start()][-12:]):
        return False  # "I'll present now", "so now I'm gonna hand over the pen"
    if dated:
        return True
    if after_request and re.match(r"(?i)^(?:take|do|own|handle|grab|cover|get|sort|pick)\s+"
                                  r"(?:that|this|it)(?:\s+one)?\b", tail):
        return True  # "Can someone send the deck?" — "I'll take that one."
    if not (_OBJECT.search(tail) or _TAKE_AWAY.search(tail) or re.match(
            r"^\S+\s+(?:you|him|her|them)\b", tail)):
        return False
    return dated or bool(_TAKE_AWAY.search(tail)) or _addressed(tail) or _deliverable(tail, text)


# After the verb (and a particle), a definite thing: "send over the pilot report", "put
# together the hiring plan", "draft the statement of work".
_DEFINITE = re.compile(r"^\S+\s+(?:(?:up|out|over|back|down|together|through|in|around|along|"
                       r"on)\s+)?"
                       r"(?:the|my|our|your|this|that|these|those)\s+(?P<np>.*)$", re.IGNORECASE)


def _without_due(text: str) -> str:
    """The text without its due phrase ("during next week" is a time, not "I'll do it next")."""
    from kenning.builder.items.dates import find_phrase

    phrase = find_phrase(text)
    return text.replace(phrase, " ") if phrase else text


def _deliverable(tail: str, text: str) -> bool:
    """A short spoken promise with no time and no addressee still counts when its object is
    a definite thing that is made or handed over — not a thing moved about in the room ("I'll
    take my file down", "I will take this away"), not a person acted upon ("let me teach the
    Leader some arithmetic", "I will convince the management to do that")."""
    if len(text.split()) > 20:
        return False
    m = _DEFINITE.match(tail)
    if m is None:
        return False
    np = m.group("np").split()
    if not np or np[0][:1].isupper():
        return False
    near = [w.casefold().strip(",.;:!?") for w in np[:4]]
    return not any(w in ("away", "down", "back", "off", "aside", "around", "to") for w in near)


def read(sentence: str, *, in_actions: bool = False, names: frozenset[str] = frozenset(),
         spoken: bool = False, after_request: bool = False) -> list[Cue]:
    """The cues one sentence carries (usually none, at most one of each kind). ``names``:
    the first names and full names of the source's people (folded), for third-party
    commitments and vocatives; ``in_actions``: the sentence is a line of an action-item
    section or an action-item line ("- [ ] …", "AI: …")."""
    text = clean(sentence)
    # An inline quote ("Re this: > Would it be possible …") is someone's earlier words.
    text = re.split(r"(?:^|\s)>\s", text)[0].strip()
    if len(text) < 3 or len(text) > 600 or _REPORTED.search(text):
        return []
    head = text.split()[:3]
    if len(head) == 3 and all(w.isupper() and len(w) > 1 for w in head):
        return []  # a shouted banner ("PLEASE MARK YOUR CALENDAR"), not a sentence
    out: list[Cue] = []
    decision = _decision(text)
    if decision is not None and spoken and not _spoken_decision(text):
        decision = None
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
    if commitment is not None and commitment.text != text:
        commitment = replace(commitment, text=text)  # the sentence as written
    if commitment is not None and spoken and _owned(text, names) is None and \
            not _spoken_keeps(commitment, text, after_request):
        commitment = None
    if commitment is not None and delivery is None:
        out.append(commitment)
    ask = _ask(text, names)
    if ask is not None and spoken and not _spoken_keeps(ask, text):
        ask = None
    if ask is not None and commitment is None:
        out.append(ask)
    return out


# Sentence-initial words that are not an imperative verb (an imperative is read by shape: a
# clause-initial word followed by an object, "Send me the deck", "Forward this to Sam").
_NOT_IMPERATIVE = frozenset("""thanks thank hope great good sorry glad happy just all any also
here there this that the our my your his her their its it we you they he she i attached below
above see find note let enjoy welcome congrats congratulations cheers best hi hello dear fyi per
as in on at for with from by to after before since when if so and but or not only even still
yes no ok okay sure well now then today tomorrow again once both each every some many most more
less few one two three what who how why where which whose sounds looks seems feel nice cool
perfect excellent awesome fine agreed understood noted love miss hate wish bless lol haha wow
oh hey sir madam mr mrs ms dr re fw fwd subject date sent regarding please kindly guess
about above across after against along among amongst around before behind below beneath beside
besides between beyond despite down during except inside into like near off onto out outside
over past through throughout till toward towards under underneath unlike until upon via within
without although though while whilst whereas unless because whether given said ditto pardon
thus hence therefore however meanwhile instead otherwise whatever whenever wherever overall
including concerning following assuming considering according against weather why plus minus
apparently obviously clearly basically frankly honestly hopefully unfortunately luckily
yet got came went was were had did made took gave told become""".split())
_IMPERATIVE = re.compile(
    r"^(?:(?:also|and|then|so|now|pls|kindly|oh|ok|okay),?\s+)?(?P<v>[A-Za-z][a-z]{2,})\s+"
    r"(?:me|us|him|her|them|it|the|a|an|your|my|our|this|that|these|those|over|out|up|back)\b")


def _imperative(text: str) -> bool:
    m = _IMPERATIVE.match(text)
    if m is None or text.endswith("?") or len(text.split()) > 20:
        return False
    v = m.group("v").casefold()
    if v in _NOT_IMPERATIVE or v in _POLITE or (v in _STATES and v not in ("call", "talk",
                                                                        "ask", "tell", "get")):
        return False
    if v.endswith(("ed", "ing", "ly")) or (v.endswith("s") and not v.endswith("ss")):
        return False
    return not _COND.search(text)


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


_INTERJECTION = re.compile(
    r"^(?:(?:ok|okay|sure|yes|yep|yeah|absolutely|no problem|will do|on it|got it|noted|great|"
    r"perfect|thanks|sounds good|understood|of course|certainly|definitely|right|fine|done)"
    r"\s*[,!.;:—–-]+\s*)+", re.IGNORECASE)


# Ownership taken, by shape: a thing assigned to the first person ("leave X to me", "X is on
# me", "X falls to me"), or an action label naming its owner ("Action on me: …",
# "Owner Dana: …") followed by a verb.
_ASSIGNED = re.compile(
    r"(?i)^(?:(?:so|ok|okay|right|fine|sure)\W+)?(?:you\s+can\s+|just\s+)?(?:leave|put|park)\s+"
    r"(?P<obj>(?:the|that|this|those|these|it|them|all|our|your)\b.{0,60}?)\s+"
    r"(?:to|with|on)\s+me\b|"
    r"^(?:(?:so|ok|okay|right)\W+)?(?P<obj2>(?:the|that|this|those|these|our|your)\s+.{1,60}?)\s+"
    r"(?:is|are|['’]s|falls|fall)\s+(?:on\s+me|mine|with\s+me|to\s+me|my\s+(?:job|task|"
    r"responsibility|department|call))\b")
_ACTION_LABEL = re.compile(
    r"^(?:(?:so|ok|okay|right)\W+)?(?:(?:the\s+)?(?:action|action\s+item|next\s+step|to-?do|task|"
    r"follow-?up|ai|owner|assignee|assigned\s+to|action\s+owner)s?)\s*"
    r"(?:(?:on|for|to)\s+(?P<me>me|us)|(?:on|for|to|:)?\s*"
    r"(?P<name>(?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)))\s*[:—–-]\s*(?P<act>.+)$", re.IGNORECASE)


def _owned(text: str, names: frozenset[str]) -> Cue | None:
    if text.endswith("?") or _COND.search(text) or _NEG.search(text):
        return None
    m = _ASSIGNED.search(text)
    if m is not None and len(words(m.group("obj") or m.group("obj2"))) >= 1:
        return Cue("commitment", text)
    m = _ACTION_LABEL.match(text)
    if m is not None:
        verb = m.group("act").split()[0].casefold().strip(",.;:")
        if not is_verb(verb) or verb in _STATES:
            return None
        name = m.group("name")
        if name is not None and name.casefold() not in names and \
                name.split()[0].casefold() not in names:
            return None
        return Cue("commitment", text, subject=name)
    return None


def _commitment(text: str, names: frozenset[str]) -> Cue | None:
    """A commitment the sentence makes: its first promise clause, else a later clause ("I can
    take it: I'll finalise the quote"), else the first-person infinitive frame."""
    # A purpose clause after the promise ("… and fix it so it doesn't happen again", "… so
    # Copperline can see the hit rate") is no part of what is promised.
    main = _PURPOSE.sub("", text)
    if text.endswith("?") or _NEG.search(main):
        return None
    owned = _owned(text, names)
    if owned is not None:
        return owned
    cue = _commitment_clause(text, names)
    if cue is None or cue.needs_due:
        for m in _CLAUSE_BREAK.finditer(text):
            if text[m.end():].lstrip().startswith((">", "\"", "“")):
                continue  # a quoted clause ("Re this: > I will …") is someone's earlier words
            lead = text[: m.start()]
            if len(lead.split()) > 6 or _COND.search(lead) or re.search(
                    r"(?i)\b(?:as|that|in case|when|once|after|before|because|since)\b", lead):
                break  # a long or subordinate lead ("If the Auditor General …, we will …")
            later = _commitment_clause(text[m.end():], names)
            if later is not None and not later.needs_due and later.subject is None:
                return replace(later, text=text, vocative=_vocative(text, names))
    if cue is None:
        cue = _frame(text, names)
    if cue is None:
        # Two coordinated actions, the first a turn of phrase about taking it on ("I'll jump
        # on that and produce the forecast"): the promise is read from the second.
        co = _COORDINATED.match(text)
        if co is not None and is_verb(co.group("v2")) and co.group("v2") not in _STATES:
            later = _commitment_clause(co.group("pre") + co.group("post"), names)
            if later is not None:
                cue = replace(later, text=text)
    return cue


_COORDINATED = re.compile(r"^(?P<pre>.*?(?:['’]ll|\swill|\sshall|\s(?:am|are|['’]m|['’]re)\s+"
                          r"going\s+to)\s+)[a-z]+(?:\s+(?:on|onto|to|in|into|with|at|over))?"
                          r"\s+(?:it|that|this|them)\s+and\s+(?P<post>(?P<v2>[a-z]+)\b.*)$")


_CLAUSE_BREAK = re.compile(r"\s*[:;—–]\s+|,\s+(?=(?:I|we|We)\b)")
_FIRST_PERSON = re.compile(r"(?<![\w'’])(?:I|me|my|mine|Mine|My|we|We|us|our|Our)(?!\w)")
_INF = re.compile(r"(?<![\w'’])(?:to|will|['’]ll|shall)\s+(?:(?:also|then|just|now|personally|"
                  r"[a-z]+ly)\s+)?(?P<v>[a-z]+)\b(?=(?P<tail>[^.;!?]*))")
# Verbs that govern "me to …" for someone else's wish ("she asked me to send …").
_CONTROL = frozenset("""asked ask asks told tell tells want wants wanted need needs needed
expect expects expected for remind reminded invite invited urge urged allow allowed let help
helped convince convinced get got encourage encouraged""".split())
# Words between the subject and the infinitive that make it no promise: attitudes, past
# events, abilities ("we have the ability to …"), other subjects.
_FRAME_BLOCK = re.compile(
    r"\b(?:want|wanted|wants|wish|hope|hoped|like|love|prefer|try|tried|trying|would|could|"
    r"might|should|used|supposed|went|was|were|did|had|came|decided|agreed|managed|failed|"
    r"forgot|remembered|seemed|happened|started|began|need|needed|needs|asked|told|said|you|"
    r"he|she|they|it|who|which|that|able|unable|ability|authority|right|chance|time\s+to\s+\w+"
    r"\s+it|have\s+(?:the|a|an|no|any|some|enough|to)|has|hard|easy|nice|good|great|glad|sorry|"
    r"pleased|excited|thrilled|delighted|honou?red|proud|about|how|where|what|why|when|if|"
    r"sure|confident|certain|afraid|interested|unlikely|likely|expect|expects|his|her|their|"
    r"i|we|been|process|still|there|happy|willing|eager|keen)\b|"
    r"['’]d\b", re.IGNORECASE)
_OWNED = re.compile(r"(?i)(?:,|;|—|–|-)\s*(?:consider\s+it|that['’]s|it['’]s)\s+(?:mine|on\s+me|"
                    r"in\s+hand|handled|sorted|covered)\b|\bleave\s+(?:it|that|this)\s+with\s+me\b|"
                    r"\b(?:that|this|it)\s+(?:one\s+)?(?:is|['’]s)\s+on\s+me\b")


def _frame(text: str, names: frozenset[str]) -> Cue | None:
    """The first-person infinitive frame, read by grammar: a first-person word, then (with no
    other subject, attitude or past event between) "to / will" + a dictionary verb that is no
    state + an object — "Count on me to package up the demo build", "I'm on the hook to pass
    along the recording", "Mine to do: email the itinerary", "I'm happy to be the one who will
    mock up the page"; and ownership ("I've got the MSA, consider it mine")."""
    if _COND.search(text) or _BOILER.search(text):
        return None
    owned = _OWNED.search(text)
    if owned and _FIRST_PERSON.search(text[: owned.start() + 1]) and _OBJECT.search(text):
        return Cue("commitment", text, vocative=_vocative(text, names))
    if re.match(r"(?i)^(?:please|pls|kindly|let['’]s|let\s+us)\b", text):
        return None  # an imperative: its "me" is the reader's object ("Please give me a call")
    fp = _FIRST_PERSON.search(text)
    if fp is None:
        return None
    before = text[: fp.start()].split()
    pron = fp.group(0).casefold()
    if pron in ("me", "us"):
        # the first person as the one counted on: "Count on me to …", "It falls to me to …",
        # "Put me down to …" — after a preposition, or a verb opening the sentence
        if not before or (before[-1].casefold() not in ("on", "to", "upon", "for")
                          and len(before) > 1) or before[-1].casefold() in _CONTROL:
            return None
    elif before and not (re.search(r"[,:;—–]$", before[-1]) or before[-1].casefold() in (
            "and", "but", "so", "also", "then", "ok", "okay", "sure", "yes", "well", "right")):
        return None  # the first person is inside another clause ("It's unlikely that we …")
    for m in _INF.finditer(text, fp.end()):
        between = text[fp.end(): m.start()]
        verb, tail = m.group("v"), m.group("tail")
        if verb == "do" and re.match(r"\s*:\s*([a-z]+)", tail):
            inner = re.match(r"\s*:\s*([a-z]+)(.*)", tail)
            assert inner is not None
            verb, tail = inner.group(1), inner.group(2)
        if verb in _STATES or verb in ("do", "go", "get", "come", "make", "receive") \
                or not is_verb(verb):
            continue
        # A cleft makes the first person the agent of the relative clause: "I'm happy to be
        # the one who will mock up the page" — the promise is "will mock up".
        between = re.sub(r"(?:\b(?:happy|glad|pleased|willing)\s+)?\b(?:to\s+)?be\s+the\s+"
                         r"ones?\s+(?:who|that)\s*$", "", between)
        if not _frame_between(between, pron):
            return None
        if not _OBJECT.search(tail) or _PLEASANTRY.search(tail) or re.match(
                r"^(?:\s+(?:in|up|out|on))?\s+that\b", tail):
            return None
        return Cue("commitment", text, vocative=_vocative(text, names))
    return None


_AUX = frozenset("""am 'm ’m are 're ’re is 's ’s have 've ’ve has be""".split())
_DETERMINERS = frozenset("""the a an my our your this that these those some his her their
its""".split())


def _frame_between(between: str, pron: str) -> bool:
    """What may stand between the first person and "to / will": at most eight words, no comma,
    no attitude, other subject or past event (``_FRAME_BLOCK``), no -ing form (an activity,
    "we have been working to …"), and no lexical verb but a participle after "have" ("I've
    blocked time to …") — nouns that can be verbs count as nouns after a determiner or a
    possessive first person ("on the hook", "my job this week is")."""
    if "," in between or _FRAME_BLOCK.search(between):
        return False
    tokens = re.findall(r"[\w'’-]+", between)
    if len(tokens) > 8:
        return False
    if tokens and tokens[-1].casefold() in ("have", "has", "had", "got", "ve", "'ve", "’ve"):
        return False  # "we'll have to evaluate": an obligation, not a promise
    if any(t.casefold().lstrip("'’") in ("will", "ll", "shall", "can", "may", "must", "should")
           for t in tokens):
        return False
    prev = pron if pron in ("my", "our", "mine") else ""
    for tok in tokens:
        t = tok.casefold()
        if t.endswith("ing") and is_verb(lemma(t)):
            return False
        if t not in _AUX and prev not in _DETERMINERS | {"my", "our"} and t not in (
                "on", "in", "off", "up", "down", "hook", "one", "job", "task", "time") and (
                is_verb(t) or (t != lemma(t) and is_verb(lemma(t)))):
            participle = prev in ("have", "'ve", "’ve", "has") and t.endswith(("ed", "en", "t")) \
                and tok is not tokens[-1]  # "I've blocked time to …", not "we have looked to …"
            if not participle:
                return False
        prev = t
    return True


_PURPOSE = re.compile(r"(?i)\s+so\s+(?:that\s+)?(?:\w+\s+){1,4}?(?:can|could|will|won['’]t|"
                      r"doesn['’]t|don['’]t|does\s+not|do\s+not|isn['’]t|never|stops?)\b.*$")


def _commitment_clause(text: str, names: frozenset[str]) -> Cue | None:
    if text.endswith("?") or _NEG.search(_PURPOSE.sub("", text)):
        return None
    bare = _INTERJECTION.sub("", text)
    if bare != text and re.match(r"(?:Will|will|Going to|going to|Gonna|gonna)\s+[a-z]", bare):
        text = bare[:1].upper() + bare[1:]  # "On it — will have the draft to you tomorrow"
    # No subject, an -ing clause and a date: "Will do — sending the draft tomorrow."
    g = re.match(r"^(?:(?:will do|ok|okay|sure|yes|done|on it|noted)\s*[,.;:!—–-]+\s*)?"
                 r"(?P<v>[A-Za-z]+ing)\s+(?:the|a|an|it|them|this|that|those|these|my|our|you|"
                 r"over|out)\b", text, re.IGNORECASE)
    if g is not None and g.group("v").casefold() not in (
            "looking", "thinking", "hoping", "wondering", "following", "regarding",
            "according", "including", "attaching", "being", "having", "assuming",
            "considering", "going", "during", "morning", "evening", "nothing", "something",
            "anything", "everything", "bring", "thing", "king", "spring", "string", "ring",
            "meeting", "building", "pricing", "funding", "training", "marketing", "planning",
            "thanking", "getting", "waiting", "missing"):
        return Cue("commitment", text, needs_due=True, vocative=_vocative(text, names))
    m = _COMMIT.search(text)
    subject = None
    if m is not None and (m.group("modal") or m.group("subj").lower().startswith(
            ("let", "lem", "happy", "glad", "pleased", "will", "going", "gonna", "planning",
             "aiming", "my plan", "the plan", "i'm", "i am", "we're", "we are", "i’m", "we’re"))
            or "have" in m.group("subj").lower()):
        before = text[: m.start()]
        if before.strip() and not re.search(
                r"(?:^|[,;:(—–-]|\.\.\.|\b(?:and|but|so|then|also|okay|ok|well|yes|yeah|sure|um|uh|"
                r"fine|right|great|absolutely|today|tomorrow|meanwhile|anyway|otherwise|"
                r"instead|first|next|later|now|alright|honestly|thanks|thank\s+you|cheers|"
                r"perfect|noted|understood|certainly|definitely|of\s+course|no\s+worries|"
                r"sounds\s+good|got\s+it|sure\s+thing|as\s+(?:discussed|agreed|requested|"
                r"mentioned|promised)|(?-i:[A-Z][a-z]+)))\s*$", before, re.IGNORECASE):
            return None  # the subject opens no clause ("One example I can give you is …")
        if _COND.search(before) or re.search(r"\b(?:said|told|thought|hoped|wished|promised|"
                                             r"asked|wondered|mentioned)\b\W*$|\b(?:so that|"
                                             r"in order|until|before|after|unless|where|which|"
                                             r"that|than)\s*$", before, re.IGNORECASE):
            return None  # reported, or a clause of purpose / time ("so that I can …")
        if re.search(r"[a-z0-9]\s+so\s*$", before):
            return None  # "… by Tuesday so I can extend the offer" (not "Right, so I will …")
        modal = (m.group("modal") or "").strip().casefold().replace("’", "'")
        rest = m.group("rest")
        if _COND.search(rest.split(",")[0]) and not re.search(
                r"\bif (?:needed|necessary|possible|you (?:want|like)|that (?:works|suits|is ok)"
                r"|it helps)", rest):
            return None
        subj = m.group("subj").lower().replace("’", "'")
        if subj in ("i'm", "i am", "we're", "we are"):
            # "I'm sending the contract over this afternoon": present progressive, with a date
            if modal or not re.match(r"[a-z]+ing\b", m.group("rest")):
                return None
            word = m.group("rest").split()[0]
            if word in ("going", "planning", "hoping", "trying", "aiming", "thinking", "looking",
                        "working", "being", "having", "getting", "feeling", "wondering",
                        "waiting", "talking", "meeting", "seeing", "doing"):
                return None
            return Cue("commitment", text, needs_due=True, vocative=_vocative(text, names))
        if subj.endswith(" to") and subj.split()[0] in ("happy", "glad", "pleased"):
            modal = "'m happy to"
        elif subj.endswith(" to") or subj in ("will", "gonna"):
            modal = "will"
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
        if (word in _STATES and not _STATE_ACTIONS.match(tail)) or _PLEASANTRY.search(tail):
            return None
        if re.match(r"^[a-z]+\s*[:—–]", tail):
            return None  # "Happy to clarify: it runs through finance" answers; it owes nothing
        if word == "do" and (not re.match(
                r"^do\s+(?:the|a|an|my|our|some|it\s+by|that\s+by|this\s+by)\b", tail)
                or re.match(r"^do\s+(?:my|our)\s+(?:best|utmost|part)\b", tail)):
            return None  # "Will do." acknowledges; it names nothing to deliver
        if re.match(r"^\S+(?:\s+(?:in|up|out|on))?\s+that\s+(?!one\b|part\b|item\b)", tail) \
                and not re.match(r"^(?:make sure|ensure|see to it)", tail):
            return None  # "I will chime in that …", "we'll add that …": a remark, not a task
        follow_up = bool(_FOLLOW_UP.match(tail)) and not re.search(
            r"^\S+(?: \S+)?\s+(?:back\s+)?(?:with|on|about|regarding|re)\s+(?:the|your|our|my|a|an|"
            r"this|that|those|these|some|more|details|numbers|figures|results|answers)\b", tail)
        obliged = modal in ("need to", "have to", "must", "'m due to", "should be able to",
                            "'ve got to", "have got to")
        needs_due = follow_up or obliged or modal in ("can", "'m happy to",
                                                               "am happy to", "'re happy to",
                                                               "'d be happy to", "plan to",
                                                               "'m planning to", "intend to")
        if not obliged and modal in ("can", "'m happy to", "am happy to", "'re happy to",
                                     "'d be happy to") \
                and (re.search(r"\b(?:for|to|send|get|give|show)\s+you\b", tail)
                     or subj in ("happy to", "glad to", "pleased to")
                     or (modal != "can" and subj == "i")
                     or re.match(r"(?i)^(?:ok|okay|sure|yes|yep|fine|absolutely|of course|"
                                 r"no problem|will do|happy to help)\b", text)):
            needs_due = follow_up  # an offer made to someone / in answer to a request
        if subj.startswith(("let", "lem")):
            needs_due = needs_due or follow_up
        return Cue("commitment", text, needs_due=needs_due, vocative=_vocative(text, names))
    # The promise told from the reader's side: "You'll have the draft by Friday", "Expect the
    # figures from me tomorrow", "The deck will be with you by Thursday".
    if (re.match(r"^(?:(?:ok|okay|sure|great)[,.!]?\s+)?(?:you['’]ll|you\s+will)\s+"
                r"(?:have|get|receive)\s+(?:the|a|an|my|our|it|them|this|that|those|these)\b",
                text, re.IGNORECASE) or re.match(
                r"^(?:expect|look\s+out\s+for)\s+(?:the|a|an|my|our|it|them|this|that)\b.*"
                r"\b(?:from\s+(?:me|us)|by|on|tomorrow|today|tonight|next|this)\b", text,
                re.IGNORECASE) or re.search(
                r"\bwill\s+be\s+(?:with\s+you|in\s+your\s+inbox|on\s+your\s+desk|ready\s+for\s+"
                r"you|over\s+to\s+you)\b", text, re.IGNORECASE)) and not _COND.search(text):
        return Cue("commitment", text, needs_due=not re.search(r"(?i)\bfrom\s+(?:me|us)\b", text),
                   vocative=_vocative(text, names))
    # A named participant with a plan in the future or the present ("Priya ships it this week",
    # "Sam will move the teams over in November", "Marta to draft the memo").
    for m3 in re.finditer(r"(?:^|[;:,]\s+|\band\s+)(?P<n>[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?)\s+"
                          r"(?P<m>will|'ll|’ll|is going to|to|shall)?\s*(?P<v>[a-z]+)\b", text):
        name = m3.group("n")
        if name.casefold() not in names:
            continue  # "Steve Bergstrom will retain …" is not Steve Kean
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
    body = re.sub(r"^(?:(?:so|ok|okay|right),?\s+)?(?:AI|A/I|Action(?: item)?|TODO|To-?do|"
                  r"Follow-?up|Owner|Assignee|Assigned to|Next step)\s*(?:[:—–-]\s*|"
                  r"\s(?=@?[A-Z])|(?=\())", "", text, flags=re.IGNORECASE)
    patterns = [r"^@?(?P<n>[A-Z][\w'’.-]+(?: [A-Z][\w'’-]+)?)\s*(?:[:—–-]|\bto\b|\bwill\b|"
                r"\bshould\b|\bowns\b|\bto own\b|\b[a-z]+s\b)",
                r"^@(?P<n>[A-Z][\w'’.-]+(?: [A-Z][\w'’-]+)?)\s+(?=[a-z])",
                r"\((?:owner:\s*)?@?(?P<n>[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?)\)\s*(?:[.]?$|[:—–-])",
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

    if _BOILER.search(text) or _SOCIAL.match(text) or re.fullmatch(
            r"(?i)(?:please\s+)?let (?:me|us) know[.!]?", text):
        return None
    vocative = _vocative(text, names)
    # "It would help if you could …", "it'd be great if you could …": a request framed as a
    # condition on the reader's help.
    pa = re.match(r"(?i)^(?:it|that)(?:\s+would|['’]d)\s+(?:really\s+)?(?:help|be\s+(?:a\s+)?"
                  r"(?:\w+\s+)?(?:great|helpful|useful|good|ideal|brilliant|fantastic|lovely|"
                  r"appreciated|help|perfect|wonderful|big\s+help))\s+(?:a\s+lot\s+)?if\s+you\s+"
                  r"(?:could|would|can|were\s+able\s+to)\s+(?:please\s+)?(?P<v>[a-z]+)\b", text)
    if pa and is_verb(pa.group("v")) and pa.group("v") not in _ASK_STATES and \
            not text.endswith("?"):
        return Cue("ask", text, vocative=vocative)
    m = _ASK.search(text)
    if m is not None:
        verb = next((m.group(g) for g in ("verb", "ing", "ing2", "verb2", "verb3", "verb4",
                                          "verb5", "verb6", "verb7", "verb8", "verb9")
                     if m.group(g)), "")
        verb = verb.casefold()
        if m.group("thing") is not None:
            verb = "get"
        before = text[: m.start()]
        # "When you have a moment, could you …": a clause about the reader's time leads the
        # request; any other condition before it makes it hypothetical.
        lead = re.match(r"(?i)^(?:when(?:ever)?|once|if)\s+you\s+(?:have|get|find|can)\b"
                        r"[^,]{0,40},\s*$", before)
        if lead is None and re.search(r"\b(?:if|whether|unless|when)\b", before, re.IGNORECASE):
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
    if _imperative(text) or re.match(
            r"(?i)^(?:please\s+)?(?:(?:don['’]t|do\s+not)\s+forget\s+to|remember\s+to|"
            r"make\s+sure\s+(?:to|you|that\s+you)|be\s+sure\s+to)\s+[a-z]+", text):
        return Cue("ask", text, vocative=vocative)
    # Asking after a thing: "Any update on the contract?", "Where are we on the invoice?"
    if text.endswith("?") and re.match(
            r"(?i)^(?:[A-Z][\w'-]*,\s*)?(?:any\s+(?:update|news|word|progress|eta|luck)s?\b|"
            r"what['’]s\s+the\s+(?:status|eta|latest|timeline)\b|what\s+is\s+the\s+(?:status|eta|"
            r"timeline)\b|where\s+are\s+we\s+(?:on|with)\b|how['’]s\s+.{2,60}\s+coming\b|"
            r"how\s+is\s+.{2,60}\s+coming\b|is\s+there\s+(?:an?\s+)?(?:update|eta)\b)", text):
        return Cue("ask", text, vocative=vocative)
    if re.search(r"(?i)(?:^|\b(?:I['’]m|we['’]re|I\s+am|we\s+are|still)\s+)(?:waiting|looking)\s+"
                 r"(?:on|for)\s+your\s+\w+|\b(?:keen|eager)\s+to\s+(?:get|hear|see)\s+your\b|"
                 r"\bcould\s+(?:really\s+)?use\s+your\s+(?:help|input|eyes|feedback|thoughts|"
                 r"sign-?off|approval)\b|\byour\s+(?:input|feedback|help|approval|sign-?off|review|"
                 r"comments)\b.{0,60}\bwould\s+be\s+(?:appreciated|welcome|great|helpful|much\s+"
                 r"appreciated)\b|\b(?:it['’]d|it\s+would)\s+be\s+(?:great|helpful|good|useful|ideal)\s+to\s+"
                 r"(?:get|have|see|receive)\s+(?:the|your|a|an)\b|\bover\s+to\s+you\b|"
                 r"\bball['’]?s\s+in\s+your\s+court\b|\b(?:I['’]m\s+asking|I\s+am\s+asking)\s+you\s+to\b|"
                 r"\b(?:I['’]d|I\s+would|we['’]d|we\s+would|we)\s+(?:ask|request)\s+that\s+you\b|"
                 r"\bwe\s+request\s+(?:you\s+to|that)\b", text) and not re.search(
                r"(?i)\b(?:if|unless|whether|might|maybe|perhaps)\b", text.split(",")[0]) \
            and not _BOILER.search(text):
        return Cue("ask", text, vocative=vocative)
    if re.search(r"(?i)\b(?:could|can|may)\s+I\s+(?:trouble|bother|ask)\s+you\s+(?:to|for)\b|"
                 r"\b(?:I['’]d|I\s+would|we['’]d|we\s+would)\s+(?:love|appreciate|welcome|value)\s+"
                 r"(?:your|a|an|some)\s+(?!thoughts\b)\w+|\bgrateful\s+if\s+you['’]d\b|"
                 r"\bcan\s+I\s+ask\s+that\s+you\b", text) and not _COND.search(text.split(",")[0]):
        return Cue("ask", text, vocative=vocative)
    d = re.search(r"(?:^|[,;:—–-]\s+|\b(?:so|and|but)\s+)you(?:\s+need\s+to|\s+have\s+to|\s+must|"
                  r"\s+should|\s+will\s+need\s+to|['’]ll\s+need\s+to|['’]ll\s+have\s+to)\s+"
                  r"(?:please\s+)?(?P<v>[a-z]+)\b", text, re.IGNORECASE)
    if d and d.group("v").casefold() not in _STATES and _verbish(d.group("v").casefold()) \
            and not _COND.search(text[: d.start()]) and not text.endswith("?"):
        return Cue("ask", text, vocative=vocative)
    if re.search(r"(?i)\bwhen\s+(?:can|could|will|should|might)\s+(?:I|we)\s+(?:expect|get|see|"
                 r"have|receive)\b", text) or (re.match(
                r"(?i)^(?:I\s+|we\s+)?need\s+(?:the|your|a|an|those|these|that|this)\b", text) \
            and find_phrase(text) is not None) or re.match(
                r"(?i)^let\s+me\s+(?:have|get|see)\s+(?:the|your|a|an|those|these)\b", text):
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


_LEAD_ADVERBIAL = re.compile(r"(?i)^(?:after|in|on|all|having|ultimately|finally|overall|"
                             r"eventually|following|so|well|ok|okay)\b[^,]{0,30},\s+")


_OPEN_DECISION = re.compile(r"(?i)^(?:once|when|whenever|until|till|as\s+soon\s+as|before)\b|"
                            r"\b(?:still\s+(?:pending|open|tbd|under\s+discussion)|pending|tbd|"
                            r"undecided|up\s+in\s+the\s+air|yet\s+to\s+be)\b")


def _decision(text: str) -> Cue | None:
    if _OPEN_DECISION.search(text):
        return None  # "once we've chosen …", "the decision is still pending": not made yet
    if re.search(r"(?i)\bagreed\s+that\b.*(?:\bnot\b|n['’]t\b|\bnever\b)", text):
        return None  # "agreed that X was not feasible": an opinion shared, not a choice
    cue = _decision_marked(text)
    if cue is None:
        cue = _decision_shaped(text)
    return cue


def _decision_marked(text: str) -> Cue | None:
    if text.endswith("?"):
        return None
    if _LEAD_ADVERBIAL.match(text):  # "After weighing it, Porto won out over Madrid"
        core = _decision_marked(text[_LEAD_ADVERBIAL.match(text).end():])  # type: ignore
        if core is not None and not _COND.search(text[: 40]):
            return replace(core, text=text)
    head = _DECISION_HEAD.match(text)
    what = None
    if head is not None:
        what = head.group("what")
    else:
        m = _DECISION.search(text)
        if m is None:
            return None
        before = text[: m.start()]
        if _COND.search(before) or re.search(r"\b(?:not|n't|never|no|yet|whether|if|what|which|"
                                             r"that|why|whatever|how|where)\b\W*$",
                                             before, re.IGNORECASE):
            return None  # negated, asked, or a relative clause ("what we agreed to insert")
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
        if m.group("v") and re.match(r"\s+(?:I|we)(?:['’]d|['’]ll|\s+would|\s+will|\s+should)\b",
                                     text[m.end("v"):]):
            return None  # "so I decided I'd have a look": a plan, not a decision
        if m.group("v") and m.group("v") == "agreed" and not re.match(
                r"\s+(?:to|that|on|upon)\b", text[m.end("v"):]):
            return None
        what = next((m.group(g) for g in ("what", "what2", "what3", "what4", "what5", "what6",
                                          "what7", "what8", "what9", "what10", "what11",
                                          "what12", "what13", "what14", "what15",
                                          "what16", "what17", "what18", "what19", "what20",
                                          "what21", "what22", "what23")
                     if m.group(g)), "")
        if m.group("what9"):
            what = m.group("what9") + (m.group("over") or "")
        if m.group("what22"):
            what = m.group("what22") + (m.group("over22") or "")
        if m.group("what23"):
            what = m.group("what23") + " over " + m.group("over23")
        if m.group("what22") or m.group("what23"):
            lead = m.group("what22") or m.group("what23")
            if re.search(r"(?i)\b(?:who|which|what|whoever|i|we|you|he|she|they|it|this|that)$",
                         lead) or lead.split()[0].casefold() in ("who", "which", "what"):
                return None
        if m.group("v") in ("settled", "landed") and not re.match(r"\s+(?:on|upon)\b",
                                                                 text[m.end("v"):]):
            return None
        if m.group("v") in ("picked", "selected", "chosen", "chose") and re.match(
                r"\s+(?:up|out|through)\b", text[m.end("v"):]):
            return None
        if m.group("what9") and re.search(r"(?i)\b(?:when|if|until|before|after|once|i|we|you)\b",
                                          m.group("what9")):
            return None
        if m.group("v") in ("gone", "went", "plumped") and not re.match(
                r"\s+(?:ahead\s+)?(?:with|for)\b", text[m.end("v"):]):
            return None
        if m.group("v") in ("voted",) and not re.match(r"\s+(?:for|to|in\s+favou?r)\b",
                                                       text[m.end("v"):]):
            return None
        if m.group("v") == "determined" and not re.match(r"\s+(?:that|to)\b", text[m.end("v"):]):
            return None
        if m.group("v") in ("elected", "committed") and not re.match(r"\s+to\b",
                                                                    text[m.end("v"):]):
            return None
        if m.group("v") in ("concluded", "resolved") and not re.match(r"\s+(?:that|to)\b",
                                                                     text[m.end("v"):]):
            return None  # "we have concluded a short term sale"
        if not what or len(words(what)) < 1:
            return None
        if _NEG.search(text[max(0, m.start() - 25): m.start()]):
            return None
    on = m.group("on") if head is None and m is not None else None
    return _decision_cue(text, what, on, head is not None)


def _decision_cue(text: str, what: str | None, on: str | None, headed: bool) -> Cue | None:
    """The decision ``text`` states, choosing ``what``: its rejected alternatives, topic and
    reason read off the chosen part."""
    if not what or (len(what.split()) < 2 and not what.strip()[:1].isupper() and not (
            headed and re.match(r"(?i)(?:\*\*)?(?:final|decision|decided|verdict|agreed)",
                                          text))):
        return None
    rejected = tuple(_alt(r.group("alt")) for r in _REJECTED.finditer(what)
                     if not re.match(r"(?i)(?:to|be|yet|only|just|sure|a\s+lot|much|quite)\b",
                                     r.group("alt")))
    rejected += tuple(_alt(r.group(1)) for r in
                      re.finditer(r"(?:,|;|\band)\s+(?:but\s+)?no\s+([^,.;]+)", what))
    # "… and dropped Y", "Y is off the table", "we passed on Y", "ruled out Y"
    rejected += tuple(_alt(r.group("alt")) for r in re.finditer(
        r"\b(?:dropp(?:ed|ing)|ruled\s+out|ruling\s+out|passed\s+on|passing\s+on|rejected|"
        r"rejecting|scrapp(?:ed|ing)|ditch(?:ed|ing)|shelv(?:ed|ing))\s+(?P<alt>[^.;,()]+)",
        what, re.IGNORECASE))
    rejected += tuple(_alt(r.group("alt")) for r in re.finditer(
        r"(?:,|;|\band|\bbut)\s+(?P<alt>[^.;,()]+?)\s+(?:is|was|are|were)\s+(?:off\s+the\s+table|"
        r"out|rejected|dropped|ruled\s+out)\b", what, re.IGNORECASE))
    rejected = tuple(dict.fromkeys(r for r in rejected if r))
    about: tuple[str, ...] = (_alt(on),) if on else ()
    because = _BECAUSE.search(text)
    about = about + tuple(dict.fromkeys(
        _alt(a.group("topic")) for a in re.finditer(
            r"\b(?:for|about|regarding|re)\s+(?P<topic>(?:the\s+|our\s+)?[\w-]+(?:\s+[\w-]+){0,2}?)"
            r"(?=\s*(?:[,.;:!]|$|\s+(?:rather|instead|over|not|and|but|because|since|as|after|"
            r"from|going|this|next|so)\b))", what)
        if not re.match(r"(?i)(?:now|good|real|sure|all|it|that|this|them|us|me|you|time|"
                        r"a\s|an\s|one|two|the\s+(?:time|moment|record|rest))\b",
                        a.group("topic"))))
    return Cue("decision", text, rejected=rejected, about=about[:3],
               because=" ".join(because.group("why").split()) if because else None)


# A decision by its shape, not its wording: a group or authority as subject, a verb of choosing
# or of ending deliberation (by LEMMA) in a past or perfect form, and the chosen thing; or a
# noun of a settled outcome heading the sentence or a label; or the chosen thing as subject of
# a passive choosing verb ("Porto has been approved for the offsite").
_CHOOSING = frozenset("""choose decide pick opt select settle agree approve adopt ditch drop scrap
reject endorse sign land go commit finalise finalize conclude resolve elect vote ratify greenlight
plump lock standardise standardize converge align rule determine""".split())
# Verbs that choose only with their particle ("settled on", "went with", "signed off").
_PARTICLE = {"settle": r"on|upon|that", "land": r"on|upon", "go": r"with|for|ahead\s+with",
             "sign": r"off", "commit": r"to", "lock": r"in", "opt": r"for|to|in",
             "vote": r"for|to|in\s+favou?r", "agree": r"to|that|on|upon", "conclude": r"that|to",
             "resolve": r"that|to", "elect": r"to", "plump": r"for", "determine": r"that|to",
             "align": r"on|behind", "converge": r"on", "rule": r"that|in\s+favou?r|out|against",
             "standardise": r"on", "standardize": r"on", "decide": r"to|that|on|upon|against|:|,"}
_DROPPING = frozenset("ditch drop scrap reject".split())
_OUTCOME_NOUNS = (r"decision|consensus|verdict|conclusion|outcome|resolution|ruling|agreement|"
                  r"sign-?off|approval|go-?ahead|green\s+light|determination")
_GROUP = (r"(?:we|We|everyone|Everyone|everybody|Everybody|all\s+of\s+us|All\s+of\s+us|"
          r"both\s+of\s+us|Both\s+of\s+us|the\s+rest\s+of\s+us|(?:[Tt]he|[Oo]ur)\s+(?:whole\s+|"
          r"entire\s+|core\s+|steering\s+|project\s+|exec(?:utive)?\s+|leadership\s+|"
          r"working\s+|review\s+|[a-z]+\s+)?(?:team|group|board|committee|panel|council|room|"
          r"leads|partners|execs|executives|founders|directors|stakeholders|leadership|"
          r"management|majority)|[Mm]anagement|[Ll]eadership|[Cc]onsensus|[Tt]he\s+majority)")
_GROUP_VERB = re.compile(
    rf"(?<![\w'’])(?P<subj>{_GROUP})(?P<aux>(?:['’]ve|['’]re|\s+are|\s+have|\s+has|\s+had|\s+all|\s+finally|"
    r"\s+now|\s+eventually|\s+ultimately|\s+officially|\s+unanimously|\s+collectively|"
    r"\s+jointly|\s+formally|\s+already|\s+just|\s+today|\s+yesterday|\s+together|\s+at\s+last|"
    r"\s+basically|\s+effectively|\s+duly|\s+quickly|\s+firmly|\s+clearly|\s+both)*)"
    r"\s+(?P<v>[a-z]+)(?P<rest>.*)$")
_GROUP_NOUN = re.compile(
    rf"(?<![\w'’])(?:{_GROUP})(?:['’]ve|\s+have|\s+has|\s+had|\s+finally|\s+now|\s+all)*\s+"
    r"(?:(?:come|came)\s+down\s+(?:in\s+favou?r\s+of|on\s+the\s+side\s+of|on)\s+(?P<what2>.+)$|"
    r"made\s+up\s+(?:our|its|their)\s+minds?\s*(?:on|about|:|,|—|–)?\s*(?P<what3>.+)$|"
    r"(?:reached|come\s+to|came\s+to|arrived\s+at|made|taken|took|struck|hit)\s+(?:a|an|the|our|"
    r"its|their)?\s*(?:final\s+|unanimous\s+|firm\s+|clear\s+|joint\s+|collective\s+)?"
    rf"(?:{_OUTCOME_NOUNS})\b\s*(?:on|about|regarding|over|for|that|to|:|,|—|–)?\s*(?P<what>.+)$)")
_NOUN_HEAD = re.compile(
    r"^(?:(?:the|The|our|Our|a|A|its|their|[A-Z][\w&-]*['’]s|the\s+\w+['’]s)\s+)?"
    r"(?:final\s+|unanimous\s+|agreed\s+|official\s+|formal\s+|firm\s+|group['’]?s?\s+|"
    r"meeting['’]?s?\s+|team['’]?s?\s+)?"
    rf"(?:{_OUTCOME_NOUNS}|(?<=final\s)(?:call|pick|choice)|(?<=agreed\s)(?:plan|option))"
    r"(?:\s+(?:on|about|for|regarding|re|over)\s+(?P<on>[^,:;]{1,40}?))?"
    r"\s*(?:(?:is|was|has\s+been)\s+(?:in\s*)?(?:[:—–-]\s*)?|[:—–]\s*|->\s*|→\s*)"
    r"(?:to\s+|that\s+|clear\s*[:,—–-]\s*)?(?P<what>\S.+)$")
_LABEL = re.compile(r"^(?:\*\*)?(?P<label>[A-Za-z][\w'’-]*(?:\s+[A-Za-z][\w'’-]*){0,2})(?:\*\*)?"
                    r"\s*(?:[:—–]|->|→)\s*(?:\*\*)?\s*(?P<what>\S.+)$")
_IT_PASSIVE = re.compile(
    r"(?<![\w'’])(?:[Ii]t|[Tt]hat)(?:['’]s|\s+is|\s+was|\s+has)?(?:\s+been|\s+now|\s+finally|"
    r"\s+officially|\s+formally|\s+unanimously|\s+all)*\s+(?P<v>[a-z]+)(?P<rest>.*)$")
_THING_PASSIVE = re.compile(
    r"^(?:(?:so|and|ok|okay|right)\W+)?(?P<what>(?:[\w&/+.-]+\s){0,5}?[\w&/+.-]+)\s+"
    r"(?:has\s+been|have\s+been|was|were|is|are|got|gets|['’]s\s+been|is\s+now|has\s+now\s+been|"
    r"has\s+officially\s+been|was\s+officially|was\s+formally|was\s+unanimously|was\s+finally)\s+"
    r"(?P<v>[a-z]+)(?P<rest>.*)$")
_THING_NOD = re.compile(
    r"^(?P<what>(?:[\w&/+.-]+\s){0,5}?[\w&/+.-]+)\s+(?:got|gets|has\s+got|has|received|"
    r"was\s+given|has\s+been\s+given|won|earned)\s+(?:the|a|our|their|its|final|formal)?\s*"
    r"(?:final\s+|formal\s+|official\s+|unanimous\s+)?(?:go-?ahead|green\s+light|sign-?off|"
    r"approval|nod|thumbs\s+up|vote)\b(?P<rest>.*)$")
_NOT_CHOSEN = re.compile(r"(?i)^(?:who|which|what|whoever|i|you|he|she|they|it|this|that|there|"
                         r"your|my|his|her|their|nothing|none|no|everything|all|each|any|"
                         r"something|anything)\b")
_UNSURE = re.compile(r"(?i)\b(?:believe|think|guess|suppose|assume|hope|wish|unless|until|"
                     r"whether|probably|maybe|perhaps|likely|tentatively|provisionally|"
                     r"pending|subject\s+to|for\s+now|reconsider|revisit|proposed|propose|"
                     r"suggest(?:ed)?|recommend(?:ed)?)\b")
_PAST_CACHE: dict[str, str | None] = {}


def _choosing_past(word: str) -> str | None:
    """The choosing lemma when ``word`` is a past or perfect form of one ("opted" → "opt",
    "chose" → "choose", "signed" → "sign"), else None."""
    w = word.casefold()
    if w in _PAST_CACHE:
        return _PAST_CACHE[w]
    import lemminflect

    out = None
    for lem in lemminflect.getAllLemmas(w).get("VERB", ()):
        forms = set(lemminflect.getInflection(lem, "VBD")) | set(
            lemminflect.getInflection(lem, "VBN"))
        if lem in _CHOOSING and w in forms and w != lem:
            out = lem
            break
    if out is None and w in ("greenlit", "green-lit", "okayed", "okd", "ok'd"):
        out = "approve"
    _PAST_CACHE[w] = out
    return out


def _chosen_after(lem: str, rest: str) -> str | None:
    """What a choosing verb chose, read off the words after it; None when its particle is
    missing ("we settled the invoice", "we agreed" alone)."""
    need = _PARTICLE.get(lem)
    if need is not None:
        p = re.match(rf"\s*(?:{need})\b\s*", rest)
        if p is None:
            return None
        if lem == "decide" and rest.lstrip().startswith("against"):
            return None
        rest = rest[p.end():]
    if lem == "sign":
        rest = re.sub(r"^(?:on|for)\s+", "", rest)
    if lem in ("pick", "select", "choose") and re.match(r"\s*(?:up|out|through)\b", rest):
        return None
    if lem in _DROPPING:
        m = re.match(r"\s*(?P<alt>.+?)\s+(?:in\s+favou?r\s+of|for|and\s+(?:went|are\s+going|"
                     r"will\s+go|chose|picked|opted)\s+(?:with|for)?)\s+(?P<what>.+)$", rest)
        if m is None:
            return None  # only what was dropped: no decision for
        return f"{m.group('what')} over {m.group('alt')}"
    rest = rest.strip()
    return rest or None


def _decision_shaped(text: str) -> Cue | None:
    if text.endswith("?") or _COND.search(text) or _UNSURE.search(text):
        return None
    m = _GROUP_NOUN.search(text)
    if m is not None and not _NEG.search(text[: m.start()] + " ".join(
            text[m.start():].split()[:8])):
        return _decision_cue(text, m.group("what") or m.group("what2") or m.group("what3"),
                             None, True)
    m = _NOUN_HEAD.match(text)
    if m is not None and not _NEG.search(text[: m.start("what")]):
        return _decision_cue(text, m.group("what"), m.group("on"), True)
    m = _LABEL.match(text)
    if m is not None and not _NEG.search(m.group("label")):
        label = [w.casefold() for w in m.group("label").split()]
        if label[0] in ("it", "it's", "it’s", "we", "we've", "we’ve", "all", "now"):
            label = label[1:] or label
        label = [w.strip("'’").removesuffix("'s").removesuffix("’s") for w in label]
        outcome = _OUTCOME_NOUNS + r"|decisions|agreements|outcomes|call|pick|choice|verdicts?"
        if any(w in ("needed", "required", "requested", "wanted", "open", "pending", "due",
                     "tbd", "asked", "sought", "points", "items", "log") for w in label) or \
                re.match(r"(?i)(?:none|nothing|n/?a|tbd|to\s+be|pending)\b", m.group("what")):
            return None  # "Decision needed: …", "Decisions: none this month"
        if (len(label) <= 3 and any(re.fullmatch(outcome, w) for w in label)) \
                or (_choosing_past(label[0]) and label[0] not in ("dropped", "rejected",
                                                                  "scrapped", "ditched")) \
                or (len(label) == 3 and label[1] in ("settles", "decides") and
                    label[2] == "it"):
            return _decision_cue(text, m.group("what"), None, True)
    m = _GROUP_VERB.search(text)
    if m is not None and re.fullmatch(r"(?:['’]re|\s+are)", m.group("aux")) and \
            m.group("v").endswith("ing"):
        lem = lemma(m.group("v"))
        if lem in ("lock", "standardise", "standardize", "commit", "adopt", "opt", "settle",
                   "converge", "align"):
            what = _chosen_after(lem, m.group("rest"))
            if what and not _NEG.search(text[: m.end("v")]):
                return _decision_cue(text, what, None, False)
    if m is not None:
        lem = _choosing_past(m.group("v"))
        before = text[: m.start()]
        if lem and not _NEG.search(before[-25:] + m.group(0)[: m.end("v") - m.start()]) and \
                not re.search(r"(?i)\b(?:what|which|that|why|how|where|when|once|before|after|"
                              r"because|since|as)\W*$", before) and \
                not _NEG.search(m.group("rest")[:12]):
            what = _chosen_after(lem, m.group("rest"))
            if what and lem == "agree" and _NEG.search(what):
                what = None  # "agreed that X was not feasible": an opinion shared, not a choice
            if what:
                return _decision_cue(text, what, None, False)
    m = _IT_PASSIVE.search(text)
    if m is not None and not _NEG.search(text[: m.end("v")]):
        lem = _choosing_past(m.group("v"))
        if lem and lem not in _DROPPING:
            rest = re.sub(r"^\s*(?:on|upon|that|to|:|,|—|–)\s*", "", m.group("rest"))
            if rest and re.match(r"\s*(?:on|upon|that|to|:|,|—|–)", m.group("rest")):
                return _decision_cue(text, rest, None, True)
    for pat in (_THING_PASSIVE, _THING_NOD):
        m = pat.match(text)
        if m is None or _NOT_CHOSEN.match(m.group("what")) or \
                _NEG.search(text[: m.end("what") + 20]):
            continue
        if pat is _THING_PASSIVE:
            lem = _choosing_past(m.group("v"))
            if lem == "agree" and re.match(r"\s*(?:as|upon|on)\b", m.group("rest")):
                pass
            elif lem is None or lem in _DROPPING or lem in ("go", "land", "commit", "lock",
                                                           "align", "converge", "agree",
                                                           "rule", "determine", "conclude",
                                                           "resolve", "settle", "decide"):
                continue
            rest = m.group("rest")
            if lem == "sign":
                if not re.match(r"\s*off\b", rest):
                    continue
                rest = rest.lstrip()[3:]
        else:
            rest = m.group("rest")
        if not re.match(r"\s*(?:as|upon|for|over|instead|rather|in\s+(?:place|favou?r|"
                        r"preference)|,|—|–|\.|$|ahead)", rest) or \
                re.match(r"\s*over\s+the\s+objection", rest):
            continue
        return _decision_cue(text, m.group("what") + rest, None, False)
    return None


def _alt(text: str) -> str:
    """An alternative as named: without a trailing reason ("because …") or filler."""
    text = re.split(r"(?i)\s+(?:because|since|as|due\s+to|given|for|after\s+all|"
                    r"this\s+time|anymore|any\s+more|going\s+forward|from\s+now)\b", text)[0]
    return " ".join(text.split()).strip(" .,:;—–-")


_REJECT_SENTENCE = re.compile(
    r"^(?:(?:so|and|also)\s+)?(?:we(?:['’]ve|\s+have)?\s+(?:dropped|ruled\s+out|passed\s+on|"
    r"rejected|scrapped|ditched|shelved|decided\s+against|said\s+no\s+to|turned\s+down|"
    r"killed|parked)|(?:we(?:['’]re|\s+are)\s+not\s+(?:going|doing)\s+(?:with\s+)?))"
    r"\s+(?P<alt>[^.;]+)|"
    r"^(?P<alt2>[^.;]{2,60}?)\s+(?:is|was|are|were)\s+(?:off\s+the\s+table|out|ruled\s+out|"
    r"rejected|dropped|not\s+an\s+option)\b", re.IGNORECASE)
_BECAUSE_SENTENCE = re.compile(r"^(?:the\s+reason(?:\s+is|:)|that['’]s\s+because|this\s+is\s+"
                               r"because|because|reason:|why\?)\s*(?P<why>[^.;]+)",
                               re.IGNORECASE)


def rejected_line(text: str) -> tuple[str, ...] | None:
    """The alternatives a "Rejected: …" line names (None when it is no such line)."""
    m = _REJECT_HEAD.match(clean(text))
    return _split_alternatives(m.group("alts")) if m else None


def rejected_sentence(text: str) -> tuple[str, ...] | None:
    """The alternative a sentence after a decision turns down ("We dropped Porto.", "Redis is
    off the table."), or None."""
    m = _REJECT_SENTENCE.match(clean(text))
    if m is None or text.rstrip().endswith("?"):
        return None
    alt = _alt(m.group("alt") or m.group("alt2") or "")
    return (alt,) if alt and len(alt.split()) <= 8 else None


def because_sentence(text: str) -> str | None:
    m = _BECAUSE_SENTENCE.match(clean(text))
    return " ".join(m.group("why").split()) if m else None


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
        if verb in _NOT_DELIVERY_VERBS or (verb in STOP and verb not in _PARTICIPLE_IRREGULAR):
            return None
        after = text[m.end():]
        inf = re.match(r"\s+(?:[\w-]+\s+){0,3}?to\s+(?P<v>[a-z]+)\b", after)
        if inf is not None and is_verb(inf.group("v")):
            return None  # "I've blocked time to compile the list": the act is still ahead
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
