"""The last publish's failures, kept for `mem health`: `mem_metadata/shared/failures.json`.

A publish that left files out (the database refused their rows) or failed whole writes
what happened, for which target (publish.target_key: the DSN without its password, the
namespace and the agent); a publish without failures removes it. Reasons are scrubbed
lines (memcli.team.db.reason), never a DSN.
"""

from __future__ import annotations

import datetime as dt
import json

from memcli.vault import atomic
from memcli.vault.workspace import Workspace

KEPT = 50  # files listed; the count says how many failed in all


def path(ws: Workspace):
    return ws.metadata / "shared" / "failures.json"


def record(ws: Workspace, target: str, failed: list[tuple[str, str]], error: str = "") -> None:
    """Remember this publish's failures (`failed`: (path, reason); `error`: the whole publish's)."""
    try:
        if not failed and not error:
            atomic.remove(path(ws))
            return
        doc = {
            "target": target,
            "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "error": error or None,
            "failed": len(failed),
            "files": [{"path": p, "reason": r} for p, r in failed[:KEPT]],
        }
        atomic.write_text(path(ws), json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    except OSError:
        pass  # (a read-only workspace) the publish's own report still says it


def load(ws: Workspace, target: str) -> dict | None:
    """The last publish's failures for `target`, or None when it had none (or they were for another)."""
    try:
        doc = json.loads(path(ws).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("target") != target or not isinstance(doc.get("files"), list):
        return None
    return doc
