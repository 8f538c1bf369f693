#!/usr/bin/env python3
"""Team memory (the shared index on PostgreSQL + pgvector): one JSON document on stdout,
progress on stderr. Needs the postgres extra and pgserver (`pip install -e '.[dev]'`).

A PostgreSQL 16 + pgvector 0.6 from pgserver is started in a temporary folder, on TCP
loopback (127.0.0.1) by default (--loopback socket: its Unix socket).

1. load: --agents workspaces (stdlib docstrings as notes, --notes each) are indexed and
   published; then every agent, in a process of its own, rewrites, deletes and adds notes
   and reindexes (so publishes) --rounds times, while a reader workspace runs searches
   over the whole namespace (at least --searches, as long as the publishers run). Then:
   each agent's rows against its local index (lost, extra, duplicated chunks), and search
   latency, p50/p95, of the shared index (during the load; quiet with the connection kept
   as `mem mcp` keeps it; quiet with a new connection per search, as each `mem search`
   process makes) against the local index of one workspace holding all the agents' notes.
   Searches are in-process `memcli.jobs.search.run` calls, keyword-only (no embedding).
2. hnsw: --chunks synthetic chunks (clustered --dims-dimensional vectors) in one
   namespace, the HNSW index built as mem builds it (mem.ensure_space), then --queries
   vector queries through mem's own SQL (memcli.team.search.vector_sql): recall@10 of
   the HNSW shortlist against the exact scan, latency of both, and of the whole shared
   search (both branches, fused) at that size.

    python bench/bench_team.py                      # both parts, ~5 minutes on 2 cores
    python bench/bench_team.py --skip-hnsw --agents 8 --rounds 4
    python bench/bench_team.py --skip-load --chunks 20000

Not a test: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
DAY0 = 1
MODULES = (
    "os",
    "json",
    "re",
    "pathlib",
    "collections",
    "itertools",
    "functools",
    "datetime",
    "sqlite3",
    "subprocess",
    "threading",
    "asyncio",
    "urllib.parse",
    "logging",
    "argparse",
    "shutil",
    "tarfile",
    "zipfile",
    "csv",
    "decimal",
    "statistics",
    "random",
    "hashlib",
    "socket",
    "ssl",
    "selectors",
    "typing",
    "dataclasses",
    "enum",
    "inspect",
    "ast",
    "textwrap",
    "string",
    "difflib",
    "heapq",
    "bisect",
    "struct",
    "codecs",
    "calendar",
    "time",
    "uuid",
    "base64",
    "pickle",
    "copy",
    "pprint",
    "weakref",
    "contextlib",
    "math",
    "operator",
    "glob",
    "fnmatch",
    "tempfile",
    "io",
    "queue",
    "multiprocessing",
    "concurrent.futures",
    "xml.etree.ElementTree",
    "html.parser",
    "configparser",
    "platform",
    "unittest",
    "doctest",
    "timeit",
    "importlib",
    "email.message",
    "http.client",
    "imaplib",
    "smtplib",
    "gzip",
    "bz2",
    "lzma",
    "mailbox",
    "mimetypes",
    "secrets",
    "hmac",
    "locale",
    "gettext",
    "sched",
    "signal",
    "mmap",
)


def log(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2) if ordered else 0.0


def summary(values: list[float]) -> dict:
    return {
        "n": len(values),
        "p50_ms": pct(values, 0.5),
        "p95_ms": pct(values, 0.95),
        "mean_ms": round(statistics.fmean(values) * 1000, 2) if values else 0.0,
    }


# ---------------------------------------------------------------- the server


def start_server(root: Path, loopback: str):
    """(dsn, stop()) of a pgserver PostgreSQL, restarted on 127.0.0.1 for --loopback tcp."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
        from pgserver._commands import pg_ctl

    data = root / "pg"
    srv = pgserver.get_server(data, cleanup_mode=None)
    if loopback == "socket":
        return srv.get_uri(), lambda: pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data, user=srv.system_user)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data, user=srv.system_user)
    pg_ctl(
        ["-w", "-o", f"-h 127.0.0.1 -p {port} -k {data}", "-l", str(data / "log"), "start"],
        pgdata=data,
        user=srv.system_user,
        timeout=30,
    )
    return (
        f"postgresql://postgres@127.0.0.1:{port}/postgres?sslmode=disable",
        lambda: pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data, user=srv.system_user),
    )


# ---------------------------------------------------------------- the corpus


