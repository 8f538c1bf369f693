"""A user's turn read in its dialogue: what it states, what it accepts, what it turns down.

A chat line means little alone: "yes let's do that" accepts the assistant's last proposal,
"nah" turns it down, "I'm changing my goal to 1:52 then" leans on what came before, and
"write me a limerick" asks the assistant for something and states nothing about the user.
So a turn is read with the assistant turn before it:

- an acceptance ("yes", "sure", "let's do that", "X it is") keeps the proposal it accepts
  (the assistant sentence it names, else the assistant's last proposal: "Shall I…",
  "I'd suggest…") as the user's decision; a refusal ("no", "nah") keeps nothing of it;
- an edit in reply to a proposal ("make it 20 min at 5:05", "add X") is the user's decision;
- a request addressed to the assistant (write, tell, translate, rephrase, "another one") is
  dropped, and so are the reactions that follow it until the user states something of their
  own ("request mode"): a session of riddles and limericks leaves no note;
- a statement is put in the third person, with the subject the chat leaves implicit
  ("switched to helix last week" -> "The user switched to helix last week"), and when it
  leans on the turn before ("then", "it", "that one", "do 3 before 2") the words that turn
  was about are added: "(about: half marathon, goal)";
- a short turn laughing at the answer or picking one of its items ("the towel one") reacts to it
  (`reacts`), and one naming an item of the answer's list ("will do aftersun") takes up what was
  offered (`takes_up`): neither tells something of the user's own.
"""

from __future__ import annotations

import re
from collections import Counter

from memcli.extraction.conversation import chatter, person

_I = re.IGNORECASE
ACCEPT = re.compile(
    r"^(?:yes|yeah|yea|yep|yup|sure|ok(?:ay)?|deal|agreed|definitely|absolutely|sounds (?:good|great|right)|"
    r"let'?s do (?:that|it|this)|let'?s go with|lets do|let'?s try|that works|works for me|"
    r"good idea|great idea)\b",
    _I,
)
# a choice named and confirmed: "catppuccin mocha it is", "serviceberry yes" (not "oh yes")
_NOT_PICKED = (
    r"(?!(?:ok(?:ay)?|oh|ah|so|well|and|but|then|right|sure|definitely|absolutely|totally|hell|god|lol|"
    r"haha|thanks|thank you|yes|yeah|yep|that|this|it|one)\b)"
)
IT_IS = re.compile(
    rf"^{_NOT_PICKED}[\w\s'-]{{1,40}}?( it is)\W*$|"
    # a "yes" after a name of up to three words, no verb among them ("tuesday is free yes" states)
    rf"^{_NOT_PICKED}(?!.*\b(?:is|are|was|were|has|have|had|does|do|did|needs?|goes|still|can|will)\b)"
    r"[\w'-]+(?: [\w'-]+){0,2}( yes| yep| yeah)\W*$",
    _I,
)
REFUSE = re.compile(r"^(?:nah|nope|not really|no thanks|no(?=\s*[,.!-]))\b[\s,.!-]*|^no\b(?=\s)", _I)
PROPOSAL = re.compile(
    r"^(?:shall|should) (?:i|we)\b|^(?:do you )?want me to\b|^would you like\b|^how about\b|"
    r"^what about\b|\b(?:i'?d|i would) (?:suggest|recommend|start|go|pick|choose|try|fix|use|keep|"
    r"add|do)\b|\b(?:worth (?:trying|it)|i recommend|my recommendation|the best option|"
    r"a good option|is the right call)\b|^(?:you could|you might|you should|try|consider)\b",
    _I,
)
_PROPOSAL_LEAD = re.compile(
    r"^(?:(?:shall|should) (?:i|we)|(?:do you )?want me to|would you like(?: me)? to|"
    r"how about|what about|(?:honestly,? )?(?:i'?d|i would) (?:suggest|recommend|start with|"
    r"go with|pick|choose|try|use|keep|add|do)(?: that)?|(?:i'?d|i would)|"
    r"i recommend|you could|you might|you should|consider)\s+",
    _I,
)
_CLAUSES = re.compile(r"[,;:]\s*(?:but|and|so|or)\s+|;\s+", _I)
AMEND = re.compile(
    r"^(?:but |and |also |then |)(?:make it|add|change|move|swap|remove|drop|keep|put|replace|"
    r"use|do|skip|set|include|switch)\b",
    _I,
)
EMOJI = "\U0001f300-\U0001faff\u2600-\u27bf"
TAIL = re.compile(
    rf"(?:[\s,]*(?:\b(?:lol|haha+|tho|though|honestly|af)\b|:\)|:d|[{EMOJI}]))+"
    r"[\s.!]*$",
    _I,
)
PLEASE = re.compile(r"[\s,]*\b(?:pls|plz|please)\W*$", _I)
THEN = re.compile(r",?\s+then\W*$", _I)
LEANS = re.compile(
    r"^(?:it|its|it's|that|this|those|these|they|them|there|same)\b|\bthat one\b|\bthe same\b|"
    r"\bstep \d|\b\d+ (?:before|after) \d+\b|\bbetween \d+ and \d+\b|"
    r"\b(?:for|with|about) (?:that|it|this)\W*$",
    _I,
)
MOOD = re.compile(
    r"^(?:i'?m|im|i am|feeling|feel) (?:so |really |very |kinda |a bit |pretty )?(?:bored|tired|"
    r"hungry|sleepy|busy|sad|happy|excited|stressed|sick|exhausted|fine|ok|okay|good|great|better|"
    r"back|glad|sorry)\b|"
    # without a subject: "bored waiting in the ute", but not "tired of the old tractor"
    r"^(?:so |really |very )?(?:bored|tired|hungry|sleepy|exhausted|knackered)\b(?! of\b| with\b)",
    _I,
)
PRONOUN_OBJECT = re.compile(r"\b(?:it|that|this)\b", _I)
YOU = re.compile(r"\b(?:you|your|you're|youre|u)\b", _I)
FIRST = re.compile(r"\b(?:i|i'm|im|i've|i'll|i'd|my|me|mine|we|we're|we've|we'll|our|us)\b", _I)
_WORDS = chatter.WORDS
# the verb a subject-less line starts with, after an adverb: "officially switched to ezyvet"
_PAST_START = re.compile(
    r"^(?:(?:officially|finally|just|already|actually|basically|totally|also|literally)\s+)?([a-z]+)\b", _I
)


