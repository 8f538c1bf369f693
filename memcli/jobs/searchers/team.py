"""The team searcher: both branches over the team's shared index on PostgreSQL (memcli.team).

The database ranks (BM25 over mem's own tokens, pgvector cosine, memcli.team.search);
the query is embedded and expanded here as the local searcher does (query.py). Before
searching, the workspace is published if its local index changed (a search may have just
synced a note). A database that is down, slow or too new answers nothing: one warning,
and the search job asks the local searcher instead. Imported only when team memory is on.
"""

from __future__ import annotations

import dataclasses

from memcli.errors import ProviderError
from memcli.index.keyword import bm25
from memcli.jobs import team as team_job
from memcli.jobs.searchers import Candidates, Request, query
from memcli.retrieval import fusion
from memcli.retrieval.rank import VectorBranch
from memcli.team import Target, Unavailable, db, lexemes, target
from memcli.team import search as sql_search
from memcli.vault.workspace import Workspace


class Team:
    """The searcher of the shared index `t` (this workspace's namespace and agent)."""

    def __init__(self, t: Target):
        self.t = t

    def candidates(self, ws: Workspace, req: Request, warnings: list[str]) -> Candidates | None:
        t = self.t
        vec, space, floor, near, expansion, defined = (
            _query_vector(ws, req, warnings) if req.vector else (None, None, None, None, [], None)
        )
        terms = lexemes.weighted(req.asked, expansion) if req.keyword else []
        ask = sql_search.Ask(terms, vec, space, req.depth, req.since, req.until)
        late: list[str] = []

        def work():
            nonlocal expansion
            with db.session(t) as conn:
                team_job.publish_if_changed(ws, t, conn, late)
                found = sql_search.run(conn, t, ask)
                if defined is not None and terms and _weakly_covered(t, found, req.asked):  # as rank.keyword
                    extra = defined()
                    if extra:
                        from memcli.retrieval.expand import with_definitions

                        expansion, sure = with_definitions(expansion, extra)
                        terms_now = lexemes.weighted(req.asked, expansion, sure)
                        found = sql_search.run(conn, t, dataclasses.replace(ask, terms=terms_now))
                return found

        try:
            found = db.within(t.timeout, work)
        except Unavailable as exc:
            warnings.append(f"{exc.line()}; results are from the local index")
            return None
        warnings.extend(late)
        return _candidates(t, found, floor, near, expansion)


def searcher(ws: Workspace) -> Team | None:
    """The team searcher of this workspace, or None when team memory is off."""
    t = target(ws)
    return Team(t) if t is not None else None


def _weakly_covered(t: Target, found, asked: str) -> bool:
    return fusion.weakly_covered(found.keyword, bm25.ideal(sql_search.View(t, found), asked))


def _candidates(t: Target, found, floor, near, expansion) -> Candidates:
    cos, bm, own = found.cos, found.bm, found.own
    branch = VectorBranch(
        found.vector,
        found.embedded.__contains__,
        expansion,
        lambda docs: {d: cos[d] for d in docs if d in cos},
        floor,
        near=near,
    )
    keyword = bm25.Scored(found.keyword, lambda d: bm.get(d, 0.0), own.__contains__, bool(own))
    return Candidates(sql_search.View(t, found), branch, keyword)  # the team index keeps no statements


def _query_vector(ws: Workspace, req: Request, warnings: list[str]):
    """(query vector, its space, the space's noise floor, the cosine an expansion term's chunk must
    reach (noise.near_floor), expansion terms, the words defined like the query when asked:
    query.definitions), or Nones and [].

    The space is the configured backend's: other agents' vectors of it count even when
    this workspace has none yet (so a caller's loaded backend is used even then)."""
    from memcli.index.vectors import noise as noisemod
    from memcli.index.vectors import vectors

    nothing = (None, None, None, None, [], None)
    here = vectors.active_space(ws.metadata) is not None or req.embedding is not None
    backend = query.embedder(ws, req, vectors_here=here)
    if backend is None:
        return nothing
    try:
        words, vocab = query.expansion_words(ws, backend.space, req.asked) if req.keyword else ([], None)
        vecs = query.query_vectors(backend.embedder, req.asked, req.voiced, words)
    except ProviderError as exc:
        warnings.append(query.provider_failed(exc))
        return nothing
    finally:
        query.release(req, backend)
    expansion, defined = [], None
    if req.keyword:
        expansion = query.expansion(ws, req.asked, vecs[1:], words, vocab)
        defined = query.definitions(ws, backend.space, req.asked, vecs[0])
    floor = noisemod.floor_for(noisemod.load_noise(ws.metadata, backend.space), req.asked)
    return [float(x) for x in vecs[0]], backend.space, floor, noisemod.near_floor(floor, req.asked), expansion, defined
