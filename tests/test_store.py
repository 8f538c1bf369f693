"""The derived stores (docs/architecture.md, Store formats): exact record formats, incremental sync, recovery."""

from __future__ import annotations

import hashlib
import json
import os
import time

import pytest
import zstandard

from memcli.errors import CorruptStore
from memcli.index import sync
from memcli.index.stores import store

CHUNKS = "mem_metadata/file_store/file_chunks_default_v1.jsonl.zst"
GRAPH = "mem_metadata/file_graph/default.jsonl.zst"
CATALOG = "mem_metadata/file_catalog/default.jsonl.zst"
CHUNK_KEYS = ["id", "text", "metadata", "path", "start_line", "end_line", "scores"]


def raw_lines(path) -> list[bytes]:
    """Decode a store independently of memcli: complete zstd frames of JSON lines, nothing else
    (one run of frames per index segment; ReMe reads them as one stream, as zstd does)."""
    raw = path.read_bytes()
    data = b""
    while True:
        obj = zstandard.ZstdDecompressor().decompressobj()
        data += obj.decompress(raw)
        assert obj.eof, "complete frames"
        raw = obj.unused_data
        if not raw:
            break
        assert raw[:4] == b"\x28\xb5\x2f\xfd", "nothing but frames"
    if not data:
        return []
    assert data.endswith(b"\n")
    return data.split(b"\n")[:-1]


def records(path) -> list[dict]:
    return [json.loads(line) for line in raw_lines(path)]


def populate(root, note):
    note(root, "MEMORY.md", "# Long-term memory\n\nThe user prefers tea.\n")
    note(
        root,
        "memory/2026-05-18/kickoff.md",
        """\
        # Kickoff

        ## Decisions

        We use [[digest/wiki/rrf.md|RRF]] for fusion, see [[memory/2026-05-18.md#Plan]].
        Unknown target: [[nowhere/missing.md]].
        """,
        name="kickoff",
        description="Kickoff meeting.",
        session_id="s1",
        source_conversation="[[mem_session/dialog/s1.jsonl]]",
    )
    note(
        root,
        "memory/2026-05-18.md",
        "Notes of the day.\n\n<!-- notes:auto -->\n- [[memory/2026-05-18/kickoff.md]]\n<!-- /notes:auto -->\n",
        name="2026-05-18",
        description="1 note(s) today.",
    )
    note(
        root,
        "digest/wiki/rrf.md",
        "Reciprocal rank fusion merges ranked lists.\n",
        name="rrf",
        description="Reciprocal rank fusion combines ranked lists.",
    )
    note(root, "memory/2026-05-19/zh.md", "# 部署\n\n我们决定使用向量数据库。\n", name="部署", description="中文")


def reindex_json(run_mem, root, *args):
    """`mem reindex --json` run in-process through the job (the CLI's own report shape).

    The subprocess form is covered by test_cli.py; here a subprocess per step would
    only add start-up time.
    """
    from memcli.jobs import reindex

    rep = reindex.run(open_ws(root), full="--full" in args)
    return json.loads(json.dumps(rep.to_json()))


def open_ws(root):
    from memcli.vault.workspace import open_workspace

    return open_workspace(root.resolve(), dict(os.environ))


def search_paths(run_mem, root, query):
    """Paths of `mem search QUERY` results, in-process; returns (paths, warnings)."""
    from memcli.jobs import search

    res = search.run(open_ws(root), query, links=False)
    return [h.path for h in res.hits], res.warnings


def cli_search_paths(run_mem, root, query):
    code, out, err = run_mem("-w", root, "search", query, "--json", "--no-links")
    assert code == 0, err
    assert "Traceback" not in err
    return [r["path"] for r in json.loads(out)["results"]], err


# ---------------------------------------------------------------- formats


