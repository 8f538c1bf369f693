"""A full disk and a read-only file system: every file stays whole, the exit says why.

Two ways in:
- injected, everywhere: killpoint.py raises the operating system's ENOSPC or EROFS from the
  N-th file operation of a writing job (and from every later write, as a full disk would);
- real, where this sandbox allows `mount` (root): a small tmpfs filled to the last byte, then
  remounted read-only. Skipped elsewhere; the injected faults still run.

Each run must exit non-zero with one `mem: error:` line that names the reason, leave every
Markdown file byte-identical to its old or new version, leave no temp file behind after ENOSPC,
and a rerun once the fault is gone must finish the job. The short run tries one fault point per
job and error; the long run five.
"""

from __future__ import annotations

import os
import shutil
import subprocess
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
    temp_files,
)
from sample_vault import scenarios

SEED = seed(20260629)
REASON = {"enospc": "No space left on device", "erofs": "Read-only file system"}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    base = tmp_path_factory.mktemp("disk")
    with pinned_env(base / "home"):
        yield {"base": base, "vault": sample_vault.build(base / "vault", notes_per_day=4), "refs": {}}


def _trial(world, label: str):
    trial = world["base"] / label
    return trial, copy_workspace(world["vault"]["root"], trial / "ws")


def _reference(world, name: str):
    """The job run to completion, counting its file operations; its Markdown is the new version."""
    if name not in world["refs"]:
        trial, ws = _trial(world, f"ref-{name}")
        args, extra = scenarios(world["vault"], ws, trial)[name]
        env = {"KILLPOINT_ROOT": trial, "KILLPOINT_LOG": trial / "events.log", **extra}
        ok(run(args, env=env, killpoint=True), f"{name} reference")
        events = [line.split(" ", 2)[1] for line in (trial / "events.log").read_text().splitlines()]
        world["refs"][name] = (markdown(ws), events)
    return world["refs"][name]


def fault_once(world, name: str, fault: str, at: int, label: str) -> None:
    new, _ = _reference(world, name)
    trial, ws = _trial(world, label)
    args, extra = scenarios(world["vault"], ws, trial)[name]
    old = markdown(ws)
    env = {"KILLPOINT_ROOT": trial, "KILLPOINT_AT": at, "KILLPOINT_ACTION": fault, **extra}
    code, out, err = run(args, env=env, killpoint=True)
    where = f"[{name} {fault} from op {at}, seed {SEED}]"
    assert code != 0, f"{where} exit 0 although a write failed: {err}"
    assert one_clear_line(code, err) is None, f"{where} {err!r}"
    assert REASON[fault] in err, f"{where} the reason is not said: {err!r}"
    bad = old_or_new(markdown(ws), old, new)
    assert not bad, f"{where} torn Markdown: {bad}"
    if fault == "enospc":
        assert not temp_files(ws), f"{where} temp files left: {temp_files(ws)}"
    ok(cli(*args, env=extra), f"{where} rerun with room again")
    diff = rerun_differences(name, markdown(ws), new)
    assert not diff, f"{where} rerun differs: {diff}"
    ok(cli("-w", ws, "reindex"), f"{where} reindex")  # an index write that failed is repaired here
    code, out, err = cli("-w", ws, "health")
    assert code == 0, f"{where} unhealthy after the rerun and a reindex: {out}"
    shutil.rmtree(trial, ignore_errors=True)


def campaign(world, points: int, salt: str) -> int:
    n = 0
    for name in scenarios({"conv_new": "", "conv_more": "", "backup": ""}, Path("."), Path(".")):
        _, events = _reference(world, name)
        for fault in REASON:
            r = rng(SEED, salt, name, fault)
            # a full disk does not stop a removal: ENOSPC starts at a write (at a removal that is
            # a job's last file operation, it would never show)
            ops = [
                i
                for i, ev in enumerate(events, 1)
                if fault != "enospc" or ev not in ("os.remove", "os.rmdir", "shutil.rmtree")
            ]
            for i, at in enumerate(sorted(r.sample(ops, min(points, len(ops))))):
                fault_once(world, name, fault, at, f"{salt}-{name}-{fault}-{i}")
                n += 1
    print(f"\ndisk faults {salt}: {n} injected ENOSPC/EROFS runs")
    return n


def test_injected_disk_full_and_read_only_short(world):
    campaign(world, 1, "short")


@pytest.mark.long
def test_injected_disk_full_and_read_only_long(world):
    campaign(world, 5, "long")


# A real small file system --------------------------------------------------------------------------


@pytest.fixture
def tmpfs(tmp_path):
    """A 3 MiB tmpfs at tmp_path/mnt, unmounted afterwards; skipped where mount is not allowed."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m,mode=0755", "tmpfs", str(mnt)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"mount not permitted here: {proc.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _fill(folder: Path) -> Path:
    """Take every free byte of the file system holding `folder`."""
    filler = folder / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        for size in (65536, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


def test_real_full_disk_then_read_only_mount(world, tmpfs, tmp_path):
    v = world["vault"]
    ws = copy_workspace(v["root"], tmpfs / "ws")
    before = markdown(ws)
    filler = _fill(tmpfs)
    for args in (
        ["ingest", v["conv_new"], "-s", "s-full", "--force"],
        ["remember", "a fact for a full disk"],
        ["reindex", "--full"],
    ):
        code, out, err = run(["-w", ws, *args])
        assert code == 1 and one_clear_line(code, err) is None, (args, code, err)
        assert "No space left on device" in err and "free some disk space" in err, err
        assert markdown(ws) == before, f"{args}: Markdown changed on a full disk"
        assert not temp_files(ws), temp_files(ws)
    code, out, err = run(["-w", ws, "search", "falcon"])
    assert code == 0 and "falcon" in out, err  # reading still works
    filler.unlink()
    ok(run(["-w", ws, "ingest", v["conv_new"], "-s", "s-full", "--force"]), "ingest with room again")
    after_ingest = markdown(ws)
    proc = subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"remount read-only not permitted: {proc.stderr.decode().strip()}")
    try:
        for args in (
            ["remember", "a fact for a read-only disk"],
            ["resource", "scan"],
            ["ingest", v["conv_more"], "-s", "s-old", "--force"],
            ["dream", "--date", sample_vault.DAYS[1], "--max-units", "50"],
        ):
            code, out, err = run(["-w", ws, *args])
            assert code == 1 and one_clear_line(code, err) is None, (args, code, err)
            assert "Read-only file system" in err, err
        code, out, err = run(["-w", ws, "search", "falcon"])
        assert code == 0 and "falcon" in out, err
        assert markdown(ws) == after_ingest
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(tmpfs)], capture_output=True)
