"""Offline digests of data resources: CSV columns and rows, JSON/JSONL/YAML key structure.

Values are quoted as the file has them (numbers as written, strings cut at 60
characters), never computed into new figures, so the digest stays faithful.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter

from memcli.extraction.resource import Digest

MAX_KEYS = 30  # keys listed per object
MAX_LINES = 80  # structure lines per digest
MAX_DEPTH = 4
MAX_VALUE = 60
SAMPLE_ITEMS = 200  # array items / records whose keys are merged
TABLE_ROWS = 5
TABLE_COLUMNS = 8
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$")


class Unparsable(ValueError):
    """The file does not parse as its suffix says; the digest falls back to its text."""


def digest(kind: str, name: str, text: str) -> Digest:
    return {"csv": table, "json": json_doc, "jsonl": json_lines, "yaml": yaml_doc}[kind](name, text)


# CSV ----------------------------------------------------------------------------------------
def _delimiter(first_line: str) -> str:
    counts = {d: first_line.count(d) for d in (",", ";", "\t", "|")}
    best = max(counts, key=lambda d: (counts[d], d == ","))
    return best if counts[best] else ","


def _cell(value: str, width: int = 40) -> str:
    v = " ".join(value.split()).replace("|", "\\|")
    return v if len(v) <= width else v[: width - 1] + "…"


_NUMBER = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?$")


def _number(value: str) -> float | None:
    """The value as a number when it is written as one ("1,234.5" too); None otherwise."""
    if not any(c.isdigit() for c in value) or not _NUMBER.match(value):
        return None
    return float(value.replace(",", ""))


def table(name: str, text: str) -> Digest:
    delim = _delimiter(text.split("\n", 1)[0])
    try:
        rows = [r for r in csv.reader(io.StringIO(text), delimiter=delim) if any(c.strip() for c in r)]
    except csv.Error as exc:
        raise Unparsable(f"not valid CSV ({exc})") from None
    if not rows:
        raise Unparsable("no CSV rows")
    header, data = rows[0], rows[1:]
    ncol = len(header)
    ragged = sum(1 for r in data if len(r) != ncol)
    d = Digest("CSV", name, f"{len(data)} row(s) × {ncol} column(s)")
    cols = []
    for i, col in enumerate(header):
        values = [r[i].strip() for r in data if i < len(r) and r[i].strip()]
        cols.append(f"- `{_cell(col) or f'column {i + 1}'}`: {_column(values, len(data))}")
    if len(cols) > MAX_KEYS:
        cols = cols[:MAX_KEYS] + [f"- … {len(cols) - MAX_KEYS} more column(s)"]
    if ragged:
        cols.append(f"\n{ragged} row(s) have a different number of fields than the header.")
    sep = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}[delim]
    d.sections.append(("Columns", [f"{ncol} columns, {sep}-separated, {len(data)} data rows:", *cols]))
    shown = min(ncol, TABLE_COLUMNS)
    more = " …" if ncol > shown else ""
    lines = ["| " + " | ".join(_cell(c) for c in header[:shown]) + f" |{more}", "|" + "---|" * shown]
    for r in data[:TABLE_ROWS]:
        cells = [_cell(r[i]) if i < len(r) else "" for i in range(shown)]
        lines.append("| " + " | ".join(cells) + f" |{more}")
    if data:
        d.sections.append((f"First rows ({min(TABLE_ROWS, len(data))} of {len(data)})", lines))
    return d


def _column(values: list[str], rows: int) -> str:
    empty = rows - len(values)
    tail = f", {empty} empty" if empty else ""
    if not values:
        return "empty"
    nums = [(_number(v), v) for v in values]
    if all(n is not None for n, _ in nums):
        lo, hi = min(nums, key=lambda t: t[0] or 0.0), max(nums, key=lambda t: t[0] or 0.0)  # (none is None)
        return f"number, {lo[1]} to {hi[1]}{tail}"
    if all(_ISO_DATE.match(v) for v in values):
        return f"date, {min(values)} to {max(values)}{tail}"
    distinct = Counter(values)
    examples = ", ".join(f'"{_cell(v, 30)}"' for v, _ in distinct.most_common(3))
    return f"text, {len(distinct)} distinct (e.g. {examples}){tail}"


# JSON / YAML structure ----------------------------------------------------------------------
def _kind(v) -> str:
    if isinstance(v, dict):
        return "object"
    if isinstance(v, list):
        return "array"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if v is None:
        return "null"
    return "string" if isinstance(v, str) else "date" if hasattr(v, "isoformat") else type(v).__name__


def _scalar(v) -> str:
    if isinstance(v, str):
        s = " ".join(v.split())
        return json.dumps(s if len(s) <= MAX_VALUE else s[: MAX_VALUE - 1] + "…", ensure_ascii=False)
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return json.dumps(v)


def shape(value, label: str, depth: int, out: list[str]) -> None:
    """Structure lines for `value`, labelled `label`, indented by `depth`."""
    if len(out) >= MAX_LINES:
        return
    pad = "  " * depth
    if isinstance(value, dict):
        out.append(f"{pad}- {label}: object, {len(value)} key(s)")
        if depth < MAX_DEPTH:
            for k in list(value)[:MAX_KEYS]:
                shape(value[k], f"`{k}`", depth + 1, out)
            if len(value) > MAX_KEYS:
                out.append(f"{pad}  - … {len(value) - MAX_KEYS} more key(s)")
    elif isinstance(value, list):
        out.append(f"{pad}- {label}: array, {len(value)} item(s)")
        if value and depth < MAX_DEPTH:
            items(value, depth + 1, out)
    else:
        out.append(f"{pad}- {label}: {_kind(value)} {_scalar(value)}")


def items(values: list, depth: int, out: list[str]) -> None:
    """What an array holds: item types, and for objects the keys they carry (with how many do)."""
    pad = "  " * depth
    sample = values[:SAMPLE_ITEMS]
    kinds = Counter(_kind(v) for v in sample)
    of = f" (first {len(sample)})" if len(values) > len(sample) else ""
    out.append(f"{pad}- items{of}: " + ", ".join(f"{k} ×{n}" for k, n in kinds.most_common()))
    dicts = [v for v in sample if isinstance(v, dict)]
    if not dicts or depth >= MAX_DEPTH:
        return
    keys: Counter = Counter()
    types: dict[str, Counter] = {}
    first: dict = {}
    for obj in dicts:
        for k, v in obj.items():
            keys[k] += 1
            types.setdefault(k, Counter())[_kind(v)] += 1
            first.setdefault(k, v)
    for k in list(keys)[:MAX_KEYS]:
        if len(out) >= MAX_LINES:
            return
        t = "/".join(types[k])
        v = first[k]
        example = f" e.g. {_scalar(v)}" if not isinstance(v, (dict, list)) else ""
        out.append(f"{pad}  - `{k}`: {t} (in {keys[k]} of {len(dicts)}){example}")
    if len(keys) > MAX_KEYS:
        out.append(f"{pad}  - … {len(keys) - MAX_KEYS} more key(s)")


def _facts(value) -> str:
    if isinstance(value, dict):
        return f"object with {len(value)} key(s)"
    if isinstance(value, list):
        return f"array of {len(value)} item(s)"
    return f"a single {_kind(value)}"


def json_doc(name: str, text: str) -> Digest:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Unparsable(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:
        raise Unparsable(f"not usable JSON ({type(exc).__name__})") from None
    out: list[str] = []
    shape(value, "(root)", 0, out)
    d = Digest("JSON", name, _facts(value))
    d.sections.append(("Structure", out))
    return d


def json_lines(name: str, text: str) -> Digest:
    records, bad, first_bad = [], 0, 0
    for no, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except (ValueError, RecursionError):
            bad += 1
            first_bad = first_bad or no
    if not records:
        raise Unparsable(f"no valid JSON line (line {first_bad} is not JSON)")
    facts = f"{len(records)} record(s)" + (f", {bad} invalid line(s) (first: line {first_bad})" if bad else "")
    d = Digest("JSON Lines", name, facts)
    out: list[str] = []
    items(records, 0, out)
    d.sections.append(("Records", out))
    first: list[str] = []
    shape(records[0], "record 1", 0, first)
    d.sections.append(("First record", first))
    return d


def yaml_doc(name: str, text: str) -> Digest:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        if "*" in text and any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(text, Loader=loader)):
            # a few aliases can stand for an exponentially large value (a "billion laughs" file)
            raise Unparsable("YAML aliases are not expanded")
        docs = [doc for doc in yaml.load_all(text, Loader=loader) if doc is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise Unparsable(f"not valid YAML{where}: {getattr(exc, 'problem', None) or 'syntax error'}") from None
    except Unparsable:
        raise
    except (RecursionError, ValueError, TypeError, AttributeError, OverflowError) as exc:
        # AttributeError and friends: PyYAML's constructors on a tag that does not fit its value
        raise Unparsable(f"not usable YAML ({type(exc).__name__})") from None
    if not docs:
        raise Unparsable("the YAML holds no value")
    out: list[str] = []
    if len(docs) == 1:
        shape(docs[0], "(root)", 0, out)
        facts = _facts(docs[0]).replace("object", "mapping").replace("array", "list")
    else:
        for i, doc in enumerate(docs[:5], 1):
            shape(doc, f"document {i}", 0, out)
        facts = f"{len(docs)} documents"
    d = Digest("YAML", name, facts)
    d.sections.append(("Structure", out))
    return d