def test_chunk_store_records_exact_format(ws, note, run_mem):
    populate(ws, note)
    code, out, err = run_mem("-w", ws, "reindex")  # once through the real CLI
    assert code == 0, err
    lines = raw_lines(ws / CHUNKS)
    assert lines
    paths = set()
    for line in lines:
        rec = json.loads(line)
        keys = list(rec)
        assert keys[:7] == CHUNK_KEYS
        assert keys[7:] in ([], ["_embedding_f16_b64"])
        # compact separators, non-ASCII kept as is: the line is exactly json.dumps of the record
        assert line == json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        assert rec["metadata"] == {} and rec["scores"] == {}
        expect_id = hashlib.sha256(
            f"{rec['path']} {rec['start_line']} {rec['end_line']} {rec['text']}".encode()
        ).hexdigest()
        assert rec["id"] == expect_id
        # lines are 1-based inclusive file lines, frontmatter counted; the text ends with them
        file_lines = (ws / rec["path"]).read_text(encoding="utf-8").split("\n")
        span = file_lines[rec["start_line"] - 1 : rec["end_line"]]
        assert rec["text"].split("\n")[-len(span) :] == span
        paths.add(rec["path"])
    assert paths == {
        "MEMORY.md",
        "memory/2026-05-18/kickoff.md",
        "memory/2026-05-18.md",
        "digest/wiki/rrf.md",
        "memory/2026-05-19/zh.md",
    }
    assert "我们决定使用向量数据库".encode() in b"".join(lines)
    kickoff = [json.loads(x) for x in lines if b'"memory/2026-05-18/kickoff.md"' in x]
    assert kickoff[0]["start_line"] == 7  # after 6 lines of frontmatter


def test_graph_records(ws, note, run_mem):
    populate(ws, note)
    reindex_json(run_mem, ws)
    graph = records(ws / GRAPH)
    by_path = {g["path"]: g for g in graph}
    assert set(by_path) == {
        "MEMORY.md",
        "memory/2026-05-18/kickoff.md",
        "memory/2026-05-18.md",
        "digest/wiki/rrf.md",
        "memory/2026-05-19/zh.md",
    }
    chunk_recs = records(ws / CHUNKS)
    for g in graph:
        assert list(g) == ["path", "st_mtime", "links", "chunk_ids", "front_matter"]
        assert g["st_mtime"] == pytest.approx(os.stat(ws / g["path"]).st_mtime, abs=1e-6)
        assert g["chunk_ids"] == [c["id"] for c in chunk_recs if c["path"] == g["path"]]
        assert g["chunk_ids"]
        assert list(g["front_matter"])[:2] == ["name", "description"]
        for link in g["links"]:
            assert list(link) == ["source_path", "target_path", "target_anchor"]
            assert link["source_path"] == g["path"]
    k = by_path["memory/2026-05-18/kickoff.md"]
    assert k["links"] == [
        {"source_path": "memory/2026-05-18/kickoff.md", "target_path": "digest/wiki/rrf.md", "target_anchor": None},
        {"source_path": "memory/2026-05-18/kickoff.md", "target_path": "memory/2026-05-18.md", "target_anchor": "Plan"},
        {"source_path": "memory/2026-05-18/kickoff.md", "target_path": "nowhere/missing.md", "target_anchor": None},
    ]  # alias dropped, anchor kept (null when none, as ReMe writes it); the frontmatter's
    # [[mem_session/...]] is not a body link
    assert k["front_matter"]["name"] == "kickoff"
    assert k["front_matter"]["description"] == "Kickoff meeting."
    assert k["front_matter"]["session_id"] == "s1"
    assert by_path["memory/2026-05-19/zh.md"]["front_matter"]["name"] == "部署"
    assert "部署".encode() in b"".join(raw_lines(ws / GRAPH))  # ensure_ascii=False, as ReMe writes it
    assert by_path["digest/wiki/rrf.md"]["links"] == []


def test_catalog_records(ws, note, run_mem):
    populate(ws, note)
    reindex_json(run_mem, ws)
    cat = records(ws / CATALOG)
    assert sorted(c["path"] for c in cat) == sorted(g["path"] for g in records(ws / GRAPH))
    for c in cat:
        assert list(c)[:2] == ["path", "st_mtime"]
        assert c["st_mtime"] == pytest.approx(os.stat(ws / c["path"]).st_mtime, abs=1e-6)


def test_empty_workspace_writes_valid_empty_stores(ws, run_mem):
    rep = reindex_json(run_mem, ws)
    assert rep["files"] == 0 and rep["chunks"] == 0
    assert raw_lines(ws / CHUNKS) == []
    assert raw_lines(ws / GRAPH) == []
    assert search_paths(run_mem, ws, "anything") == ([], [])


def test_no_temp_files_left_behind(ws, note, run_mem):
    populate(ws, note)
    reindex_json(run_mem, ws)
    leftovers = [p for p in (ws / "mem_metadata").rglob("*") if p.name.startswith(".")]
    assert leftovers == []


# ---------------------------------------------------------------- incremental


def store_by_path(root) -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {}
    for line in raw_lines(root / CHUNKS):
        out.setdefault(json.loads(line)["path"], []).append(line)
    return out


