"""Team memory: this workspace's notes in a shared index on PostgreSQL + pgvector, which
several agents publish to and every search of theirs ranks; Markdown stays the truth and
the local index keeps working beside it. With the `shared` section configured, each sync
of the local index also publishes the workspace's files and chunks (publish.py, what
local.py reads from the snapshot, the refusals in failures.py) under its namespace and
agent_id; a search ranks the namespace's chunks in SQL (search.py: BM25 over mem's own
tokens as lexemes.py writes them, best-passage cosine shortlisted through the HNSW index
that schema.py's migrations keep per vector space), and `mem health` and
`mem get @<agent_id>/<path>` read it (status.py).
Connections, deadlines and the lazy psycopg import are db.py's. A database that is down or
slow fails no command: the search answers from the local index with one warning. The jobs
reach it through memcli.jobs.team and memcli.jobs.searchers.team, only when team memory
is on (or a `mem get @<agent_id>/...` names another agent), so other commands never load it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcli.errors import ProviderError
from memcli.secrets import dsn as dsnmod
from memcli.vault.workspace import Workspace

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class Unavailable(ProviderError):
    """The shared index cannot answer now (unreachable, too slow, no schema, no psycopg)."""


@dataclass(frozen=True)
class Target:
    """Where this workspace publishes and searches: one agent of one namespace."""

    dsn: str
    namespace: str
    agent_id: str
    isolation: bool
    timeout: float

    @property
    def where(self) -> str:
        """The database and namespace in words, the password masked."""
        return f"{dsnmod.masked(self.dsn)} namespace {self.namespace}"

    def scrub(self, text: str) -> str:
        return dsnmod.scrub(text, self.dsn)


def agent_of(ws: Workspace) -> str:
    """shared.agent_id, or the workspace folder's name made a valid id."""
    own = ws.settings.shared.agent_id.strip()
    if own:
        return own
    name = _UNSAFE.sub("-", ws.root.name).strip("-._")[:48]
    return name or "agent"


def target(ws: Workspace) -> Target | None:
    """The configured shared index, or None when team memory is off."""
    sh = ws.settings.shared
    if not sh.enabled:
        return None
    return Target(sh.dsn.strip(), sh.namespace, agent_of(ws), sh.memory_isolation, float(sh.search_timeout))


def display(t: Target, agent: str, path: str) -> str:
    """How a hit's path prints: plain for this agent's, `@<agent_id>/<path>` for another's."""
    return path if agent == t.agent_id else f"@{agent}/{path}"


def parse_ref(ref: str) -> tuple[str, str] | None:
    """`@<agent_id>/<path>` -> (agent_id, path), or None when `ref` is not of that form."""
    raw = (ref or "").strip()
    if not raw.startswith("@") or "/" not in raw:
        return None
    agent, _, path = raw[1:].partition("/")
    return (agent, path) if agent and path else None
