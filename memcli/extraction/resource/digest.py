"""The offline interpretation of a resource: a deterministic digest, no model.

Markdown and plain text give their outline and leading paragraphs, HTML its title,
outline and text, CSV/JSON/JSONL/YAML their shape (data.py). Text from the
file is quoted (`> `) so it cannot add headings to the note; the same file always
gives the same digest. The digest also feeds the LLM as computed facts, because a
model reading a cut-off file cannot count its rows.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from memcli.extraction.resource import Digest
from memcli.extraction.resource import data as resource_data

KINDS = {
    "md": "Markdown",
    "txt": "text",
    "json": "JSON",
    "jsonl": "JSON Lines",
    "csv": "CSV",
    "yaml": "YAML",
    "html": "HTML",
}
MAX_OUTLINE = 30
MAX_PARAGRAPHS = 3
MAX_PARAGRAPH = 600  # characters of each quoted paragraph
MAX_DESCRIPTION = 280

# A resource note (frontmatter `source_resource`) describes a file. These sections give the file's
# shape (headings, keys, columns, rows), not what it says, and these lines are about the file
# (its link, kind and size, what was left out): dream never takes a fact from them. The LLM's
# notes use "## Structure" for the same purpose (extraction/resource/llm.py).
STRUCTURAL_SECTIONS = ("outline", "structure", "columns", "first rows", "records", "first record")
_STRUCTURAL_LINE = re.compile(
    r"^(?:Source: \[\[|Read as text: |\(\d+ more paragraph\(s\) in the file\)$|"
    r"- … \d+ more heading\(s\)$)"
)

_ATX = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SETEXT = re.compile(r"^(=+|-+)\s*$")


ALIASES = {"yml": "yaml", "htm": "html", "markdown": "md"}  # the same formats under other names


def structural_section(heading: str) -> bool:
    """Whether a `## ` heading of a resource note names a section about the file's shape."""
    return heading.strip().lower().startswith(STRUCTURAL_SECTIONS)


def structural_line(line: str) -> bool:
    """Whether a line of a resource note is about the file rather than its content."""
    return bool(_STRUCTURAL_LINE.match(line.strip()))


def suffix(rel: str) -> str:
    """The file's kind from its suffix, lowercased, aliases folded (`.yml` is YAML)."""
    raw = rel.rsplit(".", 1)[-1].lower() if "." in rel.rsplit("/", 1)[-1] else ""
    return ALIASES.get(raw, raw)


def line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def file_name(rel: str) -> str:
    return rel.rsplit("/", 1)[-1]


def digest(rel: str, text: str) -> Digest:
    """The digest of a resource's decoded text; `rel` decides the format."""
    kind = suffix(rel)
    if kind in ("csv", "json", "jsonl", "yaml"):
        try:
            return resource_data.digest(kind, file_name(rel), text)
        except resource_data.Unparsable as exc:  # broken data is still worth its text
            d = plain(file_name(rel), text, KINDS[kind])
            d.problem = str(exc)
            return d
    if kind == "html":
        return html(file_name(rel), text)
    return markdown(file_name(rel), text) if kind == "md" else plain(file_name(rel), text, "text")


def quote(paragraph: str) -> list[str]:
    text = " ".join(paragraph.split())
    if len(text) > MAX_PARAGRAPH:
        text = text[:MAX_PARAGRAPH].rsplit(" ", 1)[0] + " …"
    return [f"> {text}"]


def _paragraphs(lines: list[str]) -> list[str]:
    out, cur = [], []
    for line in [*lines, ""]:
        if line.strip():
            cur.append(line.strip())
        elif cur:
            out.append(" ".join(cur))
            cur = []
    return out


def _outline_section(heads: list[tuple[int, str]]) -> tuple[str, list[str]]:
    top = min(level for level, _ in heads)
    lines = [f"{'  ' * (level - top)}- {text}" for level, text in heads[:MAX_OUTLINE]]
    if len(heads) > MAX_OUTLINE:
        lines.append(f"- … {len(heads) - MAX_OUTLINE} more heading(s)")
    return "Outline", lines


def _prose(paragraphs: list[str]) -> tuple[str, list[str]] | None:
    keep = paragraphs[:MAX_PARAGRAPHS]
    if not keep:
        return None
    lines: list[str] = []
    for p in keep:
        lines += ([">"] if lines else []) + quote(p)
    if len(paragraphs) > MAX_PARAGRAPHS:
        lines.append(f"\n({len(paragraphs) - MAX_PARAGRAPHS} more paragraph(s) in the file)")
    return "Opening", lines


def markdown(name: str, text: str) -> Digest:
    from memcli.vault import frontmatter

    src, n = frontmatter.split(text)
    meta, _ = frontmatter.parse(src)
    lines = text.split("\n")[n:]
    heads: list[tuple[int, str]] = []
    body: list[str] = []
    fence = None
    skip = False
    for i, line in enumerate(lines):
        if skip:
            skip = False
            continue
        s = line.strip()
        if s.startswith(("```", "~~~")):
            fence = None if fence == s[:3] else (fence or s[:3])
            continue
        if fence:
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        m = _ATX.match(line)
        if m:
            heads.append((len(m.group(1)), m.group(2)))
            body.append("")
        elif s and _SETEXT.match(nxt) and not s.startswith(("-", "*", "+", ">", "|")):
            heads.append((1 if nxt.strip()[0] == "=" else 2, s))
            body.append("")
            skip = True
        else:
            body.append(line)
    title = str(meta.get("title") or meta.get("name") or (heads[0][1] if heads else "") or name)
    paras = [p for p in _paragraphs(body) if not p.startswith(("|", "<!--"))]
    d = Digest("Markdown", title, f"{line_count(text)} line(s), {len(heads)} heading(s)")
    if meta.get("description"):
        d.sections.append(("Description", quote(str(meta["description"]))))
    if heads:
        d.sections.append(_outline_section(heads))
    prose = _prose(paras)
    if prose:
        d.sections.append(prose)
    return d


