"""Digest nodes `digest/<bucket>/<slug>.md` (docs/architecture.md, Jobs): parse, measure and grow them additively.

A node is frontmatter (name, description; keys sorted), a short abstract body, and a
`## Sources` section whose lines cite `[[memory/<date>/<note>.md]]`. Offline nodes state
one fact per line, each with its sources, the note that states it most recently first:
`- <statement> ([[memory/<date>/<note>.md]])`. What is true now comes first; a statement a
later note replaced moves, with its own sources, to `## History` below, newest first, and the
statement that replaced it becomes the first line:
`- Previously: <old statement>, until <date> ([[memory/<date>/<note>.md]])`
(`supersede`). Older nodes may still carry `  > note: contradicted by [[<path>]] - <newer>`
lines; they are read as before. Every helper here only inserts or moves (a link or a
source, once written, is never dropped); the one exception is the template prose older
offline nodes carried, which `strip_boilerplate` removes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcli.extraction.dream import voice
from memcli.vault import frontmatter
from memcli.vault.notes import name_problem
from memcli.vault.wikilinks import WIKILINK

BUCKETS = ("personal", "procedure", "wiki")
SOURCES = "## Sources"
HISTORY = "## History"
PREVIOUSLY = "- Previously: "
_UNTIL = re.compile(r"^(?P<text>.*?)(?:, until (?P<until>\d{4}-\d{2}-\d{2}|[^,()]{1,40}))?$")
NOTE_MARK = "> note: contradicted by "
RELATED = "Related: "
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_MARKER = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
_SOURCED = re.compile(r"^(?P<text>.*\S)\s+\((?P<links>\[\[[^\]]+\]\](?:, \[\[[^\]]+\]\])*)\)$")
# The template prose of older offline nodes (no knowledge in it): skipped as statements, and
# removed when such a node is next updated offline.
BOILERPLATE = re.compile(
    r"^(?:These lines are quoted as they were written in the daily notes; the sources below hold the context\."
    r"|When a later note disagrees, the newest source wins and the disagreement is noted here\."
    r"|Check the cited notes before acting on a detail that matters\."
    r"|Why: .{1,80} said so directly; the sources below give the context\."
    r"|- Keep this in mind whenever .{1,200} comes up with .{1,80}, and follow the newest source\."
    r"|Trigger: use this when .{1,200} comes up\."
    r"|(?:Preconditions|Failure modes): none recorded yet\.)$"
)
_LABEL = re.compile(
    r"^(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*)?(?:rule|why|how to apply|trigger|steps|preconditions|"
    r"failure modes|definition|properties|current)(?:\*\*)?:\s*",
    re.IGNORECASE,
)


@dataclass
class Node:
    path: str  # workspace-relative
    meta: dict
    body: str
    existed: bool = True

    @property
    def name(self) -> str:
        return str(self.meta.get("name") or self.path.rsplit("/", 1)[-1][:-3])

    @property
    def description(self) -> str:
        return str(self.meta.get("description") or "")

    def text(self) -> str:
        return frontmatter.render(self.meta) + self.body


def parse(path: str, text: str) -> Node:
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    src, n = frontmatter.split(text)
    meta, _ = frontmatter.parse(src)
    body = "\n".join(text.split("\n")[n:]) if n else text
    return Node(path, dict(meta), body)


def slugify(text: str, limit: int = 60) -> str:
    """A kebab-case node name: lowercase words (any script), no bare numbers, no dates."""
    words = [w for w in re.findall(r"[^\W_]+", text.lower()) if not w.isdigit()]
    out = ""
    for w in words:
        cand = f"{out}-{w}" if out else w
        if len(cand) > limit:
            break
        out = cand
    return out if out and name_problem(out) is None else "node"


def words(text: str) -> int:
    return len(_WORD.findall(text)) - len(_HAN.findall(text)) + (len(_HAN.findall(text)) + 1) // 2


def split(body: str) -> tuple[list[str], list[str]]:
    """(abstract lines, lines from `## Sources` on)."""
    lines = body.rstrip("\n").split("\n")
    at = next((i for i, x in enumerate(lines) if x.strip().lower() == SOURCES.lower()), len(lines))
    return lines[:at], lines[at:]


def abstract_words(body: str) -> int:
    head, _ = split(body)
    return sum(words(WIKILINK.sub("", x)) for x in head if not x.lstrip().startswith("#"))


def links(body: str) -> list[str]:
    """Link targets in the body, in order, without duplicates (anchors dropped)."""
    fence, out = False, {}
    for line in body.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        elif not fence and "[[" in line:
            out.update((m.group(1).strip(), None) for m in WIKILINK.finditer(line) if m.group(1).strip())
    return list(out)


def cited(body: str) -> set[str]:
    return set(links("\n".join(split(body)[1])))


def statement_of(raw: str) -> str:
    """The statement a line of the abstract makes ("" for headings, links, labels and template prose)."""
    line = raw.strip()
    if line.startswith(PREVIOUSLY):
        m = _SOURCED.match(line[len(PREVIOUSLY) :])
        return _UNTIL.match(m.group("text") if m else line[len(PREVIOUSLY) :]).group("text")  # type: ignore[union-attr]  # _UNTIL matches any line
    if line.startswith(NOTE_MARK):
        line = line.split(" - ", 1)[1] if " - " in line else ""
    if not line or line.startswith(("#", "<!--", RELATED)) or BOILERPLATE.match(line):
        return ""
    line = _MARKER.sub("", _LABEL.sub("", line.lstrip("> ").strip()))
    m = _SOURCED.match(line)
    if m:
        line = m.group("text")
    return _voiced(line) if line and "[[" not in line else ""


def _voiced(line: str) -> str:
    """An older node's "User: I prefer tea." read as the statement a node makes now."""
    m = re.match(r"^(User|Me): (.+)$", line)
    return voice.statement(m.group(2), m.group(1)) if m else line