# contractions typed without their apostrophe: "whats a japanese tongue twister" asks like
# "what's ...", "thats much nicer" reacts like "that's much nicer"
_BARE = re.compile(
    r"\b(what|that|how|where|who|why|there|here)s\b|"
    r"\b(don|doesn|didn|can|isn|aren|wasn|weren|haven|hasn|shouldn|couldn|wouldn)t\b",
    _I,
)


def _apostrophe(m: re.Match) -> str:
    return f"{m.group(1)}'s" if m.group(1) else f"{m.group(2)}'t"


def clean(sentence: str) -> tuple[str, bool]:
    """The sentence without chat fillers around it ("ok so", "lol", trailing "then"), and
    whether it ended in "then" (it leans on the turn before)."""
    core = _BARE.sub(_apostrophe, sentence.strip())
    for _ in range(2):
        core = chatter.strip_lead(core)
        core = TAIL.sub("", core).strip()
    core = re.sub(r"\s+\b(?:lol|haha+|lmao)\b", "", core, flags=_I)  # "(4 people lol)"
    core = re.sub(r"[\s,]+(?:and|but|or|so)\W*$", "", core, flags=_I)  # "... and honestly..." trailing off
    then = bool(THEN.search(core))
    return THEN.sub("", core).strip(" ,;:-"), then


