"""A small JSON5 reader (https://spec.json5.org), enough for OpenClaw's `openclaw.json`.

OpenClaw reads its config with the `json5` npm package, so a real config may hold
comments, trailing commas, unquoted keys, single quotes, hex numbers and so on.
`loads` returns what `json.loads` would (int for integer literals, float otherwise)
and raises `JSON5Error` ("line L col C: what"). It never recurses, so deep nesting
is a clear error, not a RecursionError; every token is read by an anchored regex or
one scan, so time is linear in the input. Standard library only.

Why not a library (measured by `bench/libraries.py` (docs/architecture.md, Hand-written parts), on the 41 JSON5 texts of the
tests): `json5` (pure Python) agrees on 40 but splits a surrogate pair, takes 19.6 s for a
1 MB config (this reader: 0.8 s) and raises RecursionError on deep nesting; `pyjson5`
(compiled, 40x faster) rejects 3 lone-surrogate strings json.loads accepts and reports an
error without its line and column. An openclaw.json is a few KB: where the error is matters.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

__all__ = ["MAX_DEPTH", "JSON5Error", "loads"]

MAX_DEPTH = 1000  # deeper than any real config, far below Python's own stack limit

# JSON5 white space is ECMAScript WhiteSpace + LineTerminator (spec 5.1), category Zs included.
_SPACE = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+")
_LINE_BREAK = re.compile("\r\n|[\n\r\u2028\u2029]")
# One numeric literal (spec 6); number() then rejects what may not follow it (01, 1e, 0x).
_NUMBER = re.compile(
    r"[+-]?(?:(?P<hex>0[xX][0-9a-fA-F]+)|(?P<inf>Infinity)|(?P<nan>NaN)"
    r"|(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
)
# Runs of string characters that need no attention: no quote, backslash or \n \r.
_PLAIN = {'"': re.compile(r'[^"\\\n\r]+'), "'": re.compile(r"[^'\\\n\r]+")}
_HEX = {2: re.compile(r"[0-9a-fA-F]{2}"), 4: re.compile(r"[0-9a-fA-F]{4}")}
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_LITERALS = {"true": True, "false": False, "null": None}
_ID_START = {"Lu", "Ll", "Lt", "Lm", "Lo", "Nl"}  # ES5 UnicodeLetter
_ID_PART = _ID_START | {"Mn", "Mc", "Nd", "Pc"}  # plus combining marks, digits, connectors


class JSON5Error(ValueError):
    """Malformed JSON5; `msg`, `pos` (0-based), `lineno` and `colno` (1-based) say where."""

    def __init__(self, msg: str, text: str, pos: int):
        breaks = list(_LINE_BREAK.finditer(text, 0, pos))  # only paid for on failure
        self.msg, self.pos, self.lineno = msg, pos, len(breaks) + 1
        self.colno = pos - (breaks[-1].end() if breaks else 0) + 1
        super().__init__(f"line {self.lineno} col {self.colno}: {msg}")


def loads(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse one JSON5 value; anything but white space and comments after it is an error."""
    if not isinstance(text, str):
        raise TypeError(f"JSON5 text must be str, not {type(text).__name__}")
    parser = _Parser(text, max_depth)
    value = parser.value()
    parser.skip()
    if parser.pos < len(text):
        raise parser.fail(f"unexpected {parser.found()} after the value")
    return value


def _is_id_char(ch: str, start: bool) -> bool:
    """May `ch` start (or continue) an ES5 IdentifierName? ASCII is checked first, as the usual case."""
    if ch.isascii():
        return ch.isalpha() or ch in "$_" or (not start and ch.isdigit())
    if not start and ch in "\u200c\u200d":  # ZWNJ and ZWJ
        return True
    return unicodedata.category(ch) in (_ID_START if start else _ID_PART)


