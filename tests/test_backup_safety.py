"""Damaged and hostile backups are refused before the workspace is touched.

Archives are crafted with zipfile from a real backup: tampered content (sha256
mismatch), a corrupted byte (zip CRC), zip-slip names, symlink and folder
entries, undeclared entries, meta.json slots aimed at the lock folder, and a
format from the future. Each must exit 2 with one clear line, both for
`verify` and `restore`, and leave the workspace byte-identical.
"""

from __future__ import annotations

import json
import stat
import zipfile
from pathlib import Path

import pytest
from memtest import assert_clean_failure
from test_backup import create, tree_hash


@pytest.fixture
def backup(mem, ws, note):
    note(ws, "MEMORY.md", "# Memory\n\n- Keep this.\n")
    note(ws, "memory/2026-05-18/kickoff.md", "# Kickoff\n\nWe chose PostgreSQL.\n", name="kickoff", description="K.")
    return Path(create(mem, ws, "--modules", "vault,sessions,resources,config")["file"])


def rewrite(src: Path, dst: Path, *, meta_edit=None, entries_edit=None, compress=zipfile.ZIP_DEFLATED) -> Path:
    """Copy a backup, letting the test change meta.json and the (ZipInfo, bytes) entries."""
    with zipfile.ZipFile(src) as zf:
        meta = json.loads(zf.read("meta.json"))
        entries = [(info, zf.read(info)) for info in zf.infolist() if info.filename != "meta.json"]
    if meta_edit:
        meta_edit(meta)
    if entries_edit:
        entries = entries_edit(entries, meta)
    with zipfile.ZipFile(dst, "w", compress) as out:
        for info, data in entries:
            info.compress_type = compress
            out.writestr(info, data)
        out.writestr("meta.json", json.dumps(meta))
    return dst


def entry(name: str, data: bytes = b"x", mode: int = stat.S_IFREG | 0o644) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.external_attr = mode << 16
    return info, data


