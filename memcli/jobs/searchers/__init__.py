"""Searchers: where a search's candidates come from, behind one interface.

A searcher runs the search's two branches, vector and keyword, over one index and
hands back their candidates (`Candidates`); memcli.retrieval.rank orders them the same
whichever searcher found them. local.py searches this workspace's index; team.py the
team's shared index on PostgreSQL (memcli.team), imported only when team memory is on.
The search job (memcli.jobs.search) checks the request once, asks the team searcher
first when there is one, and the local one when it cannot answer. What both do with
the query (embed it, expand it, the guards and warnings of its embedding) is query.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

from memcli.index.keyword import bm25
from memcli.retrieval.rank import VectorBranch
from memcli.vault.workspace import Workspace


@dataclass(frozen=True)
class Request:
    """One search, checked by the job: what both branches search, and how deep."""

    asked: str  # the query without framing words ("discussed last time": memcli.retrieval.framing.topic)
    voiced: str  # its first-person phrasing, embedded with it (query.query_vectors)
    depth: int  # candidates each branch retrieves
    mode: str  # auto, hybrid, keyword or vector
    since: str | None = None  # ISO dates, inclusive
    until: str | None = None
    embedding: object = None  # a caller's embedding backend, kept loaded between searches (the MCP server)

    @property
    def vector(self) -> bool:
        return self.mode != "keyword"

    @property
    def keyword(self) -> bool:
        return self.mode != "vector"

    @property
    def forced(self) -> bool:
        """--mode hybrid or vector: a search without an embedding backend is an error, not keyword-only."""
        return self.mode != "auto"


class Candidates(NamedTuple):
    """What a searcher found: `view` reads the candidates like a snapshot (meta(doc), text(doc),
    paths, n_docs, df(term hash)) for memcli.retrieval.rank and fusion."""

    view: object
    vector: VectorBranch
    keyword: bm25.Scored
    statements: object = None  # the folder of the index's statements (currency order), None when it keeps none


class Searcher(Protocol):
    def candidates(self, ws: Workspace, req: Request, warnings: list[str]) -> Candidates | None:
        """The candidates of both branches, or None (with a warning when it is a failure) when
        this searcher cannot answer and the next one should."""
