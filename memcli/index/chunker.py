"""Heading-aware, line-exact Markdown chunking with a token budget.

A chunk covers whole file lines `start_line..end_line` (1-based, frontmatter
counted but never inside a chunk). Its text is the ancestor headings that lie
above the chunk (the breadcrumb, outside the line range) followed by the lines
themselves. Sections are packed together while they fit the budget; a long
section is cut between blocks, fenced code and tables are kept whole when they
fit in one chunk and otherwise cut between lines; consecutive pieces of one long
section overlap by about `overlap` tokens. No Markdown AST is built: one pass
over the lines classifies them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+\S")


def estimate_tokens(line: str) -> int:
    """Rough model tokens: ~4 characters per token, one per CJK character."""
    n = len(line)
    if line.isascii():
        return n // 4 + 1
    # CJK characters take 3 UTF-8 bytes, so the byte surplus counts them cheaply
    wide = (len(line.encode("utf-8")) - n) // 2
    return wide + (n - wide) // 4 + 1


@dataclass
class Chunk:
    start_line: int  # 1-based inclusive
    end_line: int
    text: str
    crumb_lines: int  # how many leading lines of `text` are breadcrumb


@dataclass
class _Block:
    start: int  # 0-based index into the file's lines
    end: int  # exclusive
    tokens: int
    heading: int = 0  # heading level, 0 = not a heading
    atomic: bool = False  # fence or table: keep whole if possible


def _blocks(lines: list[str], first: int) -> list[_Block]:
    out: list[_Block] = []
    i, n = first, len(lines)
    while i < n:
        line = lines[i]
        s = line.lstrip()
        if not s:
            out.append(_Block(i, i + 1, 1))
            i += 1
            continue
        if s.startswith("```") or s.startswith("~~~"):
            mark = s[:3]
            j = i + 1
            while j < n and not lines[j].lstrip().startswith(mark):
                j += 1
            j = min(j + 1, n)
            out.append(_Block(i, j, sum(estimate_tokens(x) for x in lines[i:j]), atomic=True))
            i = j
            continue
        m = _HEADING.match(line)
        if m:
            out.append(_Block(i, i + 1, estimate_tokens(line), heading=len(m.group(1))))
            i += 1
            continue
        table = s.startswith("|")
        j = i + 1
        while j < n:
            t = lines[j].lstrip()
            if not t or _HEADING.match(lines[j]) or t.startswith("```") or t.startswith("~~~"):
                break
            if table != t.startswith("|"):
                break
            j += 1
        out.append(_Block(i, j, sum(estimate_tokens(x) for x in lines[i:j]), atomic=table))
        i = j
    return out


def chunk_lines(lines: list[str], body_start: int, target: int = 400, overlap: int = 80) -> list[Chunk]:
    """Chunk `lines` (the whole file, split on newlines) from index `body_start` on."""
    target = max(target, 16)
    overlap = max(0, min(overlap, target // 2))
    blocks = _blocks(lines, body_start)
    chunks: list[Chunk] = []
    crumbs: list[tuple[int, int]] = []  # stack of (level, line index) of open headings

    def emit(a: int, b: int, stack: list[tuple[int, int]]) -> None:
        while a < b and not lines[a].strip():
            a += 1
        while b > a and not lines[b - 1].strip():
            b -= 1
        if a >= b:
            return
        crumb = [lines[idx] for lvl, idx in stack if idx < a]
        text = "\n".join(crumb + lines[a:b])
        chunks.append(Chunk(a + 1, b, text, len(crumb)))

    cur_start: int | None = None
    cur_tokens = 0
    cur_stack: list[tuple[int, int]] = []

    def flush(end: int) -> None:
        nonlocal cur_start, cur_tokens
        if cur_start is not None:
            emit(cur_start, end, cur_stack)
        cur_start, cur_tokens = None, 0

    for blk in blocks:
        if blk.heading:
            while crumbs and crumbs[-1][0] >= blk.heading:
                crumbs.pop()
            # a new section starts here: close the current chunk if it cannot take the heading
            if cur_start is not None and cur_tokens + blk.tokens > target:
                flush(blk.start)
        if cur_start is None:
            cur_start, cur_tokens, cur_stack = blk.start, 0, list(crumbs)
        if cur_tokens + blk.tokens <= target or cur_tokens == 0 and blk.tokens <= target:
            cur_tokens += blk.tokens
        elif blk.tokens <= target and (blk.atomic or blk.end - blk.start > 1):
            # the block fits a chunk of its own: cut before it, carrying an overlap tail
            tail = _overlap_start(lines, cur_start, blk.start, overlap) if not blk.atomic else blk.start
            flush(blk.start)
            cur_start, cur_stack = tail, list(crumbs)
            cur_tokens = sum(estimate_tokens(x) for x in lines[tail:blk.end])
        else:
            # the block is larger than a chunk (or a single line): cut between its lines
            for i in range(blk.start, blk.end):
                t = estimate_tokens(lines[i])
                if cur_start is None:
                    cur_start, cur_tokens, cur_stack = i, 0, list(crumbs)
                if cur_tokens + t > target and cur_tokens > 0 and i > cur_start:
                    tail = _overlap_start(lines, cur_start, i, overlap)
                    flush(i)
                    cur_start, cur_stack = tail, list(crumbs)
                    cur_tokens = sum(estimate_tokens(x) for x in lines[tail:i])
                cur_tokens += t
        if blk.heading:
            crumbs.append((blk.heading, blk.start))
    flush(len(lines))
    return chunks


def _overlap_start(lines: list[str], lo: int, hi: int, overlap: int) -> int:
    """First line index of a tail of lines[lo:hi] holding about `overlap` tokens."""
    if overlap <= 0:
        return hi
    acc, i = 0, hi
    while i > lo + 1:
        t = estimate_tokens(lines[i - 1])
        if acc + t > overlap:
            break
        acc += t
        i -= 1
    return i
