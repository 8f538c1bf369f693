"""The shared index's tables, as numbered migrations, and the HNSW index of each vector space.

Everything lives in the PostgreSQL schema `mem`; `mem.schema_migrations` lists the
migrations applied. Publishing migrates first (under an advisory lock, so two machines
never migrate at once); a search only reads, and a database whose schema is newer than
this mem knows is searched but never written.

Vectors of every embedding space share one `vector` column (no fixed size); each
(namespace, space) gets a partial HNSW index over `embedding::vector(dims)`, made by
`mem.ensure_space`, a SECURITY DEFINER function, so that team roles, which do not own
the table, can publish a new space too. Rows are guarded by row-level security: a role
sees and writes the namespaces whose role `mem_team_<namespace>` it is a member of
(the tables' owner is exempt; docs/team.md says how to set the roles up).
"""

from __future__ import annotations

import hashlib

SCHEMA = "mem"
LOCK = 0x6D656D01  # advisory lock of migrations ("mem" 01)
EF_SEARCH = 100  # HNSW candidates per search (pgvector's default is 40)

M1 = """
CREATE TABLE mem.agents (
    namespace text NOT NULL, agent_id text NOT NULL,
    origin text NOT NULL DEFAULT '', stamp bigint NOT NULL DEFAULT 0, generation text NOT NULL DEFAULT '',
    space_id text, files integer NOT NULL DEFAULT 0, chunks integer NOT NULL DEFAULT 0,
    tokens bigint NOT NULL DEFAULT 0, vectors integer NOT NULL DEFAULT 0,
    published_at timestamptz, mem_version text NOT NULL DEFAULT '',
    PRIMARY KEY (namespace, agent_id));
CREATE TABLE mem.files (
    namespace text NOT NULL, agent_id text NOT NULL, path text NOT NULL,
    sha text NOT NULL, pubkey text NOT NULL, note_date date, mtime timestamptz, size bigint NOT NULL,
    text text NOT NULL, chunks integer NOT NULL, tokens bigint NOT NULL, vectors integer NOT NULL,
    published_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, agent_id, path),
    FOREIGN KEY (namespace, agent_id) REFERENCES mem.agents ON DELETE CASCADE);
CREATE TABLE mem.chunks (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace text NOT NULL, agent_id text NOT NULL, path text NOT NULL, ord integer NOT NULL,
    chunk_id text NOT NULL, start_line integer NOT NULL, end_line integer NOT NULL, crumb integer NOT NULL,
    text text NOT NULL, note_date date, n_tokens integer NOT NULL, tsv tsvector NOT NULL,
    terms text[] NOT NULL, tfs integer[] NOT NULL, space_id text, embedding vector, passages vector[],
    UNIQUE (namespace, agent_id, path, ord),
    FOREIGN KEY (namespace, agent_id, path) REFERENCES mem.files ON DELETE CASCADE);
CREATE INDEX chunks_tsv ON mem.chunks USING gin (tsv);
CREATE INDEX chunks_space ON mem.chunks (namespace, space_id);
CREATE TABLE mem.spaces (
    namespace text NOT NULL, space_id text NOT NULL, dims integer NOT NULL, identity text NOT NULL,
    index_name text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, space_id));
CREATE FUNCTION mem.ensure_space(ns text, space text, n integer, ident text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE idx text := 'chunks_hnsw_' || left(md5(ns || '/' || space), 16);
BEGIN
    IF n < 1 OR n > 2000 THEN RAISE EXCEPTION 'vector size % out of range', n; END IF;
    PERFORM pg_advisory_xact_lock(1835363585);
    IF EXISTS (SELECT 1 FROM mem.spaces s WHERE s.namespace = ns AND s.space_id = space) THEN RETURN idx; END IF;
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON mem.chunks USING hnsw ((embedding::public.vector(%s)) '
                   'public.vector_cosine_ops) WHERE namespace = %L AND space_id = %L', idx, n, ns, space);
    INSERT INTO mem.spaces (namespace, space_id, dims, identity, index_name) VALUES (ns, space, n, ident, idx);
    RETURN idx;
END $fn$;
"""

_TABLES = ("agents", "files", "chunks", "spaces")
M2 = """
CREATE FUNCTION mem.team_member(ns text) RETURNS boolean LANGUAGE sql STABLE AS $fn$
    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = 'mem_team_' || ns
                   AND pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER'))
$fn$;
""" + "".join(
    f"""
ALTER TABLE mem.{t} ENABLE ROW LEVEL SECURITY;
CREATE POLICY team ON mem.{t} USING (mem.team_member(namespace)) WITH CHECK (mem.team_member(namespace));
"""
    for t in _TABLES
)

MIGRATIONS = (
    (1, "agents, files, chunks and vector spaces", M1),
    (2, "row-level security: a role per team (mem_team_<namespace>)", M2),
)
LATEST = MIGRATIONS[-1][0]


def version(conn) -> int:
    """The schema version of the database (0: mem's tables are not there)."""
    if conn.execute("SELECT to_regclass('mem.schema_migrations')").fetchone()[0] is None:
        return 0
    return int(conn.execute("SELECT coalesce(max(version), 0) FROM mem.schema_migrations").fetchone()[0])


def migrate(conn) -> int:
    """Apply the migrations the database lacks, each once; returns the version now."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK,))
        have = version(conn)
        if have >= LATEST:
            return have
        if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is None:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE SCHEMA IF NOT EXISTS mem")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS mem.schema_migrations (version integer PRIMARY KEY, "
            "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for number, name, sql in MIGRATIONS:
            if number > have:
                conn.execute(sql)
                conn.execute("INSERT INTO mem.schema_migrations (version, name) VALUES (%s, %s)", (number, name))
    return LATEST


def ensure_space(conn, namespace: str, space: dict) -> str:
    """The HNSW index of `space` in `namespace`, made on first use; returns its name."""
    with conn.transaction():
        row = conn.execute(
            "SELECT mem.ensure_space(%s, %s, %s, %s)",
            (namespace, space["id"], int(space["dims"]), str(space.get("identity", ""))),
        ).fetchone()
    return row[0]


def index_name(namespace: str, space_id: str) -> str:
    """The name mem.ensure_space gives the index (bench/bench_team.py reads its size and plan)."""
    return "chunks_hnsw_" + hashlib.md5(f"{namespace}/{space_id}".encode()).hexdigest()[:16]
