"""A note written while a restore runs: never deleted with what the swap moved out.

An agent writes its notes without mem's lock. A restore snapshots the folders it replaces,
then swaps them; a note written between the two is in no snapshot. killpoint.py pauses the
restore at the swap (the `swap-started` mark) while the test writes such a note; afterwards
it must be in the workspace (put back where it was) or, when the restored files took its
place, kept in the staging folder, named by the restore and by `mem health`.
"""

from __future__ import annotations

import json
import subprocess
import time
import zipfile
from pathlib import Path

import pytest
import sample_vault
from reliability_kit import cli, copy_workspace, env_with, mem_cmd, one_clear_line, pinned_env

DAY = sample_vault.DAYS[1]


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    base = tmp_path_factory.mktemp("races")
    with pinned_env(base / "home"):
        yield sample_vault.build(base / "vault", notes_per_day=4)


def restore_writing_meanwhile(vault, tmp_path: Path, rel: str, text: str) -> tuple[Path, dict, str]:
    """Restore the sample backup; at the swap, write `rel` as another process would."""
    ws = copy_workspace(vault["root"], tmp_path / "ws")
    log = tmp_path / "events.log"
    env = {
        "KILLPOINT_ROOT": ws,
        "KILLPOINT_MATCH": "swap-started",
        "KILLPOINT_ACTION": "pause:3",
        "KILLPOINT_LOG": log,
        "MEM_BACKUP_DIR": tmp_path / "bk",
    }
    p = subprocess.Popen(
        mem_cmd(["-w", ws, "backup", "restore", vault["backup"], "--yes", "--json"], killpoint=True),
        env=env_with(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not (log.exists() and "swap-started" in log.read_text()):
        assert p.poll() is None and time.monotonic() < deadline, p.communicate()
        time.sleep(0.02)
    sample_vault.write(ws, rel, text)  # the snapshot is written; the swap has not begun
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0 and one_clear_line(0, err.decode()) is None, err.decode()
    return ws, json.loads(out), err.decode()


def snapshot_names(rep: dict) -> set[str]:
    with zipfile.ZipFile(rep["snapshot"]) as zf:
        return set(zf.namelist())


def test_a_note_written_during_the_swap_is_left_where_it_was(vault, tmp_path):
    rel, text = f"memory/{DAY}/late-notes.md", "# Late\n\nWritten during the restore: kestrellate.\n"
    ws, rep, err = restore_writing_meanwhile(vault, tmp_path, rel, text)
    assert f"vault/{rel}" not in snapshot_names(rep)  # the snapshot could not have it
    assert (ws / rel).read_text() == text
    assert rep["left_in_place"] == [rel] and rep["kept_in_staging"] == []
    assert "could not save" in err and rel in err
    assert not list(ws.glob(".mem-restore-*"))
    code, out, _ = cli("-w", ws, "search", "kestrellate", "--json", "--mode", "keyword")
    assert [h["path"] for h in json.loads(out)["results"]] == [rel]
    assert cli("-w", ws, "health")[0] == 0


def test_a_note_the_restored_files_displace_is_kept_and_named(vault, tmp_path):
    # the backup holds this note, so the restored copy takes its place; the new text must survive
    rel, text = f"memory/{DAY}/database-notes.md", "# Database\n\nRewritten during the restore.\n"
    ws, rep, err = restore_writing_meanwhile(vault, tmp_path, rel, text)
    assert rep["kept_in_staging"] == [rel] and rep["left_in_place"] == []
    staging = next(ws.glob(".mem-restore-*"))
    assert (staging / "old" / rel).read_text() == text
    assert (staging / "kept").read_text() == f"{rel}\n"
    assert f"kept in {staging.name}/old" in err
    code, out, _ = cli("-w", ws, "health", "--json")
    restore = next(c for c in json.loads(out)["checks"] if c["name"] == "restore")
    assert code == 5 and restore["status"] == "fail" and staging.name in restore["message"], out
    # a later restore does not sweep it away: it warns, and the folder stays until the user moves the file
    code, out, err = cli(
        "-w", ws, "backup", "restore", vault["backup"], "--yes", env={"MEM_BACKUP_DIR": str(tmp_path / "bk")}
    )
    assert code == 0 and f"{staging.name}/old holds files an earlier restore could not save" in err, err
    assert (staging / "old" / rel).read_text() == text