def declare(meta: dict, module: str, path: str, data: bytes = b"x") -> None:
    import hashlib

    meta["files"].append(
        {"module": module, "path": path, "size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "mtime_ns": 1}
    )


def refused(mem, ws, archive: Path, needle: str) -> None:
    before = tree_hash(ws)
    for args in (["backup", "verify", archive], ["backup", "restore", archive, "--yes"]):
        code, out, err = mem("-w", ws, *args)
        assert code == 2, (args, out, err)
        assert out == "" and "Traceback" not in err
        assert needle in err, err
    assert tree_hash(ws) == before
    assert not (ws.parent / "evil.md").exists() and not Path("/tmp/evil-mem-backup.md").exists()
    assert not [p for p in ws.iterdir() if p.name.startswith(".mem-restore-")]


@pytest.mark.parametrize(
    ("new", "needle"), [(b"MariaDB!!!", "sha256 does not match meta.json"), (b"MySQL", "size differs from meta.json")]
)
def test_tampered_file_is_refused(mem, ws, backup, tmp_path, new, needle):
    def tamper(entries, meta):  # the zip's own CRC is recomputed: only meta.json can tell
        return [(i, d.replace(b"PostgreSQL", new) if i.filename.endswith("kickoff.md") else d) for i, d in entries]

    bad = rewrite(backup, tmp_path / "tampered.zip", entries_edit=tamper)
    (ws / "MEMORY.md").write_text("# Current\n")
    refused(mem, ws, bad, needle)


def test_corrupted_byte_fails_the_zip_crc(mem, ws, backup, tmp_path):
    stored = rewrite(backup, tmp_path / "stored.zip", compress=zipfile.ZIP_STORED)
    raw = bytearray(stored.read_bytes())
    at = raw.index(b"We chose PostgreSQL")
    raw[at] ^= 0x20  # "we chose": same size, so only the CRC and the hash can tell
    stored.write_bytes(bytes(raw))
    refused(mem, ws, stored, "is corrupt (Bad CRC-32")


@pytest.mark.parametrize(
    "name",
    [
        "../evil.md",
        "/tmp/evil-mem-backup.md",
        "vault/memory/../../../evil.md",
        "vault\\..\\..\\evil.md",
        "C:/evil.md",
        "vault//memory/x.md",
    ],
)
def test_zip_slip_names_are_refused(mem, ws, backup, tmp_path, name):
    def add(entries, meta):
        return entries + [entry(name)]

    refused(mem, ws, rewrite(backup, tmp_path / "slip.zip", entries_edit=add), "unsafe entry")


def test_zip_slip_declared_in_meta_is_refused(mem, ws, backup, tmp_path):
    # a consistent meta.json does not make a '..' path acceptable
    def edit(meta):
        declare(meta, "vault", "memory/../../evil.md")

    bad = rewrite(backup, tmp_path / "slip.zip", meta_edit=edit)
    refused(mem, ws, bad, "unsafe path 'memory/../../evil.md'")


def test_symlink_entry_is_refused(mem, ws, backup, tmp_path):
    def add(entries, meta):
        declare(meta, "vault", "memory/link.md", b"/etc/passwd")
        return entries + [entry("vault/memory/link.md", b"/etc/passwd", stat.S_IFLNK | 0o777)]

    refused(mem, ws, rewrite(backup, tmp_path / "link.zip", entries_edit=add), "is a symlink")


def test_folder_entry_is_refused(mem, ws, backup, tmp_path):
    def add(entries, meta):
        return entries + [entry("vault/memory/sub/", b"", stat.S_IFDIR | 0o755)]

    refused(mem, ws, rewrite(backup, tmp_path / "dir.zip", entries_edit=add), "is a folder")


@pytest.mark.parametrize("name", ["vault/memory/2026-05-18/extra.md", "photos/cat.md", "vault/elsewhere/x.md"])
def test_undeclared_entries_are_refused(mem, ws, backup, tmp_path, name):
    def add(entries, meta):
        return entries + [entry(name)]

    refused(
        mem, ws, rewrite(backup, tmp_path / "extra.zip", entries_edit=add), "outside the modules meta.json declares"
    )


def test_entry_outside_its_modules_slots_is_refused(mem, ws, backup, tmp_path):
    def add(entries, meta):
        declare(meta, "vault", "mem_metadata/locks/workspace.lock")
        return entries + [entry("vault/mem_metadata/locks/workspace.lock")]

    refused(mem, ws, rewrite(backup, tmp_path / "slot.zip", entries_edit=add), "outside the slots meta.json declares")


@pytest.mark.parametrize(
    ("module", "slot", "needle"),
    [
        ("vault", "mem_metadata", "lock folder"),
        ("vault", "resource/inner", "overlaps"),
        ("config", "memory", "config holds only"),
        ("vault", ".mem-restore-x", "reserved name"),
    ],
)
def test_hostile_slots_are_refused(mem, ws, backup, tmp_path, module, slot, needle):
    def edit(meta):
        meta["slots"][module].append(slot)

    bad = rewrite(backup, tmp_path / "slots.zip", meta_edit=edit)
    before = tree_hash(ws)
    code, out, err = mem("-w", ws, "backup", "restore", bad, "--yes")
    assert code == 2 and needle in err, err
    assert tree_hash(ws) == before


def test_metadata_slot_on_the_locks_is_refused(mem, ws, tmp_path):
    mem("-w", ws, "reindex")
    good = Path(create(mem, ws, "--modules", "metadata")["file"])

    def edit(meta):
        meta["slots"]["metadata"].append("mem_metadata/locks")

    bad = rewrite(good, tmp_path / "locks.zip", meta_edit=edit)
    code, out, err = mem("-w", ws, "backup", "verify", bad)
    assert code == 2 and "locks/ excluded" in err, err


def test_newer_format_asks_for_an_upgrade(mem, ws, backup, tmp_path):
    def edit(meta):
        meta["format_version"] = 99

    code, out, err = mem("-w", ws, "backup", "verify", rewrite(backup, tmp_path / "new.zip", meta_edit=edit))
    assert code == 2 and "newer mem" in err and "upgrade mem" in err


def test_not_a_backup(run_mem, ws, tmp_path):
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"PK\x03\x04 not really")
    assert "not a readable zip" in assert_clean_failure(run_mem("-w", ws, "backup", "verify", junk), 2)
    plain = tmp_path / "plain.zip"
    with zipfile.ZipFile(plain, "w") as zf:
        zf.writestr("notes.md", "# hi\n")
    assert "no meta.json" in assert_clean_failure(run_mem("-w", ws, "backup", "restore", plain, "--yes"), 2)
    missing = assert_clean_failure(run_mem("-w", ws, "backup", "verify", tmp_path / "none.zip"), 2)
    assert "no backup at" in missing


def test_a_damaged_unrestored_module_still_refuses_the_restore(mem, ws, tmp_path):
    # restoring only the vault still reads every entry: a backup damaged anywhere is suspect
    def tamper(entries, meta):
        return [(i, d.replace(b"limit: 4", b"limit: 9") if i.filename == "config/mem.yaml" else d) for i, d in entries]

    (ws / "mem.yaml").write_text("search:\n  limit: 4\n")
    good = Path(create(mem, ws, "--modules", "vault,config")["file"])
    bad = rewrite(good, tmp_path / "bad.zip", entries_edit=tamper)
    (ws / "MEMORY.md").write_text("# Current\n")
    before = tree_hash(ws)
    code, out, err = mem("-w", ws, "backup", "restore", bad, "--modules", "vault", "--yes")
    assert code == 2 and "config/mem.yaml: sha256 does not match" in err, err
    assert tree_hash(ws) == before