def test_incremental_reindex_touches_only_changed_files(ws, note, run_mem):
    note(ws, "memory/2026-05-18/a.md", "alpha note about apples\n", name="a", description="A")
    note(ws, "memory/2026-05-18/b.md", "beta note about bananas\n", name="b", description="B")
    note(ws, "memory/2026-05-18/c.md", "gamma note about cherries\n", name="c", description="C")
    first = reindex_json(run_mem, ws)
    assert first["full"] is True
    assert sorted(first["added"]) == ["memory/2026-05-18/a.md", "memory/2026-05-18/b.md", "memory/2026-05-18/c.md"]
    before = store_by_path(ws)

    again = reindex_json(run_mem, ws)
    assert (again["full"], again["added"], again["changed"], again["deleted"]) == (False, [], [], [])

    note(ws, "memory/2026-05-18/b.md", "beta note about blueberries now\n", name="b", description="B")
    note(ws, "memory/2026-05-18/d.md", "delta note about dates\n", name="d", description="D")
    os.remove(ws / "memory/2026-05-18/c.md")
    rep = reindex_json(run_mem, ws)
    assert rep["full"] is False
    assert rep["added"] == ["memory/2026-05-18/d.md"]
    assert rep["changed"] == ["memory/2026-05-18/b.md"]
    assert rep["deleted"] == ["memory/2026-05-18/c.md"]
    assert rep["files"] == 3
    after = store_by_path(ws)
    assert after["memory/2026-05-18/a.md"] == before["memory/2026-05-18/a.md"]  # unchanged: same bytes, same id
    assert after["memory/2026-05-18/b.md"] != before["memory/2026-05-18/b.md"]
    assert "memory/2026-05-18/c.md" not in after
    graph = {g["path"]: g for g in records(ws / GRAPH)}
    assert set(graph) == {"memory/2026-05-18/a.md", "memory/2026-05-18/b.md", "memory/2026-05-18/d.md"}
    ids = {json.loads(x)["id"] for v in after.values() for x in v}
    assert {c for g in graph.values() for c in g["chunk_ids"]} == ids


def test_touch_without_edit_is_not_a_change(ws, note, run_mem):
    p = note(ws, "memory/2026-05-18/a.md", "alpha note\n")
    reindex_json(run_mem, ws)
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    rep = reindex_json(run_mem, ws)
    assert (rep["added"], rep["changed"], rep["deleted"]) == ([], [], [])
    graph = records(ws / GRAPH)
    assert graph[0]["st_mtime"] == pytest.approx(p.stat().st_mtime, abs=1e-6)


def test_same_size_same_mtime_edit_is_detected(ws, note, run_mem):
    """An edit within the same clock tick (equal size, equal mtime) must not be missed."""
    p = note(ws, "memory/2026-05-18/a.md", "the code word is apple\n")
    os.utime(p, ns=(time.time_ns(), time.time_ns()))  # written in the same tick as the index
    reindex_json(run_mem, ws)
    st = p.stat()
    p.write_text("the code word is lemon\n", encoding="utf-8")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert p.stat().st_size == st.st_size and p.stat().st_mtime_ns == st.st_mtime_ns
    rep = reindex_json(run_mem, ws)
    assert rep["changed"] == ["memory/2026-05-18/a.md"]
    code, out, err = run_mem("-w", ws, "search", "lemon", "--json")
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)["results"]] == ["memory/2026-05-18/a.md"]


def test_same_size_same_mtime_edit_is_found_by_search(ws, note, run_mem):
    p = note(ws, "memory/2026-05-18/a.md", "the code word is apple\n")
    os.utime(p, ns=(time.time_ns(), time.time_ns()))
    reindex_json(run_mem, ws)
    st = p.stat()
    p.write_text("the code word is mango\n", encoding="utf-8")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    reindex_json(run_mem, ws)  # the index is asked to be current ...
    assert search_paths(run_mem, ws, "apple")[0] == []  # ... so the old word is gone
    assert search_paths(run_mem, ws, "mango")[0] == ["memory/2026-05-18/a.md"]


def test_chunking_change_rebuilds(ws, note, run_mem):
    note(ws, "memory/2026-05-18/a.md", "".join(f"line {i} about the launch plan\n" for i in range(300)))
    first = reindex_json(run_mem, ws)
    (ws / "mem.yaml").write_text("chunking:\n  target_tokens: 100\n  overlap_tokens: 10\n", encoding="utf-8")
    rep = reindex_json(run_mem, ws)
    assert rep["full"] is True
    assert rep["chunks"] > first["chunks"]


# ---------------------------------------------------------------- recovery


def snapshot_file(root):
    from memcli.vault.workspace import open_workspace

    return sync.snapshot_path(open_workspace(root, dict(os.environ)))