# characters: a longer line is a pasted blob, not one statement; it stays in its note or node
# but is not compared (matching it against every fact of a run would take minutes)
LONGEST_STATEMENT = 2000


def statements(body: str) -> list[str]:
    """What the node states: abstract lines, contradiction notes and the facts quoted in Sources."""
    head, tail = split(body)
    out = [s for s in map(statement_of, head) if s]
    for raw in tail[1:]:
        if "]]: " in raw:
            out.append(raw.split("]]: ", 1)[1].strip())
        elif m := _SOURCED.match(_MARKER.sub("", raw.strip())):
            out.append(m.group("text"))
    return [s for s in out if len(s) <= LONGEST_STATEMENT]


def sourced(text: str, paths: list[str]) -> str:
    """A statement with its sources: `<text> ([[a]], [[b]])`."""
    return f"{text} ({', '.join(f'[[{p}]]' for p in paths)})"


def add_source_to(body: str, statement: str, path: str) -> str:
    """Cite `path` on the abstract line that makes `statement` (unchanged when it is cited there)."""
    head, tail = split(body)
    for i, raw in enumerate(head[: _history_at(head)]):
        if statement_of(raw) != statement or raw.strip().startswith(NOTE_MARK):
            continue
        if f"[[{path}]]" in raw:
            return body
        m = _SOURCED.match(raw.strip())
        if m:  # the newest source first: the note that states it now
            at = raw.rfind("(" + m.group("links") + ")")
            head[i] = f"{raw[:at]}([[{path}]], {m.group('links')})"
        else:
            head[i] = f"{raw.rstrip()} ([[{path}]])"
        return join(head, tail)
    return body


def strip_boilerplate(body: str) -> str:
    head, tail = split(body)
    if not any(BOILERPLATE.match(x.strip()) for x in head):
        return body
    kept: list[str] = []
    for line in head:
        if BOILERPLATE.match(line.strip()) or (not line.strip() and kept and not kept[-1].strip()):
            continue
        kept.append(line)
    return join(kept, tail)


def _history_at(head: list[str]) -> int:
    return next((i for i, x in enumerate(head) if x.strip().lower() == HISTORY.lower()), len(head))


def current(body: str) -> list[str]:
    """The statements of what is true now: the abstract above `## History` (none of the history)."""
    head, _ = split(body)
    return [
        s for raw in head[: _history_at(head)] if not raw.strip().startswith(NOTE_MARK) and (s := statement_of(raw))
    ]


