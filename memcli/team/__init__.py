"""Team memory: the shared index on PostgreSQL + pgvector, beside the local one.

Markdown stays the truth and the local index keeps working as before; with `shared`
configured, every sync of the local index also publishes this workspace's files and
chunks to the database (keyed by namespace and agent_id), and a search ranks the
namespace's chunks there: full-text BM25 over mem's own tokens and pgvector cosine in SQL,
fused by memcli.retrieval.fusion like the local search. The database being down or slow
never fails a command: search answers from the local index with one warning.

    db.py        connections (psycopg imported only here, lazily), errors, deadlines
    schema.py    the numbered migrations, the HNSW index of each vector space
    lexemes.py   mem's tokens as a tsvector/tsquery, vectors as pgvector text
    local.py     what this workspace publishes: the snapshot's files and chunks, their vectors
    publish.py   the publishing transaction and its marker under mem_metadata/shared/
    search.py    the two branches in SQL and the candidates handed to the fusion
    status.py    `mem health`'s figures and `mem get @agent/path`

Nothing here is imported unless `shared` is configured, so other commands start as fast.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcli.errors import ProviderError
from memcli.vault import dsn as dsnmod
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
