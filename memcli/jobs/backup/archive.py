"""The backup file: one zip holding `<module>/<workspace path>` entries and a meta.json.

Modules map to "slots", top-level workspace paths replaced whole on restore:
vault = MEMORY.md, daily_dir, digest_dir; sessions = session_dir, mem_session_dir;
resources = resource_dir; metadata = each child of metadata_dir but locks/ (a restore
must never swap the lock it holds) and watch/ (a running watcher's journal: its cookie
folder must stay the one it watches); config and secrets = mem.yaml, agent.json. Extra paths
inside the workspace are vault; those outside it are left out (listed as skipped): mem
only reads them, so a restore never writes there.
meta.json lists every file with its size, sha256 and mtime_ns (restored, so the
index sees a restored file as unchanged only when it really is) and every folder.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from memcli import __version__
from memcli.errors import JobFailed
from memcli.jobs.backup import layout
from memcli.jobs.backup.credentials import CONFIG_FILES, config_entries
from memcli.vault import atomic
from memcli.vault.workspace import Workspace
from memcli.watch import journal
from memcli.watch.walk import shown, utf8_name

FORMAT = "mem-backup"
FORMAT_VERSION = 1
MODULES = ("vault", "sessions", "resources", "metadata", "config", "secrets")
DEFAULT_MODULES = ("vault", "sessions", "resources", "metadata", "config")
FULL_MODULES = frozenset({"vault", "sessions", "resources", "config"})  # metadata can be rebuilt
META = "meta.json"
STAGING_PREFIX = ".mem-restore-"
# Already compressed: deflating them again costs CPU and saves nothing.
STORED_SUFFIXES = (".zst", ".npz", ".gz", ".zip", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".pdf", ".mp3", ".mp4")
CHUNK = 1 << 20
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
NAME_FIX = "; rename it"  # the end of the reason given for a name that is not UTF-8 (as the walk words it)

Progress = Callable[[str, int, int], None]


def name_problem(rel: str) -> str | None:
    """Why `rel` is not a safe relative posix path (zip-slip and friends), or None."""
    if not rel:
        return "empty name"
    if rel.startswith("/") or "\\" in rel:
        return "absolute path or backslash"
    if _CONTROL.search(rel):
        return "control character in the name"
    parts = rel.split("/")
    if parts[0].endswith(":"):
        return "drive letter"
    if any(p in ("", ".", "..") for p in parts):
        return "'..', '.' or an empty segment"
    if len(rel.encode("utf-8", "surrogatepass")) > 4096:
        return "name too long"
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "name is not UTF-8"
    return None


def within(path: str, slot: str) -> bool:
    return path == slot or path.startswith(slot + "/")


def module_slots(ws: Workspace) -> dict[str, list[str]]:
    """Each module's slots in this workspace, as configured now."""
    c = ws.settings
    vault = ["MEMORY.md", layout.rel_dir(c.daily_dir), layout.rel_dir(c.digest_dir)]
    for extra in ws.extra_roots():  # OpenClaw extra notes inside the workspace are vault too
        rel = extra.rel
        if (
            extra.inside
            and not extra.problem
            and name_problem(rel) is None
            and not any(within(rel, s) or within(s, rel) for s in vault)
        ):
            vault.append(rel)
    mdir = layout.rel_dir(c.metadata_dir)
    children = [n for n in _metadata_children(ws.root / mdir) if utf8_name(n)]
    sessions = list(dict.fromkeys([layout.rel_dir(c.session_dir), layout.rel_dir(c.mem_session_dir)]))
    return {
        "vault": vault,
        "sessions": sessions,
        "resources": [layout.rel_dir(c.resource_dir)],
        "metadata": [f"{mdir}/{n}" for n in children],
        "config": list(CONFIG_FILES),
        "secrets": list(CONFIG_FILES),
    }


def _metadata_children(folder: Path) -> list[str]:
    skip = ("locks", journal.DIR)
    try:
        return sorted(n for n in os.listdir(folder) if n not in skip and not n.startswith(atomic.TEMP_MARK))
    except OSError:
        return []


def left_out(ws: Workspace, modules) -> list[tuple[str, str]]:
    """Extra paths outside the workspace: read-only for mem, so never archived (nor restored); in
    the metadata folder, a name that is not UTF-8: not mem's (it writes none), never a slot, so
    a restore leaves it where it is."""
    out = []
    if "vault" in modules:
        out += [
            (r.rel, f"extra path {r.path} is outside the workspace: mem only reads it and does not back it up")
            for r in ws.extra_roots()
            if not r.inside and not r.problem
        ]
    if "metadata" in modules:
        mdir = layout.rel_dir(ws.settings.metadata_dir)
        out += [
            (shown(f"{mdir}/{n}"), "name is not valid UTF-8: not mem's metadata, left out")
            for n in _metadata_children(ws.root / mdir)
            if not utf8_name(n)
        ]
    return out


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Collected:
    files: list[tuple[str, str, Path, os.stat_result]] = field(default_factory=list)  # module, rel, abs, stat
    dirs: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # left out by rule: symlinks, odd names
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # could not be read: a backup without them
    # is incomplete


