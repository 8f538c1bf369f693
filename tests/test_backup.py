"""mem backup: create, list, verify, restore (full and custom), rollback, prune, locks, prompts.

Round trips are checked with a tree hash: every path, type, mode bit of the owner
and content under the workspace (the lock folder aside), so "restored" means byte
for byte, empty folders included.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pty
import select
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from memtest import assert_clean_failure

BACKUPS = ".mem/backups"


def tree_hash(root: Path, *, skip=("mem_metadata",)) -> str:
    """sha256 over (path, kind, content) of everything below root but `skip` and lock files."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir.split(os.sep)[0] in skip:
            dirnames[:] = []
            continue
        if rel_dir.split(os.sep)[-1] == "locks":
            continue  # lock files come and go with every job
        h.update(f"D {rel_dir}\n".encode())
        for name in sorted(filenames):
            p = Path(dirpath) / name
            h.update(f"F {os.path.relpath(p, root)} {p.stat().st_size}\n".encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def files_of(root: Path) -> dict[str, bytes]:
    return {
        os.path.relpath(os.path.join(d, f), root): Path(d, f).read_bytes()
        for d, _, fs in os.walk(root)
        for f in fs
        if "locks" not in Path(d).parts
    }


@pytest.fixture
def vault(ws, note, pinned_env):
    """A workspace with every module filled: notes, digest, MEMORY.md, sessions, resources, config."""
    note(ws, "MEMORY.md", "# Memory\n\n- The user prefers PostgreSQL.\n")
    note(
        ws,
        "memory/2026-05-18/kickoff.md",
        "# Kickoff\n\nWe chose PostgreSQL over MySQL.\n",
        name="kickoff",
        description="Project kickoff.",
    )
    note(
        ws,
        "memory/2026-05-18.md",
        "<!-- notes:auto -->\n- [[memory/2026-05-18/kickoff.md]]\n<!-- /notes:auto -->\n",
        name="2026-05-18",
        description="1 note(s) today.",
    )
    note(ws, "digest/wiki/postgresql.md", "PostgreSQL is the database.\n", name="postgresql", description="DB.")
    (ws / "digest" / "personal").mkdir(parents=True)  # an empty folder survives the round trip
    (ws / "mem_session" / "dialog").mkdir(parents=True)
    (ws / "mem_session" / "dialog" / "s1.jsonl").write_text('{"role": "user", "content": "hi"}\n')
    (ws / "resource").mkdir()
    (ws / "resource" / "data.csv").write_bytes(b"a,b\n1,\xc3\xa9\n")
    (ws / "mem.yaml").write_text("# my settings\nsearch:\n  limit: 7\n")
    return ws


def backup_dir(home: Path) -> Path:
    return home / BACKUPS


def create(mem, ws, *args) -> dict:
    code, out, err = mem("-w", ws, "backup", "create", "--json", *args)
    assert code == 0, err
    return json.loads(out)


def test_create_writes_a_self_describing_zip(mem, vault, pinned_env):
    code, out, err = mem("-w", vault, "reindex")
    assert code == 0, err
    data = create(mem, vault, "--note", "before upgrade")
    path = Path(data["file"])
    assert path.parent == backup_dir(pinned_env)
    assert path.name.startswith("ws-") and path.name.endswith("Z.zip")
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert data["mode"] == "full"
    assert data["modules"] == ["vault", "sessions", "resources", "metadata", "config"]
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("meta.json"))
        names = set(zf.namelist())
    assert meta["format"] == "mem-backup" and meta["format_version"] == 1
    assert meta["mem_version"] and meta["created_at"].endswith("Z") and meta["workspace"] == str(vault.resolve())
    assert meta["note"] == "before upgrade" and meta["kind"] == "backup" and meta["mode"] == "full"
    by_path = {f["path"]: f for f in meta["files"]}
    kickoff = (vault / "memory/2026-05-18/kickoff.md").read_bytes()
    assert by_path["memory/2026-05-18/kickoff.md"]["sha256"] == hashlib.sha256(kickoff).hexdigest()
    assert by_path["memory/2026-05-18/kickoff.md"]["size"] == len(kickoff)
    assert {
        "vault/MEMORY.md",
        "sessions/mem_session/dialog/s1.jsonl",
        "resources/resource/data.csv",
        "config/mem.yaml",
        "meta.json",
    } <= names
    assert any(n.startswith("metadata/mem_metadata/keyword_index/") for n in names)
    assert not any("/locks/" in n for n in names)  # the lock folder is never saved
    assert {"module": "vault", "path": "digest/personal"} in meta["dirs"]
    # no temp file is left behind next to the finished backup
    assert [p.name for p in backup_dir(pinned_env).iterdir()] == [path.name]


def test_partial_backup_and_out_folder(mem, vault, tmp_path):
    data = create(mem, vault, "--modules", "vault,sessions", "--out", tmp_path / "elsewhere")
    assert data["mode"] == "partial" and data["modules"] == ["vault", "sessions"]
    with zipfile.ZipFile(data["file"]) as zf:
        tops = {n.split("/")[0] for n in zf.namelist()}
    assert tops == {"vault", "sessions", "meta.json"}
    assert Path(data["file"]).parent == tmp_path / "elsewhere"


