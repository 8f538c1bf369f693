"""Restoring: stage the planned slots (planning.py), swap them in, refresh the index.

The new content is written (and hash-checked) into a staging folder inside the
workspace, `.mem-restore-<id>/new`, so a damaged backup is refused before anything
of the workspace is touched. The swap then puts each staged slot in place and the
current one into `.mem-restore-<id>/old`: an atomic exchange where Linux offers it
(else two renames) on one filesystem, undone in reverse if one fails. The caller holds
the workspace, rebuild and index locks throughout and snapshots the current state
before the swap.
"""

from __future__ import annotations

import os
from pathlib import Path

from memcli.errors import JobFailed, MemError
from memcli.index import sync
from memcli.jobs.backup import credentials, layout
from memcli.jobs.backup.archive import STAGING_PREFIX, Progress
from memcli.jobs.backup.cleanup import KEPT
from memcli.jobs.backup.planning import Plan
from memcli.jobs.backup.verification import Archive
from memcli.vault import atomic
from memcli.vault.workspace import Workspace


class SwapIncomplete(JobFailed):
    """A swap failed and could not be fully undone: the staging folder must be kept."""


def interrupted_restores(ws: Workspace) -> dict[str, str]:
    """The staging folders interrupted restores left in the workspace, by name (sorted), each
    with how far its swap got (swap_state); empty when the workspace cannot be listed."""
    try:
        found = sorted(
            e.name for e in os.scandir(ws.root) if e.name.startswith(STAGING_PREFIX) and e.is_dir(follow_symlinks=False)
        )
    except OSError:
        return {}
    return {n: swap_state(ws.root / n) for n in found}


def leftovers(ws: Workspace) -> list[str]:
    return [
        f"{n}/old holds files an earlier restore could not save in its snapshot; move them where you want "
        f"them, then delete {n}"
        if state == "kept"
        else f"{n} was left by an interrupted restore: its old/ folder may hold files the snapshot "
        f"also has; delete it once you have checked"
        for n, state in interrupted_restores(ws).items()
    ]


def _perm(arc: Archive, rec: dict) -> int | None:
    mode = (arc.zf.getinfo(arc.entry(rec)).external_attr >> 16) & 0o777
    return (mode | 0o600) if mode else None  # owner can always read and write what it restores