_AUX = r"can|could|should|would|will|do|does|did|shall|may"  # a question's verb before its subject
_WH = r"how|what|why|where|when|which|who"
INVERTED = re.compile(rf"^(?:{_AUX}|is|are|am)\s+(?:i|you|we|it|they|he|she)\b|^(?:{_WH})\b[^,]*$", _I)
# a sentence announcing a question: "lazy question: ...", "settle a bet: is a tomato a fruit"
ASK_LEAD = re.compile(
    r"^(?:(?:quick|lazy|random|dumb|silly|stupid|serious|honest|small|weird|odd|simple|side|real)\s+)?"
    r"(?:question|q|qn|(?<=\s)one)\s*(?:[:,-]\s*|(?:from|for) [\w'’]+\W*$)|"
    r"^settle (?:(?:a|an|this|the|our) (?:bet|argument|debate|dispute)\s*[:,-]?|this\s*[:,-]|it\s*[:,-])\s*",
    _I,
)
# laughter or surprise: a short turn holding it reacts to what the assistant just said ("60
# years, mad"; but not "mad at the contractor")
LAUGH = re.compile(
    r"\b(?:lol|lmao|rofl|haha\w*|hehe\w*|wow|whoa|omg|no way|wild|crazy|insane|nuts|bonkers|unreal|"
    r"mad(?! (?:at|about|with|that)\b))\b|[\U0001F602\U0001F923]",
    _I,
)
# "what about the gutters, they're full": the question before a statement; a comma inside a
# quote ("how do you say "good morning, have a nice day"") does not end it
WH_LEAD = re.compile(r"^(?:how|what|why|where|when|which|who)\b[^,\"“「]{0,30},\s*", _I)


# quoted text inside a question ("how do you say "thanks, it was lovely" in french") is the
# material it asks about: its commas do not end the question
_QUOTED = re.compile(r'"[^"]*"|“[^”]*”|「[^」]*」|(?<!\w)\'[^\']{3,}\'(?!\w)')


_CONJUNCTION = re.compile(r"^(?:and|but|or|so|also)\s+", _I)
# a question asked after a statement in one sentence, its mark left off: "its swollen a bit, can i
# play this week", "took leave 13th to 15th, what should i pack"
_ASKED_AFTER = re.compile(rf"[,;]\s*(?:(?:and|but|so|also)\s+)?(?:(?:{_WH})\s+)?(?:{_AUX})\s+(?:i|we|you)\b", _I)


# the question closing a sentence that first states something: "my first patient is at 8 and i
# get there 7:20, is 40 min enough to run the batch?", "the x-rays i send to imagem, should i ask
# for dicom?"
_QUESTION_AFTER = re.compile(
    rf"[,;]\s*(?:(?:and|but|so|also)\s+)?(?:(?:{_WH})\b|(?:{_AUX}|is|are|am|was|were|isn['’]t|any)\s+\w)[^,;]*[?？]\s*$",
    _I,
)


def before_question(sentence: str) -> str:
    """What a sentence ending in a question states before it, in the first person and at least
    four words ("" when nothing): the facts the user gives as the question's context."""
    m = _QUESTION_AFTER.search(_QUOTED.sub(lambda q: "_" * len(q.group(0)), sentence))
    head = sentence[: m.start()].strip(" ,;") if m else ""
    return head if len(head.split()) >= 4 and FIRST.search(head) else ""


# who said something, without what ("my grandma says so"), or a question someone asked ("how long
# would it take to drive to the moon, lucas asked"): the question is what was said, not a fact
_SAYS = r"(?:says|said|asked|asks|thinks|reckons|wonders|wondered)"
_SAID_ONLY = re.compile(rf"^(?:[\w'’]+\s+){{0,3}}{_SAYS}(?:\s+so)?\W*$", _I)
_ASKED_BY = re.compile(rf",\s*(?:[\w'’]+\s+){{1,2}}{_SAYS}\W*$", _I)
_WH_START = re.compile(rf"(?:{_WH})\b", _I)


def reported(core: str) -> bool:
    """Someone's saying with nothing said, or a question reported as someone's."""
    m = _ASKED_BY.search(core)
    return bool(_SAID_ONLY.match(core)) or (
        m is not None and (is_question(core[: m.start()]) or bool(_WH_START.match(core)))
    )


def is_question(core: str) -> bool:
    """A question without its question mark: "can i make it faster", "what time", "and what do i
    pack for her"."""
    return bool(INVERTED.match(_CONJUNCTION.sub("", _QUOTED.sub('""', core))))


def without_question(core: str) -> tuple[str, str]:
    """`core` without a question asked at its end, and that question ("" when none)."""
    m = _ASKED_AFTER.search(_QUOTED.sub(lambda q: "_" * len(q.group(0)), core))
    return (core[: m.start()].rstrip(" ,;"), core[m.start() :].lstrip(" ,;")) if m else (core, "")