class _Parser:
    def __init__(self, text: str, max_depth: int):
        self.text, self.pos, self.max_depth = text, 0, max_depth

    def fail(self, msg: str, pos: int | None = None) -> JSON5Error:
        return JSON5Error(msg, self.text, self.pos if pos is None else pos)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def found(self) -> str:
        return f"character {self.peek()!r}" if self.peek() else "end of input"

    def skip(self) -> None:
        """Skip white space and comments; an unclosed /* comment is an error."""
        text = self.text
        while True:
            m = _SPACE.match(text, self.pos)
            self.pos = m.end() if m else self.pos
            if text.startswith("//", self.pos):
                m = _LINE_BREAK.search(text, self.pos)
                self.pos = m.start() if m else len(text)
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated /* comment")
                self.pos = end + 2
            else:
                return

    def value(self) -> Any:
        """The value at pos; open containers sit on a stack of [container, pending key]."""
        stack: list[list[Any]] = []
        while True:
            self.skip()
            if self.peek() in ("{", "["):
                if len(stack) >= self.max_depth:
                    raise self.fail(f"nested too deeply (more than {self.max_depth} levels)")
                stack.append([{} if self.peek() == "{" else [], None])
                self.pos += 1
                if self.advance(stack[-1], first=True):
                    continue  # the new container wants its first value
                value = stack.pop()[0]  # it was empty
            else:
                value = self.scalar()
            while True:  # hand the value to its parent; close every parent that ends here
                if not stack:
                    return value
                container, key = stack[-1]
                if isinstance(container, list):
                    container.append(value)
                else:
                    container[key] = value  # a duplicate key: the last one wins, as in JSON5
                if self.advance(stack[-1], first=False):
                    break
                value = stack.pop()[0]

    def advance(self, frame: list[Any], first: bool) -> bool:
        """Move to the next member of `frame`: True if a value follows, False if it closed."""
        is_object = isinstance(frame[0], dict)
        close = "}" if is_object else "]"
        self.skip()
        if not first and self.peek() == ",":
            self.pos += 1
            self.skip()
        elif not first and self.peek() != close:
            raise self.fail(f"expected ',' or {close!r} but found {self.found()}")
        if self.peek() == close:  # an empty container, or a trailing comma
            self.pos += 1
            return False
        if is_object:
            frame[1] = self.key()
            self.skip()
            if self.peek() != ":":
                raise self.fail(f"expected ':' but found {self.found()}")
            self.pos += 1
        return True

    def key(self) -> str:
        """A member name: a quoted string or an identifier, which may hold `\\u` escapes (four hex digits)."""
        if self.peek() in ('"', "'"):
            return self.string()
        text, out = self.text, []
        while self.pos < len(text):
            ch, at = text[self.pos], self.pos
            if ch == "\\" and text.startswith("\\u", at) and _HEX[4].match(text, at + 2):
                ch, self.pos = chr(int(text[at + 2 : at + 6], 16)), at + 6
                if not _is_id_char(ch, start=not out):
                    raise self.fail(f"escaped character {ch!r} cannot be in a member name", at)
            elif _is_id_char(ch, start=not out):
                self.pos += 1
            else:
                break
            out.append(ch)
        if not out:
            raise self.fail(f"expected a member name but found {self.found()}")
        return "".join(out)

    def scalar(self) -> Any:
        ch = self.peek()
        if ch in ('"', "'"):
            return self.string()
        for word, value in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return value
        if ch and ch in "+-.0123456789IN":
            return self.number()
        raise self.fail(f"unexpected {self.found()}")

    def number(self) -> int | float:
        start, m = self.pos, _NUMBER.match(self.text, self.pos)
        nxt = self.text[m.end() : m.end() + 1] if m else ""
        if not m or nxt == "." or (nxt and _is_id_char(nxt, start=False)):
            raise self.fail("invalid number", start)
        self.pos, literal = m.end(), m.group()
        sign = -1 if literal[0] == "-" else 1
        if m.group("hex"):
            return sign * int(m.group("hex"), 16)
        if m.group("inf") or m.group("nan"):
            return sign * float(literal.lstrip("+-").lower()[:3])  # "inf" / "nan"
        if any(c in literal for c in ".eE"):
            return float(literal)
        try:
            return int(literal)
        except ValueError:  # more digits than sys.get_int_max_str_digits() allows
            raise self.fail("number too large", start) from None

    def string(self) -> str:
        text, quote, start = self.text, self.peek(), self.pos
        plain, parts = _PLAIN[quote], []
        self.pos += 1
        while True:
            m = plain.match(text, self.pos)
            if m:
                parts.append(m.group())
                self.pos = m.end()
            ch = self.peek()
            if ch == quote:
                self.pos += 1
                return "".join(parts)
            if ch == "\\":
                parts.append(self.escape(start))
            elif ch:  # a raw \n or \r: JSON5 only allows a line break after a backslash
                raise self.fail("line break inside a string (escape it with a backslash)")
            else:
                raise self.fail("unterminated string", start)

    def escape(self, start: int) -> str:
        """The escape sequence at pos (spec 5.1, ES5 7.8.4); `start` is where the string began."""
        text, at = self.text, self.pos
        ch, self.pos = text[at + 1 : at + 2], at + 2
        if ch in _ESCAPES:
            return _ESCAPES[ch]
        if ch and ch in "\n\r\u2028\u2029":  # line continuation: the break is dropped
            self.pos += ch == "\r" and text.startswith("\n", self.pos)  # \r\n is one break
            return ""
        if ch == "0" and not text[self.pos : self.pos + 1].isdigit():
            return "\0"
        if ch in ("x", "u"):
            return self.hex_escape(at, 2 if ch == "x" else 4)
        if not ch:
            raise self.fail("unterminated string", start)
        if ch.isdigit():
            raise self.fail(f"invalid escape \\{ch}", at)
        return ch  # any other character stands for itself: \' \" \\ \/ \a ...

    def hex_escape(self, at: int, digits: int) -> str:
        """\\xHH or \\uHHHH; a \\u high surrogate followed by a \\u low one joins into one character."""
        text = self.text
        if not _HEX[digits].match(text, self.pos):
            raise self.fail(f"\\{text[at + 1]} needs {digits} hex digits", at)
        code = int(text[self.pos : self.pos + digits], 16)
        self.pos += digits
        if 0xD800 <= code <= 0xDBFF and text.startswith("\\u", self.pos) and _HEX[4].match(text, self.pos + 2):
            low = int(text[self.pos + 2 : self.pos + 6], 16)
            if 0xDC00 <= low <= 0xDFFF:
                self.pos += 6
                return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00))
        return chr(code)  # a lone surrogate is kept, as json.loads keeps it