def docstrings(limit: int) -> list[tuple[str, str, str]]:
    """(module, name, text) of public functions, classes and methods with a docstring of some length."""
    import importlib
    import inspect

    out, seen = [], set()
    for mod in MODULES:
        try:
            m = importlib.import_module(mod)
        except ImportError:
            continue
        for name, obj in sorted(vars(m).items()):
            if name.startswith("_") or not callable(obj):
                continue
            members = [(name, obj)] + (
                [(f"{name}.{k}", v) for k, v in sorted(vars(obj).items()) if not k.startswith("_") and callable(v)]
                if inspect.isclass(obj)
                else []
            )
            for full, o in members:
                doc = inspect.getdoc(o)
                owner = str(getattr(o, "__module__", None) or mod).split(".")[0]
                if doc and len(doc) >= 120 and owner == mod.split(".")[0] and doc not in seen:
                    seen.add(doc)
                    out.append((mod, full, doc))
    random.Random(7).shuffle(out)
    return out[:limit]


def note_path(mod: str, name: str, i: int) -> str:
    return f"memory/2026-05-{DAY0 + i % 28:02d}/{mod.replace('.', '-')}-{name}.md".lower()


def make_agents(root: Path, n: int, per: int) -> list[Path]:
    docs = docstrings(n * per)
    agents = []
    for a in range(n):
        ws = root / f"agent{a}"
        (ws / "digest").mkdir(parents=True)
        for i, (mod, name, doc) in enumerate(docs[a::n]):
            p = ws / note_path(mod, name, i)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"# {mod}.{name}\n\n{doc}\n", encoding="utf-8")
        agents.append(ws)
    return agents


def queries(agents: list[Path], count: int) -> list[str]:
    """A few content words of the first line of random notes."""
    import re

    rng = random.Random(11)
    files = sorted(p for ws in agents for p in (ws / "memory").rglob("*.md"))
    out = []
    while len(out) < count:
        lines = rng.choice(files).read_text(encoding="utf-8").splitlines()
        words = re.findall(r"[A-Za-z]{4,}", lines[2] if len(lines) > 2 else lines[0])
        if len(words) >= 3:
            start = rng.randrange(0, len(words) - 2)
            out.append(" ".join(words[start : start + 3]))
    return out


def open_ws(root: Path, dsn: str | None, agent: str | None = None):
    from memcli.vault.workspace import open_workspace

    over = {"embedding_model_config.backend": "none"}
    over.update({"shared.dsn": dsn, "shared.namespace": "load"} if dsn else {"shared.backend": "none"})
    if agent:
        over["shared.agent_id"] = agent
    return open_workspace(root, {"HOME": os.environ.get("HOME", "/tmp")}, over)


# ---------------------------------------------------------------- part 1: load


def publisher(args) -> None:
    """One agent's process: --rounds of edits, each followed by a reindex (which publishes)."""
    from memcli.jobs import reindex

    root = Path(args.workspace)
    rng = random.Random(args.seed)
    ws = open_ws(root, args.dsn)
    t0, published = time.perf_counter(), []
    for r in range(args.rounds):
        files = sorted((root / "memory").rglob("*.md"))
        for p in rng.sample(files, 3):
            p.write_text(p.read_text(encoding="utf-8") + f"\nRevision {r} by {root.name}.\n", encoding="utf-8")
        victim, source = rng.sample(files, 2)
        victim.unlink()
        (source.parent / f"added-r{r}-{source.name}").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
        rep = reindex.run(ws, wait=30)
        if rep.shared is None:
            raise SystemExit(f"publish failed: {rep.shared_warnings}")
        published.append(rep.shared.to_json())
    print(json.dumps({"agent": root.name, "seconds": round(time.perf_counter() - t0, 2), "rounds": published}))


def verify(agents: list[Path], dsn: str) -> dict:
    """Each agent's rows against its local index: lost, extra and duplicated chunks."""
    import psycopg

    from memcli.team import local

    lost = extra = 0
    with psycopg.connect(dsn) as conn:
        dup = conn.execute(
            "SELECT count(*) - count(DISTINCT (agent_id, path, ord)) FROM mem.chunks WHERE namespace = 'load'"
        ).fetchone()[0]
        total = conn.execute("SELECT count(*) FROM mem.chunks WHERE namespace = 'load'").fetchone()[0]
        for root in agents:
            state = local.read(open_ws(root, dsn))
            want = {(p, i, state.snap.chunk_id(d)) for p, f in state.files.items() for i, d in enumerate(f.docs)}
            state.close()
            have = set(
                conn.execute(
                    "SELECT path, ord, chunk_id FROM mem.chunks WHERE namespace = 'load' AND agent_id = %s",
                    (root.name,),
                ).fetchall()
            )
            lost, extra = lost + len(want - have), extra + len(have - want)
    return {"chunks_in_namespace": total, "lost": lost, "extra": extra, "duplicated": dup}


