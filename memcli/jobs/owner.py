"""Learn the owner's names from the conversations (memcli.vault.owner keeps them).

Ingest records what each session's conversation shows (a letter the assistant signed with the
user's name, an introduction); `mem reindex` reads every session log again when the record is
missing, so the names are derived state like the rest of mem_metadata/.
"""

from __future__ import annotations

from memcli.errors import JobFailed
from memcli.extraction.conversation import signed
from memcli.vault import lock, owner, session
from memcli.vault.lock import Lock
from memcli.vault.workspace import Workspace


def learn(ws: Workspace, session_id: str, records: list[dict]) -> None:
    """Record the names one session's whole log gives; the caller holds the workspace lock."""
    if owner.missing(ws):  # the logs, this one's included, read once
        owner.save(ws, _all_logs(ws))
        return
    known = owner.learned(ws)
    sessions = {k: v for k, v in known.items() if k != session_id}
    if found := _names(records):
        sessions[session_id] = found
    if sessions != known:
        owner.save(ws, sessions)


def rebuild(ws: Workspace) -> None:
    """Read every session log when nothing is recorded (a new workspace, mem_metadata removed)."""
    if not owner.missing(ws) or not ws.sessions.is_dir():
        return
    with Lock(ws.lock_path(lock.WORKSPACE), "reindex", wait=lock.WAIT):
        if owner.missing(ws):
            owner.save(ws, _all_logs(ws))


def _all_logs(ws: Workspace) -> dict[str, list[str]]:
    out = {}
    for path in sorted(ws.sessions.glob("*.jsonl")):
        try:
            found = _names(session.read_log(path))
        except (JobFailed, OSError):
            continue  # a damaged log gives no names; ingest and doctor report it
        if found:
            out[path.stem] = found
    return out


def _names(records: list[dict]) -> list[str]:
    return signed.names_in([(str(r.get("role") or ""), session.text_of(r)) for r in records])
