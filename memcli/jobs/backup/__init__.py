"""Backup job: create, list, verify, restore, roll back and prune workspace backups.

A backup is one self-describing zip (see backup_archive). The CLI resolves the
backup folder (config `backup_dir`, default ~/.mem/backups) and passes it in;
pre-restore snapshots go to its `snapshots/` subfolder. Restores hold the
workspace lock (then the rebuild and index locks), so they refuse to run, exit
75, while another mem job writes.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import time
import zipfile
from pathlib import Path

from memcli.errors import BadInput
from memcli.index.freshness import REBUILD_BUSY, index_lock
from memcli.jobs.backup import cleanup, planning, restoring
from memcli.jobs.backup.archive import (
    CONFIG_FILES,
    DEFAULT_MODULES,
    META,
    MODULES,
    STAGING_PREFIX,
    Progress,
    module_slots,
    within,
    write,
)
from memcli.jobs.backup.report import CreateReport, PruneReport, RestoreReport
from memcli.jobs.backup.restoring import interrupted_restores
from memcli.jobs.backup.verification import missing, open_archive, verify
from memcli.vault import atomic, lock
from memcli.vault.lock import Lock
from memcli.vault.workspace import Workspace

__all__ = [
    "DEFAULT_MODULES",
    "create",
    "interrupted_restores",
    "latest_snapshot",
    "listing",
    "parse_modules",
    "prune",
    "restore",
    "rollback",
    "verify",
]

SNAPSHOTS = "snapshots"


def parse_modules(text: str | None) -> list[str] | None:
    """`vault,sessions` -> ["vault", "sessions"]; None stays None (the command's default)."""
    if text is None:
        return None
    names = [m.strip().lower() for m in text.split(",") if m.strip()]
    bad = [m for m in names if m not in MODULES]
    if bad or not names:
        raise BadInput(f"unknown module {', '.join(bad) or '(none given)'}", f"choose from {','.join(MODULES)}")
    return [m for m in MODULES if m in names]


def create(
    ws: Workspace,
    folder: Path,
    modules: list[str] | None = None,
    *,
    note: str = "",
    progress: Progress | None = None,
    allow_unreadable: bool = False,
) -> CreateReport:
    modules = list(modules or DEFAULT_MODULES)
    if "secrets" in modules and "config" not in modules:
        raise BadInput("secrets are saved with the config module", "add config to --modules")
    slots = module_slots(ws)
    real = os.path.realpath(folder)
    for m in modules:
        for slot in slots[m] if m not in ("config", "secrets") else []:
            if within(real, os.path.realpath(ws.root / slot)):
                raise BadInput(
                    f"the backup folder {folder} is inside {slot}, which the backup saves",
                    "choose another folder with --out or backup_dir",
                )
    path, meta = write(
        ws,
        Path(folder),
        modules,
        kind="backup",
        note=note,
        slots=slots,
        progress=progress,
        allow_unreadable=allow_unreadable,
    )
    return CreateReport(path, meta)


def summary(path: Path) -> dict:
    """What `list` shows of one zip: its meta.json without the file table, or the error."""
    out: dict = {"file": str(path), "name": path.name}
    try:
        out["size"] = path.stat().st_size
        with zipfile.ZipFile(path) as zf:
            if zf.getinfo(META).file_size > (256 << 20):
                raise ValueError("meta.json too large")
            meta = json.loads(zf.read(META))
        files = meta["files"]
        out.update({k: meta.get(k) for k in ("kind", "created_at", "workspace", "mode", "modules", "note")})
        out.update(files=len(files), bytes=sum(int(f.get("size", 0)) for f in files))
        out["missing"] = missing(meta)
        out["incomplete"] = bool(out["missing"])
    except (OSError, KeyError, ValueError, TypeError, AttributeError, zipfile.BadZipFile, RecursionError) as exc:
        out["error"] = f"not a readable mem backup ({type(exc).__name__ if isinstance(exc, RecursionError) else exc})"
    return out


def listing(folder: Path, *, snapshots: bool = True) -> list[dict]:
    """Backups in `folder` (and its snapshots/), oldest first; unreadable ones carry an error."""
    found = []
    for d in [folder, folder / SNAPSHOTS] if snapshots else [folder]:
        if d.is_dir():
            found += [summary(p) for p in d.glob("*.zip") if not p.name.startswith(".") and p.is_file()]
    return sorted(found, key=lambda s: (str(s.get("created_at") or ""), s["name"]))


def describe(ws: Workspace, file: Path, modules: list[str] | None) -> planning.Plan:
    """The plan a restore would follow (checked, nothing written); for the confirmation prompt."""
    with open_archive(file) as arc:
        return planning.plan(ws, arc, modules)


def restore(
    ws: Workspace,
    file: Path,
    snapshot_dir: Path,
    reopen,
    *,
    modules: list[str] | None = None,
    wait: float = 0.0,
    progress: Progress | None = None,
) -> RestoreReport:
    """Full restore (modules None) or custom restore of `modules`; `reopen()` gives the workspace
    with its restored config, for the index refresh."""
    with open_archive(file) as arc:
        return _apply(ws, planning.plan(ws, arc, modules), snapshot_dir, reopen, wait, progress, "backup-restore")


def latest_snapshot(ws: Workspace, snapshot_dir: Path) -> Path:
    mine = [
        s
        for s in listing(snapshot_dir, snapshots=False)
        if s.get("kind") == "snapshot" and s.get("workspace") == str(ws.root)
    ]
    if not mine:
        raise BadInput(f"no snapshot of {ws.root} in {snapshot_dir}", "snapshots are taken by `mem backup restore`")
    return Path(mine[-1]["file"])


def rollback(
    ws: Workspace, snapshot_dir: Path, reopen, *, wait: float = 0.0, progress: Progress | None = None
) -> RestoreReport:
    """Restore the newest pre-restore snapshot of this workspace (itself snapshotted first,
    so a second rollback undoes the first)."""
    with open_archive(latest_snapshot(ws, snapshot_dir)) as arc:
        return _apply(
            ws, planning.plan(ws, arc, arc.meta["modules"]), snapshot_dir, reopen, wait, progress, "backup-rollback"
        )


def _apply(ws, plan: planning.Plan, snapshot_dir: Path, reopen, wait: float, progress, job: str) -> RestoreReport:
    t0 = time.perf_counter()
    rep = RestoreReport(
        plan.archive.path, plan.modules, plan.full, source=plan.source, workspace=str(ws.root), moves=plan.renamed()
    )
    rep.warnings += plan.warnings
    # lock order as everywhere: workspace, then rebuild (no reindex may write mem_metadata meanwhile), then index
    with (
        Lock(ws.lock_path(lock.WORKSPACE), job, wait=wait),
        Lock(ws.lock_path(lock.REBUILD), job, wait=wait, busy_message=REBUILD_BUSY),
        index_lock(ws, job, wait=max(wait, lock.WAIT)),
    ):
        rep.warnings += restoring.leftovers(ws)
        staging = ws.root / f"{STAGING_PREFIX}{secrets.token_hex(4)}"
        staging.mkdir(mode=0o700)
        try:
            rep.files = restoring.stage(ws, plan, staging / "new", rep.warnings, progress)
            verb = "rollback to" if job == "backup-rollback" else "restoring"
            rep.snapshot, snap = _snapshot(ws, plan, snapshot_dir, f"before {verb} {plan.archive.path.name}", progress)
            restoring.swap(ws, staging, plan.slots())
            restoring.supersede(ws, staging)
        except restoring.SwapIncomplete:
            raise  # keep the staging folder: its old/ holds what could not be put back
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        # from here on old/ holds what the swap moved out: only what the snapshot holds is deleted
        rep.cleanup = cleanup.sort_out(ws.root, staging, snap, plan.replace.get("metadata", []))
        rep.warnings += rep.cleanup.warnings(staging)
        rep.index = restoring.refresh_index(ws, reopen, rep.warnings, progress, expect=plan.layout)
    # after the locks: no other job looks in here
    cleanup.finish(staging, rep.cleanup)
    if not rep.cleanup.kept:  # what is left the snapshot holds (files that could not be deleted)
        shutil.rmtree(staging, ignore_errors=True)
    rep.seconds = time.perf_counter() - t0
    return rep


def _snapshot(ws: Workspace, plan: planning.Plan, folder: Path, note: str, progress) -> tuple[Path, dict]:
    """Save what the restore replaces (API keys included, so a rollback gives them back). Any
    file that cannot be read refuses the restore: nothing may be replaced that it does not hold."""
    current = module_slots(ws)
    modules = set(plan.replace) | ({"secrets"} if "config" in plan.replace else set())
    slots = {m: planning.merge_slots(current[m], plan.replace.get(m, [])) for m in modules}
    slots.update({m: list(CONFIG_FILES) for m in ("config", "secrets") if m in modules})
    return write(ws, folder, modules, kind="snapshot", note=note, slots=slots, progress=progress)


def prune(ws: Workspace, folder: Path, keep: int) -> PruneReport:
    """Keep the `keep` newest backups and the `keep` newest snapshots of this workspace.

    Backups of other workspaces and files that are not readable mem backups are never touched."""
    if keep < 1:
        raise BadInput("--keep must be at least 1")
    rep = PruneReport()
    for kind, d in (("backup", folder), ("snapshot", folder / SNAPSHOTS)):
        mine = [
            s
            for s in listing(d, snapshots=False)
            if "error" not in s and s.get("kind") == kind and s.get("workspace") == str(ws.root)
        ]
        for s in mine[:-keep]:
            atomic.remove(Path(s["file"]))
            rep.deleted.append(s["file"])
        rep.kept += [s["file"] for s in mine[-keep:]]
    return rep
