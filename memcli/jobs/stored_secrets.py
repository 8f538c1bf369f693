"""What `mem health` says about secrets already held in memory: every kind the redactor replaces,
in every place memory is kept. It names files and kinds, never a value.

* notes (MEMORY.md, memory/, digest/, extra paths): WARN. They are your text (or a digest node
  written before a rule knew the kind); mem never edits them, so you replace the value by hand.
* mem's own records, which no command rewrites: the session logs (mem_session/dialog/*.jsonl),
  the inbox (mem_metadata/inbox/inbox.jsonl) and dream's interests.yaml files: FAIL. They were
  written before redaction knew the kind; remove the value by hand.
* the chunk store (mem_metadata/file_store/): derived from the notes, so only chunks of a note
  that no longer holds the value are reported (a note changed or deleted since indexing): WARN,
  `mem reindex` rewrites them. The keyword index's segments hold the same chunk texts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memcli.errors import CorruptStore
from memcli.jobs.check import FAIL, OK, WARN, Check
from memcli.vault.workspace import Workspace

MAX_NAMED = 20  # paths listed in the figures


def _strings(obj) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def _jsonl_text(data: bytes) -> str:
    """The strings of every JSON line (escapes decoded, so a \\u-escaped value is seen), one per line;
    a line that is not JSON is taken as it is."""
    out = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            out.extend(_strings(json.loads(line)))
        except (ValueError, RecursionError):
            out.append(line)
    return "\n".join(out)


def _kinds(red, text: str) -> list[str]:
    return [f.kind for f in red.find(text)]


def _records(ws: Workspace) -> Iterator[tuple[Path, bool]]:
    """(file, is JSON lines) of mem's own records: session logs, the inbox, interests.yaml."""
    from memcli.jobs.dream.topics import FILE as INTERESTS

    if ws.sessions.is_dir():
        yield from ((p, True) for p in sorted(ws.sessions.glob("*.jsonl")) if p.is_file())
    inbox = ws.metadata / "inbox" / "inbox.jsonl"
    if inbox.is_file():
        yield inbox, True
    if ws.daily.is_dir():
        yield from ((p, False) for p in sorted(ws.daily.glob(f"*/{INTERESTS}")) if p.is_file())


def _name(ws: Workspace, path: Path) -> str:
    try:
        return ws.rel(path)
    except ValueError:
        return str(path)


def _chunk_store(ws: Workspace, red, notes: dict[str, list[str]]) -> dict[str, list[str]]:
    """Kinds per "<store file> (<note>)" of the stored chunks whose note holds no secret now (changed
    or deleted since indexing); a note that still holds one is reported as a note."""
    from memcli.index.stores import store

    found: dict[str, list[str]] = {}
    for path in sorted((ws.metadata / "file_store").glob("*.jsonl*")):
        try:
            raw = path.read_bytes()
            lines = store.read_raw_lines(path, raw) if path.name.endswith(".zst") else raw.splitlines()
        except (OSError, CorruptStore):
            continue  # the index check reports a store that does not decode
        for line in lines:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if (
                isinstance(rec, dict)
                and isinstance(rec.get("text"), str)
                and rec.get("path") not in notes
                and (kinds := _kinds(red, rec["text"]))
            ):
                found.setdefault(f"{_name(ws, path)} ({rec.get('path')})", []).extend(kinds)
    return found


def check(ws: Workspace) -> Check:
    from memcli.secrets.scrub import redactor

    red = redactor(ws.settings.redaction)
    if not red.enabled:
        return Check("secrets", OK, "redaction is off (redaction.enabled: false)", {"files": 0, "values": 0})
    notes: dict[str, list[str]] = {}
    for rel, _ in ws.iter_watched():
        try:
            kinds = _kinds(red, (ws.root / rel).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if kinds:
            notes[rel] = kinds
    records: dict[str, list[str]] = {}
    for path, lines in _records(ws):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if kinds := _kinds(red, _jsonl_text(data) if lines else data.decode("utf-8", errors="replace")):
            records[_name(ws, path)] = kinds
    stale = _chunk_store(ws, red, notes) if (ws.metadata / "file_store").is_dir() else {}
    return _report(notes, records, stale)


def _example(found: dict[str, list[str]]) -> str:
    first = next(iter(found))
    return f"e.g. {first}: {', '.join(sorted(set(found[first])))}"


def _report(notes: dict, records: dict, stale: dict) -> Check:
    every = {**notes, **records, **stale}
    figures: dict[str, Any] = {"files": len(every), "values": sum(map(len, every.values()))}
    if not every:
        return Check("secrets", OK, "", figures)
    msg = []
    if records:
        msg.append(
            f"{len(records)} of mem's own record(s) hold secret-shaped values ({_example(records)}), written "
            "before redaction knew the kind: remove them by hand"
        )
    if notes:
        msg.append(
            f"{len(notes)} note(s) hold secret-shaped values ({_example(notes)}); replace them by hand, "
            "mem never edits your text"
        )
    if stale:
        msg.append(
            f"the chunk store holds secret-shaped values of {len(stale)} note(s) that no longer do "
            f"({_example(stale)}); run `mem reindex`"
        )
    figures["paths"] = sorted(every)[:MAX_NAMED]
    return Check("secrets", FAIL if records else WARN, "; ".join(msg), figures)
