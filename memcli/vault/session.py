"""Session ids and session logs: `mem_session/dialog/<session_id>.jsonl`.

A session log holds one sanitized message per line (AgentScope `Msg` shape: id,
name, role, content blocks, timestamp), merged by message id and sorted by
time. When the merged log only adds lines after the old ones it is appended
(a long conversation is not rewritten every turn); otherwise it is rewritten
atomically. A crash mid-append leaves a last line without its newline: readers
drop that torn tail, and the next write rewrites the file.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from pathlib import Path

from memcli.errors import BadInput, JobFailed
from memcli.vault import atomic

_FORBIDDEN = re.compile(r'[/\\:*?"<>|\x00-\x1f\x7f]')
MAX_SESSION_ID_BYTES = 200  # leaves room for ".jsonl" within a 255-byte file name


def validate_session_id(sid: str) -> str:
    """The session id as given, or BadInput: it becomes a file name, so no path tricks."""
    if not isinstance(sid, str) or not sid.strip():
        raise BadInput("session id is empty", "pass --session-id ID")
    shown = sid.encode("unicode_escape").decode("ascii")[:80]
    if sid in (".", ".."):
        raise BadInput(f"session id {shown!r} is not allowed", "use letters, digits, '-' or '_'")
    bad = _FORBIDDEN.search(sid)
    if bad:
        what = "a control character" if ord(bad.group()) < 32 or bad.group() == "\x7f" else repr(bad.group())
        raise BadInput(
            f"session id {shown!r} contains {what}",
            'a session id may not contain / \\ : * ? " < > | or control characters',
        )
    if sid != sid.strip():
        raise BadInput(f"session id {shown!r} starts or ends with whitespace")
    if not _is_text(sid):  # undecodable argv bytes arrive as lone surrogates (surrogateescape)
        raise BadInput(f"session id {shown!r} is not valid UTF-8", "use letters, digits, '-' or '_'")
    if len(sid.encode("utf-8")) > MAX_SESSION_ID_BYTES:
        raise BadInput(f"session id is longer than {MAX_SESSION_ID_BYTES} bytes")
    return sid


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def dump(record: dict) -> str:
    """One log line (without the newline): compact, UTF-8, key order as given."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def read_log(path: Path) -> list[dict]:
    """The records of a session log; [] when it does not exist."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JobFailed(f"{path.name} is not valid UTF-8 (byte {exc.start})", f"fix or delete {path}") from None
    lines = text.split("\n")
    if lines and lines[-1]:
        lines.pop()  # a torn append: the write that made it never finished
    out: list[dict] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            rec = None
        if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
            raise JobFailed(f"{path.name} line {n} is not a saved message", f"fix or delete that line of {path}")
        out.append(rec)
    return out


def text_of(record: dict) -> str:
    """What a message says: its text blocks joined (no thinking, tool calls or media)."""
    blocks = record.get("content")
    if isinstance(blocks, str):
        return blocks.strip()
    if not isinstance(blocks, list):
        return ""
    return "\n".join(
        b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ).strip()


def _when(rec: dict) -> float | None:
    ts = rec.get("timestamp")
    if not ts:
        return None
    try:
        return datetime.fromisoformat(ts).timestamp()
    except (TypeError, ValueError):
        return None


def merge(old: list[dict], new: list[dict]) -> tuple[list[dict], int, int]:
    """Merge `new` into `old` by message id; returns (merged, added, replaced).

    A known id with different content takes the new version in place. The result
    is sorted by time (stable); a message without a time keeps the time of the
    one before it, so timeless conversations stay in arrival order.
    """
    index = {rec["id"]: i for i, rec in enumerate(old)}
    merged = list(old)
    added = replaced = 0
    for rec in new:
        i = index.get(rec["id"])
        if i is None:
            index[rec["id"]] = len(merged)
            merged.append(rec)
            added += 1
        elif merged[i] != rec:
            merged[i] = rec
            replaced += 1
    keys, last = [], float("-inf")
    for rec in merged:
        t = _when(rec)
        last = t if t is not None else last
        keys.append(last)
    order = sorted(range(len(merged)), key=keys.__getitem__)
    return [merged[i] for i in order], added, replaced


def write_log(path: Path, old: list[dict], merged: list[dict]) -> str:
    """Write `merged` over a log that held `old`; returns "unchanged", "appended" or "rewritten"."""
    path = Path(path)
    if merged == old and (not merged or _intact(path)):
        return "unchanged"
    lines = [dump(r) + "\n" for r in merged]
    if old and merged[: len(old)] == old and _intact(path):
        atomic.append_bytes(path, "".join(lines[len(old) :]).encode("utf-8"))
        return "appended"
    atomic.write_text(path, "".join(lines))
    return "rewritten"


def _intact(path: Path) -> bool:
    """True when the file ends with a newline (or is empty): no torn tail to repair."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            if fh.tell() == 0:
                return True
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) == b"\n"
    except FileNotFoundError:
        return False
