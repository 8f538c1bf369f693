"""A digest node body from a model, cleaned of what it copied from the prompt.

Small models echo the prompt's scaffolding into the body they write: the `<<<`/`>>>`
quoting around the material, a code fence opened and never closed, a note's frontmatter
(`---`, `name: x`) or the whole note under its own title, the prompt's placeholders, a link
of the node to itself. None of it is
knowledge, and the node is recalled as knowledge, so it goes before the body is checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memcli.extraction.ask import strip_frontmatter
from memcli.extraction.dream import node as nodes
from memcli.vault.wikilinks import WIKILINK

_PLACEHOLDER = re.compile(r"<(?:path|bucket|slug|kebab-slug|one-line reason|one-line summary[^>]*)>")
_COPIED = re.compile(r"^\s*(?:\[\[[^\]]*\]\]\s*)*(?:name|description|session_id|source_conversation|"
                     r"source_resource|date|tags):\s")
_QUOTING = re.compile(r"<{3,}|>{3,}|#{3} \S+\.md|-{3,}")  # the prompt's quoting, a note header, frontmatter
_FENCE = re.compile(r"\s*(```|~~~)")
# the prompt's own headings and quoting, wherever in the body the model pasted them
_PROMPT_LINE = re.compile(r"<{2,}|>{2,}|#{1,3} (?:unit material|recalled digest nodes|changed material)|"
                          r"#{3} \S+\.md|\[…(?:truncated|cut|left out)[^\]]*…?\]", re.IGNORECASE)


def _unclosed_fences(lines: list[str]) -> set[int]:
    """Indexes of fence lines that open a block no later line closes."""
    opened: int | None = None
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            opened = i if opened is None else None
    return {opened} if opened is not None else set()


def _one_title(lines: list[str]) -> list[str]:
    """A node is one subject under one title: a second `# ` title starts a pasted note, which
    goes (up to `## Sources`, which mem keeps)."""
    titles = [i for i, x in enumerate(lines) if x.startswith("# ")]
    if len(titles) < 2:
        return lines
    cut = titles[1]
    end = next((i for i in range(cut, len(lines)) if lines[i].strip().lower() == "## sources"), len(lines))
    return lines[:cut] + lines[end:]


def _scaffolding(lines: list[str]) -> list[str]:
    for _ in range(3):  # the layers come in any order: a code fence, the <<< >>> quoting, frontmatter
        while lines and (_QUOTING.fullmatch(lines[0].strip()) or not lines[0].strip()):
            lines = lines[1:]
        while lines and (_QUOTING.fullmatch(lines[-1].strip()) or not lines[-1].strip()):
            lines = lines[:-1]
        if len(lines) >= 2 and lines[0].startswith("```") and lines[-1].strip() == "```":
            lines = lines[1:-1]  # the whole body in a code fence
        lines = strip_frontmatter("\n".join(lines)).strip("\n").split("\n")
    # quoting marks inside the body and a fence left open are the prompt's too, not Markdown
    lines = [x for x in lines if not _PROMPT_LINE.fullmatch(x.strip())]
    lines = [x for i, x in enumerate(lines) if i not in _unclosed_fences(lines)]
    lines = _one_title(lines)
    # a note's frontmatter copied as lines ("name: x", "[[memory/…]] session_id: s1") and the
    # prompt's placeholders ("<path> - <one-line reason>") are not knowledge
    return [x for x in lines if not _COPIED.match(x) and not _PLACEHOLDER.search(x)]


def repair_body(body: str, target: str, exists: Callable[[str], bool], old: str | None) -> str:
    """The prompt's scaffolding stripped, links to missing files and to the node itself unlinked,
    links an update dropped put back."""
    lines = _scaffolding(body.replace("\r\n", "\n").strip().split("\n"))
    body = "\n".join(lines) + "\n"

    def unlink(m: re.Match) -> str:  # a node linking to itself says nothing: the link goes
        link = m.group(1).strip()
        return "" if link == target else m.group(0) if exists(link) else link

    fixed = [line if _FENCE.match(line) else WIKILINK.sub(unlink, line) for line in body.split("\n")]
    body = "\n".join(x for x, was in zip(fixed, body.split("\n")) if x.strip(" -*") or not was.strip())
    if old is not None:
        have = set(nodes.links(body))
        lost = [x for x in nodes.links(old) if x not in have]
        if lost:
            old_lines = old.split("\n")
            lines = [next((x for x in old_lines if f"[[{link}]]" in x and x.lstrip().startswith(("-", "*"))),
                          f"- [[{link}]]") for link in lost]
            body = nodes.add_sources(body, list(dict.fromkeys(lines)))
    return body
