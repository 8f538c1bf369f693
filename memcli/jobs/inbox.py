"""The inbox: one record per job run that changed memory (QwenPaw's "Inbox Results").

`push` appends {job, time, changes, summary} to `mem_metadata/inbox/inbox.jsonl`
when `inbox_push_enabled`, and POSTs the same JSON to `inbox_webhook_url` when one
is set. A webhook failure is a warning, never an error: the memory was written
and the record is in the inbox file either way. ingest, remember, dream and
resource scan all report through here.

Every time is in the workspace's zone (`timezone`, else this machine's), as the session
logs' timestamps are and the days that name the daily notes: a record of a job at 00:30
names the same day as the note it wrote. The jobs hand over times in other zones (dream and
resource scan the machine's), so `push` converts, and a record kept from before is converted
when the file is rewritten.
"""

from __future__ import annotations

import json
from datetime import datetime

from memcli.errors import ProviderError
from memcli.vault import atomic, lock, notes
from memcli.vault.lock import Lock
from memcli.vault.workspace import Workspace

MAX_RECORDS = 1000  # oldest records are dropped beyond this: an unread inbox must not grow forever
WEBHOOK_TIMEOUT = 5.0


def path(ws: Workspace):
    return ws.metadata / "inbox" / "inbox.jsonl"


def read(ws: Workspace) -> list[dict]:
    try:
        text = path(ws).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out = []
    for line in text.splitlines():
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: a line nested thousands deep
            continue  # a damaged line is not worth failing a job for; the rest is still news
        if isinstance(rec, dict):
            out.append(rec)
    return out


def _write(ws: Workspace, records: list[dict]) -> None:
    atomic.write_text(
        path(ws), "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    )


def push(ws: Workspace, job: str, changes: list[tuple], summary: str = "", now: datetime | None = None) -> list[str]:
    """Record a job's changes, each (path, action) or (path, action, why); returns warnings."""
    if not changes or not ws.settings.inbox_push_enabled:
        return []
    items = [{"path": c[0], "action": c[1], **({"note": c[2]} if len(c) > 2 and c[2] else {})} for c in changes]
    tz = notes.zone(ws)
    record = {
        "job": job,
        "time": (now or datetime.now()).astimezone(tz).isoformat(timespec="seconds"),
        "changes": items,
        "summary": summary,
    }
    with Lock(ws.lock_path(lock.INBOX), job, wait=10.0):
        _write(ws, [_in_zone(r, tz) for r in read(ws)[-(MAX_RECORDS - 1) :]] + [record])
    url = ws.settings.inbox_webhook_url.strip()
    return [w for w in [_post(url, record)] if w] if url else []


def _in_zone(rec: dict, tz) -> dict:
    """A kept record with its time in `tz` (a time that is not one is left as it is)."""
    try:
        when = datetime.fromisoformat(rec["time"])
    except (KeyError, TypeError, ValueError):
        return rec
    if when.tzinfo is None:
        return rec
    return {**rec, "time": when.astimezone(tz).isoformat(timespec="seconds")}


def clear(ws: Workspace, shown: list[dict] | None = None) -> int:
    """Remove the records in `shown` (all when None); a record pushed since it was listed stays."""
    with Lock(ws.lock_path(lock.INBOX), "inbox", wait=10.0):
        records = read(ws)
        keep = [r for r in records if shown is not None and r not in shown]
        if len(keep) != len(records):
            _write(ws, keep)
        return len(records) - len(keep)


def _post(url: str, record: dict) -> str | None:
    """POST the record; a warning (never an error) on failure."""
    from memcli.providers import http

    try:
        http.notify(url, record, timeout=WEBHOOK_TIMEOUT)
    except ProviderError as exc:
        return f"inbox {exc}"
    return None