def is_reaction(core: str) -> bool:
    """An acknowledgement or a reaction: "perfect", "makes sense", "printing it", "I love it"."""
    words = _WORDS.findall(core)
    if any(ch.isdigit() for ch in core):
        return False
    if len(words) <= 2 or MOOD.match(core) or chatter.is_acknowledgement(core):
        return True
    if len(words) <= 6 and re.match(r"(?:a )?bit of an? ", core, _I):
        return True  # "bit of a jump" (a price went up), "bit of a shake up": a comment on it
    if len(words) <= 5 and chatter.ACK_START.match(core):
        return True
    return len(words) <= 5 and bool(PRONOUN_OBJECT.search(core))


def subject_less(core: str) -> bool:
    """Chat drops the subject: "switched to helix last week", "got a macbook today"."""
    m = _PAST_START.match(core)
    if not m:
        return False
    word = m.group(1).lower()
    if word in ("want", "need", "hope", "plan", "prefer", "love", "hate", "think", "guess", "wish"):
        return len(core.split()) > 2
    if core[m.end(1) :].lstrip().lower().startswith("of "):
        return False  # "bit of a shake up": a noun, not "bit" the verb
    return person._is_past(word) and word not in (
        "was",
        "were",
        "read",
        "set",
        "put",
        "cut",
        "let",
        "hit",
        "cost",
        "fit",
        "bet",
        "used",
        "red",
        "bed",
        "shed",
        "need",
        "spread",
        "beat",
    )


def third_person(core: str, subject: str, group: str) -> str:
    """`core` (a user's sentence) stated in the third person, capitalised, with a full stop."""
    if subject_less(core):
        core = "I " + core
    elif re.match(
        r"(?:loving|using|thinking|planning|going|trying|learning|working|looking)\b", core, _I
    ) and not re.search(r"\b(?:is|are|was|were)\b", core, _I):
        core = "I'm " + core
    text = person.convert(core, subject, group)
    return finish(text)