def test_unknown_module_is_bad_input(run_mem, vault):
    line = assert_clean_failure(run_mem("-w", vault, "backup", "create", "--modules", "vault,photos"), 2)
    assert "unknown module photos" in line


def test_full_round_trip_is_byte_identical(mem, vault, pinned_env):
    assert mem("-w", vault, "reindex")[0] == 0
    before = tree_hash(vault, skip=())
    name = Path(create(mem, vault)["file"]).name
    # damage every module: edits, deletions, additions
    (vault / "memory/2026-05-18/kickoff.md").write_text("# Kickoff\n\nWe chose MySQL.\n")
    (vault / "MEMORY.md").unlink()
    (vault / "digest" / "personal").rmdir()
    (vault / "memory/2026-06-01").mkdir()
    (vault / "memory/2026-06-01/new.md").write_text("# New\n")
    (vault / "mem_session/dialog/s1.jsonl").write_text("")
    (vault / "resource/data.csv").unlink()
    (vault / "mem.yaml").write_text("search:\n  limit: 2\n")
    code, out, err = mem("-w", vault, "backup", "restore", name, "--yes")
    assert code == 0, err
    assert "Restored vault, sessions, resources, metadata, config" in out
    # the whole workspace, index included, is as it was: restored mtimes leave nothing to re-index
    assert tree_hash(vault, skip=()) == before
    assert not [p for p in vault.iterdir() if p.name.startswith(".mem-restore-")]
    code, out, _ = mem("-w", vault, "search", "postgresql", "--json")
    assert {r["path"] for r in json.loads(out)["results"]} >= {"memory/2026-05-18/kickoff.md"}


