"""A folder or file mem cannot read is named, and the rest of the vault is indexed around it.

The CLI runs as a user who really cannot read it (tests/unprivileged.py: as root the suite
runs mem as uid 65534). A folder it cannot list, or list but not search (mode r--), is a
warning of `mem reindex` (stderr, --json `skipped`), of a search, and a WARN of `mem health`;
notes indexed below it before stay as indexed (as an unreadable file's do) until it can be
read again. A name that is not UTF-8 is the same for every user: it is named, never a
traceback.
"""

from __future__ import annotations

import json
import os
import stat
import zipfile

import pytest
import unprivileged as up
from memtest import assert_clean_failure
from unprivileged import sandbox  # noqa: F401 - a fixture

NOTES = {
    "memory/2026-05-01/open.md": "# Open\n\nThe albatross survey is open to all.\n",
    "digest/wiki/albatross.md": "# Albatross\n\nAlbatross nests are counted in May.\n",
    "memory/private/hidden.md": "# Hidden\n\nThe albatross census password is kept elsewhere.\n",
}


def make(sb, notes=NOTES):
    ws = sb.ws
    for rel, text in notes.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    (ws / "memory").mkdir(exist_ok=True)
    (ws / "digest").mkdir(exist_ok=True)
    sb.give(ws)
    return ws


def mem(sb, ws, *args):
    return sb.run("-w", ws, *args)


def shown_paths(out: str) -> set[str]:
    return {h["path"] for h in json.loads(out)["results"]}


def files_check(sb, ws) -> dict:
    code, out, err = mem(sb, ws, "health", "--json")
    assert code == 0, err
    return next(c for c in json.loads(out)["checks"] if c["name"] == "files")


