"""Restoring another workspace's backup: said out loud, folders mapped onto this workspace's
names (or the restored config's), the index and health right afterwards.

A QwenPaw agent names its note folders in agent.json (notes/, knowledge/ here); a plain
workspace uses memory/ and digest/. A restore that leaves the config alone puts the
backup's notes/ into memory/; one that restores the config takes its names; either way a
restored note is found by the very next search.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_backup import create, tree_hash
from test_backup_safety import rewrite

AGENT_JSON = {
    "running": {
        "reme_light_memory_config": {"daily_dir": "notes", "digest_dir": "knowledge", "resource_dir": "inbox_files"}
    }
}
PLAN = "notes/2026-05-18/plan.md"
NODE = "knowledge/wiki/walrus.md"


@pytest.fixture
def qwenpaw(tmp_path, note):
    root = tmp_path / "agent"
    root.mkdir()
    (root / "agent.json").write_text(json.dumps(AGENT_JSON), encoding="utf-8")
    note(root, "MEMORY.md", "# Memory\n\n- The agent's memory.\n")
    note(root, PLAN, "# Plan\n\nThe walrus migration ships on Friday.\n", name="plan", description="Plan.")
    note(root, NODE, "Walruses run the kestrelnode cluster.\n", name="walrus", description="Node.")
    return root


@pytest.fixture
def plain(ws, note, mem):
    note(ws, "MEMORY.md", "# Memory\n\n- Plain memory.\n")
    note(ws, "memory/2026-05-10/old.md", "# Old\n\nA plain note about ocelots.\n", name="old", description="Old.")
    assert mem("-w", ws, "reindex")[0] == 0
    return ws


def restore(mem, ws, backup, *args) -> tuple[dict, str]:
    code, out, err = mem("-w", ws, "backup", "restore", backup, "--yes", "--json", *args)
    assert code == 0, err
    return json.loads(out), err


def search(mem, ws, query) -> list[str]:
    code, out, err = mem("-w", ws, "search", query, "--json", "--mode", "keyword")
    assert code == 0, err
    return [h["path"] for h in json.loads(out)["results"]]


def healthy(mem, ws) -> dict:
    code, out, err = mem("-w", ws, "health", "--json")
    assert code == 0, out + err
    return {c["name"]: c for c in json.loads(out)["checks"]}


def test_vault_restored_under_this_workspaces_folder_names(mem, qwenpaw, plain):
    backup = create(mem, qwenpaw)["file"]
    rep, err = restore(mem, plain, backup, "--modules", "vault")
    assert rep["other_workspace"] is True and rep["source_workspace"] == str(qwenpaw.resolve())
    assert rep["folders_renamed"] == {"knowledge": "digest", "notes": "memory"}
    assert f"is a backup of another workspace ({qwenpaw.resolve()})" in err
    assert "notes/ -> memory/" in err and "knowledge/ -> digest/" in err
    assert (plain / "memory/2026-05-18/plan.md").read_text().endswith("ships on Friday.\n")
    assert (plain / "digest/wiki/walrus.md").is_file()
    assert not (plain / "notes").exists() and not (plain / "knowledge").exists()
    assert search(mem, plain, "walrus migration") == ["memory/2026-05-18/plan.md"]  # at once, no reindex
    assert search(mem, plain, "kestrelnode") == ["digest/wiki/walrus.md"]
    assert healthy(mem, plain)["files"]["status"] == "ok"
    # what the vault had is in the snapshot: a rollback brings the ocelots back
    assert mem("-w", plain, "backup", "rollback", "--yes")[0] == 0
    assert search(mem, plain, "ocelots") == ["memory/2026-05-10/old.md"]


def test_a_plain_backup_restored_into_a_qwenpaw_workspace(mem, qwenpaw, plain):
    backup = create(mem, plain)["file"]
    rep, err = restore(mem, qwenpaw, backup, "--modules", "vault")
    assert rep["folders_renamed"] == {"digest": "knowledge", "memory": "notes"}
    assert (qwenpaw / "notes/2026-05-10/old.md").is_file() and not (qwenpaw / "memory").exists()
    assert search(mem, qwenpaw, "ocelots") == ["notes/2026-05-10/old.md"]
    healthy(mem, qwenpaw)


def test_metadata_of_another_layout_is_left_out_and_rebuilt(mem, qwenpaw, plain):
    assert mem("-w", qwenpaw, "reindex")[0] == 0
    backup = create(mem, qwenpaw)["file"]
    rep, err = restore(mem, plain, backup, "--modules", "vault,metadata")
    assert rep["modules"] == ["vault"]
    assert "metadata (index, catalogs) names its own folders, so it is left out" in err
    assert search(mem, plain, "walrus migration") == ["memory/2026-05-18/plan.md"]
    healthy(mem, plain)


def test_full_restore_takes_the_restored_configs_folders(mem, qwenpaw, plain):
    before = tree_hash(plain)
    backup = create(mem, qwenpaw)["file"]
    rep, err = restore(mem, plain, backup)
    assert rep["other_workspace"] is True and rep["folders_renamed"] == {}
    assert "memory/, digest/ stay as they are but are no longer searched" in err
    assert (plain / "agent.json").is_file() and (plain / PLAN).is_file()
    assert (plain / "memory/2026-05-10/old.md").is_file()  # left where it was, never deleted
    assert search(mem, plain, "walrus migration") == [PLAN]
    assert search(mem, plain, "ocelots") == []
    healthy(mem, plain)
    # the rollback removes the agent.json the restore brought, so the folders are memory/ again
    assert mem("-w", plain, "backup", "rollback", "--yes")[0] == 0
    assert not (plain / "agent.json").exists() and not (plain / "notes").exists()
    assert tree_hash(plain) == before
    assert search(mem, plain, "ocelots") == ["memory/2026-05-10/old.md"]


def test_the_same_workspace_restores_without_a_word_about_workspaces(mem, plain):
    backup = create(mem, plain)["file"]
    rep, err = restore(mem, plain, backup)
    assert rep["other_workspace"] is False and rep["folders_renamed"] == {}
    assert "another workspace" not in err and "->" not in err


def test_a_backup_without_a_recorded_layout_is_read_from_its_slots(mem, qwenpaw, plain, tmp_path):
    backup = Path(create(mem, qwenpaw)["file"])

    def older(meta):
        del meta["layout"], meta["missing"]  # as mem wrote backups before it recorded them

    old = rewrite(backup, tmp_path / "older.zip", meta_edit=older)
    rep, err = restore(mem, plain, old, "--modules", "vault")
    assert rep["folders_renamed"] == {"knowledge": "digest", "notes": "memory"}
    assert search(mem, plain, "walrus migration") == ["memory/2026-05-18/plan.md"]


def test_folders_that_would_land_on_one_another_are_refused(mem, qwenpaw, plain, clean_failure):
    # the agent also keeps notes in memory/ (an extra path): notes/ -> memory/ would collide with it
    (qwenpaw / "memory").mkdir()
    (qwenpaw / "memory" / "extra.md").write_text("# Extra\n")
    cfg = json.loads((qwenpaw / "agent.json").read_text())
    cfg["running"]["reme_light_memory_config"]["extra_paths"] = ["memory"]
    (qwenpaw / "agent.json").write_text(json.dumps(cfg))
    backup = create(mem, qwenpaw)["file"]
    before = tree_hash(plain)
    code, out, err = mem("-w", plain, "backup", "restore", backup, "--modules", "vault", "--yes")
    line = clean_failure((code, out, err), 2)
    assert "would both go to memory" in line, line
    assert tree_hash(plain) == before


def test_a_restored_config_naming_a_folder_outside_the_workspace_is_refused(mem, qwenpaw, plain, clean_failure):
    cfg = json.loads((qwenpaw / "agent.json").read_text())
    cfg["running"]["reme_light_memory_config"]["daily_dir"] = "../outside"
    backup = Path(create(mem, qwenpaw, "--modules", "vault,sessions,resources,metadata")["file"])

    def hostile(meta):  # a crafted zip: a config module whose agent.json names ../outside
        import hashlib

        data = json.dumps(cfg).encode()
        meta["modules"].append("config")
        meta["slots"]["config"] = ["mem.yaml", "agent.json"]
        meta["files"].append(
            {
                "module": "config",
                "path": "agent.json",
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "mtime_ns": 1,
            }
        )

    def add_entry(entries, meta):
        import zipfile

        return [*entries, (zipfile.ZipInfo("config/agent.json"), json.dumps(cfg).encode())]

    bad = rewrite(backup, backup.parent / "hostile.zip", meta_edit=hostile, entries_edit=add_entry)
    before = tree_hash(plain)
    line = clean_failure(mem("-w", plain, "backup", "restore", bad, "--yes"), 2)
    assert "daily_dir to '../outside', not a folder inside the workspace" in line, line
    assert tree_hash(plain) == before and not (plain.parent / "outside").exists()


def test_an_older_snapshot_is_restored_under_its_own_folder_names(mem, plain, tmp_path):
    """A snapshot lists its slots merged and sorted: without a recorded layout nothing is renamed."""
    backup = create(mem, plain)["file"]
    rep, _ = restore(mem, plain, backup)
    (plain / "memory/2026-05-10/old.md").write_text("# Old\n\nChanged after the restore.\n")

    def older(meta):
        del meta["layout"], meta["missing"]

    snap = rewrite(Path(rep["snapshot"]), tmp_path / "older-snapshot.zip", meta_edit=older)
    again, err = restore(mem, plain, snap)
    assert again["folders_renamed"] == {}
    assert "A plain note about ocelots." in (plain / "memory/2026-05-10/old.md").read_text()
    assert (plain / "digest").is_dir() and (plain / "MEMORY.md").is_file()