def test_partial_restore_leaves_other_modules_alone(mem, vault):
    name = Path(create(mem, vault)["file"]).name
    (vault / "memory/2026-05-18/kickoff.md").write_text("# Kickoff\n\nWe chose MariaDB.\n")
    code, out, _ = mem("-w", vault, "search", "mariadb", "--json")
    assert json.loads(out)["results"]  # the edit is indexed
    (vault / "mem_session/dialog/s2.jsonl").write_text('{"role": "user", "content": "later"}\n')
    (vault / "resource/data.csv").write_text("changed\n")
    sessions_before, resource_before = files_of(vault / "mem_session"), files_of(vault / "resource")
    code, out, err = mem("-w", vault, "backup", "restore", name, "--modules", "vault", "--yes", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["mode"] == "custom" and rep["modules"] == ["vault"]
    assert "We chose PostgreSQL" in (vault / "memory/2026-05-18/kickoff.md").read_text()
    assert files_of(vault / "mem_session") == sessions_before
    assert files_of(vault / "resource") == resource_before
    # the index follows the restored Markdown at once
    code, out, _ = mem("-w", vault, "search", "mariadb", "--json", "--no-sync")
    assert json.loads(out)["results"] == []


def test_full_restore_needs_a_full_backup(mem, vault, clean_failure):
    name = Path(create(mem, vault, "--modules", "vault")["file"]).name
    before = tree_hash(vault)
    code, out, err = mem("-w", vault, "backup", "restore", name, "--yes")
    assert code == 2 and "partial backup" in err and "--modules vault" in err
    code, out, err = mem("-w", vault, "backup", "restore", name, "--modules", "sessions", "--yes")
    assert code == 2 and "has no sessions module" in err
    assert tree_hash(vault) == before


def test_rollback_returns_to_the_state_before_the_restore(mem, vault, pinned_env):
    name = Path(create(mem, vault)["file"]).name
    (vault / "memory/2026-05-18/kickoff.md").write_text("# Kickoff\n\nEdited after the backup.\n")
    (vault / "memory/2026-07-01").mkdir()
    (vault / "memory/2026-07-01/later.md").write_text("# Later\n")
    (vault / "mem.yaml").write_text("search:\n  limit: 3\nembedding_model_config:\n  api_key: sk-now\n")
    edited = tree_hash(vault)
    code, out, err = mem("-w", vault, "backup", "restore", name, "--yes", "--json")
    assert code == 0, err
    snapshot = Path(json.loads(out)["snapshot"])
    assert snapshot.parent == backup_dir(pinned_env) / "snapshots"
    assert not (vault / "memory/2026-07-01/later.md").exists()
    assert "sk-now" not in (vault / "mem.yaml").read_text()  # the backup's mem.yaml, which had no key
    restored = tree_hash(vault)
    code, out, err = mem("-w", vault, "backup", "rollback", "--yes")
    assert code == 0, err
    assert "Rolled back" in out
    assert tree_hash(vault) == edited  # the edits, the new note and the API key are back
    code, out, err = mem("-w", vault, "backup", "rollback", "--yes")  # a second rollback redoes the restore
    assert code == 0, err
    assert tree_hash(vault) == restored


def test_rollback_without_snapshot_is_bad_input(run_mem, vault):
    line = assert_clean_failure(run_mem("-w", vault, "backup", "rollback", "--yes"), 2)
    assert "no snapshot" in line


def hold_workspace_lock(ws: Path):
    path = ws / "mem_metadata" / "locks" / "workspace.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def test_restore_while_another_job_holds_the_lock_exits_75(run_mem, mem, vault):
    name = Path(create(mem, vault)["file"]).name
    (vault / "MEMORY.md").write_text("# Changed\n")
    before = tree_hash(vault)
    fd = hold_workspace_lock(vault)
    try:
        line = assert_clean_failure(run_mem("-w", vault, "backup", "restore", name, "--yes"), 75)
        assert "busy" in line.lower()
        assert_clean_failure(run_mem("-w", vault, "backup", "rollback", "--yes"), 2)  # nothing to roll back yet
    finally:
        os.close(fd)
    assert tree_hash(vault) == before
    code, _, err = run_mem("-w", vault, "backup", "restore", name, "--yes")
    assert code == 0, err


def test_restore_without_yes_off_a_terminal_refuses(run_mem, mem, vault):
    name = Path(create(mem, vault)["file"]).name
    (vault / "MEMORY.md").write_text("# Changed\n")
    line = assert_clean_failure(run_mem("-w", vault, "backup", "restore", name), 2)
    assert "--yes" in line
    assert (vault / "MEMORY.md").read_text() == "# Changed\n"


def run_on_terminal(args: list, answer: bytes, env: dict) -> tuple[int, str]:
    """Run the CLI with stdin and stderr on a pseudo-terminal; type `answer` after the prompt."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", *map(str, args)], stdin=slave, stderr=slave, stdout=subprocess.PIPE, env=env
    )
    os.close(slave)
    seen = b""
    while b"[y/N]" not in seen:
        ready, _, _ = select.select([master], [], [], 30)
        assert ready, seen
        seen += os.read(master, 4096)
    os.write(master, answer)
    proc.wait(timeout=60)
    proc.stdout.close()
    os.close(master)
    return proc.returncode, seen.decode(errors="replace")


@pytest.mark.parametrize(("answer", "code"), [(b"n\n", 1), (b"y\n", 0)])
def test_restore_on_a_terminal_asks(mem, vault, answer, code):
    name = Path(create(mem, vault)["file"]).name
    (vault / "MEMORY.md").write_text("# Changed\n")
    rc, prompt = run_on_terminal(["-w", vault, "backup", "restore", name], answer, dict(os.environ))
    assert rc == code
    assert "Restoring" in prompt and "MEMORY.md" in prompt and "snapshot" in prompt
    changed = (vault / "MEMORY.md").read_text() == "# Changed\n"
    assert changed == (code == 1)


def test_list_and_verify(mem, vault, pinned_env):
    first = create(mem, vault, "--note", "one")
    create(mem, vault, "--modules", "vault")
    (backup_dir(pinned_env) / "junk.zip").write_bytes(b"not a zip")
    code, out, err = mem("-w", vault, "backup", "list", "--json")
    assert code == 0, err
    items = json.loads(out)["backups"]
    ok = [i for i in items if "error" not in i]
    assert [i["mode"] for i in ok] == ["full", "partial"]
    assert ok[0]["note"] == "one" and ok[0]["files"] == first["files"]
    assert [i["name"] for i in items if "error" in i] == ["junk.zip"]
    code, out, err = mem("-w", vault, "backup", "list")
    assert code == 0 and "'one'" in out and "unreadable" in out
    code, out, err = mem("-w", vault, "backup", "verify", first["file"])
    assert code == 0, err
    assert out.startswith("OK ") and "every sha256 and CRC matches" in out


def test_prune_keeps_the_newest_of_this_workspace(mem, vault, tmp_path, note, pinned_env):
    names = [Path(create(mem, vault)["file"]).name for _ in range(3)]
    other = tmp_path / "other"
    note(other, "MEMORY.md", "# Other\n")
    other_backup = Path(create(mem, other)["file"])
    code, out, err = mem("-w", vault, "backup", "prune", "--keep", "1", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert sorted(Path(p).name for p in rep["deleted"]) == sorted(names[:2])
    left = sorted(p.name for p in backup_dir(pinned_env).glob("*.zip"))
    assert left == sorted([names[2], other_backup.name])


def test_prune_keep_must_be_positive(run_mem, vault):
    code, out, err = run_mem("-w", vault, "backup", "prune", "--keep", "0")
    assert code == 2 and out == "" and "Traceback" not in err


def test_backup_dir_from_config_and_env(mem, vault, tmp_path):
    (vault / "mem.yaml").write_text("backup_dir: saved\n")
    assert Path(create(mem, vault)["file"]).parent == vault / "saved"
    env_dir = tmp_path / "env-backups"
    code, out, err = mem("-w", vault, "backup", "create", "--json", env={"MEM_BACKUP_DIR": str(env_dir)})
    assert code == 0, err
    assert Path(json.loads(out)["file"]).parent == env_dir


def test_backup_folder_inside_a_saved_module_is_refused(run_mem, vault):
    line = assert_clean_failure(run_mem("-w", vault, "backup", "create", "--out", vault / "memory" / "bk"), 2)
    assert "inside memory" in line