@pytest.mark.parametrize("how", ["mode000", "root"])
def test_an_unreadable_folder_is_named_and_the_rest_indexed(sandbox, how):
    ws = make(sandbox)
    sandbox.forbid(ws / "memory" / "private", how)
    code, out, err = mem(sandbox, ws, "reindex", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert sorted(rep["added"]) == ["digest/wiki/albatross.md", "memory/2026-05-01/open.md"]
    assert rep["skipped"] == [{"path": "memory/private/", "reason": "folder cannot be read (Permission denied)"}]
    assert err == "mem: warning: skipped memory/private/: folder cannot be read (Permission denied)\n"

    code, out, err = mem(sandbox, ws, "search", "albatross", "--json")
    assert code == 0 and shown_paths(out) == {"digest/wiki/albatross.md", "memory/2026-05-01/open.md"}
    assert "skipped memory/private/: folder cannot be read" in err  # a search names it too

    check = files_check(sandbox, ws)
    assert check["status"] == "warn"
    assert check["figures"]["unreadable"] == rep["skipped"]
    assert check["message"].startswith("1 out of reach (e.g. memory/private/: folder cannot be read")
    code, out, _ = mem(sandbox, ws, "health")
    assert "    memory/private/: folder cannot be read (Permission denied)" in out.splitlines()
    assert "healthy, 1 warning" in out


def test_a_folder_made_unreadable_keeps_its_indexed_notes_until_it_is_read_again(sandbox):
    ws = make(sandbox)
    assert mem(sandbox, ws, "reindex")[0] == 0
    private = ws / "memory" / "private"
    sandbox.forbid(private)
    code, out, err = mem(sandbox, ws, "reindex", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["deleted"] == [] and rep["files"] == 3  # not seen is not deleted
    assert [s["path"] for s in rep["skipped"]] == ["memory/private/"]
    code, out, err = mem(sandbox, ws, "search", "census", "password", "--json")
    assert "memory/private/hidden.md" in shown_paths(out)

    sandbox.allow(private)  # readable again: nothing to do, nothing to say
    code, out, err = mem(sandbox, ws, "reindex", "--json")
    assert code == 0 and err == "", err
    assert json.loads(out)["added"] == json.loads(out)["deleted"] == []

    sandbox.forbid(private)  # a full rebuild indexes what it can read now
    code, out, err = mem(sandbox, ws, "reindex", "--full", "--json")
    assert code == 0 and json.loads(out)["files"] == 2
    code, out, _ = mem(sandbox, ws, "search", "census", "password", "--json")
    assert "memory/private/hidden.md" not in shown_paths(out)


def test_a_folder_that_lists_but_cannot_be_searched(sandbox):
    ws = make(sandbox)
    os.chmod(ws / "memory" / "private", 0o644)  # r-- : names, but no stat and no open
    code, out, err = mem(sandbox, ws, "reindex", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["skipped"] == [{"path": "memory/private/", "reason": "folder cannot be searched (Permission denied)"}]
    assert rep["files"] == 2
    assert files_check(sandbox, ws)["status"] == "warn"


def test_an_unreadable_file_is_named_by_health_not_taken_for_a_change(sandbox):
    ws = make(sandbox)
    sandbox.forbid(ws / "memory" / "2026-05-01" / "open.md")
    code, out, err = mem(sandbox, ws, "reindex", "--json")
    assert code == 0, err
    assert json.loads(out)["skipped"] == [
        {"path": "memory/2026-05-01/open.md", "reason": "unreadable: Permission denied"}
    ]
    check = files_check(sandbox, ws)
    assert check["status"] == "warn"
    assert check["figures"]["unreadable"] == [{"path": "memory/2026-05-01/open.md", "reason": "file cannot be read"}]
    assert check["figures"]["stale"] == 0 and "changed since indexing" not in check["message"]


def test_the_unprivileged_user_really_cannot_read_it(sandbox):
    """The premise of this file: were the CLI able to read a mode-000 folder, nothing here would test anything."""
    ws = make(sandbox)
    sandbox.forbid(ws / "memory" / "private")
    code, out, err = mem(sandbox, ws, "get", "memory/private/hidden.md")
    assert code != 0 and "census password" not in out


def test_the_child_is_a_user_without_privileges(sandbox):
    """The premise of every test with `sandbox`: mem runs as a user who cannot read a note
    root made with mode 600 (as root; else mode 000), and reads it once it is given back."""
    ws = make(sandbox)
    note = ws / "memory" / "2026-05-01" / "open.md"
    sandbox.forbid(note)
    if up.as_root():
        assert (note.stat().st_uid, stat.S_IMODE(note.stat().st_mode)) == (0, 0o600)
        seen = up.facts()
        assert (seen["uid"], seen["euid"], seen["gid"], seen["groups"]) == (up.UID, up.UID, up.GID, [])
        assert seen["caps"] and not any(int(v, 16) for v in seen["caps"].values()), seen["caps"]
        assert seen["forbidden"] == "Permission denied"
    code, out, err = mem(sandbox, ws, "get", "memory/2026-05-01/open.md")
    assert code != 0 and "albatross" not in out and "Permission denied" in err, (code, out, err)
    sandbox.allow(note)  # the control: the same command reads it once it may
    code, out, err = mem(sandbox, ws, "get", "memory/2026-05-01/open.md")
    assert code == 0 and "albatross survey" in out, err


def test_a_name_that_is_not_utf8_is_named_and_the_rest_indexed(ws, note, run_mem):
    note(ws, "memory/2026-05-01/fine.md", "# Fine\n\nPenguins waddle home.\n")
    day = os.fsencode(ws / "memory" / "2026-05-01")
    with open(day + b"/bad\xffname.md", "wb") as fh:
        fh.write(b"# Bad name\n\npenguins too\n")
    os.mkdir(os.fsencode(ws / "memory") + b"/fold\xfe")
    with open(os.fsencode(ws / "memory") + b"/fold\xfe/inner.md", "wb") as fh:
        fh.write(b"# Inner\n\npenguins inside\n")
    code, out, err = run_mem("-w", ws, "reindex", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["added"] == ["memory/2026-05-01/fine.md"]
    assert {"path": "memory/2026-05-01/bad\\xffname.md", "reason": "file name is not valid UTF-8; rename it"} in rep[
        "skipped"
    ]
    assert {"path": "memory/fold\\xfe/", "reason": "folder name is not valid UTF-8; rename it"} in rep["skipped"]
    assert "Traceback" not in err and "skipped memory/2026-05-01/bad\\xffname.md" in err
    code, out, err = run_mem("-w", ws, "search", "penguins")
    assert code == 0 and "memory/2026-05-01/fine.md" in out
    code, out, err = run_mem("-w", ws, "health", "--json")
    files = next(c for c in json.loads(out)["checks"] if c["name"] == "files")
    assert files["status"] == "warn" and len(files["figures"]["unreadable"]) == 2


def test_resource_scan_names_an_unreadable_folder_and_keeps_its_notes(sandbox):
    ws = make(
        sandbox,
        {"resource/2026-05-01/open.txt": "Open resource.\n", "resource/private/secret.txt": "Private resource.\n"},
    )
    code, out, err = mem(sandbox, ws, "resource", "scan", "--json")
    assert code == 0, err
    notes = {n["resource"]: n["note"] for n in json.loads(out)["notes"]}
    kept = ws / notes["resource/private/secret.txt"]
    assert kept.is_file()
    sandbox.forbid(ws / "resource" / "private")
    (ws / "resource" / "2026-05-01" / "new.txt").write_text("A new resource.\n", encoding="utf-8")
    sandbox.give(ws / "resource" / "2026-05-01")
    code, out, err = mem(sandbox, ws, "resource", "scan", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["resources"]["deleted"] == [] and rep["resources"]["added"] == ["resource/2026-05-01/new.txt"]
    assert {"path": "resource/private/", "reason": "folder cannot be read (Permission denied)"} in rep["skipped"]
    assert kept.is_file(), "the note of a resource it could not see was removed"


def test_dream_skips_what_it_cannot_read_and_dreams_the_rest(sandbox):
    day = "memory/2026-06-01"
    ws = make(
        sandbox,
        {
            f"{day}/good.md": "# Good\n\n## Facts\n- User: I prefer jasmine tea in the afternoon.\n",
            f"{day}/locked.md": "# Locked\n\n## Facts\n- User: My locker code is on a card.\n",
            f"{day}/sub/deeper.md": "# Deeper\n\n## Facts\n- User: My kayak is bright orange.\n",
            "memory/2026-06-02/later.md": "# Later\n\n## Facts\n- User: The regatta starts at nine.\n",
            "mem.yaml": "dream_min_statements: 1\n",  # each statement founds a node: what was read is seen
        },
    )
    with open(ws / day / "latin1.md", "wb") as fh:
        fh.write("# Caf\u00e9\n\n## Facts\n- User: I like caf\u00e9 au lait.\n".encode("latin-1"))
    (ws / day / "brokenfm.md").write_text(
        "---\nname: [oops\n---\n# Broken\n\n## Facts\n- User: I own a red canoe.\n", encoding="utf-8"
    )
    sandbox.give(ws)
    sandbox.forbid(ws / day / "locked.md")
    sandbox.forbid(ws / day / "sub")
    code, out, err = mem(sandbox, ws, "dream", "--date", "2026-06-02", "--json")
    assert code == 0, err
    rep = json.loads(out)
    warnings = " | ".join(rep["warnings"])
    assert f"skipped {day}/locked.md: unreadable: Permission denied" in warnings
    assert f"skipped {day}/sub/: folder cannot be read (Permission denied)" in warnings
    assert f"skipped {day}/latin1.md: not valid UTF-8 (line 1, byte 5)" in warnings
    assert f"skipped {day}/brokenfm.md: broken frontmatter" in warnings
    assert len(rep["warnings"]) == len(set(rep["warnings"])) == 4, rep["warnings"]  # each named once
    assert rep["status"] == "completed_with_warnings"
    digest = " ".join(p.read_text(encoding="utf-8") for p in (ws / "digest").rglob("*.md"))
    assert "jasmine tea" in digest and "regatta" in digest
    assert "canoe" not in digest and "kayak" not in digest and "locker" not in digest

    (ws / day / "brokenfm.md").write_text(
        "---\nname: fixed\n---\n# Fixed\n\n## Facts\n- User: I own a red canoe.\n", encoding="utf-8"
    )
    code, out, err = mem(sandbox, ws, "dream", "--date", "2026-06-02", "--json")  # not checkpointed: read again
    assert code == 0, err
    assert "canoe" in " ".join(p.read_text(encoding="utf-8") for p in (ws / "digest").rglob("*.md"))


def test_dream_leaves_a_node_it_cannot_parse_as_it_is(ws, note, run_mem):
    node = ws / "digest" / "personal" / "coffee-morning.md"
    node.parent.mkdir(parents=True)
    original = (
        "---\nname: coffee-morning\ndescription: [never closed\n---\n# Coffee morning\n\n"
        "- User: I prefer coffee in the morning. ([[memory/2026-05-01/x.md]])\n"
    )
    node.write_text(original, encoding="utf-8")
    note(
        ws,
        "memory/2026-06-01/a.md",
        "# A\n\n## Facts\n- User: I prefer coffee in the morning.\n"
        "- User: I prefer coffee in the morning with oat milk.\n",
    )
    code, out, err = run_mem("-w", ws, "dream", "--date", "2026-06-01", "--json")
    assert code == 0, err
    assert node.read_text(encoding="utf-8") == original  # never rewritten without its frontmatter
    assert any(
        w.startswith("left digest/personal/coffee-morning.md as it is: broken frontmatter")
        for w in json.loads(out)["warnings"]
    )


def _bad_names(ws) -> dict[bytes, bytes]:
    """Files under names that are not UTF-8 (a file, a folder, a resource), written as bytes."""
    made = {
        os.fsencode(ws / "memory" / "2026-05-01") + b"/caf\xe9.md": b"# Cafe\n\nThe caf\xc3\xa9 opens at eight.\n",
        os.fsencode(ws / "memory") + b"/fold\xfe/inner.md": b"# Inner\n\nA note in a folder.\n",
        os.fsencode(ws / "resource") + b"/data\xff.csv": b"a,b\n1,2\n",
    }
    for path, data in made.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
    return made


def test_backup_names_a_name_that_is_not_utf8_and_saves_the_rest(ws, note, run_mem, pinned_env):
    note(ws, "memory/2026-05-01/fine.md", "# Fine\n\nPenguins waddle home.\n")
    made = _bad_names(ws)
    backups = pinned_env / ".mem" / "backups"
    code, out, err = run_mem("-w", ws, "backup", "create")
    line = assert_clean_failure((code, out, err), 1)
    assert (
        "cannot read memory/2026-05-01/caf\\xe9.md (file name is not valid UTF-8; rename it), "
        "memory/fold\\xfe (folder name is not valid UTF-8; rename it), "
        "resource/data\\xff.csv (file name is not valid UTF-8; rename it);"
    ) in line
    assert "rename them, or pass --allow-unreadable" in line
    assert not list(backups.rglob("*.zip")), "a zip was written although the backup would be incomplete"

    code, out, err = run_mem("-w", ws, "backup", "create", "--allow-unreadable", "--json")
    assert code == 0 and "Traceback" not in err, err
    rep = json.loads(out)
    assert rep["incomplete"] is True
    assert sorted((m["path"], m["reason"]) for m in rep["missing"]) == [
        ("memory/2026-05-01/caf\\xe9.md", "file name is not valid UTF-8; rename it"),
        ("memory/fold\\xfe", "folder name is not valid UTF-8; rename it"),
        ("resource/data\\xff.csv", "file name is not valid UTF-8; rename it"),
    ]
    assert err.count("mem: warning: not saved, cannot be read:") == 3
    with zipfile.ZipFile(rep["file"]) as zf:  # the rest is saved
        assert zf.read("vault/memory/2026-05-01/fine.md") == b"# Fine\n\nPenguins waddle home.\n"
        assert all(n.isascii() for n in zf.namelist()), zf.namelist()
    code, out, err = run_mem("-w", ws, "backup", "verify", rep["file"])
    assert code == 0 and out.startswith("OK ") and "missing memory/fold\\xfe" in out, (out, err)

    # a full restore would replace memory/ whole: its snapshot cannot save them, so it is refused
    code, out, err = run_mem("-w", ws, "backup", "restore", rep["file"], "--yes")
    line = assert_clean_failure((code, out, err), 1)
    assert "restore refused: cannot read memory/2026-05-01/caf\\xe9.md" in line and "nothing was changed" in line
    for path, data in made.items():
        with open(path, "rb") as fh:
            assert fh.read() == data


def test_backup_leaves_out_a_metadata_name_that_is_not_utf8(ws, note, run_mem, pinned_env):
    """mem writes no such name in its metadata folder: not its own, it is named and left alone,
    and a restore of the metadata goes round it."""
    note(ws, "memory/2026-05-01/fine.md", "# Fine\n\nPenguins waddle home.\n")
    assert run_mem("-w", ws, "reindex")[0] == 0
    assert (ws / "mem_metadata").is_dir()
    junk = os.fsencode(ws / "mem_metadata") + b"/junk\xff"
    with open(junk, "wb") as fh:
        fh.write(b"not mem's\n")
    code, out, err = run_mem("-w", ws, "backup", "create", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["incomplete"] is False
    assert {"path": "mem_metadata/junk\\xff", "reason": "name is not valid UTF-8: not mem's metadata, left out"} in rep[
        "skipped"
    ]
    code, out, err = run_mem("-w", ws, "backup", "restore", rep["file"], "--modules", "metadata", "--yes")
    assert code == 0 and "Traceback" not in err, err
    with open(junk, "rb") as fh:
        assert fh.read() == b"not mem's\n"
    code, out, err = run_mem("-w", ws, "search", "penguins")
    assert code == 0 and "memory/2026-05-01/fine.md" in out
