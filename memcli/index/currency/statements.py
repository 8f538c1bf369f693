"""A note's statements and what each sets: the records claims.json keeps (memcli.index.currency).

A statement is a list item's or a paragraph's sentence; a digest node's lines count only
where they cite a dated note. Each is read by the rules of memcli.index.currency.subjects:
the claims it makes, a thing it gives up, a thing it adopts, and the named speaker it is
said by.
"""

from __future__ import annotations

import re

from memcli.index.currency import kinds, reading, shift, subjects
from memcli.vault import frontmatter

MAX_STATEMENT = 240  # characters of a statement kept (longer lines are prose, rarely one value)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")
_LINK = re.compile(r"\[\[([^\]|#]+)")
_LINKED = re.compile(r"\s*\(?\[\[[^\]]*\]\]\)?")  # a wikilink, with the parentheses around a source link
# a digest node's `## Sources` log ("- Stated on 2026-09-01 in [[...]]"), its `## History` of values
# replaced ("- Previously: pool 20, until 2026-03-30": what was, not what is) and a note's `## Topics`
# keyword list ("env, mamba, solve") hold no statement
_LOG = re.compile(r"^#{1,6}\s+(?:sources|history|topics)\s*$", re.I)
_STEP = re.compile(r"(\d{1,2})[.)]?\s+(?=[^\W\d])")
_AUTO = re.compile(r"<!--\s*notes:auto\s*-->.*?<!--\s*/notes:auto\s*-->", re.S)


def statements(text: str, date: str | None = None, date_of=None) -> list[tuple]:
    """(line number, sentence[, date, cited notes]) of a note's body: list items and paragraphs, not
    headings, front matter, comments, the day page's generated list of links or a digest
    node's `## Sources` log (memcli.extraction.dream.write). In a note
    without a date of its own (a digest node), only the lines citing a dated note count, dated
    by the newest they cite (`date_of`: path -> date or None); the links are left out of the text."""
    _, skip = frontmatter.split(text)
    text = _AUTO.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    out: list[tuple] = []
    log = False  # under a `## Sources` heading: a digest node's log of which note did what
    steps = 0  # the number of the last step of a numbered list read (1, 2, 3 ... in a row)
    fence = False  # inside a fenced code block: code, no statements
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s.startswith(("```", "~~~")):
            fence = not fence
            continue
        if fence:
            continue
        if s.startswith("#"):
            log = _LOG.match(s) is not None
        if n <= skip or not s or log or s.startswith(("#", "<!--", ">", "|", "[[")):
            continue
        when, cites = date, []
        if date_of is not None:
            cites = [(t, d) for t in _LINK.findall(s) if (d := date_of(t) or date_of(t + ".md"))]
            when = date or (max(d for _, d in cites) if cites else None)
            if when is None:
                continue
        s = _LINKED.sub("", re.sub(r"^[-*+]\s+(?:\[[ xX]\]\s+)?", "", s)).strip()
        step = _STEP.match(s)  # "1 rinse ...", "2 ultrasonic 10 min": a step's number is its place, no value
        steps = int(step.group(1)) if step and int(step.group(1)) in (1, steps + 1) else 0
        s = s[step.end() :] if steps and step else s
        for part in _SENTENCE.split(s):
            # a lead-in ("Monday SoH report (Faith by 10:00) (in order):") introduces the lines
            # below it and sets nothing itself
            if 3 <= len(part) <= MAX_STATEMENT and not part.endswith((":", "：")):
                out.append((n, part, when, [t for t, _ in cites]) if date_of is not None else (n, part))
    return out


def read_file(path, rel: str, date_of, stat) -> tuple[dict, list[tuple]]:
    """A note's entry in claims.json, and its statements."""
    found = read_statements(path, rel, date_of)
    return record(found, stat, date_of(rel)), found


def read_statements(path, rel: str, date_of) -> list[tuple]:
    """A note's statements, read from its file ("" when it cannot be read): what relating reads
    again of a note that may hold a thing given up (memcli.index.currency.relate)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        text = ""
    return statements(text, date_of(rel), date_of)


def record(found: list[tuple], stat, date: str) -> dict:
    """What claims.json keeps of a note: the statements that set, give up or adopt something,
    and the words of all of them (`vocab`). The others matter only as older holders of a thing
    given up or of a value named as the previous one, and are read again from the note when
    its vocabulary says it may hold one (memcli.index.currency.relate): keeping each statement's words made claims.json 44 MB
    for a 2,000-note vault, loaded and written again by every sync."""
    return {
        "stat": list(stat),
        "date": date,
        "statements": [i for i in items(found) if sets(i)],
        "vocab": reading.vocabulary([f[1] for f in found]),
    }


def sets(item: dict) -> bool:
    return bool(item.keys() & {"claims", "retired", "adopts", "shift"})


def bare(found: list[tuple]) -> list[dict]:
    """The statements' records before reading what they set: line, text, date, cited notes."""
    out = []
    for line, sentence, *when in found:
        item: dict = {"line": line, "text": sentence}
        if when and when[0]:
            item["date"] = when[0]
        if len(when) > 1 and when[1]:  # a digest line restates the notes it cites (compare.restates)
            item["cites"] = when[1]
        out.append(item)
    return out


def items(found: list[tuple[int, str]]) -> list[dict]:
    """A note's statements: each with its claims, or what it gives up or adopts, and then its
    words and speaker; a statement doing none of these is only its line, text and date."""
    out = []
    for item in bare(found):
        sentence = item["text"]
        if not subjects.may_set(sentence):
            out.append(item)
            continue
        gone, to = subjects.given_up(sentence)  # a thing given up sets no value ("retired after 750 km")
        made = [] if gone else subjects.claims(sentence)
        if made:
            item["claims"] = [
                {
                    "key": list(c.key),
                    "label": c.label,
                    "value": c.value,
                    "old": c.old,
                    **({"also": list(c.also)} if c.also else {}),
                }
                for c in made
            ]
        elif gone:
            item["retired"] = gone
            if to:  # "switched from avimark to ezyvet": a value, once its subject is known (relate)
                item["to"] = to
        if not gone and (thing := kinds.adopted(sentence)):  # "got a macbook pro": a subject once its kind is known
            item["adopts"] = thing
        if not gone and (pairs := shift.pairs(sentence)):  # "the 7:37 was brutal, going with the 7:45"
            item["shift"] = pairs
        if sets(item):
            describe(item)
        out.append(item)
    return out


def describe(item: dict) -> dict:
    """A statement's words (a CJK statement's gloss among them) and speaker, for relate."""
    sentence = item["text"]
    item["words"] = sorted(reading.statement_words(sentence))
    if speaker := _speaker(sentence):
        item["speaker"] = speaker
    return item


# a named speaker's line ("[D1:3] Caroline: I moved ...", "- Wei: ..."): whose statement it is
_SPEAKER = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\[[^\]]{1,20}\]\s*)?(?:\*\*)?([A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?)(?:\*\*)?:\s"
)
_NOT_SPEAKER = frozenset({"user", "assistant", "me", "i", "note", "source", "superseded", "previously", "todo"})


def _speaker(sentence: str) -> str:
    """The named speaker of a statement, "" for the user's own: one person's new value never
    supersedes another's (in a conversation between Caroline and Melanie, each has her own)."""
    m = _SPEAKER.match(sentence)
    name = m.group(1).lower() if m else ""
    return "" if name in _NOT_SPEAKER else name
