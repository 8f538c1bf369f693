"""Search job: checks the request once, asks the searchers for the candidates of the keyword
(BM25) and vector branches (memcli.jobs.searchers: the team's shared index first when team
memory is on, then the local index), hands them to memcli.retrieval.rank for the order, and
adds link expansion."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from memcli.errors import BadInput
from memcli.index.freshness import fresh_snapshot
from memcli.jobs import searchers
from memcli.jobs.searchers.local import Local
from memcli.retrieval import framing, fusion, rank
from memcli.retrieval import links as linkmod
from memcli.retrieval.hits import VIA_SOURCE, Hit, clip
from memcli.vault import owner
from memcli.vault.workspace import Workspace

MAX_CANDIDATES = 200


@dataclass
class SearchResult:
    query: str
    hits: list[Hit]
    candidates: int
    vector_hits: int = 0
    keyword_hits: int = 0
    hybrid: bool = False
    warnings: list[str] = field(default_factory=list)
    expansion: list[str] = field(default_factory=list)  # index terms the query was expanded with

    @property
    def log_line(self) -> str:
        return (
            f"[SearchStep] query={self.query!r} candidates={self.candidates} "
            f"vector_hits={self.vector_hits} keyword_hits={self.keyword_hits}"
        )

    def text(self, citations: bool = False, max_chars: int | None = None) -> str:
        """ReMe's exact text format; `(no memory results)` when empty.

        For agents (--citations, --max-chars): each snippet capped at max_chars and
        followed by OpenClaw's `Source: <path>#L<start>-L<end>` line.
        """
        if not self.hits:
            return "(no memory results)"
        out: list[str] = []
        for h in self.hits:
            if self.hybrid:
                v = f"{h.vector:.4f}" if h.vector is not None else "-"
                k = f"{h.keyword:.4f}" if h.keyword is not None else "-"
                scores = f"score={h.score:.4f} vector={v} keyword={k}"
            else:
                scores = f"score={h.score:.4f}"
            out.append(
                f"========== {h.path}:{h.start_line}-{h.end_line} [{scores}] ==========\n{clip(h.text, max_chars)}"
            )
            if citations:
                out.append(f"Source: {h.citation}")
            if h.superseded_by:
                out.append(h.superseded_line)
            if h.via_source:
                out.append(VIA_SOURCE)
            out.extend(linkmod.render(h.links))
        return "\n".join(out)

    def to_json(self, citations: bool = False, max_chars: int | None = None) -> dict:
        return {
            "query": self.query,
            "results": [h.to_json(citations, max_chars) for h in self.hits],
            "counts": {
                "candidates": self.candidates,
                "vector": self.vector_hits,
                "keyword": self.keyword_hits,
                "returned": len(self.hits),
                "hybrid": self.hybrid,
            },
            "expansion": self.expansion,
            "log": self.log_line,
            "warnings": self.warnings,
        }


def parse_date(value: str | None, flag: str) -> str | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise BadInput(f"{flag} must be a date like 2026-05-18, got {value!r}") from None


def run(
    ws: Workspace,
    query: str,
    *,
    limit: int | None = None,
    min_score: float = 0.0,
    since: str | None = None,
    until: str | None = None,
    links: bool = True,
    mode: str = "auto",
    auto_sync: bool = True,
    backend=None,
) -> SearchResult:
    """Search the workspace. `backend` (memcli.providers.embedding.space.Backend) lets a long-lived
    caller such as the MCP server keep its embedding model loaded between searches."""
    query = (query or "").strip()
    if not query:
        raise BadInput("query is empty", "pass the words to search for")
    cfg = ws.settings.search
    limit = cfg.limit if limit is None else limit
    if limit < 1:
        raise BadInput(f"--limit must be at least 1, got {limit}")
    if mode not in ("auto", "hybrid", "keyword", "vector"):
        raise BadInput(f"--mode must be hybrid, keyword or vector, got {mode!r}")
    since, until = parse_date(since, "--since"), parse_date(until, "--until")
    if since and until and since > until:
        raise BadInput(f"--since {since} is later than --until {until}, so no note can match")
    candidates = min(MAX_CANDIDATES, max(1, int(limit * cfg.candidate_multiplier)))
    result = SearchResult(query, [], candidates)
    owned = framing.as_owner(query, owner.names(ws))  # "Ha-eun's mother" asks about the user's
    req = searchers.Request(
        asked=framing.topic(owned),  # the query without "discussed last time"
        voiced=framing.first_person(owned),
        mode=mode,
        since=since,
        until=until,
        depth=max(candidates, fusion.POOL),  # what each branch retrieves: the fusion's pool
        embedding=backend,
    )
    local = fresh_snapshot(ws, result.warnings, auto_sync=auto_sync)
    found = None
    for searcher in _searchers(ws, local):
        found = searcher.candidates(ws, req, result.warnings)
        if found is not None:
            break
    if found is None:
        return result
    result.expansion = [t for t, _ in found.vector.expansion]
    ranking = rank.order(
        found.view,
        cfg,
        found.vector,
        found.keyword,
        req.asked,
        candidates,
        min_score=min_score,
        max_tokens=cfg.merge_max_factor * ws.settings.chunking.target_tokens,
        metadata=found.statements,
        daily_dir=ws.settings.daily_dir,
        question=query,
    )
    result.vector_hits, result.keyword_hits = ranking.vector_hits, ranking.keyword_hits
    result.hybrid = ranking.hybrid
    hits = ranking.hits[:limit]
    if links and local is not None:  # (another agent's files have no links here)
        expansion = linkmod.expand(
            local,
            [p for p in dict.fromkeys(h.path for h in hits) if local.file_index(p) is not None],
            cfg.max_links_per_direction,
        )
        for h in hits:
            h.links = expansion.get(h.path, {})
    result.hits = hits
    return result


def _searchers(ws: Workspace, local) -> list[searchers.Searcher]:
    """The searchers to ask, in order: the team's shared index when team memory is on
    (PostgreSQL ranks; the local index answers when it cannot), then the local index."""
    if ws.settings.shared.enabled:
        from memcli.jobs.searchers import team  # memcli.team loads only with team memory on

        shared = team.searcher(ws)
        if shared is not None:
            return [shared, Local(local)]
    return [Local(local)]