def finish(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[:1].upper() + text[1:]
    return text if text[-1] in ".!…)」”\"'`" else text + "."


def proposal(assistant_text: str, reply: str, sentences) -> str | None:
    """The assistant sentence a reply accepts: the one sharing most words with the reply,
    else the last proposal; None when the assistant proposed nothing."""
    cands = [s for s in sentences(assistant_text) if len(_WORDS.findall(s)) >= 3]
    if not cands:
        return None
    offers = [s for s in cands if PROPOSAL.search(s)]
    if not offers:
        return None  # "yep" to a diagnosis accepts nothing
    asked = {w.lower() for w in _WORDS.findall(reply)} - _ACCEPT_WORDS - _COMMON

    def overlap(s: str) -> int:
        return len(asked & {w.lower() for w in re.findall(r"[A-Za-z0-9]+", s)})

    content = [s for s in offers if not re.search(r"\b(?:it|that|this|them)\b", s, _I)]
    best = max(content or offers, key=overlap)  # "Want me to set it up?" names nothing
    if not overlap(best):
        named = max(cands, key=overlap)
        best = named if overlap(named) else (content or offers)[-1]
    clauses = [c for c in _CLAUSES.split(best) if PROPOSAL.search(c)]
    best = clauses[0] if clauses else best
    text = _PROPOSAL_LEAD.sub("", re.sub(r"\*\*|`", "", best)).rstrip("?？ ").strip()
    return person.second_person(text)


_ACCEPT_WORDS = frozenset(
    "yes yeah yea yep yup sure ok okay deal agreed let's lets do that it this go with try "
    "sounds good great right works for me idea is pls please".split()
)
_COMMON = frozenset("the a an and or to of in on for with is it that this i you we be at as by".split())


def context_terms(sentence: str, before: list[str], session: Counter, stop: frozenset[str], n: int = 2) -> list[str]:
    """The words the turns `before` were about (most frequent in the session), not in `sentence`."""
    own = {w.lower() for w in _WORDS.findall(sentence)}
    order: dict[str, int] = {}
    for text in before:
        for w in re.findall(r"[a-z][a-z0-9-]+", text.lower()):
            if len(w) > 2 and w not in stop and w not in own and session[w] >= 2:
                order.setdefault(w, len(order))
    picked = sorted(order, key=lambda w: (-session[w], order[w]))[:n]
    return sorted(picked, key=lambda w: order[w])


def session_counts(texts: list[str], stop: frozenset[str]) -> Counter:
    counts: Counter = Counter()
    for text in texts:
        counts.update(w for w in re.findall(r"[a-z][a-z0-9-]+", text.lower()) if w not in stop)
    return counts


HOME = re.compile(
    r"\b(?:home|flat|apartment|house|move|moving|moved|lease|rent|trip|travel|flight|holiday|vacation|"
    r"hotel|dinner|partner|wife|husband|kids?|family|dog|cat|wedding|weekend|parents?|"
    r"vet|pet|puppy|kitten|groceries|garden|baby|mum|mom|dad|mother|father|sister|brother|"
    r"girlfriend|boyfriend|gf|bf|birthday|christmas)s?\b",
    _I,
)


def group_for(sentence: str, texts: list[str], subject: str) -> str:
    """Who "we" is: the subject's team when the talk is about work, their household when it is
    about home; the sentence decides first, then the user's turns of the session; when neither
    does, the subject alone (a "we" of unknown company still includes the user: "the user's
    team is switching her off the hills" about a cat would be made up)."""
    for scope in ([sentence], texts):
        work = sum(len(person._WORK.findall(t)) for t in scope)
        home = sum(len(HOME.findall(t)) for t in scope)
        if work != home:
            return f"{subject}'s team" if work > home else f"{subject}'s household"
    return subject


# words of code, units and counting, frequent in chats and about nothing
_NOT_TOPICS = frozenset(
    """true false null none min mins sec secs per two three four five six seven eight nine ten
add show keep put set run start short got get let use via etc yes""".split()
)


def topics(texts: list[str], stop: frozenset[str], n: int = 10) -> list[str]:
    """The words a chat is most about: said at least twice, three letters or more, not
    stopwords; most frequent first, ties in order of appearance."""
    words = re.findall(r"(?<![\w.])[a-z][a-z-]*[a-z](?![\w.(])", "\n".join(texts).lower())
    counts = Counter(w for w in words if len(w) > 2 and w not in stop and w not in _NOT_TOPICS)
    first: dict[str, int] = {}
    for i, w in enumerate(words):
        first.setdefault(w, i)
    return sorted((w for w, c in counts.items() if c >= 2), key=lambda w: (-counts[w], first[w]))[:n]


def reacts(text: str, answer: str) -> bool:
    """A short turn of laughter or surprise, or one that picks an item of the answer: a reaction
    to the answer ("two minutes lol. wow", "the towel one will break mina's brain")."""
    if len(chatter.WORDS.findall(text)) > 9:
        return False
    picked = _PICKED.match(text.strip())
    return bool(LAUGH.search(text) or _INTEREST.search(text)) or bool(picked and picked[1].lower() in answer.lower())


def takes_up(text: str, answer: str) -> bool:
    """A short turn naming an item of the answer's list ("will do aftersun" after "- Aftersun
    (quiet, devastating)"): the user takes up what was offered."""
    if not answer or len(chatter.WORDS.findall(text)) > 9:
        return False
    lines = [re.sub(r"\([^)]*\)", "", x) for x in answer.split("\n") if re.match(r"\s*(?:[-*•]|\d+[.)])\s", x)]
    # an item to pick is a name ("Aftersun (quiet, devastating)"), not a line of advice
    items = {w.lower() for x in lines if len(re.findall(r"\w+", x)) <= 6 for w in re.findall(r"[\w'-]{4,}", x)}
    return bool(items & {w.lower() for w in re.findall(r"[\w'-]{4,}", text)})


# "oh its not even baked. interesting": what the answer taught, said back
_INTEREST = re.compile(r"\b(?:interesting|fascinating|huh|til|who knew|good to know|learn(?:ed|t) something)\b", _I)
# "the towel one", "that riddle one": an item of the answer named by a word from it
_PICKED = re.compile(r"(?:the|that) ([\w'-]{3,}) one\b", re.IGNORECASE)
