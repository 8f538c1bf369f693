"""How the user wants to be answered, told to the assistant: a preference of theirs, kept.

"so you can skip the basics", "no need to explain the pharmacology", "always answer in metric"
(`ANSWER_WANTED`), and orders on the answers' length or tone: "keep it short pls, no essays",
"be blunt i can take it" (`ANSWER_STYLE`). Each becomes "The user wants the assistant ...".
"""

from __future__ import annotations

import re

from memcli.extraction.conversation import person
from memcli.extraction.conversation.dialogue import EMOJI, PLEASE, TAIL, finish

_I = re.IGNORECASE

# how the user wants to be answered, said to the assistant: "so you can skip the basics",
# "no need to explain the pharmacology", "always answer in metric"
ANSWER_WANTED = re.compile(
    r"(?:^|[,;:]\s*|\b(?:so|and|but|also)\s+)(?:pls |please )?(?:you can (?P<skip>skip|leave out|drop|ignore)|"
    r"(?P<not>no need to|you don'?t (?:need|have) to|don'?t|do not|never) (?P<verb>explain|use|give|write|add|include|"
    r"translate|mention|spell out|define|send|suggest|recommend)|(?P<always>always|only) (?P<how>answer|reply|respond|"
    r"write|use|give|explain))\b\s*(?P<rest>.*)$",
    _I,
)
# how the user wants answers, as an order: "keep it short pls, no essays", "be blunt i can take it",
# "short answers today pls, on my phone" (not "be honest, is it good?": a question follows that;
# not "keep it simple": a dish or a plan can be that)
ANSWER_STYLE = re.compile(
    r"(?:^|[,;:]\s*|\b(?:and|also|but|so)\s+)(?:(?:pls|please)\s+)?(?:(?:keep (?:it|them|answers|replies|things)|make (?:it|them)|be) "
    r"(?P<how>short|brief|concise|blunt|direct)|(?P<kind>short|brief|concise) "
    r"(?:answers|replies))\b(?:\s*(?:pls|please)\b)?[\s,;:.!-]*(?P<rest>[^?]*)$",
    _I,
)


def answer_style(core: str, subject: str) -> tuple[str, str] | None:
    """(the subject's preference, the sentence before it) when `core` orders how answers should be
    ("keep it short pls, no essays": "The user wants the assistant's answers short, no essays."),
    else None."""
    m = ANSWER_STYLE.search(core.strip())
    if not m:
        return None
    how = (m.group("how") or m.group("kind")).lower()
    rest = TAIL.sub("", re.sub(r"[\s,]*\b(?:pls|plz|please)\b", "", m.group("rest"), flags=_I)).strip(" .!,")
    rest = person.convert(rest, subject) if rest else ""
    what = "answers and feedback" if how in ("blunt", "direct") else "answers"
    said = f"{subject} wants the assistant's {what} {how}" + (f", {rest}" if rest else "")
    return finish(said), core.strip()[: m.start()].strip(" ,;:")


def wanted_answer(core: str, subject: str) -> tuple[str, str] | None:
    """(the subject's preference, the sentence before it) when `core` tells the assistant how to
    answer ("vet here so you can skip the basics"), else None."""
    if style := answer_style(core, subject):
        return style
    m = ANSWER_WANTED.search(core)
    rest = re.split(f"[{EMOJI}]", m.group("rest"))[0] if m else ""
    rest = TAIL.sub("", PLEASE.sub("", rest)).strip(" .!")
    if not m or not rest:
        return None
    rest = person.convert(rest, subject)
    if m.group("skip"):
        said = f"{subject} wants the assistant to {m.group('skip').lower()} {rest}"
    elif m.group("not"):
        said = f"{subject} does not want the assistant to {m.group('verb').lower()} {rest}"
    else:
        said = f"{subject} wants the assistant to {m.group('always').lower()} {m.group('how').lower()} {rest}"
    return finish(said), core[: m.start()].strip(" ,;:")
