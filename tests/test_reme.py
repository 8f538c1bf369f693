"""One workspace, two tools: mem and the real ReMe (reme-ai[as]==0.4.2.0) reading and writing it.

ReMe reads mem's stores as they are and rewrites all of them when it closes (in
another zstd framing), re-chunks MEMORY.md on every start (it does not watch it, but
finds it in mem's graph) and rewrites the resource catalog through its own record
type. mem must judge its stores by their records: no health failure, no full
rebuild, the same search hits, and no resource note lost or re-hashed.

The ReMe tests run tests/reme_driver.py in ReMe's own Python: `.venv/reme/bin/python`
(`make reme-venv`) or $MEM_REME_PYTHON. Without it they are skipped, unless
MEM_REQUIRE_REME=1 (CI sets it), which makes a missing ReMe a failure. The tests
after them imitate ReMe's rewrites in-process, so they run everywhere.
"""

from __future__ import annotations

import functools
import io
import json
import os
import subprocess
from pathlib import Path

import pytest
import zstandard

from memcli.index.stores import store

REPO = Path(__file__).resolve().parent.parent
REME_PYTHON = Path(os.environ.get("MEM_REME_PYTHON") or REPO / ".venv" / "reme" / "bin" / "python")
REQUIRED = os.environ.get("MEM_REQUIRE_REME") == "1"  # read at import: the fixtures drop MEM_* variables
REME_VERSION = "0.4.2.0"
CHUNKS = "mem_metadata/" + store.CHUNK_STORE
GRAPH = "mem_metadata/" + store.GRAPH_STORE
QUERIES = [
    "PostgreSQL migration",
    "pgloader",
    "ECONNREFUSED canary",
    "部署 回滚",
    "Dana timezone",
    "replication lag",
    "rollback helm",
]