def _put(target: Path, parts, rec: dict, mode: int | None) -> None:
    """Write one staged file. Not through atomic.py on purpose: nobody sees the staging folder,
    and one os.sync() before the swap replaces a file and a folder fsync per file (~4 ms
    each here, most of a restore's time); what enters the workspace does so by rename."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "wb") as fh:
        for chunk in parts:
            fh.write(chunk)
    if mode:
        os.chmod(target, mode)
    mtime = rec.get("mtime_ns")
    if mtime:
        os.utime(target, ns=(mtime, mtime))


def stage(ws: Workspace, p: Plan, new: Path, warnings: list[str], progress: Progress | None = None) -> int:
    """Write the restored slots under `new`, checking every entry of the backup; returns files written."""
    arc = p.archive
    for rec in arc.meta.get("dirs", []):
        if rec["module"] in p.replace:
            (new / p.target(rec["path"])).mkdir(parents=True, exist_ok=True)
    secret = {r["path"]: r for r in arc.files({"secrets"})} if "secrets" in p.modules else {}
    records = arc.files()
    written = 0
    for i, rec in enumerate(records):
        if progress:
            progress("Restoring", i, len(records))
        module = rec["module"]
        if module not in p.replace:
            for _ in arc.chunks(rec):
                pass  # not restored, still checked: a backup damaged anywhere is refused
        elif module == "config":
            data = arc.read(secret.get(rec["path"], rec))
            if rec["path"] not in secret:
                data = _keep_current_keys(ws, rec, data, warnings)
            _put(new / rec["path"], [data], rec, _perm(arc, rec))
            written += 1
        else:
            _put(new / p.target(rec["path"]), arc.chunks(rec), rec, _perm(arc, rec))
            written += 1
    if progress:
        progress("Restoring", len(records), len(records))
    os.sync()  # every staged byte on disk before anything is swapped in
    return written


def _keep_current_keys(ws: Workspace, rec: dict, data: bytes, warnings: list[str]) -> bytes:
    """A config restored without secrets keeps the API keys the workspace has now."""
    name = rec["path"]
    cur = ws.root / name
    try:
        current = cur.read_text(encoding="utf-8") if cur.is_file() and not cur.is_symlink() else None
    except (OSError, UnicodeDecodeError):
        current = None
    try:
        text, kept = credentials.fill(data.decode("utf-8"), current, name.endswith(".json"))
    except Exception:  # noqa: BLE001 - keep the backup's file as it is rather than fail the restore
        text, kept = data.decode("utf-8", "replace"), 0
    lost = int(rec.get("redacted", 0)) - kept
    if lost > 0:
        warnings.append(
            f"{name}: {lost} API key(s) left out of this backup are now empty; set them again (or use MEM_*_API_KEY)"
        )
    return text.encode("utf-8")


SWAP_MARK = "swap-started"  # in the staging folder: from here on the workspace may mix old and new


def _ino(path: Path) -> int:
    try:
        return os.lstat(path).st_ino
    except OSError:
        return 0


def swap(ws: Workspace, staging: Path, slots: list[str]) -> None:
    """Put each staged slot in place, the current one into staging/old; undo on failure.

    A slot both sides have is exchanged in one step (renameat2), so a kill leaves the old
    folder or the new one, never neither; where the system cannot, two renames."""
    done: list[tuple[str, Path, Path]] = []
    touched = {ws.root}
    slot = ""
    # `mem health` tells a restore killed mid-swap (workspace half replaced) from one killed
    # before (untouched) or after (complete) by this mark: each slot, what had to move, and the
    # inode of the staged slot (after an exchange, the workspace's slot has it)
    plan = [(s, os.path.lexists(ws.root / s), _ino(staging / "new" / s)) for s in slots]
    (staging / SWAP_MARK).write_text(
        "".join(f"{s}\t{int(c)}{int(bool(n))}\t{n}\n" for s, c, n in plan), encoding="utf-8"
    )
    atomic.fsync_dir(staging)
    try:
        for slot in slots:
            cur, new, old = ws.root / slot, staging / "new" / slot, staging / "old" / slot
            if os.path.lexists(cur) and os.path.lexists(new) and atomic.exchange(new, cur):
                done.append(("exchange", new, cur))
                old.parent.mkdir(parents=True, exist_ok=True)
                os.rename(new, old)  # inside the staging folder: only bookkeeping for rollback's reader
                done.append(("rename", new, old))
                touched.add(cur.parent)
                continue
            if os.path.lexists(cur):
                old.parent.mkdir(parents=True, exist_ok=True)
                os.rename(cur, old)
                done.append(("rename", cur, old))
            if os.path.lexists(new):
                cur.parent.mkdir(parents=True, exist_ok=True)
                os.rename(new, cur)
                done.append(("rename", new, cur))
            touched.add(cur.parent)
    except BaseException as exc:
        stuck = _undo(done, ws)
        if stuck:
            why = f" ({exc.strerror})" if isinstance(exc, OSError) and exc.strerror else ""  # e.g. a full disk
            raise SwapIncomplete(
                f"restore failed while replacing {slot}{why} and could not put back "
                f"{', '.join(stuck)}; the previous files are in {staging}/old",
                "run `mem backup rollback` to return to the snapshot taken before",
            ) from exc
        if isinstance(exc, OSError):
            raise JobFailed(
                f"restore failed while replacing {slot} ({exc.strerror}); the workspace was put back as it was"
            ) from None
        raise
    for folder in touched:
        atomic.fsync_dir(folder)


def _undo(done: list[tuple[str, Path, Path]], ws: Workspace) -> list[str]:
    """Reverse the moves made so far; returns the workspace paths that could not be put back."""
    stuck = []
    for how, src, dst in reversed(done):
        try:
            if how == "rename":
                os.rename(dst, src)
            elif not atomic.exchange(src, dst):
                raise OSError("cannot exchange back")
        except OSError:
            where = src if how == "rename" else dst  # (an exchange is staged -> workspace)
            stuck.append(ws.rel(where) if where.is_relative_to(ws.root) else str(where))
    return stuck


SUPERSEDED = "superseded"  # in an old staging folder: a later restore or rollback finished


def supersede(ws: Workspace, current: Path) -> None:
    """Mark the staging folders of earlier interrupted restores: a restore (or rollback) that
    just finished replaced every slot again, so they no longer leave the workspace mixed."""
    for e in os.scandir(ws.root):
        if e.name.startswith(STAGING_PREFIX) and e.is_dir(follow_symlinks=False) and e.path != str(current):
            try:
                (Path(e.path) / SUPERSEDED).touch()
            except OSError:
                pass  # health keeps reporting it: still true that it needs a look


def swap_state(staging: Path) -> str:
    """How far the swap of an interrupted restore got: "none", "partial", "complete" or
    "superseded" (a later restore finished); "kept" when its old/ holds files no snapshot has."""
    if (staging / KEPT).exists():
        return "kept"
    if (staging / SUPERSEDED).exists():
        return "superseded"
    try:
        lines = (staging / SWAP_MARK).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return "none"
    moved = []  # per slot: (anything of it moved, all of it moved)
    for line in lines:
        parts = line.rsplit("\t", 2)
        if len(parts) == 3 and len(parts[1]) == 2 and parts[2].isdigit():
            slot, flags, ino = parts
        else:  # a mark of an earlier version: no inode
            (slot, _, flags), ino = line.rpartition("\t"), ""
        had_cur, had_new = flags[:1] == "1", flags[1:2] == "1"
        if had_cur and had_new and ino.isdigit():  # the staged folder is in place, or on its way
            there = _ino(staging.parent / slot) == int(ino)
            moved.append((there or os.path.lexists(staging / "old" / slot), there))
            continue
        out = had_cur and os.path.lexists(staging / "old" / slot)
        into = had_new and not os.path.lexists(staging / "new" / slot)
        moved.append((out or into, (out or not had_cur) and (into or not had_new)))
    if not any(m for m, _ in moved):
        return "none"
    return "complete" if all(d for _, d in moved) else "partial"


def refresh_index(
    ws: Workspace, reopen, warnings: list[str], progress: Progress | None = None, expect: dict[str, str] | None = None
):
    """Bring the search index in line with the restored Markdown (the caller holds the index lock).

    If that cannot be done now, the snapshot is deleted: the next search or reindex then
    rebuilds from the Markdown instead of answering from an index of the old content.
    `expect`: the folder names the plan restored into, checked against the reopened workspace."""
    target = ws
    try:
        target = reopen()
        if expect:
            got = layout.of_settings(target.settings)
            off = [
                f"{expect[k]}/ is restored but {k} is {got[k]}"
                for k in layout.KEYS
                if k in expect and got[k] != expect[k]
            ]
            if off:
                warnings.append(
                    f"this workspace does not look where the restore put files ({'; '.join(off)}): "
                    f"check mem.yaml and agent.json"
                )
        rep = sync.sync(target, progress=progress)
        if target.settings.shared.enabled:  # the restored notes replace this agent's in the shared index
            from memcli.jobs import team

            team.publish(target, warnings)
        return rep
    except (MemError, OSError) as exc:
        why = exc.line() if isinstance(exc, MemError) else (exc.strerror or str(exc))
        warnings.append(f"search index not rebuilt ({why}); the next `mem search` or `mem reindex` rebuilds it")
        for w in (ws, target):
            try:
                atomic.remove(sync.snapshot_path(w))
            except OSError:
                pass
        return None