def timed_searches(ws, qs: list[str], fresh_connection: bool = False) -> list[float]:
    from memcli.jobs import search
    from memcli.team import db

    out = []
    for q in qs:
        if fresh_connection:
            for conn in list(db._IDLE.values()):
                conn.close()
            db._IDLE.clear()
        t0 = time.perf_counter()
        res = search.run(ws, q)
        out.append(time.perf_counter() - t0)
        if any("local index" in w for w in res.warnings):
            raise SystemExit(f"the shared search fell back: {res.warnings}")
    return out


def load_test(args, dsn: str, root: Path) -> dict:
    from memcli.jobs import reindex

    log(f"load: {args.agents} agents x {args.notes} notes")
    agents = make_agents(root, args.agents, args.notes)
    reader = root / "reader"
    (reader / "memory").mkdir(parents=True)
    (reader / "MEMORY.md").write_text("# Reader\n\nThis agent only searches.\n", encoding="utf-8")
    for ws in [*agents, reader]:
        rep = reindex.run(open_ws(ws, dsn))
        assert rep.shared is not None, rep.shared_warnings
    qs = queries(agents, max(args.searches, 60))
    rws = open_ws(reader, dsn)
    timed_searches(rws, qs[:5])  # warm-up: imports, the first connection
    log(f"load: {args.agents} publishers x {args.rounds} rounds while searching")
    env = dict(os.environ)
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--role",
                "publisher",
                "--workspace",
                str(ws),
                "--dsn",
                dsn,
                "--rounds",
                str(args.rounds),
                "--seed",
                str(i),
            ],
            stdout=subprocess.PIPE,
            env=env,
        )
        for i, ws in enumerate(agents)
    ]
    during, t0 = [], time.perf_counter()
    while (
        any(p.poll() is None for p in procs) or len(during) < args.searches
    ) and time.perf_counter() - t0 < args.time_limit:
        during += timed_searches(rws, [qs[len(during) % len(qs)]])
    overlapped = sum(1 for p in procs if p.poll() is None)
    reports = [json.loads(p.communicate(timeout=args.time_limit)[0]) for p in procs]
    if any(p.returncode for p in procs):
        raise SystemExit("a publisher failed")
    load_seconds = time.perf_counter() - t0
    checked = verify(agents, dsn)
    union = root / "union"
    for ws in agents:
        for p in (ws / "memory").rglob("*.md"):
            dest = union / p.parent.relative_to(ws) / f"{ws.name}-{p.name}"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, dest)
    uws = open_ws(union, None)
    rep = reindex.run(uws)
    timed_searches(uws, qs[:5])
    log("load: quiet latencies, shared and local, interleaved query by query")
    quiet, fresh, local_t = [], [], []
    for _ in range(2):  # interleaved: a busy machine slows all three alike
        for q in qs:
            local_t += timed_searches(uws, [q])
            quiet += timed_searches(rws, [q])
            fresh += timed_searches(rws, [q], fresh_connection=True)
    return {
        "agents": args.agents,
        "notes_per_agent": args.notes,
        "rounds": args.rounds,
        "publishes": sum(len(r["rounds"]) for r in reports),
        "load_seconds": round(load_seconds, 2),
        "searches_during_load": len(during),
        "publishers_still_running_after_searches": overlapped,
        "chunks_local_union": rep.sync.chunks,
        **checked,
        "search_shared_during_load": summary(during),
        "search_shared_quiet": summary(quiet),
        "search_shared_quiet_new_connection": summary(fresh),
        "search_local_same_data": summary(local_t),
    }


# ---------------------------------------------------------------- part 2: 100k chunks, HNSW


