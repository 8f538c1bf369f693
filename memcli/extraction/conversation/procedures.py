"""Procedures the user settled on: the assistant's numbered list that the user accepted, or
the user's own.

An assistant often writes steps (a checklist, a runbook, a routine) and the user edits them
("do 3 before 2", "add rollback between 5 and 6") until they say it is right ("perfect,
that's the routine", "👌 putting it in the wiki"). The version to remember is the last one:
a list is kept when the user's next turn accepts it, or when it is a revision the user asked
for and they do not reject it; a list followed by an edit and a new version is superseded.
A list the user answers with a question or a "no" (options to choose from, a diagnosis) is
not a procedure. A list the assistant writes because the user asked for it ("need to update
the closing checklist", "add the weather note before the timer") is the user's unless they
reject it; a "no" to the question that closes it ("Should step 4 come first?") answers the
question, not the list. A list the user writes themselves ("my plan per stop: 1. ...") is kept
in their words unless the assistant's revision of it is kept after it. Steps are kept in order,
"you" made "the user", "I" and "my" the user's.
"""

from __future__ import annotations

import re

from memcli.extraction.conversation.messages import text_of
from memcli.extraction.conversation.person import convert, second_person

MIN_STEPS = 3
_STEP = re.compile(r"^\s*(\d{1,2})[.)]\s+(.+)$")
_ACCEPT = re.compile(
    r"^\W*(?:yes|yeah|yep|yup|sure|ok(?:ay)?|perfect|great|good|nice|done|deal|agreed|exactly|"
    r"sounds|looks|that'?s (?:it|the|right|perfect|great)|thanks|thx|ty|merged|saved|printing|"
    r"lgtm|works)\b|^\W*(?:👍|👌|✅|🙏)",
    re.IGNORECASE,
)
_REFUSE = re.compile(r"^\W*(?:no|nah|nope|not really|hmm)\b", re.IGNORECASE)
# a user turn asking for steps or for a change to them
_ASKS_STEPS = re.compile(
    r"\b(?:checklist|check list|list|steps|routine|procedure|runbook|recipe|plan|order|step \d)\b|"
    r"^\W*(?:\w+\s+){0,2}(?:add|move|swap|drop|remove|put|insert|change|update|updte|reorder)\b",
    re.IGNORECASE,
)


def _steps(text: str) -> tuple[str, list[str]]:
    """The longest run of numbered lines in `text` (1., 2., 3. ...) and the line before it."""
    lines = text.split("\n")
    best: tuple[str, list[str]] = ("", [])
    i = 0
    while i < len(lines):
        m = _STEP.match(lines[i])
        if not m or m.group(1) != "1":
            i += 1
            continue
        run, j = [], i
        while j < len(lines):
            m = _STEP.match(lines[j])
            if m and int(m.group(1)) == len(run) + 1:
                run.append(m.group(2).strip())
            elif lines[j].strip() and not lines[j].startswith((" ", "\t")):
                break
            j += 1
        title = next((ln.strip() for ln in reversed(lines[:i]) if ln.strip()), "")
        title = re.split(r"(?<=[.!?])\s+", title)[-1]  # the sentence that introduces the list
        if len(run) > len(best[1]):
            best = (title, run)
        i = max(j, i + 1)
    return best


def _plain(text: str) -> str:
    return re.sub(r"\*\*|__|`", "", text).strip().rstrip(":").strip()


def _clean(text: str) -> str:
    """A step in the assistant's words, "you" made "the user"."""
    return second_person(_plain(text))


def _mine(text: str) -> str:
    """A step in the user's words, "I" and "my" made the user's."""
    return convert(_plain(text), "the user")


def users_list(text: str) -> tuple[str, list[str]]:
    """The numbered list a user turn holds (its title, its steps), or ("", []) under MIN_STEPS."""
    title, steps = _steps(text)
    return (title, steps) if len(steps) >= MIN_STEPS else ("", [])


def without_list(text: str) -> str:
    """A user turn without the numbered lines of the list it holds (kept as a procedure)."""
    if not users_list(text)[1]:
        return text
    return "\n".join(ln for ln in text.split("\n") if not _STEP.match(ln))


def accepted(messages: list[dict]) -> list[tuple[str, list[str]]]:
    """[(title, steps)] of the lists the user accepted or wrote, last version only, in session order."""
    turns = [(m["role"], text_of(m)) for m in messages if m.get("role") in ("user", "assistant") and text_of(m)]
    out: list[tuple[str, list[str]]] = []
    own: tuple[str, list[str]] | None = None  # the user's own list, until a revision of it is kept
    revision = False
    for k, (role, text) in enumerate(turns):
        if role != "assistant":
            title, steps = users_list(text)
            if steps:
                if own:
                    out.append(own)
                own = (_mine(title) or "Steps", [_mine(s) for s in steps])
            continue
        title, steps = _steps(text)
        if len(steps) < MIN_STEPS or 2 * sum("?" in s for s in steps) > len(steps):
            revision = False  # (a list of questions, a quiz the user asked for, is no procedure)
            continue
        asked = next((t for r, t in reversed(turns[:k]) if r == "user"), "")
        reply = next((t for r, t in turns[k + 1 :] if r == "user"), "")
        after = next((t for r, t in turns[k + 2 :] if r == "assistant"), "") if reply else ""
        wanted = revision or (bool(_ASKS_STEPS.search(asked)) and not asked.rstrip().endswith(("?", "？")))
        # a "no" to the question closing a list the user asked for answers the question
        refused = bool(_REFUSE.match(reply)) and not (wanted and text.rstrip().endswith(("?", "？")))
        revised_next = len(_steps(after)[1]) >= MIN_STEPS and not refused
        if (
            reply
            and not refused
            and not users_list(reply)[1]  # the user answers with their own version of it
            and not revised_next
            and (_ACCEPT.match(reply) or wanted)
            and not reply.rstrip().endswith(("?", "？"))
        ):
            out.append((_clean(title) or "Steps", [_clean(s) for s in steps]))
            own = None  # the assistant's version of the user's list replaces it
        revision = revised_next
    return out + ([own] if own else [])


def render(title: str, steps: list[str]) -> str:
    """One bullet holding the ordered steps, so a merge keeps them together."""
    head = title[:1].upper() + title[1:]
    head += "" if "order" in head.lower() else " (in order)"
    return "\n".join([f"- {head}:", *(f"  {n}. {s}" for n, s in enumerate(steps, 1))])
