"""The backup job in-process: progress callback, interruption, symlinks, leftovers, metadata.

These call memcli.jobs.backup directly (the CLI's own tests are in test_backup.py),
with the backup folder passed in as the CLI would resolve it.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from memcli.jobs import backup


@pytest.fixture
def small(ws, note):
    for i in range(12):
        note(ws, f"memory/2026-05-{10 + i:02d}/n{i}.md", f"# Note {i}\n\nbody {i}\n", name=f"n{i}", description="d")
    return ws


def test_create_reports_progress_to_the_callback(small, open_ws, tmp_path):
    calls = []
    rep = backup.create(open_ws(small), tmp_path / "out", progress=lambda *a: calls.append(a))
    assert calls[-1] == ("Archiving", 12, 12)
    assert [c[1] for c in calls] == sorted(c[1] for c in calls)  # monotonic
    assert rep.path.is_file()


def test_interrupted_create_leaves_no_zip(small, open_ws, tmp_path):
    def stop(stage, done, total):
        if done == 5:
            raise KeyboardInterrupt

    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        backup.create(open_ws(small), out, progress=stop)
    assert list(out.iterdir()) == []  # neither a partial zip nor its temp file


def test_two_backups_in_one_second_keep_both(small, open_ws, tmp_path):
    ws = open_ws(small)
    paths = {backup.create(ws, tmp_path / "out").path for _ in range(3)}
    assert len(paths) == 3 and all(p.is_file() for p in paths)


def test_symlinks_are_skipped_not_followed(small, open_ws, tmp_path, mem):
    secret = tmp_path / "outside.md"
    secret.write_text("# Outside the workspace\n")
    os.symlink(secret, small / "memory" / "link.md")
    os.symlink(tmp_path, small / "digest" / "loop")
    rep = backup.create(open_ws(small), tmp_path / "out")
    skipped = {s["path"]: s["reason"] for s in rep.to_json()["skipped"]}
    assert skipped == {"memory/link.md": "symlink (not followed)", "digest/loop": "symlink (not followed)"}
    with zipfile.ZipFile(rep.path) as zf:
        assert not any("link.md" in n or "loop" in n for n in zf.namelist())
    code, out, err = mem("-w", small, "backup", "create")
    assert code == 0 and "mem: warning: skipped memory/link.md: symlink (not followed)" in err


def test_a_restore_leaves_symlinks_where_they_were(small, open_ws, tmp_path):
    """A symlink is never archived, so no snapshot holds it: the restore must not delete it."""
    ws = open_ws(small)
    rep = backup.create(ws, tmp_path / "out")
    target = tmp_path / "outside.md"
    target.write_text("# Outside\n")
    os.symlink(target, small / "memory" / "link.md")
    res = backup.restore(ws, rep.path, tmp_path / "out" / "snapshots", lambda: open_ws(small))
    assert os.readlink(small / "memory" / "link.md") == str(target)
    assert res.cleanup.put_back == ["memory/link.md"] and res.cleanup.kept == []
    assert not list(small.glob(".mem-restore-*"))


def test_a_killed_writes_temp_files_go_with_the_swapped_out_folders(small, open_ws, tmp_path, mem):
    """A temp file a killed atomic write left is debris, not a note the snapshot missed: the
    restore deletes it rather than keeping a staging folder that `mem health` would flag."""
    assert mem("-w", small, "reindex")[0] == 0
    ws = open_ws(small)
    rep = backup.create(ws, tmp_path / "out")
    for rel in ("mem_metadata/file_graph/.mem-tmp-default.jsonl.zst.1.ab", "memory/2026-05-10/.mem-tmp-n0.md.1.cd"):
        (small / rel).write_text("half")
    res = backup.restore(ws, rep.path, tmp_path / "out" / "snapshots", lambda: open_ws(small))
    assert res.cleanup.kept == [] and res.cleanup.put_back == []
    assert not list(small.glob(".mem-restore-*")) and not list(small.rglob(".mem-tmp-*"))
    assert mem("-w", small, "health")[0] == 0


def test_leftover_staging_folder_is_reported(small, open_ws, tmp_path):
    ws = open_ws(small)
    rep = backup.create(ws, tmp_path / "out")
    (small / ".mem-restore-dead").mkdir()
    res = backup.restore(ws, rep.path, tmp_path / "out" / "snapshots", lambda: open_ws(small))
    assert any(".mem-restore-dead was left by an interrupted restore" in w for w in res.warnings)
    assert (small / ".mem-restore-dead").is_dir()  # reported, never deleted blindly


def test_metadata_only_restore_keeps_search_true_to_the_markdown(small, open_ws, tmp_path, mem):
    assert mem("-w", small, "reindex")[0] == 0
    ws = open_ws(small)
    rep = backup.create(ws, tmp_path / "out", ["metadata"])
    (small / "memory/2026-05-10/n0.md").write_text("# Note 0\n\nzebra crossing\n")
    assert mem("-w", small, "reindex")[0] == 0
    res = backup.restore(ws, rep.path, tmp_path / "out" / "snapshots", lambda: open_ws(small), modules=["metadata"])
    assert res.index is not None and res.index.changes == 1  # the old index met today's note
    code, out, _ = mem("-w", small, "search", "zebra", "--json", "--no-sync")
    assert [r["path"] for r in json.loads(out)["results"]] == ["memory/2026-05-10/n0.md"]


def test_unusable_config_after_restore_marks_the_index_stale(small, open_ws, tmp_path, mem):
    from memcli.errors import ConfigError
    from memcli.index import sync

    assert mem("-w", small, "reindex")[0] == 0
    ws = open_ws(small)
    rep = backup.create(ws, tmp_path / "out", ["vault"])

    def reopen():
        raise ConfigError("unknown config key 'x' in mem.yaml")

    res = backup.restore(ws, rep.path, tmp_path / "out" / "snapshots", reopen, modules=["vault"])
    assert res.index is None
    assert any("search index not rebuilt" in w for w in res.warnings)
    assert not sync.snapshot_path(ws).exists()  # the next search rebuilds instead of answering stale


def test_restore_json_report(small, mem, tmp_path):
    code, out, _ = mem("-w", small, "backup", "create", "--json")
    path = json.loads(out)["file"]
    code, out, err = mem("-w", small, "backup", "restore", path, "--yes", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["mode"] == "full" and rep["files"] == 12 and rep["index"]["files"] == 12
    assert Path(rep["snapshot"]).is_file() and rep["warnings"] == []


def test_verify_needs_no_workspace(small, mem, tmp_path, run_mem):
    code, out, _ = mem("-w", small, "backup", "create", "--json")
    path = json.loads(out)["file"]
    code, out, err = run_mem("backup", "verify", path, cwd=tmp_path)
    assert code == 0 and out.startswith("OK "), err