def synthetic(n: int, dims: int, seed: int = 3):
    """Unit vectors around 1,000 centres (real embeddings cluster by topic; uniform random
    vectors in 384 dimensions are a worst case no embedding model produces)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((1000, dims)).astype(np.float32)
    which = rng.integers(0, len(centres), n)
    vecs = centres[which] + 0.6 * rng.standard_normal((n, dims)).astype(np.float32)
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True), centres, rng


def vocabulary(size: int = 20_000) -> list[str]:
    """Pseudo-words (consonant-vowel syllables ending in o: nothing for mem's stemmer to cut)."""
    import itertools

    syll = [c + v for c in "bcdfghklmnprstvz" for v in "aeiu"]
    words = ("".join(p) + "o" for n in (1, 2, 3) for p in itertools.product(syll, repeat=n))
    return list(itertools.islice(words, size))


def zipf_words(rng, vocab: list[str], shape: tuple, a: float = 1.1):
    """Word ranks drawn as natural text draws them: p(rank k) ~ 1 / k^a."""
    import numpy as np

    p = 1.0 / np.arange(1, len(vocab) + 1) ** a
    return rng.choice(len(vocab), size=shape, p=p / p.sum())


def bulk_load(conn, ns: str, n: int, dims: int, per_file: int = 10):
    """n chunks in n / per_file files of 4 agents, by COPY (as the tables' owner)."""
    from memcli.team import lexemes

    vecs, centres, rng = synthetic(n, dims)
    vocab = vocabulary()
    ranks = zipf_words(rng, vocab, (n, 40))
    space = {"id": f"bench{dims}", "dims": dims, "identity": f"synthetic:{dims}"}
    fmt = ",".join(["%.4f"] * dims)
    agents = [f"agent{a}" for a in range(4)]
    t0 = time.perf_counter()
    with conn.transaction():
        for a in agents:
            conn.execute(
                "INSERT INTO mem.agents (namespace, agent_id, space_id) VALUES (%s, %s, %s)", (ns, a, space["id"])
            )
        with conn.cursor().copy(
            "COPY mem.files (namespace, agent_id, path, sha, pubkey, size, text, chunks, tokens, vectors) FROM STDIN"
        ) as cp:
            for f in range(n // per_file):
                cp.write_row(
                    (
                        ns,
                        agents[f % 4],
                        f"memory/2026-05-01/f{f}.md",
                        "x",
                        "x",
                        1,
                        "",
                        per_file,
                        per_file * 41,
                        per_file,
                    )
                )
        with conn.cursor().copy(
            "COPY mem.chunks (namespace, agent_id, path, ord, chunk_id, start_line, end_line, "
            "crumb, text, n_tokens, tsv, terms, tfs, space_id, embedding) FROM STDIN"
        ) as cp:
            for i in range(n):
                f = i // per_file
                text = " ".join(vocab[j] for j in ranks[i].tolist()) + f" item{i}"
                cp.write_row(
                    (
                        ns,
                        agents[f % 4],
                        f"memory/2026-05-01/f{f}.md",
                        i % per_file,
                        f"{i:064x}",
                        1,
                        3,
                        0,
                        text,
                        41,
                        *lexemes.full_text(text),
                        space["id"],
                        "[" + fmt % tuple(vecs[i].tolist()) + "]",
                    )
                )
        conn.execute(
            "UPDATE mem.agents a SET files = s.f, chunks = s.c, tokens = s.t, vectors = s.c FROM "
            "(SELECT agent_id, count(*) f, sum(chunks) c, sum(tokens) t FROM mem.files WHERE namespace = %s "
            "GROUP BY agent_id) s WHERE a.namespace = %s AND a.agent_id = s.agent_id",
            (ns, ns),
        )
    loaded = time.perf_counter() - t0
    conn.execute("SET maintenance_work_mem = '512MB'")
    t0 = time.perf_counter()
    conn.execute("SELECT mem.ensure_space(%s, %s, %s, %s)", (ns, space["id"], dims, space["identity"]))
    conn.execute("ANALYZE mem.chunks")
    return space, centres, rng, vocab, loaded, time.perf_counter() - t0


def hnsw_test(args, dsn: str) -> dict:
    import psycopg

    from memcli import team
    from memcli.team import db, schema
    from memcli.team import search as ssearch

    log(f"hnsw: loading {args.chunks} chunks of {args.dims} dims")
    ns = "bench100k"
    t = team.Target(dsn, ns, "agent0", False, 30.0)
    with psycopg.connect(dsn, autocommit=True) as conn:
        schema.migrate(conn)
        space, centres, rng, vocab, load_s, build_s = bulk_load(conn, ns, args.chunks, args.dims)
        size = conn.execute("SELECT pg_relation_size(%s)", (f"mem.{schema.index_name(ns, space['id'])}",)).fetchone()[0]
        log(f"hnsw: loaded in {load_s:.0f}s, index built in {build_s:.0f}s; {args.queries} queries")
        qvecs = centres[rng.integers(0, len(centres), args.queries)] + 0.6 * rng.standard_normal(
            (args.queries, args.dims)
        ).astype("float32")
        recall, t_hnsw, t_exact, plan, short = [], [], [], "", 0
        for qi, q in enumerate(qvecs):
            ask = ssearch.Ask([], q.tolist(), space, 10)
            got = {}
            for hnsw in (True, False):
                query, qargs = ssearch.vector_sql(t, ask, hnsw=hnsw)
                with conn.transaction():
                    db.local_settings(conn, hnsw__ef_search=schema.EF_SEARCH)
                    if qi == 0 and hnsw:
                        plan = "\n".join(r[0] for r in conn.execute(b"EXPLAIN " + query.as_bytes(conn), qargs))
                    t0 = time.perf_counter()
                    got[hnsw] = [r[0] for r in conn.execute(query, qargs).fetchall()]
                    (t_hnsw if hnsw else t_exact).append(time.perf_counter() - t0)
            short += len(got[True]) < 10
            recall.append(len(set(got[True]) & set(got[False])) / max(1, len(got[False])))
        shortlist = []  # the HNSW shortlist itself against the exact 100 nearest (50 queries)
        for q in qvecs[:50]:
            ask = ssearch.Ask([], q.tolist(), space, ssearch.SHORTLIST_HNSW)
            got = {}
            for hnsw in (True, False):
                query, qargs = ssearch.vector_sql(t, ask, hnsw=hnsw)
                with conn.transaction():
                    db.local_settings(conn, hnsw__ef_search=schema.EF_SEARCH)
                    got[hnsw] = {r[0] for r in conn.execute(query, qargs).fetchall()}
            shortlist.append(len(got[True] & got[False]) / max(1, len(got[False])))
        full = {"typical": [], "common": []}
        pick = random.Random(5)
        for q in qvecs[:50]:
            content = [vocab[pick.randrange(100, 5000)] for _ in range(2)]  # in ~0.05-4% of the chunks each
            for kind, terms in (("typical", content), ("common", [vocab[0]])):
                ask = ssearch.Ask([(w, 1.0, True) for w in terms], q.tolist(), space, 30)
                t0 = time.perf_counter()
                ssearch.run(conn, t, ask)
                full[kind].append(time.perf_counter() - t0)
    return {
        "chunks": args.chunks,
        "dims": args.dims,
        "load_seconds": round(load_s, 1),
        "index_build_seconds": round(build_s, 1),
        "index_mib": round(size / 2**20, 1),
        "hnsw": {"m": 16, "ef_construction": 64, "ef_search": schema.EF_SEARCH},
        "index_used": schema.index_name(ns, space["id"]) in plan,
        "recall_at_10": round(statistics.fmean(recall), 4),
        "recall_at_10_p05": round(sorted(recall)[len(recall) // 20], 2),
        "recall_at_10_min": min(recall),
        "queries_recall_below_half": sum(1 for r in recall if r < 0.5),
        "queries_hnsw_short_of_10": short,
        "shortlist_recall_at_100": round(statistics.fmean(shortlist), 4),
        "vector_hnsw": summary(t_hnsw),
        "vector_exact": summary(t_exact),
        "search_both_branches_typical_terms": summary(full["typical"]),
        "search_both_branches_most_common_term": summary(full["common"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", type=int, default=8)
    ap.add_argument("--notes", type=int, default=150, help="notes per agent")
    ap.add_argument("--rounds", type=int, default=8, help="edit + reindex rounds per agent")
    ap.add_argument("--searches", type=int, default=60, help="searches during the load, at least")
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--dims", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--loopback", choices=("tcp", "socket"), default="tcp")
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds the load phase may take")
    ap.add_argument("--skip-load", action="store_true")
    ap.add_argument("--skip-hnsw", action="store_true")
    ap.add_argument("--role", default="main", help=argparse.SUPPRESS)
    ap.add_argument("--workspace", help=argparse.SUPPRESS)
    ap.add_argument("--dsn", help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.role == "publisher":
        return publisher(args)
    root = Path(tempfile.mkdtemp(prefix="mem-bench-shared-"))
    dsn, stop = start_server(root, args.loopback)
    out = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loopback": args.loopback,
            "load_average_at_start": round(os.getloadavg()[0], 2),
        }
    }
    try:
        import psycopg

        with psycopg.connect(dsn) as conn:
            out["machine"]["postgres"] = conn.execute("SHOW server_version").fetchone()[0]
        if not args.skip_load:
            out["load"] = load_test(args, dsn, root)
        if not args.skip_hnsw:
            out["hnsw"] = hnsw_test(args, dsn)
    finally:
        stop()
        shutil.rmtree(root, ignore_errors=True)
    out["machine"]["load_average_at_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
