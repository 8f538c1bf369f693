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
    blank: bool = False


def _blocks(lines: list[str], first: int, tok: list[int]) -> list[_Block]:
    # (a heading starts with "#" once stripped: the regex is tried only then, and one
    # startswith takes both fence marks; every line of the vault passes here)
    out: list[_Block] = []
    i, n = first, len(lines)
    fences = ("```", "~~~")
    while i < n:
        line = lines[i]
        s = line.lstrip()
        if not s:
            out.append(_Block(i, i + 1, tok[i], blank=True))
            i += 1
            continue
        if s.startswith(fences):
            mark = s[:3]
            j = i + 1
            while j < n and not lines[j].lstrip().startswith(mark):
                j += 1
            j = min(j + 1, n)
            out.append(_Block(i, j, sum(tok[i:j]), atomic=True))
            i = j
            continue
        m = _HEADING.match(line) if s[0] == "#" else None
        if m:
            out.append(_Block(i, i + 1, tok[i], heading=len(m.group(1))))
            i += 1
            continue
        table = s[0] == "|"
        j = i + 1
        while j < n:
            t = lines[j].lstrip()
            if not t or (t[0] == "#" and _HEADING.match(lines[j])) or t.startswith(fences) or table != (t[0] == "|"):
                break
            j += 1
        out.append(_Block(i, j, sum(tok[i:j]), atomic=table))
        i = j
    return out


class _Packer:
    """Greedy packing of blocks into chunks; see the module docstring for the rules."""

    def __init__(self, lines: list[str], body_start: int, target: int, overlap: int):
        self.lines, self.target, self.overlap = lines, target, overlap
        # (estimate_tokens inlined for ASCII lines: a call per line of the vault)
        self.tok = [0] * min(body_start, len(lines)) + [
            len(x) // 4 + 1 if x.isascii() else estimate_tokens(x) for x in lines[body_start:]
        ]
        self.blocks = _blocks(lines, body_start, self.tok)
        self.heading_level = {b.start: b.heading for b in self.blocks if b.heading}
        self.headings = sorted(self.heading_level.items())
        self.atomic_end = {i: (b.start, b.end) for b in self.blocks if b.atomic for i in range(b.start, b.end)}
        self.chunks: list[Chunk] = []
        self.start: int | None = None  # first line of the open chunk
        self.size = 0  # its estimated tokens
        self.body = False  # whether it holds anything but headings and blank lines

    def crumbs(self, a: int) -> list[str]:
        """Ancestor headings of line `a` (not counting `a` itself)."""
        stack: list[tuple[int, int]] = []
        for idx, lvl in self.headings:
            if idx >= a:
                break
            while stack and stack[-1][1] >= lvl:
                stack.pop()
            stack.append((idx, lvl))
        own = self.heading_level.get(a)
        if own:
            while stack and stack[-1][1] >= own:
                stack.pop()
        return [self.lines[idx] for idx, _ in stack]

    def emit(self, a: int, b: int) -> None:
        lines = self.lines
        while a < b and not lines[a].strip():
            a += 1
        while b > a and not lines[b - 1].strip():
            b -= 1
        if a < b:
            crumb = self.crumbs(a)
            self.chunks.append(Chunk(a + 1, b, "\n".join(crumb + lines[a:b]), len(crumb)))

    def tail(self, lo: int, hi: int) -> int:
        """Start of an overlap tail of lines[lo:hi]: about `overlap` tokens, never reaching
        back over a heading (into another section) nor starting inside a fence or table."""
        acc, i = 0, hi
        while i > lo + 1 and self.overlap > 0:
            j = i - 1
            if j in self.heading_level or acc + self.tok[j] > self.overlap:
                break
            acc += self.tok[j]
            i = j
        span = self.atomic_end.get(i)
        if span and span[0] < i and span[1] <= hi:
            i = span[1]
        return i

    def cut(self, at: int) -> None:
        """Close the open chunk before line `at` and open the next one with an overlap tail."""
        assert self.start is not None  # run() cuts only an open chunk
        tail = self.tail(self.start, at)
        self.emit(self.start, at)
        self.start, self.size = tail, sum(self.tok[tail:at])
        self.body = any(self.lines[i].strip() for i in range(tail, at))

    def run(self) -> list[Chunk]:
        target = self.target
        for blk in self.blocks:
            if self.start is None:
                self.start, self.size, self.body = blk.start, 0, False
            if blk.heading:
                if self.body and self.size + blk.tokens > target:
                    # the next section does not fit: cut before its heading, no overlap across sections
                    self.emit(self.start, blk.start)
                    self.start, self.size, self.body = blk.start, 0, False
                self.size += blk.tokens
            elif blk.blank:
                self.size += blk.tokens
            elif self.size + blk.tokens <= target:
                self.size += blk.tokens
                self.body = True
            elif not self.body and blk.tokens <= target:
                # only headings so far: keep them with their first block (a chunk of bare
                # headings finds nothing), even if that overflows by the heading lines
                self.size += blk.tokens
                self.body = True
            elif blk.tokens <= target:
                self.cut(blk.start)  # the block fits a chunk of its own: start one before it
                self.size += blk.tokens
                self.body = True
            else:  # larger than any chunk: cut between its lines
                for i in range(blk.start, blk.end):
                    if self.body and self.size + self.tok[i] > target and i > self.start:
                        self.cut(i)
                    self.size += self.tok[i]
                    self.body = True
        if self.start is not None:
            self.emit(self.start, len(self.lines))
        return self.chunks


def chunk_lines(lines: list[str], body_start: int, target: int = 400, overlap: int = 80) -> list[Chunk]:
    """Chunk `lines` (the whole file, split on newlines) from index `body_start` on."""
    target = max(target, 16)
    overlap = max(0, min(overlap, target // 2))
    return _Packer(lines, body_start, target, overlap).run()