@functools.lru_cache(maxsize=1)
def _why_no_reme() -> str | None:
    if not REME_PYTHON.exists():
        return f"no ReMe Python at {REME_PYTHON} (run `make reme-venv`, or set MEM_REME_PYTHON)"
    proc = subprocess.run(
        [str(REME_PYTHON), "-c", "import reme; print(reme.__version__)"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        return f"`reme` is not importable in {REME_PYTHON}: {proc.stderr.strip().splitlines()[-1:]}"
    if proc.stdout.strip() != REME_VERSION:
        return f"ReMe {proc.stdout.strip()} in {REME_PYTHON}; these tests are written against {REME_VERSION}"
    return None


@pytest.fixture
def reme():
    """reme(ws, *queries, catalogs=True) -> the driver's JSON: ReMe opens, scans, searches, closes."""
    why = _why_no_reme()
    if why:
        if REQUIRED:
            pytest.fail(f"MEM_REQUIRE_REME=1 but {why}")
        pytest.skip(why)

    def run(ws: Path, *queries: str, catalogs: bool = True) -> dict:
        args = [str(REME_PYTHON), str(REPO / "tests" / "reme_driver.py"), str(ws)]
        for q in queries:
            args += ["--search", q]
        if not catalogs:
            args.append("--no-catalogs")
        proc = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out["success"] and all(s["success"] for s in out["searches"]), out
        return out

    return run


def shared_workspace(ws: Path, note, memory_md: bool = True) -> None:
    """Notes in mem's layout with what the two tools treat differently: frontmatter, a day
    page, anchors, a code fence, CJK, a note long enough for several mem chunks."""
    if memory_md:
        note(
            ws,
            "MEMORY.md",
            "# Long-term memory\n\n## User\n- Name: Dana. Prefers concise answers.\n- Timezone: Europe/Berlin.\n",
        )
    note(
        ws,
        "memory/2026-05-01/db-migration.md",
        "# Database migration\n\n## Decision\nThe team replaced MySQL with PostgreSQL 16.\n"
        "Data moves with pgloader over one weekend.\n",
        name="db-migration",
        description="Plan for the PostgreSQL migration.",
        session_id="s-001",
    )
    note(
        ws,
        "memory/2026-05-01/ws-incident.md",
        "# WebSocket incident\n\nDuring the canary deploy clients got ECONNREFUSED and retried at once.\n"
        "See [[memory/2026-05-01/db-migration.md]] and [[digest/procedure/deploy.md#Stage 2]].\n\n"
        "```js\n// see [[digest/wiki/postgresql.md]]\nhandleWebSocketReconnect(backoff)\n```\n",
        name="ws-incident",
        description="Reconnect storm after a canary deploy.",
        session_id="s-002",
    )
    note(
        ws,
        "memory/2026-05-02/deploy-zh.md",
        "# 部署流程\n\n先部署到 staging，再到 canary，最后 production。回滚：停流量，切回上一个版本。\n",
        name="deploy-zh",
        description="部署流程与回滚。",
        date="2026-05-02",
        tags=["ops", "部署"],
    )
    note(
        ws,
        "memory/2026-05-01.md",
        "<!-- notes:auto -->\n- [[memory/2026-05-01/db-migration.md]] name: db-migration description: "
        "Plan for the PostgreSQL migration.\n- [[memory/2026-05-01/ws-incident.md]] name: ws-incident "
        "description: Reconnect storm after a canary deploy.\n<!-- /notes:auto -->\n",
        name="2026-05-01",
        description="2 note(s) today.",
    )
    note(
        ws,
        "digest/wiki/postgresql.md",
        "# PostgreSQL\n\nJSONB, partial indexes and reliable replication; watch the replication lag.\n",
        name="postgresql",
        description="Why PostgreSQL.",
    )
    stages = "".join(
        f"## Stage {i}\n\n"
        + " ".join(f"step{i}x{j} cluster helm rollback canary node latency" for j in range(40))
        + "\n\n"
        for i in range(1, 7)
    )
    note(
        ws,
        "digest/procedure/deploy.md",
        "# Deployment procedure\n\n" + stages,
        name="deploy",
        description="How we deploy.",
    )


def mem_json(run_mem, ws, *args):
    code, out, err = run_mem("-w", ws, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def hits(run_mem, ws) -> dict:
    """Every query's results as `mem search --json` gives them (texts, scores, links)."""
    return {q: mem_json(run_mem, ws, "search", q, "--no-sync")["results"] for q in QUERIES}


def lines(path: Path) -> list[bytes]:
    return store.read_raw_lines(path)


def by_path(ws: Path) -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {}
    for line in lines(ws / CHUNKS):
        out.setdefault(json.loads(line)["path"], []).append(line)
    return out


def index_check(run_mem, ws) -> dict:
    code, out, err = run_mem("-w", ws, "health", "--json")
    assert code == 0, out + err
    return next(c for c in json.loads(out)["checks"] if c["name"] == "index")


@pytest.mark.parametrize("memory_md", [True, False], ids=["with-MEMORY.md", "without"])
def test_mem_reme_mem_cycle(ws, note, run_mem, reme, memory_md):
    shared_workspace(ws, note, memory_md)
    assert mem_json(run_mem, ws, "reindex")["full"] is True
    before, mine = hits(run_mem, ws), by_path(ws)
    ids = {json.loads(x)["id"] for recs in mine.values() for x in recs}

    out = reme(ws, *QUERIES)
    # ReMe searched mem's chunks: it re-chunked only MEMORY.md (not watched, but in mem's graph)
    assert out["counts"] == {"added": 0, "modified": 0, "deleted": int(memory_md)}
    found = [h for s in out["searches"] for h in s["hits"] if h["path"] != "MEMORY.md"]
    assert found and all(h["id"] in ids for h in found)
    after = by_path(ws)
    assert {p: after[p] for p in mine if p != "MEMORY.md"} == {p: v for p, v in mine.items() if p != "MEMORY.md"}
    if memory_md:
        assert after["MEMORY.md"] != mine["MEMORY.md"]  # ReMe's own chunk of it
    reme_store = (ws / CHUNKS).read_bytes()
    assert zstandard.get_frame_parameters(reme_store).content_size == zstandard.CONTENTSIZE_UNKNOWN  # ReMe's framing
    anchors = {ln["target_anchor"] for g in store.read_records(ws / GRAPH) for ln in g["links"]}
    assert None in anchors and "Stage 2" in anchors and "" not in anchors  # the same null both tools write

    check = index_check(run_mem, ws)  # healthy: the records are judged, not the bytes
    assert check["status"] == "ok" and check["figures"]["store_files_rechunked"] == int(memory_md), check
    rep = mem_json(run_mem, ws, "reindex")
    assert rep["full"] is False and rep["rebuild_reason"] == "", rep
    assert (rep["added"], rep["deleted"]) == ([], []) and rep["changed"] == (["MEMORY.md"] if memory_md else [])
    if not memory_md:  # the same records: ReMe's store is read as it is, not written again
        assert (ws / CHUNKS).read_bytes() == reme_store
    assert by_path(ws) == mine  # mem's own chunks again
    assert hits(run_mem, ws) == before
    assert index_check(run_mem, ws)["figures"]["store_files_rechunked"] == 0
    again = mem_json(run_mem, ws, "reindex")
    assert (again["full"], again["added"], again["changed"], again["deleted"]) == (False, [], [], [])


def test_a_file_reme_re_chunked_after_an_edit_is_re_chunked_alone(ws, note, run_mem, reme):
    shared_workspace(ws, note, memory_md=False)
    mem_json(run_mem, ws, "reindex")
    edited = ws / "digest/wiki/postgresql.md"
    edited.write_text(edited.read_text(encoding="utf-8") + "\nPITR backups every night.\n", encoding="utf-8")
    out = reme(ws, "PITR backups")
    assert out["counts"]["modified"] == 1
    assert out["searches"][0]["hits"][0]["path"] == "digest/wiki/postgresql.md"
    assert index_check(run_mem, ws)["status"] == "ok"  # stale for mem (a warning of the files check), not broken
    rep = mem_json(run_mem, ws, "reindex")
    assert (rep["full"], rep["changed"], rep["rebuild_reason"]) == (False, ["digest/wiki/postgresql.md"], "")
    assert mem_json(run_mem, ws, "search", "PITR backups")["results"][0]["path"] == "digest/wiki/postgresql.md"


def test_remes_catalog_rewrite_keeps_resource_ownership_and_hashes(ws, note, run_mem, reme):
    shared_workspace(ws, note, memory_md=False)
    (ws / "resource/2026-05-01").mkdir(parents=True)
    for rel, text in (
        ("resource/2026-05-01/runbook.md", "# Runbook\n\nRestart pgbouncer, check lag.\n"),
        ("resource/data.csv", "a,b\n1,2\n"),
    ):
        (ws / rel).write_text(text, encoding="utf-8")
        os.utime(ws / rel, (1_700_000_000, 1_700_000_000))  # not "racy": a rescan would have to hash it
    first = mem_json(run_mem, ws, "resource", "scan")
    assert sorted(n["action"] for n in first["notes"]) == ["added", "added"]
    catalog = ws / "mem_metadata/file_catalog/resource.jsonl.zst"
    own = ws / "mem_metadata/resource/catalog.jsonl.zst"
    kept = {r["path"]: r for r in store.read_records(catalog)}
    own_bytes = own.read_bytes()
    dream = ws / "mem_metadata/file_catalog/dream.jsonl.zst"  # as dream's checkpoint writes it
    store.write_lines(dream, [store.catalog_line("memory/2026-05-01.md", 1796000000.25)])
    dream_lines = lines(dream)

    reme(ws)
    stripped = store.read_records(catalog)
    assert [r["path"] for r in stripped] == sorted(kept) and all("sha256" not in r for r in stripped)
    assert lines(dream) == dream_lines  # ReMe's record shape: nothing lost
    second = mem_json(run_mem, ws, "resource", "scan")
    assert second["resources"]["unchanged"] == sorted(kept) and second["resources"]["modified"] == []
    assert second["notes"] == [] and second["changes"] == []  # no note re-linked or rewritten
    assert own.read_bytes() == own_bytes  # nothing re-hashed (checked_ns would have moved)
    from memcli.jobs.resource import catalog as resource_catalog
    from memcli.vault.workspace import open_workspace

    entries, problem = resource_catalog.load(open_workspace(ws, {}))
    assert problem is None
    assert {p: (e.note, e.sha256, e.st_size) for p, e in entries.items()} == {
        p: (r["note"], r["sha256"], r["st_size"]) for p, r in kept.items()
    }


# ---- ReMe's rewrites imitated in-process: these run without ReMe ----


def reme_framing(path: Path, new_lines: list[bytes] | None = None) -> None:
    """Rewrite a store as ReMe does: one zstd stream without the content size."""
    body = b"".join(x + b"\n" for x in (lines(path) if new_lines is None else new_lines))
    out = io.BytesIO()
    with zstandard.ZstdCompressor(level=3).stream_writer(out, closefd=False) as w:
        w.write(body)
    path.write_bytes(out.getvalue())


def test_same_records_in_other_bytes_are_adopted(ws, note, run_mem):
    shared_workspace(ws, note)
    mem_json(run_mem, ws, "reindex")
    for rel in (CHUNKS, GRAPH, "mem_metadata/file_catalog/default.jsonl.zst"):
        reme_framing(ws / rel)
    rewritten = (ws / CHUNKS).read_bytes()
    assert index_check(run_mem, ws)["status"] == "ok"
    rep = mem_json(run_mem, ws, "reindex")
    assert (rep["full"], rep["changed"], rep["rebuild_reason"]) == (False, [], "")
    assert (ws / CHUNKS).read_bytes() == rewritten  # read, not written again
    rep = mem_json(run_mem, ws, "reindex")  # the snapshot took the new stamps: a plain no-change run
    assert (rep["full"], rep["changed"]) == (False, [])


def test_a_file_re_chunked_by_another_tool_is_re_derived_from_the_markdown(ws, note, run_mem):
    shared_workspace(ws, note, memory_md=False)
    mem_json(run_mem, ws, "reindex")
    mine = lines(ws / CHUNKS)
    path = "digest/procedure/deploy.md"
    # ReMe's way: the file's chunks evicted, one chunk of its own appended, the graph following
    text = "# Deployment procedure\n\n## Stage 1"
    rid = store.chunk_id(path, 5, 7, text)
    other = [x for x in mine if json.loads(x)["path"] != path] + [store.chunk_line(rid, text, path, 5, 7)]
    graph = [json.loads(x) for x in lines(ws / GRAPH)]
    for g in graph:
        if g["path"] == path:
            g["chunk_ids"] = [rid]
    reme_framing(ws / CHUNKS, other)
    reme_framing(ws / GRAPH, [json.dumps(g, ensure_ascii=False, separators=(",", ":")).encode() for g in graph])
    check = index_check(run_mem, ws)
    assert check["status"] == "ok" and check["figures"]["store_files_rechunked"] == 1
    rep = mem_json(run_mem, ws, "reindex")
    assert (rep["full"], rep["changed"], rep["rebuild_reason"]) == (False, [path], "")
    assert sorted(lines(ws / CHUNKS)) == sorted(mine)


def test_a_graph_that_disagrees_with_its_store_still_means_a_full_rebuild(ws, note, run_mem):
    shared_workspace(ws, note, memory_md=False)
    mem_json(run_mem, ws, "reindex")
    mine = lines(ws / CHUNKS)
    reme_framing(ws / CHUNKS, mine[1:])  # a record gone, the graph still naming it
    code, out, _ = run_mem("-w", ws, "health", "--json")
    assert code == 5 and "differ from the chunk store" in out
    rep = mem_json(run_mem, ws, "reindex")
    assert rep["full"] is True and rep["rebuild_reason"] == "chunk store does not match the search snapshot"
    assert sorted(lines(ws / CHUNKS)) == sorted(mine)
