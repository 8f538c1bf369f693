"""The search's two branches in SQL, and the candidates they hand to the fusion.

Scope: the namespace's chunks, only this agent's with memory_isolation. Both branches
score as the local index does, so memcli.retrieval.fusion fuses them unchanged:

- keyword: Okapi BM25 (k1 1.5, b 0.75, ReMe's idf; memcli.index.bm25) of mem's tokens: the
  GIN index over the tsvectors finds each term's chunks, the terms/tfs arrays give tf; N,
  avgdl and df are counted over the scope (the date filter, like the local one, only
  narrows the candidates);
- vector: a chunk scores as its best passage's cosine. The chunk vectors (each chunk's
  normalised mean passage) shortlist SHORTLIST chunks, through the namespace's HNSW
  index when it covers the scope (all agents, no date filter, more than EXACT_MAX vectors),
  else exactly; only the shortlist's passages are scored, as memcli.retrieval.vector does.
  pgvector 0.6 filters HNSW results after the index scan, so a filtered scope would lose
  hits: it is scanned exactly instead (it is at most one agent's chunks).

Each branch also scores the other's candidates, so the fusion sees every real score.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memcli.index.keyword import bm25, tokenizer
from memcli.team import Target, db, display, lexemes, schema

SHORTLIST_HNSW = schema.EF_SEARCH
SHORTLIST_EXACT = 512
EXACT_MAX = 20_000  # vectors in scope up to which an exact scan is cheap enough (and exact)


@dataclass
class Chunk:
    id: int
    agent_id: str
    path: str
    start_line: int
    end_line: int
    crumb: int
    text: str


@dataclass
class Found:
    """Candidates of both branches; docs are indexes into `chunks`."""

    chunks: list[Chunk] = field(default_factory=list)
    vector: list[tuple[int, float]] = field(default_factory=list)  # (doc, cosine), best first
    keyword: list[tuple[int, float]] = field(default_factory=list)  # (doc, BM25), best first
    cos: dict[int, float] = field(default_factory=dict)  # every candidate's cosine (embedded ones)
    bm: dict[int, float] = field(default_factory=dict)  # every candidate's BM25 (expansion terms included)
    own: set[int] = field(default_factory=set)  # candidates holding a term of the query itself
    embedded: set[int] = field(default_factory=set)
    exact: bool = True  # the vector shortlist was exact (False: HNSW)
    n: int = 0  # chunks in scope (BM25's N)
    df: dict[str, int] = field(default_factory=dict)  # chunks in scope holding each query term


@dataclass(frozen=True)
class Ask:
    terms: list[tuple[str, float, bool]]  # (term, weight, the query's own): memcli.team.lexemes.weighted
    vector: list[float] | None
    space: dict | None
    depth: int
    since: str | None = None
    until: str | None = None


def scope(t: Target, alias: str = "c", dates: tuple | None = None):
    """The WHERE clause of the search scope, as psycopg SQL (literals inline, so the planner
    can match the partial HNSW index's predicate)."""
    from psycopg import sql

    parts = [sql.SQL("{}.namespace = {}").format(sql.Identifier(alias), sql.Literal(t.namespace))]
    if t.isolation:
        parts.append(sql.SQL("{}.agent_id = {}").format(sql.Identifier(alias), sql.Literal(t.agent_id)))
    if dates:
        parts.append(
            sql.SQL("{}.note_date BETWEEN {} AND {}").format(
                sql.Identifier(alias), sql.Literal(dates[0]), sql.Literal(dates[1])
            )
        )
    return sql.SQL(" AND ").join(parts)


def run(conn, t: Target, ask: Ask) -> Found:
    """Both branches in one read-only transaction, within the statement timeout."""
    found = Found()
    dates = (ask.since or "0001-01-01", ask.until or "9999-12-31") if ask.since or ask.until else None
    with conn.transaction():
        db.local_settings(conn, statement_timeout=int(t.timeout * 1000), hnsw__ef_search=schema.EF_SEARCH)
        n, tokens, vectors = _stats(conn, t, ask.space)
        ids_v: list[tuple[int, float]] = []
        if ask.vector is not None and ask.space is not None and vectors:
            ids_v, found.exact = _vector(conn, t, ask, dates, vectors)
        ids_k, found.df = (
            _keyword(conn, t, ask, dates, n, tokens, [i for i, _ in ids_v]) if ask.terms and n else ([], {})
        )
        found.n = n
        cos = dict(ids_v)
        missing = [i for i, _, _ in ids_k if i not in cos]
        if missing and ask.vector is not None and ask.space is not None:
            cos.update(_cosines(conn, ask, missing))
        ids = list(dict.fromkeys([*(i for i, _ in ids_v), *(i for i, _, _ in ids_k)]))
        rows = (
            {
                r[0]: Chunk(*r)
                for r in conn.execute(
                    "SELECT id, agent_id, path, start_line, end_line, crumb, text FROM mem.chunks WHERE id = ANY(%s)",
                    (ids,),
                ).fetchall()
            }
            if ids
            else {}
        )
    doc = {}
    for i in ids:
        if i in rows:
            doc[i] = len(found.chunks)
            found.chunks.append(rows[i])
    bm = {i: s for i, s, _ in ids_k}
    found.vector = [(doc[i], s) for i, s in ids_v if i in doc and s is not None]
    found.keyword = [(doc[i], s) for i, s, _ in ids_k[: ask.depth] if i in doc]  # (the extras rank below)
    found.own = {doc[i] for i, _, own in ids_k if own and i in doc}
    found.cos = {doc[i]: s for i, s in cos.items() if i in doc and s is not None}
    found.bm = {doc[i]: s for i, s in bm.items() if i in doc and s > 0}
    found.embedded = set(found.cos)
    return found


def _stats(conn, t: Target, space: dict | None) -> tuple[int, int, int]:
    """(chunks, tokens, vectors of `space`) of the scope, from the agents' totals."""
    where = "namespace = %s" + (" AND agent_id = %s" if t.isolation else "")
    args = (space["id"] if space else "", t.namespace, *([t.agent_id] if t.isolation else []))
    row = conn.execute(
        "SELECT coalesce(sum(chunks), 0), coalesce(sum(tokens), 0), "
        "coalesce(sum(vectors) FILTER (WHERE space_id = %s), 0) FROM mem.agents WHERE " + where,
        args,
    ).fetchone()
    return int(row[0]), int(row[1]), int(row[2])


def _best(dims: int):
    """A chunk's score: its best passage's cosine (a one-passage chunk: its own vector)."""
    from psycopg import sql

    v = sql.SQL("%(q)s::vector({})").format(sql.Literal(dims))
    return sql.SQL(
        "coalesce((SELECT max(1 - (p <=> {v})) FROM unnest(c.passages) p), 1 - (c.embedding::vector({d}) <=> {v}))"
    ).format(v=v, d=sql.Literal(dims))


def _vector(conn, t: Target, ask: Ask, dates, vectors: int) -> tuple[list[tuple[int, float]], bool]:
    hnsw = not t.isolation and dates is None and vectors > EXACT_MAX
    query, args = vector_sql(t, ask, dates, hnsw)
    return [(int(i), float(s)) for i, s in conn.execute(query, args).fetchall()], not hnsw


def vector_sql(t: Target, ask: Ask, dates=None, hnsw: bool = True):
    """(query, arguments) of the vector branch: shortlist by chunk vector (through the HNSW
    index, or exactly), then each shortlisted chunk's best passage."""
    from psycopg import sql

    assert ask.space is not None  # the vector branch runs only with a space
    dims = int(ask.space["dims"])
    dist = sql.SQL("c.embedding::vector({d}) <=> %(q)s::vector({d})").format(d=sql.Literal(dims))
    if not hnsw:
        dist = sql.SQL("({}) + 0").format(dist)  # not the index's expression: an exact scan
    query = sql.SQL(
        "WITH s AS (SELECT c.id FROM mem.chunks c WHERE {scope} AND c.space_id = {space} "
        "ORDER BY {dist} LIMIT %(short)s) "
        "SELECT c.id, {best} AS cos FROM mem.chunks c JOIN s USING (id) ORDER BY cos DESC, c.id LIMIT %(depth)s"
    ).format(scope=scope(t, dates=dates), space=sql.Literal(ask.space["id"]), dist=dist, best=_best(dims))
    return query, {
        "q": lexemes_vector(ask.vector),
        "short": SHORTLIST_HNSW if hnsw else SHORTLIST_EXACT,
        "depth": ask.depth,
    }


def _cosines(conn, ask: Ask, ids: list[int]) -> dict[int, float]:
    from psycopg import sql

    assert ask.space is not None  # asked only for a vector search, which has a space
    query = sql.SQL("SELECT c.id, {best} FROM mem.chunks c WHERE c.id = ANY(%(ids)s) AND c.space_id = {space}").format(
        best=_best(int(ask.space["dims"])), space=sql.Literal(ask.space["id"])
    )
    rows = conn.execute(query, {"q": lexemes_vector(ask.vector), "ids": ids}).fetchall()
    return {int(i): float(s) for i, s in rows}


def _keyword(conn, t: Target, ask: Ask, dates, n: int, tokens: int, also: list[int]):
    """([(chunk, BM25, holds a term of the query itself)] of the best `depth` chunks and of
    the chunks in `also` (the vector candidates), best first; {term: df}).

    One pass over the matches (the GIN index finds each term's chunks in scope) gives both
    each term's df and each match's tf part; the date filter applies only after df."""
    from psycopg import sql

    after = (
        sql.SQL("WHERE m.note_date BETWEEN {} AND {}").format(sql.Literal(dates[0]), sql.Literal(dates[1]))
        if dates
        else sql.SQL("")
    )
    query = sql.SQL(
        "WITH q AS (SELECT u.term, u.tq::tsquery AS tq, u.weight, u.own FROM unnest(%(terms)s::text[], "
        "%(tqs)s::text[], %(weights)s::float8[], %(own)s::bool[]) AS u(term, tq, weight, own)), "
        "m AS MATERIALIZED (SELECT c.id, c.note_date, q.term, q.own, q.weight * x.tf / (x.tf + %(k1)s * "
        "(1 - %(b)s + %(b)s * c.n_tokens / %(avgdl)s)) AS part FROM q JOIN mem.chunks c ON c.tsv @@ q.tq "
        "CROSS JOIN LATERAL (SELECT c.tfs[array_position(c.terms, q.term)]::float8 AS tf) x WHERE {scope}), "
        "df AS MATERIALIZED (SELECT term, count(*) AS n FROM m GROUP BY term), "
        "kw AS MATERIALIZED (SELECT m.id, sum(ln(1 + (%(n)s - df.n + 0.5) / (df.n + 0.5)) * (%(k1)s + 1) * m.part) "
        "AS bm, bool_or(m.own) AS own FROM m JOIN df USING (term) {after} GROUP BY m.id), "
        "picked AS ((SELECT id, bm, own FROM kw WHERE bm > 0 ORDER BY bm DESC, id LIMIT %(depth)s) "
        "UNION (SELECT id, bm, own FROM kw WHERE bm > 0 AND id = ANY(%(also)s))) "
        "SELECT (SELECT coalesce(json_agg(json_build_array(id, bm, own)), '[]') FROM picked), "
        "(SELECT coalesce(json_object_agg(term, n), '{{}}') FROM df)"
    ).format(scope=scope(t), after=after)
    terms = [x for x, _, _ in ask.terms]
    args = {
        "terms": terms,
        "tqs": [lexemes.quote(x) for x in terms],
        "weights": [w for _, w, _ in ask.terms],
        "own": [o for _, _, o in ask.terms],
        "n": n,
        "k1": bm25.K1,
        "b": bm25.B,
        "avgdl": max(tokens / n, 1e-9),
        "depth": ask.depth,
        "also": also,
    }
    picked, df = conn.execute(query, args).fetchone()
    rows = [(int(i), float(s), bool(o)) for i, s, o in picked]
    return sorted(rows, key=lambda r: (-r[1], r[0])), {k: int(v) for k, v in df.items()}  # extras rank last


def lexemes_vector(values) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in values) + "]"


class View:
    """The candidates as the fusion reads a snapshot: meta(doc), text(doc), paths (another
    agent's shown as `@<agent_id>/<path>`, so merging never folds two agents' files), and
    the scope's BM25 statistics (n_docs, df(term hash))."""

    def __init__(self, t: Target, found: Found):
        self.paths: list[str] = []
        index: dict[str, int] = {}
        self._meta: list[tuple[int, int, int, int]] = []
        for c in found.chunks:
            shown = display(t, c.agent_id, c.path)
            if shown not in index:
                index[shown] = len(self.paths)
                self.paths.append(shown)
            self._meta.append((index[shown], c.start_line, c.end_line, c.crumb))
        self._texts = [c.text for c in found.chunks]
        self.n_docs = found.n
        self._df = {tokenizer.term_hash(term): n for term, n in found.df.items()}

    def df(self, h: int) -> int:
        return self._df.get(h, 0)

    def meta(self, doc: int) -> tuple[int, int, int, int]:
        return self._meta[doc]

    def text(self, doc: int) -> str:
        return self._texts[doc]