class Unreadable(JobFailed):
    """Files or folders a backup (or a restore's snapshot) could not read; nothing was written."""

    def __init__(self, message: str, hint: str, paths: list[tuple[str, str]]):
        super().__init__(message, hint)
        self.paths = paths


def unreadable_error(paths: list[tuple[str, str]], *, snapshot: bool = False) -> Unreadable:
    """One line naming what could not be read (the first three, and how many more)."""
    named = ", ".join(f"{p} ({why})" for p, why in paths[:3])
    more = f" and {len(paths) - 3} more" if len(paths) > 3 else ""
    it = "it" if len(paths) == 1 else "them"
    # a name that is not UTF-8 is the same for every user: renaming, not a chmod, mends it
    fix = f"rename {it}" if all(why.endswith(NAME_FIX) for _, why in paths) else f"make {it} readable by this user"
    if snapshot:
        return Unreadable(
            f"restore refused: cannot read {named}{more}, so the snapshot taken before a restore "
            f"could not save {it}; nothing was changed",
            f"{fix}, or move {it} out of the workspace, then restore again",
            paths,
        )
    return Unreadable(
        f"cannot read {named}{more}; a backup without {it} would be incomplete, so none was written",
        f"{fix}, or pass --allow-unreadable to save the rest and mark the backup incomplete",
        paths,
    )


def _why(exc: OSError, default: str) -> str:
    return exc.strerror or default


def collect(ws: Workspace, modules, slots: dict[str, list[str]]) -> Collected:
    """Regular files and folders of the modules' slots; symlinks and odd files are skipped."""
    out = Collected()
    for module in modules:
        if module in ("config", "secrets"):
            continue
        for slot in slots[module]:
            top = ws.root / slot
            if not os.path.lexists(top):
                continue
            stack = [(slot, top)]
            while stack:
                rel, path = stack.pop()
                try:
                    st = os.lstat(path)
                except FileNotFoundError:
                    continue  # deleted since its folder was listed: nothing to save
                except OSError as exc:
                    out.unreadable.append((shown(rel), _why(exc, "unreadable")))
                    continue
                problem = name_problem(rel)
                if stat.S_ISLNK(st.st_mode):
                    out.skipped.append((shown(rel), "symlink (not followed)"))
                elif not utf8_name(rel):  # no zip entry, meta.json or restore can name it: as if unreadable
                    kind = "folder" if stat.S_ISDIR(st.st_mode) else "file"
                    out.unreadable.append((shown(rel), f"{kind} name is not valid UTF-8{NAME_FIX}"))
                elif problem:
                    out.skipped.append((rel, problem))
                elif stat.S_ISDIR(st.st_mode):
                    out.dirs.append((module, rel))
                    try:
                        names = sorted(os.listdir(path), reverse=True)
                    except FileNotFoundError:
                        continue
                    except OSError as exc:
                        out.unreadable.append((rel, _why(exc, "unreadable folder")))
                        continue
                    stack += [(f"{rel}/{n}", path / n) for n in names if not n.startswith(atomic.TEMP_MARK)]
                elif stat.S_ISREG(st.st_mode):
                    out.files.append((module, rel, path, st))
                else:
                    out.skipped.append((rel, "not a regular file"))
    return out


def _zinfo(name: str, st: os.stat_result, level: int) -> zipfile.ZipInfo:
    date = time.localtime(st.st_mtime)[:6]
    info = zipfile.ZipInfo(name, date_time=date if date[0] >= 1980 else (1980, 1, 1, 0, 0, 0))
    info.external_attr = (stat.S_IFREG | (st.st_mode & 0o777)) << 16
    info.compress_type = zipfile.ZIP_STORED if name.lower().endswith(STORED_SUFFIXES) else zipfile.ZIP_DEFLATED
    # ZipFile.open(info, "w") takes the level from the ZipInfo: compress_level since 3.13, before that private
    for attr in ("compress_level", "_compresslevel"):
        try:
            setattr(info, attr, level)
            break
        except AttributeError:
            continue
    return info


def level_for(kind: str, module: str) -> int:
    """Deflate level: 6 for what users keep for years, 1 (4-5x faster, ~10-20% larger) for
    pre-restore snapshots and the big, rebuildable metadata."""
    return 1 if kind == "snapshot" or module == "metadata" else 6


def _publish(tmp: Path, folder: Path, stem: str) -> Path:
    """Give the finished temp file its final name without ever replacing another backup."""
    for i in range(1000):
        final = folder / (f"{stem}.zip" if i == 0 else f"{stem}-{i}.zip")
        try:
            os.link(tmp, final)
        except FileExistsError:
            continue
        os.unlink(tmp)
        atomic.fsync_dir(folder)
        return final
    raise OSError(f"too many backups named {stem}*.zip in {folder}")


