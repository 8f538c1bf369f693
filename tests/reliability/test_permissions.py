"""Permission faults: files mem may not read, folders it may not change, and EACCES at any
file operation of a backup or a restore. No note may be lost to any of them.

Two ways in:
- real, as a user without privileges (tests/unprivileged.py: uid 65534 when the tests run as root,
  as in CI; else the user running them): a note owned by root with mode 600 and a folder with
  mode 700 under memory/, and a folder of the workspace that user may not change;
- injected, as in the disk-fault campaign: killpoint.py raises EACCES from the N-th file
  operation of `backup create` and `backup restore` (and from every later write).

Oracles: a failure is one `mem: error:` line naming the path, with no zip or staging folder
left; every note of before is where it was, or (after a completed swap) in the pre-restore
snapshot with the same bytes; a rerun once the fault is gone finishes the job. The short run
tries three fault points per job; the long run (-m long) every one.
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest
import sample_vault
from reliability_kit import (
    cli,
    copy_workspace,
    markdown,
    ok,
    old_or_new,
    one_clear_line,
    pinned_env,
    rerun_differences,
    rng,
    run,
    seed,
)
from sample_vault import DAYS, scenarios
from unprivileged import Sandbox, as_root, describe

SEED = seed(20260704)
NOTE = f"memory/{DAYS[1]}/database-notes.md"  # a note of the sample vault, made unreadable
SECRET = "memory/private/salary.md"  # in a folder made unreadable
BK = "bk"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    base = tmp_path_factory.mktemp("perm")
    with pinned_env(base / "home"):
        yield {"base": base, "vault": sample_vault.build(base / "vault", notes_per_day=4), "refs": {}}


@pytest.fixture
def box(world):
    """The sample vault in a folder the unprivileged user owns, plus the note in memory/private/."""
    sb = Sandbox()
    try:
        ws = copy_workspace(world["vault"]["root"], sb.root / "ws")
        sample_vault.write(ws, SECRET, "# Salary\n\nThe kestrelsalary review is in March.\n")
        sb.give()
        sb.ws = ws
        print(f"\nunprivileged runs use {describe()}")
        yield sb
    finally:
        sb.close()


def mem(sb: Sandbox, *args):
    return sb.run("-w", sb.ws, *args, env={"MEM_BACKUP_DIR": str(sb.root / BK)})


def zips(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.zip")) if folder.is_dir() else []


def forbid_both(sb: Sandbox) -> None:
    sb.forbid(sb.ws / NOTE)
    sb.forbid(sb.ws / "memory/private")


def allow_both(sb: Sandbox) -> None:
    sb.allow(sb.ws / "memory/private")
    sb.allow(sb.ws / SECRET)
    sb.allow(sb.ws / NOTE)


def failed_clearly(result, *needles: str) -> str:
    code, out, err = result
    assert code == 1, f"exit {code}\nstdout: {out}\nstderr: {err}"
    assert one_clear_line(code, err) is None, err
    for needle in needles:
        assert needle in err, f"{needle!r} not named: {err}"
    return err


def in_snapshots(folder: Path, rel: str) -> set[bytes]:
    """The versions of `rel` the snapshots in `folder` hold (as root reads them)."""
    found = set()
    for z in zips(folder):
        with zipfile.ZipFile(z) as zf:
            names = set(zf.namelist())
            found |= {zf.read(f"{m}/{rel}") for m in ("vault", "resources", "sessions") if f"{m}/{rel}" in names}
    return found


# Real faults, as a user without privileges -----------------------------------------------------------


def test_create_fails_naming_what_it_cannot_read(box):
    forbid_both(box)
    failed_clearly(mem(box, "backup", "create"), NOTE, "memory/private", "--allow-unreadable")
    assert zips(box.root / BK) == [], "a zip was left behind"
    assert not [p for p in (box.root / BK).rglob("*") if p.is_file()], "a temp file was left behind"


def test_allow_unreadable_marks_the_backup_incomplete_everywhere(box):
    forbid_both(box)
    code, out, err = mem(box, "backup", "create", "--allow-unreadable", "--json")
    assert code == 0, err
    made = json.loads(out)
    want = {NOTE, "memory/private"}
    assert made["incomplete"] is True and {m["path"] for m in made["missing"]} == want, made
    assert all(m["reason"] == "Permission denied" for m in made["missing"])
    assert "not saved, cannot be read" in err and NOTE in err
    code, out, err = mem(box, "backup", "list")
    assert code == 0 and "INCOMPLETE: 2 unreadable path(s) not saved" in out, out
    code, out, err = mem(box, "backup", "list", "--json")
    listed = json.loads(out)["backups"]
    assert [b["incomplete"] for b in listed] == [True] and {m["path"] for m in listed[0]["missing"]} == want
    code, out, err = mem(box, "backup", "verify", made["file"])
    assert code == 0 and "INCOMPLETE: 2 path(s) could not be read" in out, out
    assert f"missing {NOTE} (Permission denied)" in out and "missing memory/private (Permission denied)" in out
    code, out, err = mem(box, "backup", "verify", made["file"], "--json")
    checked = json.loads(out)
    assert checked["ok"] is True and checked["incomplete"] is True
    assert {m["path"] for m in checked["missing"]} == want


def test_restore_never_removes_what_its_snapshot_cannot_read(box):
    """The reported loss: an incomplete backup restored over a workspace whose notes the user cannot read."""
    forbid_both(box)
    code, out, err = mem(box, "backup", "create", "--allow-unreadable", "--json")
    backup = json.loads(out)["file"]
    with box.lifted():
        before = markdown(box.ws)  # the unreadable notes too
    assert NOTE in before and SECRET in before
    err = failed_clearly(mem(box, "backup", "restore", backup, "--yes"), NOTE, "memory/private", "nothing was changed")
    with box.lifted():
        assert markdown(box.ws) == before, "the workspace changed although the restore was refused"
    assert not list(box.ws.glob(".mem-restore-*")) and zips(box.root / BK / "snapshots") == []
    # readable again: the restore goes through, and what the backup lacks is in its snapshot
    allow_both(box)
    code, out, err = mem(box, "backup", "restore", backup, "--yes", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert any("is incomplete: 2 path(s)" in w for w in rep["warnings"]), rep["warnings"]
    assert NOTE not in markdown(box.ws) and SECRET not in markdown(box.ws)
    for rel in (NOTE, SECRET):
        assert before[rel] in in_snapshots(Path(rep["snapshot"]).parent, rel), f"{rel} is in no snapshot"
    ok(mem(box, "backup", "rollback", "--yes"), "rollback")
    assert markdown(box.ws) == before
    code, out, err = mem(box, "search", "kestrelsalary", "--mode", "keyword")
    assert code == 0 and SECRET in out, (out, err)


def test_a_folder_the_user_cannot_change_fails_the_swap_and_everything_is_put_back(box):
    code, out, err = mem(box, "backup", "create", "--json")
    assert code == 0, err
    backup = json.loads(out)["file"]
    sample_vault.write(box.ws, "digest/wiki/falcon-cluster.md", "The falcon cluster moved; kestrelmoved.\n")
    sample_vault.write(box.ws, NOTE, "# Database\n\nRewritten after the backup.\n")
    box.give()
    before = markdown(box.ws)
    # digest/ stays readable (the snapshot saves it) but the user may not move it: the swap fails there
    os.chmod(box.ws / "digest", 0o555)
    if as_root():
        os.chown(box.ws / "digest", 0, 0)
    try:
        failed_clearly(mem(box, "backup", "restore", backup, "--yes"), "digest", "put back as it was")
        assert markdown(box.ws) == before
        assert not list(box.ws.glob(".mem-restore-*")), "staging folder left after a clean undo"
    finally:
        os.chmod(box.ws / "digest", 0o755)
        box.give(box.ws / "digest")
    ok(mem(box, "backup", "restore", backup, "--yes"), "restore once the folder is the user's again")
    assert markdown(box.ws)[NOTE] != before[NOTE]
    assert before[NOTE] in in_snapshots(box.root / BK / "snapshots", NOTE)


# Injected EACCES at every file operation -----------------------------------------------------------------

PERM_JOBS = ("backup-create", "backup-restore")


def _reference(world, name: str):
    if name not in world["refs"]:
        trial = world["base"] / f"ref-{name}"
        ws = copy_workspace(world["vault"]["root"], trial / "ws")
        args, extra = scenarios(world["vault"], ws, trial)[name]
        env = {"KILLPOINT_ROOT": trial, "KILLPOINT_LOG": trial / "events.log", **extra}
        ok(run(args, env=env, killpoint=True), f"{name} reference")
        events = (trial / "events.log").read_text().splitlines()
        world["refs"][name] = (markdown(ws), len(events))
    return world["refs"][name]


def eacces_once(world, name: str, at: int, label: str) -> None:
    new, _ = _reference(world, name)
    trial = world["base"] / label
    ws = copy_workspace(world["vault"]["root"], trial / "ws")
    args, extra = scenarios(world["vault"], ws, trial)[name]
    old = markdown(ws)
    code, out, err = run(
        args, env={"KILLPOINT_ROOT": trial, "KILLPOINT_AT": at, "KILLPOINT_ACTION": "eacces", **extra}, killpoint=True
    )
    where = f"[{name} EACCES from op {at}, seed {SEED}]"
    assert one_clear_line(code, err) is None, f"{where} {err!r}"
    assert code == 0 or "Permission denied" in err, f"{where} the reason is not said: {err!r}"
    after = markdown(ws)
    assert not old_or_new(after, old, new), f"{where} torn Markdown: {old_or_new(after, old, new)}"
    snapshots = trial / "bk" / "snapshots"
    lost = [
        rel
        for rel, data in old.items()
        if after.get(rel) != data
        and data not in in_snapshots(snapshots, rel)
        and not any(
            (s / "old" / rel).is_file() and (s / "old" / rel).read_bytes() == data for s in ws.glob(".mem-restore-*")
        )
    ]
    assert not lost, f"{where} notes neither in place nor in a snapshot: {lost}"
    for z in zips(trial / "out"):  # one published before the fault (its temp name could not be removed)
        ok(cli("backup", "verify", z), f"{where} a zip with a final name does not verify: {z.name}")
    ok(cli(*args, env=extra), f"{where} rerun once the permission is back")
    assert not rerun_differences(name, markdown(ws), new), f"{where} the rerun differs"
    for z in zips(trial / "out"):
        ok(cli("backup", "verify", z), f"{where} verify {z.name}")
    shutil.rmtree(trial, ignore_errors=True)


def campaign(world, points: int | None, salt: str) -> int:
    n = 0
    for name in PERM_JOBS:
        _, total = _reference(world, name)
        ops = list(range(1, total + 1))
        chosen = ops if points is None else sorted(rng(SEED, salt, name).sample(ops, min(points, total)))
        for i, at in enumerate(chosen):
            eacces_once(world, name, at, f"{salt}-{name}-{i}")
            n += 1
    print(f"\npermission faults {salt}: {n} injected EACCES runs")
    return n


def test_injected_permission_faults_short(world):
    campaign(world, 3, "short")


@pytest.mark.long
def test_injected_permission_faults_long(world):
    campaign(world, None, "long")
