"""Who the memory belongs to: the names its owner goes by.

Agents ask about their user by name ("Where does Ha-eun's mother live?"); notes say "the user".
The names come from the config (`owner_names`), from the workspace's `USER.md` (OpenClaw's
profile of the user: its "Name" and "What to call them" lines) and from the conversations
ingest has read (memcli.extraction.conversation.signed), kept per session in
`<metadata_dir>/owner.json`: derived state, rebuilt from the session logs by `mem reindex`
when missing (memcli.jobs.owner).
"""

from __future__ import annotations

import json
import re

from memcli.vault import atomic
from memcli.vault.workspace import Workspace

FILE = "owner.json"
PROFILE = "USER.md"
_PROFILE_LINE = re.compile(
    r"^\s*[-*]?\s*\**(?:name|what to call them|preferred name)\**\s*:\**\s*(.+?)\s*$", re.I | re.M
)


def names(ws: Workspace) -> tuple[str, ...]:
    """Every name of the owner, longest first (a full name before its parts)."""
    found = [*ws.settings.owner_names, *_profile(ws), *(n for ns in learned(ws).values() for n in ns)]
    out = {n.strip(): None for n in found if n and n.strip()}
    return tuple(sorted(out, key=len, reverse=True))


def learned(ws: Workspace) -> dict[str, list[str]]:
    """Session id -> the names its conversation gave ({} when none is recorded or the file is unreadable)."""
    try:
        data = json.loads((ws.metadata / FILE).read_text(encoding="utf-8"))
        sessions = data.get("sessions", {})
        return {str(k): [str(n) for n in v] for k, v in sessions.items() if isinstance(v, list)}
    except (OSError, ValueError, AttributeError):
        return {}


def save(ws: Workspace, sessions: dict[str, list[str]]) -> None:
    """Keep the names each session's conversation gave; the caller holds the workspace lock."""
    ws.metadata.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"sessions": dict(sorted(sessions.items()))}, ensure_ascii=False, indent=1) + "\n"
    atomic.write_text(ws.metadata / FILE, text)


def missing(ws: Workspace) -> bool:
    """No record yet (a new workspace, or mem_metadata removed): the session logs are read again."""
    return not (ws.metadata / FILE).exists()


def _profile(ws: Workspace) -> list[str]:
    try:
        text = (ws.root / PROFILE).read_text(encoding="utf-8", errors="replace")[:20000]
    except OSError:
        return []
    out = []
    for value in _PROFILE_LINE.findall(text):
        value = value.strip().strip("*_`\"'")
        if value and not value.startswith("<") and len(value) <= 60:
            out.append(value)
    return out