def damaged_workspace(ws, note, run_mem):
    populate(ws, note)
    reindex_json(run_mem, ws)
    return records(ws / CHUNKS)


def assert_rebuilt(ws, run_mem, good_records, cli=False):
    """After recovery the stores are complete again and search answers correctly."""
    paths, _ = (cli_search_paths if cli else search_paths)(run_mem, ws, "reciprocal fusion")
    assert paths[:1] == ["digest/wiki/rrf.md"]
    assert "memory/2026-05-18/kickoff.md" in paths
    assert records(ws / CHUNKS) == good_records


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "trailing"])
def test_damaged_chunk_store_leads_to_full_rebuild(ws, note, run_mem, damage):
    good = damaged_workspace(ws, note, run_mem)
    path = ws / CHUNKS
    raw = path.read_bytes()
    path.write_bytes(
        {"truncate": raw[: len(raw) // 2], "garbage": os.urandom(len(raw)), "empty": b"", "trailing": raw + b"junk"}[
            damage
        ]
    )
    rep = reindex_json(run_mem, ws)
    assert rep["full"] is True
    assert rep["rebuild_reason"]
    assert rep["chunks"] == len(good)
    assert_rebuilt(ws, run_mem, good)


@pytest.mark.parametrize("damage", ["garbage", "truncate", "zero", "delete"])
def test_damaged_snapshot_search_still_answers(ws, note, run_mem, damage):
    good = damaged_workspace(ws, note, run_mem)
    snap = snapshot_file(ws)
    assert snap.exists()
    raw = snap.read_bytes()
    if damage == "delete":
        snap.unlink()
    else:
        snap.write_bytes(
            {"garbage": b"this is not a snapshot" * 100, "truncate": raw[: len(raw) // 2], "zero": b""}[damage]
        )
    assert_rebuilt(ws, run_mem, good, cli=damage == "garbage")
    # and the next reindex finds everything current
    rep = reindex_json(run_mem, ws)
    assert (rep["added"], rep["changed"], rep["deleted"]) == ([], [], [])


@pytest.mark.parametrize("damage", ["garbage", "truncate", "delete"])
def test_damaged_snapshot_reindex_rebuilds(ws, note, run_mem, damage):
    good = damaged_workspace(ws, note, run_mem)
    snap = snapshot_file(ws)
    raw = snap.read_bytes()
    if damage == "delete":
        snap.unlink()
    else:
        snap.write_bytes(b"garbage!" * 50 if damage == "garbage" else raw[: len(raw) // 3])
    rep = reindex_json(run_mem, ws)
    assert rep["full"] is True
    assert_rebuilt(ws, run_mem, good)


def test_stale_but_valid_chunk_store_is_detected(ws, note, run_mem):
    """A store from an earlier run (as a crash between store and snapshot writes leaves
    it) decodes fine but must not be trusted."""
    populate(ws, note)
    reindex_json(run_mem, ws)
    old_store = (ws / CHUNKS).read_bytes()
    note(
        ws,
        "digest/wiki/rrf.md",
        "Reciprocal rank fusion merges ranked lists, now edited.\n",
        name="rrf",
        description="Reciprocal rank fusion combines ranked lists.",
    )
    reindex_json(run_mem, ws)
    good = records(ws / CHUNKS)
    (ws / CHUNKS).write_bytes(old_store)
    rep = reindex_json(run_mem, ws)
    assert rep["full"] is True and rep["rebuild_reason"]
    by_id = lambda recs: sorted(recs, key=lambda r: r["id"])  # noqa: E731 - order is not specified
    assert by_id(records(ws / CHUNKS)) == by_id(good)


def test_graph_and_catalog_damage_is_repaired_by_full_reindex(ws, note, run_mem):
    good = damaged_workspace(ws, note, run_mem)
    graph_before = records(ws / GRAPH)
    (ws / GRAPH).write_bytes(b"\x28\xb5\x2f\xfd garbage")
    rep = reindex_json(run_mem, ws, "--full")
    assert rep["full"] is True
    assert records(ws / GRAPH) == graph_before
    assert records(ws / CHUNKS) == good


def test_store_read_rejects_truncation(tmp_path):
    p = tmp_path / "s.jsonl.zst"
    store.write_lines(p, [b'{"a":1}', b'{"b":2}'])
    assert store.read_records(p) == [{"a": 1}, {"b": 2}]
    raw = p.read_bytes()
    p.write_bytes(raw[:-3])
    with pytest.raises(CorruptStore):
        store.read_records(p)
    p.write_bytes(store.compress(b'{"a":1}\n{"b":'))
    with pytest.raises(CorruptStore):
        store.read_records(p)