def previously(old_line: str, until: str | None) -> str:
    """The history line for an abstract line a newer statement replaced (its sources kept)."""
    raw = _MARKER.sub("", old_line.strip())
    m = _SOURCED.match(raw)
    text, links_ = (m.group("text"), f" ({m.group('links')})") if m else (raw, "")
    text = _voiced(text).rstrip(" .")
    return f"{PREVIOUSLY}{text}{f', until {until}' if until else ''}{links_}"


def supersede(body: str, old: str, new_line: str, until: str | None) -> str:
    """The body with `new_line` as the first current statement, the current line stating `old`
    gone from there, and that line, with its sources, first under `## History` (without such a
    line, when the old statement is quoted in `## Sources`, the history names the statement)."""
    head, tail = split(body)
    end = _history_at(head)
    at = next(
        (i for i in range(end) if statement_of(head[i]) == old and not head[i].strip().startswith(NOTE_MARK)), None
    )
    old_line = head.pop(at) if at is not None else old
    # the newest value goes first: it is what changed last, and the node's first line says what is true now
    top = next((i for i, x in enumerate(head[: _history_at(head)]) if statement_of(x)), None)
    if top is None:  # no current statement left: after the title and a blank line
        top = _tail_index(head)
        head = head[:top] + ([""] if top and head[top - 1].strip() else []) + [new_line] + head[top:]
    else:
        head = head[:top] + [new_line] + head[top:]
    entry = previously(old_line, until)
    end = _history_at(head)
    if end == len(head):
        while head and not head[-1].strip():
            head = head[:-1]
        head = head + ["", HISTORY, entry]
    else:
        head = head[: end + 1] + [entry] + head[end + 1 :]
    return join(head, tail)


def _tail_index(head: list[str]) -> int:
    """Where new abstract lines go: before `## History`, a trailing `Related:` line and blank lines."""
    end = _history_at(head)
    while end > 0 and (not head[end - 1].strip() or head[end - 1].startswith(RELATED)):
        end -= 1
    return end


def join(head: list[str], tail: list[str]) -> str:
    while head and not head[-1].strip():
        head = head[:-1]
    return "\n".join(head + ([""] if tail else []) + tail).rstrip("\n") + "\n"


def add_sources(body: str, lines: list[str]) -> str:
    """Append source lines to `## Sources` (created when missing); a line already there is not repeated."""
    head, tail = split(body)
    if not tail:
        tail = [SOURCES]
    have = {x.strip() for x in tail}
    new = [x for x in lines if x.strip() not in have]
    if not new:
        return body
    while len(tail) > 1 and not tail[-1].strip():
        tail = tail[:-1]
    return join(head, tail + new)


def add_lines(body: str, lines: list[str], after: str | None = None, first: bool = False) -> str:
    """Insert lines into the abstract: after the line containing `after`, or (`first`) above its
    first statement, else at its end."""
    head, tail = split(body)
    have = {x.strip() for x in head}
    new = [x for x in lines if x.strip() not in have]
    if not new:
        return body
    at = next((i + 1 for i, x in enumerate(head) if after and after in x), None)
    if at is None and first:
        at = next((i for i, x in enumerate(head[: _history_at(head)]) if x.startswith("- ") and statement_of(x)), None)
    if at is None:
        at = _tail_index(head)
        # a list keeps growing as a list; prose and a heading get a blank line before the new lines
        prev = head[at - 1] if at else ""
        if prev.strip() and (
            prev.startswith("#")
            or (not re.match(r"^\s*(?:[-*+]|\d+[.)])\s", prev) and not new[0].lstrip().startswith((">", "-", "*")))
        ):
            new = [""] + new
    return join(head[:at] + new + head[at:], tail)


def add_related(body: str, paths: list[str]) -> str:
    """Link related nodes from a `Related:` line (existing links are kept, new ones appended)."""
    have = set(links(body))
    new = [p for p in paths if p not in have]
    if not new:
        return body
    head, tail = split(body)
    listed = ", ".join(f"[[{p}]]" for p in new)
    at = next((i for i in range(len(head) - 1, -1, -1) if head[i].startswith(RELATED)), None)
    if at is not None:
        head[at] = head[at].rstrip().rstrip(".") + f", {listed}."
    else:
        end = _tail_index(head)
        head = head[:end] + ["", f"{RELATED}{listed}."] + head[end:]
    return join(head, tail)
