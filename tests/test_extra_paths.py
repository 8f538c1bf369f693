"""OpenClaw extra paths: outside the workspace they are indexed as `extra/<name>/...`.

An extra path is absolute or workspace-relative (`~` expanded); a folder is walked for
`.md`, a file is taken as it is; symlinks are ignored. Hits, `mem get`, `--citations` and
the MCP `memory_get` use the virtual path; mem never writes there (backups leave it out).
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import time
import zipfile
from pathlib import Path

import pytest


def open_workspace(root: Path):
    """The workspace as the CLI opens it with `-w root` (in-process, the pinned environment)."""
    from memcli.vault.workspace import open_workspace as _open

    return _open(Path(root).resolve(), dict(os.environ))


GUIDE = "extra/team-docs/guide.md"
DEEP = "extra/team-docs/sub/deep.md"
OPS = "extra/ops/ops.md"
HOME_NOTE = "extra/notes/h.md"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def team(tmp_path) -> Path:
    docs = tmp_path / "team-docs"
    write(docs / "guide.md", "# Guide\n\nThe pelican protocol starts every release.\n")
    write(docs / "sub" / "deep.md", "Deep pelican notes.\n")
    write(docs / "notes.txt", "pelican in a text file\n")
    write(docs / ".hidden" / "h.md", "pelican in a dot folder\n")
    return docs


@pytest.fixture
def extra_ws(ws, team, tmp_path, pinned_env) -> Path:
    """A workspace with a relative folder outside it, an absolute file and a `~` folder."""
    ops = write(tmp_path / "shared" / "ops.md", "Ops: the pelican runbook.\n")
    write(pinned_env / "notes" / "h.md", "A pelican note at home.\n")
    write(ws / "memory" / "2026-05-18" / "n.md", "A pelican in the daily note.\n")
    (ws / "mem.yaml").write_text(json.dumps({"extra_paths": ["../team-docs", str(ops), "~/notes"]}), encoding="utf-8")
    return ws


def search_paths(mem, ws, query="pelican") -> list[str]:
    code, out, err = mem("-w", ws, "search", query, "--json", "--limit", "20")
    assert code == 0, err
    return sorted(r["path"] for r in json.loads(out)["results"])


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry below root: kind, content hash, mtime (to prove nothing was written)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = os.lstat(p)
            data = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() else ""
            out[p.relative_to(root).as_posix()] = (st.st_mode, data, st.st_mtime_ns)
    return out


def test_hits_outside_the_workspace_print_virtual_paths(extra_ws, run_mem):
    code, out, err = run_mem("-w", extra_ws, "search", "pelican", "--json", "--limit", "20")
    assert (code, err) == (0, "")
    assert sorted(r["path"] for r in json.loads(out)["results"]) == sorted(
        [DEEP, GUIDE, OPS, HOME_NOTE, "memory/2026-05-18/n.md"]
    )
    code, out, err = run_mem("-w", extra_ws, "search", "protocol release")
    assert (code, err) == (0, "")
    assert out.startswith(f"========== {GUIDE}:1-3 [score=")


def test_citations_name_the_virtual_path(extra_ws, run_mem):
    code, out, err = run_mem("-w", extra_ws, "search", "protocol release", "--citations", "--limit", "1")
    assert (code, err) == (0, "")
    assert f"Source: {GUIDE}#L1-L3" in out


def test_get_reads_extra_files_by_virtual_path(extra_ws, run_mem, mem):
    code, out, err = run_mem("-w", extra_ws, "get", GUIDE)
    assert (code, err) == (0, "")
    assert out == "# Guide\n\nThe pelican protocol starts every release.\n"
    code, out, _ = mem("-w", extra_ws, "get", DEEP, "--json")
    assert code == 0 and json.loads(out)["path"] == DEEP and json.loads(out)["text"] == "Deep pelican notes."
    code, out, _ = mem("-w", extra_ws, "get", OPS, "--from", "1", "--lines", "1")
    assert (code, out) == (0, "Ops: the pelican runbook.\n")
    assert mem("-w", extra_ws, "get", HOME_NOTE)[1] == "A pelican note at home.\n"


def test_get_accepts_openclaw_and_absolute_forms_of_an_extra_path(extra_ws, team, mem):
    for form in ("../team-docs/guide.md", str(team / "guide.md")):
        code, out, err = mem("-w", extra_ws, "get", form, "--json")
        assert code == 0, err
        assert json.loads(out)["path"] == GUIDE


@pytest.mark.parametrize(
    "path",
    [
        "extra/team-docs/notes.txt",  # not Markdown
        "extra/team-docs/../../ws/MEMORY.md",  # climbs out
        "extra/unknown/x.md",  # no such extra path
        "extra/team-docs/missing.md",
        "../elsewhere/x.md",  # outside, but no extra path
        "extra/team-docs/.hidden/h.md/../../../shared/ops.md",
    ],
)
def test_get_still_refuses_everything_else_outside(extra_ws, tmp_path, mem, clean_failure, path):
    write(tmp_path / "elsewhere" / "x.md", "no\n")
    clean_failure(mem("-w", extra_ws, "get", path), 2)


def test_symlinks_are_ignored_files_and_folders(ws, team, tmp_path, mem, clean_failure):
    secret = write(tmp_path / "private" / "diary.md", "pelican secrets\n")
    (team / "link.md").symlink_to(secret)
    (team / "linked-folder").symlink_to(secret.parent, target_is_directory=True)
    (tmp_path / "docs-link").symlink_to(team, target_is_directory=True)
    (tmp_path / "file-link.md").symlink_to(secret)
    (ws / "mem.yaml").write_text('extra_paths: ["../team-docs", "../docs-link", "../file-link.md"]\n')
    assert search_paths(mem, ws) == sorted([DEEP, GUIDE])
    clean_failure(mem("-w", ws, "get", "extra/team-docs/link.md"), 2)
    clean_failure(mem("-w", ws, "get", "extra/team-docs/linked-folder/diary.md"), 2)
    problems = dict(open_workspace(ws).extra_path_problems())
    assert "symlink" in problems["../docs-link"] and "symlink" in problems["../file-link.md"]
    assert "../team-docs" not in problems


def test_missing_extra_path_warns_in_reindex_and_for_health(ws, team, run_mem):
    (ws / "mem.yaml").write_text('extra_paths: ["../team-docs", "../missing", "../team-docs/notes.txt"]\n')
    code, out, err = run_mem("-w", ws, "reindex")
    assert code == 0
    assert out.startswith("Rebuilt 2 files")
    missing = str(ws.parent / "missing")
    assert f"mem: warning: ../missing: extra path not found ({missing})\n" in err
    assert "../team-docs/notes.txt: extra path is a file but not Markdown (.md)" in err
    code, out, err = run_mem("-w", ws, "reindex", "--json")
    assert code == 0
    assert {"path": "../missing", "reason": f"extra path not found ({missing})"} in json.loads(out)["warnings"]
    # what `mem health` reports (memcli.jobs.health calls it)
    assert open_workspace(ws).extra_path_problems() == [
        ("../missing", f"extra path not found ({missing})"),
        ("../team-docs/notes.txt", "extra path is a file but not Markdown (.md)"),
    ]


def test_no_problems_without_extra_paths(ws):
    w = open_workspace(ws)
    assert w.extra_path_problems() == [] and w.extra_roots() == ()


def test_names_are_made_unique_in_config_order(ws, tmp_path, mem):
    write(tmp_path / "a" / "docs" / "x.md", "heron one\n")
    write(tmp_path / "b" / "docs" / "x.md", "heron two\n")
    write(tmp_path / "c" / "docs.md", "heron three\n")
    (ws / "mem.yaml").write_text('extra_paths: ["../a/docs", "../b/docs", "../c/docs.md"]\n')
    assert search_paths(mem, ws, "heron") == ["extra/docs-2/x.md", "extra/docs-3/docs.md", "extra/docs/x.md"]
    code, out, _ = mem("-w", ws, "get", "extra/docs-2/x.md")
    assert (code, out) == (0, "heron two\n")


def test_inside_extra_paths_keep_their_relative_path_whatever_the_spelling(ws, mem):
    write(ws / "projects" / "p.md", "the ibis project\n")
    write(ws / "single.md", "the ibis single file\n")
    (ws / "mem.yaml").write_text(json.dumps({"extra_paths": [str(ws / "projects"), "./single.md"]}))
    assert search_paths(mem, ws, "ibis") == ["projects/p.md", "single.md"]


def test_an_indexed_workspace_folder_named_extra_blocks_the_virtual_prefix(ws, team, mem):
    write(ws / "extra" / "team-docs" / "guide.md", "the real pelican folder\n")
    (ws / "mem.yaml").write_text('extra_paths: ["extra", "../team-docs"]\n')
    assert search_paths(mem, ws) == ["extra/team-docs/guide.md"]
    code, out, _ = mem("-w", ws, "get", "extra/team-docs/guide.md")
    assert (code, out) == (0, "the real pelican folder\n")  # the workspace's own file, never the outside one
    problems = dict(open_workspace(ws).extra_path_problems())
    assert "virtual folder extra/" in problems["../team-docs"]


def test_an_unindexed_extra_folder_in_the_workspace_does_not_matter(extra_ws, mem):
    write(extra_ws / "extra" / "team-docs" / "guide.md", "not indexed\n")
    code, out, _ = mem("-w", extra_ws, "get", GUIDE)
    assert (code, out) == (0, "# Guide\n\nThe pelican protocol starts every release.\n")


def test_an_extra_path_holding_the_workspace_does_not_index_it_twice(ws, tmp_path, mem):
    write(ws / "memory" / "2026-05-18" / "n.md", "a crane in the daily note\n")
    write(tmp_path / "top.md", "a crane beside the workspace\n")
    (ws / "mem.yaml").write_text('extra_paths: [".."]\n')
    name = tmp_path.name
    assert search_paths(mem, ws, "crane") == [f"extra/{name}/top.md", "memory/2026-05-18/n.md"]


def test_resolver_is_picklable_for_index_workers(extra_ws, team):
    w = open_workspace(extra_ws)
    locate = pickle.loads(pickle.dumps(w.resolver()))
    assert locate(DEEP) == str(team / "sub" / "deep.md")
    assert locate("memory/x.md") == str(extra_ws.resolve() / "memory" / "x.md")


def test_no_job_writes_into_an_extra_root(extra_ws, team, tmp_path, mem):
    before = snapshot(tmp_path / "team-docs"), snapshot(tmp_path / "shared")
    conv = write(
        tmp_path / "conv.json",
        json.dumps(
            [
                {"role": "user", "content": "We decided the pelican release goes out on Fridays."},
                {"role": "assistant", "content": "Noted: pelican releases on Fridays."},
            ]
        ),
    )
    for args in (
        ["reindex", "--full"],
        ["remember", "The pelican team meets on Mondays."],
        ["ingest", conv, "--session-id", "s1", "--force"],
        ["dream"],
        ["resource", "scan"],
        ["search", "pelican"],
        ["get", GUIDE],
    ):
        code, _, err = mem("-w", extra_ws, *args)
        assert code == 0, (args, err)
    assert (snapshot(tmp_path / "team-docs"), snapshot(tmp_path / "shared")) == before


def test_backup_leaves_outside_extra_paths_out_and_restore_never_writes_there(extra_ws, team, tmp_path, mem):
    out_dir = tmp_path / "backups"
    code, out, err = mem("-w", extra_ws, "backup", "create", "--out", out_dir, "--json")
    assert code == 0, err
    rep = json.loads(out)
    reasons = {s["path"]: s["reason"] for s in rep["skipped"]}
    assert "outside the workspace" in reasons["extra/team-docs"] and "extra/ops" in reasons
    with zipfile.ZipFile(rep["file"]) as zf:
        names = zf.namelist()
        assert not [n for n in names if "team-docs" in n or "ops.md" in n or "/extra/" in n]
        assert not any(b"pelican protocol" in zf.read(n) for n in names if not n.endswith("/"))
    code, _, err = mem("-w", extra_ws, "backup", "create", "--out", out_dir)
    assert code == 0 and "skipped extra/team-docs: extra path" in err
    write(team / "guide.md", "# Guide\n\nEdited after the backup.\n")
    write(team / "new.md", "added after the backup\n")
    before = snapshot(team)
    for args in (["backup", "restore", rep["file"], "--yes"], ["backup", "rollback", "--yes"]):
        code, _, err = mem("-w", extra_ws, *args, env={"MEM_BACKUP_DIR": str(out_dir)})
        assert code == 0, err
        assert snapshot(team) == before
        assert not (extra_ws / "extra").exists()
    assert mem("-w", extra_ws, "get", GUIDE)[1] == "# Guide\n\nEdited after the backup.\n"


def test_mcp_memory_get_and_search_use_the_virtual_path(extra_ws):
    from test_mcp import Client

    c = Client(extra_ws)
    try:
        c.initialize()
        text, failed = c.call("memory_get", {"path": GUIDE})
        assert (text, failed) == ("# Guide\n\nThe pelican protocol starts every release.", False)
        text, failed = c.call("memory_get", {"path": "../team-docs/sub/deep.md"})
        assert (text, failed) == ("Deep pelican notes.", False)
        text, failed = c.call("memory_search", {"query": "protocol release", "limit": 1})
        assert not failed and f"Source: {GUIDE}#L1-L3" in text
        text, failed = c.call("memory_get", {"path": "extra/team-docs/notes.txt"})
        assert failed
        code, err = c.close()
        assert code == 0 and "Traceback" not in err
    finally:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait(timeout=10)


def test_parallel_index_workers_read_extra_files(extra_ws, team, monkeypatch):
    from memcli.index import sync
    from memcli.index.notes import parse

    for i in range(6):
        write(team / "bulk" / f"b{i}.md", f"bulk note {i}\n")
    monkeypatch.setattr(parse, "PARALLEL_MIN_FILES", 2)
    rep = sync.sync(open_workspace(extra_ws), full=True)
    assert rep.skipped == [] and "extra/team-docs/bulk/b5.md" in rep.added


def test_mcp_sees_a_file_added_to_an_outside_extra_root(extra_ws, team):
    """The MCP server serves its file list from inotify: outside roots must be watched too."""
    from test_mcp import Client

    c = Client(extra_ws)
    try:
        c.initialize()
        text, failed = c.call("memory_search", {"query": "albatross", "limit": 3})
        assert not failed and text == "(no memory results)"
        write(team / "sub" / "later.md", "The albatross migration finished on Tuesday.\n")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            text, failed = c.call("memory_search", {"query": "albatross", "limit": 3})
            if "extra/team-docs/sub/later.md" in text:
                break
            time.sleep(0.2)
        assert "Source: extra/team-docs/sub/later.md#L1-L1" in text
        code, err = c.close()
        assert code == 0 and "Traceback" not in err
    finally:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait(timeout=10)