def _text_heading(line: str, nxt: str) -> bool:
    """A plain-text heading: underlined, or a short line in capitals ending without a period."""
    s = line.strip()
    if not s or len(s) > 80:
        return False
    if nxt.strip() and set(nxt.strip()) <= set("=-~") and len(nxt.strip()) >= 3:
        return True
    letters = [c for c in s if c.isalpha()]
    return len(letters) >= 3 and all(c.isupper() for c in letters) and not s.endswith((".", ","))


def plain(name: str, text: str, kind: str) -> Digest:
    lines = text.split("\n")
    heads: list[tuple[int, str]] = []
    body: list[str] = []
    skip = False
    for i, line in enumerate(lines):
        if skip:
            skip = False
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        m = _ATX.match(line)
        if m:
            heads.append((len(m.group(1)), m.group(2)))
            body.append("")
        elif _text_heading(line, nxt):
            heads.append((1, line.strip()))
            body.append("")
            skip = bool(nxt.strip()) and set(nxt.strip()) <= set("=-~")
        else:
            body.append(line)
    paras = _paragraphs(body)
    words = len(text.split())
    d = Digest(kind, heads[0][1] if heads else name, f"{line_count(text)} line(s), {words} word(s)")
    if heads:
        d.sections.append(_outline_section(heads))
    prose = _prose(paras)
    if prose:
        d.sections.append(prose)
    return d


class _HTMLText(HTMLParser):
    BLOCKS = frozenset(
        {
            "p",
            "div",
            "li",
            "br",
            "tr",
            "section",
            "article",
            "blockquote",
            "pre",
            "td",
            "th",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "header",
            "footer",
            "table",
            "ul",
            "ol",
            "dd",
            "dt",
        }
    )
    SKIP = frozenset({"script", "style", "template", "noscript", "svg", "head"})

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.heads: list[tuple[int, str]] = []
        self.blocks: list[str] = []
        self._cur: list[str] = []
        self._skip = 0
        self._in_title = False
        self._head: int | None = None
        self._head_text: list[str] = []

    def _flush(self) -> None:
        text = " ".join("".join(self._cur).split())
        if text:
            self.blocks.append(text)
        self._cur = []

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP and tag != "head":
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        if tag in self.BLOCKS:
            self._flush()
        if re.fullmatch(r"h[1-6]", tag):
            self._head, self._head_text = int(tag[1]), []

    def handle_endtag(self, tag):
        if tag in self.SKIP and tag != "head" and self._skip:
            self._skip -= 1
        elif tag == "title":
            self._in_title = False
        if self._head is not None and tag == f"h{self._head}":
            text = " ".join("".join(self._head_text).split())
            if text:
                self.heads.append((self._head, text))
            self._head = None
            self._cur = []  # the heading is in the outline, not in the text
            return
        if tag in self.BLOCKS:
            self._flush()

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        elif not self._skip:
            self._cur.append(data)
            if self._head is not None:
                self._head_text.append(data)


def html(name: str, text: str) -> Digest:
    p = _HTMLText()
    try:
        p.feed(text)
        p.close()
    except (AssertionError, ValueError):  # html.parser gives up on some broken markup; keep what it read
        pass
    p._flush()
    title = " ".join(p.title.split()) or (p.heads[0][1] if p.heads else name)
    words = sum(len(b.split()) for b in p.blocks)
    d = Digest("HTML", title, f"{len(p.heads)} heading(s), {words} word(s) of text")
    if p.heads:
        d.sections.append(_outline_section(p.heads))
    prose = _prose([b for b in p.blocks if len(b.split()) >= 4] or p.blocks)
    if prose:
        d.sections.append(prose)
    return d


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    return f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MiB"


def source_line(rel: str, d: Digest, size: int) -> str:
    return f"Source: [[{rel}]] ({d.kind}, {human_size(size)}; {d.facts})"


def render(rel: str, d: Digest, size: int) -> tuple[str, str]:
    """(description, body) of the offline note."""
    title = " ".join(d.title.split())[:120] or file_name(rel)
    parts = [f"# {title}", "", source_line(rel, d, size)]
    if d.problem:
        parts += ["", f"Read as text: {d.problem}."]
    for head, lines in d.sections:
        parts += ["", f"## {head}", *lines]
    desc = f"{d.kind} resource {file_name(rel)}: {d.facts}."
    if title != file_name(rel):
        desc = f"{d.kind} resource {file_name(rel)} ({title}): {d.facts}."
    if len(desc) > MAX_DESCRIPTION:
        desc = desc[: MAX_DESCRIPTION - 1].rstrip() + "…"
    return desc, "\n".join(parts) + "\n"
