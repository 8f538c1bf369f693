"""One user turn into third-person statements, with what the dialogue says about it (dialogue.py).

The sentence split, the section cues and the stopwords are the rule extractor's
(rules.py), handed in through Turn so this module does not import it back.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from memcli.extraction.conversation import chatter, cjk, wanted
from memcli.extraction.conversation import dialogue as d

PREFERS = re.compile(
    r"\b(?:i'?d|i would|we'?d) rather\b|\brather not\b|\b(?:love|loves|hate|hates|favou?rite|can't stand|"
    r"enjoy|enjoys)\b|\bbest part\b",
    re.IGNORECASE,
)
# "and nah to the ispindel, konrad hates gadgets": a suggestion turned down anywhere in the turn
_NO_TO = re.compile(
    r"^(?:(?:and|but|also|oh|ok|so)\s+)*(?:no|nah|nope)\s+to\s+(?P<thing>[\w'-]+(?: [\w'-]+){0,3})\s*[,;:]\s+(?P<rest>\S.*)$",
    re.IGNORECASE,
)
_DIGIT = re.compile(r"\d")
ASKED, REQUESTED = 1, 2
LETS = re.compile(r"let'?s\s+", re.IGNORECASE)
# "I'm changing my goal to 1:52": a new value, stated as the current one
CHANGE = re.compile(
    r"^(?:i'?m|im|i am|i'?ve|i have|i) (?:just |now |finally )?(?:changing|changed|moving|moved|"
    r"switching|switched|setting|set|updating|updated|bumping|bumped|raising|raised|lowering|lowered)"
    r" (?:my|the) ([\w'’:./+ -]{2,40}?) (?:from \S+ )?to (.+)$",
    re.IGNORECASE,
)


@dataclass
class Turn:
    """The dialogue so far, as the next user turn needs it."""

    counts: Counter  # words of the session (the user's count double): what context words to name
    split: Callable[[str], list[str]] = lambda text: [text]
    section: Callable[[str], str | None] = lambda s: None  # a section cue in the sentence, if any
    stop: frozenset = frozenset()
    assistant: str = ""  # the assistant turn the user answers ("" once answered)
    before: list[str] = field(default_factory=list)  # the last two turns' text
    current: str = ""  # the user turn being read
    user_before: list[str] = field(default_factory=list)  # the user's earlier turns of the session
    # the user is asking the assistant, not telling about themselves: ASKED after a question
    # ("how many ml in a cup"), REQUESTED after a request ("write me a limerick")
    request_mode: int = 0
    # a chat with an assistant: questions and "you" address it; between people (a group chat)
    # they address each other and say as much about the speakers as anything else
    with_assistant: bool = True
    # the turn's last request was for the user's own task (chatter.own_task); None: it made none
    own_task: bool | None = None


def _refusal_object(thing: str, subject: str) -> str:
    """ "dog walker" (of "no dog walker") -> "The user does not want a dog walker." """
    rest = thing.strip(" .!")
    if re.match(r"(?:a|an|the|any|more|some)\b", rest, re.IGNORECASE) or re.search(r"[^s]s$", rest):
        return d.finish(f"{subject} does not want {rest}")
    article = "an" if rest[:1].lower() in "aeiou" else "a"
    return d.finish(f"{subject} does not want {article} {rest}")


# "no ebike, i want the exercise": a thing turned down, then what the user says instead
_NO_THING = re.compile(
    r"^no (?!(?:i|we|it|that|this|thanks|thank|worries|problem|way|need|idea|one|not)\b)"
    r"(?P<thing>[\w'-]+(?: [\w'-]+){0,2})\s*[,;:]\s+(?P<rest>\S.*)$",
    re.IGNORECASE,
)


def _with_context(statement: str, core: str, turn: Turn) -> str:
    terms = d.context_terms(core, [*turn.before, turn.assistant, turn.current], turn.counts, turn.stop)
    if not terms:
        return statement
    return statement.rstrip(".") + f" (about: {', '.join(terms)})."


def _statement(core: str, k: int, refusing: bool, subject: str, turn: Turn, group: str) -> tuple[str, str, bool]:
    """(section, statement, whether it is self-contained) of a kept sentence."""
    if k == 0 and refusing and core.lower().startswith("no "):
        return "Preferences", _refusal_object(core[3:], subject), True
    chosen = d.IT_IS.match(core)
    if chosen:  # "catppuccin mocha it is"
        return "Decisions", d.finish(f"{subject} chose {core[: chosen.start(chosen.lastindex or 1)].strip()}"), True
    please = bool(d.PLEASE.search(core))
    core = d.PLEASE.sub("", core).strip()
    if please and not d.FIRST.search(core):
        return "Preferences", d.finish(f"{subject} asked for: {core}"), False
    change = CHANGE.match(core)
    if change:
        value = d.person.convert(change.group(2), subject, group)
        return "Decisions", d.finish(f"{subject}'s {change.group(1)} is now {value}"), False
    lets = LETS.match(core)
    if lets:
        return (
            "Decisions",
            d.finish(f"{subject} decided to {d.person.convert(core[lets.end() :], 'them', group)}"),
            False,
        )
    section = turn.section(core) or ("Preferences" if PREFERS.search(core) else "Facts")
    if k == 0 and refusing:
        section = "Preferences"
    return section, d.third_person(core, subject, group), False


def _proposal_statement(text: str, first: str, first_core: str, subject: str, turn: Turn) -> list[tuple[str, str]]:
    if not turn.assistant or turn.request_mode:
        return []
    if not (d.ACCEPT.match(first.strip()) or d.IT_IS.match(first_core)):
        return []
    accepted = d.proposal(turn.assistant, first, turn.split)
    if not accepted:
        return []
    return [("Decisions", d.finish(f"{subject} agreed to the assistant's suggestion: {d.finish(accepted)}"))]


def user_turn(text: str, subject: str, turn: Turn) -> tuple[list[tuple[str, str]], int]:
    """([(section, statement)], 0 or whether the turn ASKED or REQUESTED something of the assistant)."""
    if cjk.is_cjk(text):
        lines = [x for x in _SCRIPT_BREAK.split(text) if x.strip()]
        if len(lines) > 1 and not all(cjk.is_cjk(x) for x in lines):
            return _by_line(lines, subject, turn)
        got = cjk.statement(text)
        if got is None:
            return [], REQUESTED if cjk.REQUEST.search(text) else ASKED if cjk.QUESTION.search(text) else 0
        return [(got[0], cjk.render(got[1], subject))], 0
    turn.current = text
    sents = turn.split(text)
    if not sents:
        return [], 0
    who = subject.lower() if subject == "The user" else subject
    first_core = d.clean(sents[0])[0]
    out = _proposal_statement(text, sents[0], first_core, subject, turn)
    refusing = bool(turn.assistant and d.REFUSE.match(sents[0].strip()))
    asked = turn.request_mode
    # the turn's own question is about the user's matter when it asks in the first person ("should
    # i mention the standup thing?") or follows what they stated ("its fine? lab results pull in
    # automatically"): what follows it is context they give, not talk about the answer
    own = False
    turn.own_task = None
    for k, s in enumerate(sents):
        requesting = asked == REQUESTED
        if k == 0 and out and len(s.split()) <= 6:
            continue  # the acceptance itself ("yes pls as a PR template"): its proposal is kept
        if s.rstrip().endswith(("?", "？")):
            own = not turn.request_mode and (own or bool(out) or bool(d.FIRST.search(s)))
            asked = max(asked, ASKED)
            if not (s := d.before_question(s)):  # what it states first is the user's own context
                continue
        turned_down = _NO_THING.match(s.strip()) if k == 0 and refusing else turn.assistant and _NO_TO.match(s.strip())
        if turned_down:  # the refusal and what follows it, each a statement
            out.append(("Preferences", _refusal_object(turned_down["thing"], subject)))
            s = turned_down["rest"]
        core, then = d.clean(
            d.REFUSE.sub("", s.strip())
            if k == 0 and refusing and not turned_down and not wanted.ANSWER_WANTED.search(s)
            else s
        )
        core = d.WH_LEAD.sub("", core)
        lead = d.ASK_LEAD.match(core)
        if lead:  # what follows is the question; a line of the user's own ("i want to...") still counts
            asked = max(asked, ASKED)
            core = core[lead.end() :]
        if not core or (lead and not d.FIRST.search(core)):
            continue
        if chatter.is_request(core):
            asked = REQUESTED  # what follows in the turn is material for the request
            turn.own_task = chatter.own_task(core)
            continue
        core, tail = d.without_question(core)
        if tail:  # as a sentence ending in "?" (above)
            own = not turn.request_mode and (own or bool(out) or bool(d.FIRST.search(tail)))
            asked = max(asked, ASKED)
        if not core or d.is_question(core) or d.reported(core):
            asked = max(asked, ASKED)
            continue
        group = d.group_for(core, [text, *turn.user_before], who)
        digit = bool(_DIGIT.search(core))
        if turn.assistant and not requesting and d.AMEND.match(core) and (digit or len(core.split()) >= 3):
            edit = d.person.convert(core, subject, group)
            out.append(("Decisions", d.finish(f"{subject} asked to {edit[:1].lower()}{edit[1:]}")))
            continue
        how = wanted.wanted_answer(core, subject) if turn.with_assistant else None
        if how:  # "so you can skip the basics": how to answer, kept; what came before goes on
            out.append(("Preferences", how[0]))
            core = how[1]
            if len(chatter.WORDS.findall(core)) < 2:
                continue
        if _aside(core, turn, digit, asked, own, bool(turn.own_task)):
            continue
        section, statement, whole = _statement(core, k, refusing, subject, turn, group)
        if (then or d.LEANS.search(core) or len(core.split()) <= 3) and not whole and turn.with_assistant:
            statement = _with_context(statement, core, turn)
        out.append((section, statement))
    return out, asked


# where a turn goes from one script to another: a new line, or a colon before Chinese, Japanese or
# Korean text ("help me reply: 周老师，我12月1日...")
_SCRIPT_BREAK = re.compile(rf"\n+|(?<=[A-Za-z]:)\s*(?={cjk.CJK.pattern})")


def _by_line(lines: list[str], subject: str, turn: Turn) -> tuple[list[tuple[str, str]], int]:
    """A turn read as Chinese, Japanese or Korean that holds lines in English, each line read in
    its own script ("im learning mandarin, classes on saturdays ... can u check mine:" and the
    Chinese text to check): a CJK line after a request is its material, unless the request is
    for the user's own task ("help me with the invitation stuff pls" and the visit's details in
    Chinese: chatter.own_task). (A turn mostly in English goes through the English rules sentence
    by sentence, as before.)"""
    out: list[tuple[str, str]] = []
    asked = 0
    own = False  # the last request was for the user's own task
    for k, line in enumerate(lines):
        material = asked == REQUESTED and not own
        if cjk.is_cjk(line) and (material or (k and _introduces(lines[k - 1], asked))):
            continue  # "can u check mine:" and the text to check
        got, now = user_turn(line, subject, turn)
        out += got
        asked = max(asked, now)
        if turn.own_task is not None:  # the line asked for something: whose task it is
            own = turn.own_task
    return out, asked


def _introduces(line: str, asked: int) -> bool:
    """A line announcing the text after it as material for a question or a request ("the teacher
    wants a short self intro, can u check mine:")."""
    return line.rstrip().endswith((":", "：")) and (
        bool(asked) or any(chatter.is_request(c.strip()) for c in re.split(r"[,;.]", line))
    )


def _aside(core: str, turn, digit: bool, asked: int, own: bool, own_task: bool) -> bool:
    """A sentence of the turn that states nothing about the user: addressed to the assistant, a
    reaction or small talk, about the answer to a question, or material for a request (the user's
    own lines after a request for their own task still count: chatter.own_task)."""
    if (
        (turn.with_assistant and d.YOU.search(core) and not digit)
        or (d.is_reaction(core) and not d.IT_IS.match(core))
        or chatter.chit_chat(core)
    ):
        return True
    if asked and turn.with_assistant and not d.FIRST.search(core) and not (own and asked == ASKED):
        return True  # "american recipe so 240": about the answer, not the user
    mine = own_task and bool(d.FIRST.search(core))  # "i close with gus tue to thu"
    return (
        asked == REQUESTED
        and turn.with_assistant
        and not (digit or mine or turn.section(core) in ("Decisions", "Preferences"))
    )