def safe_stem(name: str) -> str:
    clean = "".join(c if c.isalnum() or c in "._-" else "-" for c in name).strip(".-")
    return clean or "workspace"


def write(
    ws: Workspace,
    folder: Path,
    modules,
    *,
    kind: str = "backup",
    note: str = "",
    slots: dict[str, list[str]] | None = None,
    progress: Progress | None = None,
    allow_unreadable: bool = False,
) -> tuple[Path, dict]:
    """Write a backup of `modules` into `folder` atomically; returns (path, meta).

    A file or folder that cannot be read fails it (Unreadable; no zip is left) unless
    `allow_unreadable`: then the rest is saved and meta.json lists it under "missing"."""
    slots = slots or module_slots(ws)
    modules = [m for m in MODULES if m in modules]
    found = collect(ws, modules, slots)
    conf, conf_skipped, conf_unreadable = config_entries(ws.root, modules)
    found.unreadable += conf_unreadable
    found.skipped += conf_skipped + left_out(ws, modules)
    created = utc_now()
    stem = f"{safe_stem(ws.root.name)}-{'pre-restore-' if kind == 'snapshot' else ''}{created:%Y%m%dT%H%M%SZ}"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = folder / f"{atomic.TEMP_MARK}{stem}.zip.{os.getpid()}.{os.urandom(4).hex()}"
    # 0600: a backup is as private as the memory it holds (and may hold API keys)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            with zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
                files = _archive(zf, found, conf, kind, progress)
                if found.unreadable and not allow_unreadable:
                    raise unreadable_error(found.unreadable, snapshot=kind == "snapshot")
                meta = {
                    "format": FORMAT,
                    "format_version": FORMAT_VERSION,
                    "mem_version": __version__,
                    "kind": kind,
                    "created_at": iso(created),
                    "workspace": str(ws.root),
                    "workspace_name": ws.root.name,
                    "mode": "full" if set(modules) >= FULL_MODULES else "partial",
                    "modules": modules,
                    "note": note,
                    "slots": {m: slots[m] for m in modules},
                    "layout": layout.of_settings(ws.settings),
                    "secrets_left_out": sum(n for m, _, _, _, n in conf if m == "config")
                    if "secrets" not in modules
                    else 0,
                    "dirs": [{"module": m, "path": p} for m, p in found.dirs],
                    "files": files,
                    "skipped": [{"path": p, "reason": r} for p, r in found.skipped],
                    "missing": [{"path": p, "reason": r} for p, r in found.unreadable],
                }
                zf.writestr(META, json.dumps(meta, ensure_ascii=False, indent=1).encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        return _publish(tmp, folder, stem), meta
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def _archive(zf: zipfile.ZipFile, found: Collected, conf, kind: str, progress: Progress | None) -> list[dict]:
    """Every collected file and config entry into the zip; returns their records."""
    files: list[dict] = []
    total = len(found.files) + len(conf)
    for i, (module, rel, path, _st) in enumerate(found.files):
        if progress:
            progress("Archiving", i, total)
        rec = _add_file(zf, module, rel, path, level_for(kind, module), found)
        if rec:
            files.append(rec)
    for module, name, data, st, n in conf:
        zf.writestr(_zinfo(f"{module}/{name}", st, 6), data)
        files.append(
            {
                "module": module,
                "path": name,
                "size": len(data),
                "sha256": _sha256(data),
                "mtime_ns": st.st_mtime_ns,
                **({"redacted": n} if module == "config" else {}),
            }
        )
    if progress:
        progress("Archiving", total, total)
    return files


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _add_file(zf: zipfile.ZipFile, module: str, rel: str, path: Path, level: int, found: Collected) -> dict | None:
    try:
        # O_NOFOLLOW: a file swapped for a symlink since the walk is not followed out of the workspace
        # (O_NONBLOCK: a FIFO put there since the walk must not hang the backup)
        src = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None  # deleted since the walk
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            found.skipped.append((rel, "symlink (not followed)"))
        else:
            found.unreadable.append((rel, _why(exc, "unreadable")))
        return None
    st = os.fstat(src)  # the opened file's own mtime: it may have been replaced since the walk
    if not stat.S_ISREG(st.st_mode):
        os.close(src)
        found.skipped.append((rel, "not a regular file"))
        return None
    h, size = hashlib.sha256(), 0
    with (
        os.fdopen(src, "rb") as fh,
        zf.open(_zinfo(f"{module}/{rel}", st, level), "w", force_zip64=st.st_size > (1 << 30)) as dst,
    ):
        while True:
            try:
                chunk = fh.read(CHUNK)
            except OSError as exc:  # opened but not readable (an I/O error): the zip cannot be finished
                raise unreadable_error([(rel, _why(exc, "read error"))]) from None
            if not chunk:
                break
            h.update(chunk)
            dst.write(chunk)
            size += len(chunk)
    return {"module": module, "path": rel, "size": size, "sha256": h.hexdigest(), "mtime_ns": st.st_mtime_ns}
