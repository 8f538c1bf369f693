"""After the swap: what a restore moved out of the workspace is deleted only where the
snapshot taken just before holds the very same bytes.

The swap moves each replaced folder whole into `.mem-restore-<id>/old`. Nearly all of it is
what the snapshot saved a moment earlier; not so a note written between the snapshot and the
swap (an agent writing its notes takes no mem lock), a symlink (never archived) or a file
that became unreadable meanwhile. (A temp file a killed write left behind is debris: backups
skip it on purpose and it goes with the rest.) Those are put back where they were when that place is
still free, else kept in old/: the staging folder then stays, marked `kept`, and
`mem health` names it until the user has moved them.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from memcli.jobs.backup.archive import CHUNK, within
from memcli.vault import atomic

KEPT = "kept"  # in a staging folder: old/ holds files no snapshot has (one path a line)


@dataclass
class Outcome:
    deleted: int = 0
    held: list[str] = field(default_factory=list)  # in the snapshot as they are: deleted by finish()
    put_back: list[str] = field(default_factory=list)  # not in the snapshot: back in the workspace
    kept: list[str] = field(default_factory=list)  # not in the snapshot, left in old/ (their place was taken)
    stuck: list[str] = field(default_factory=list)  # in the snapshot, but could not be deleted

    def warnings(self, staging: Path) -> list[str]:
        out = []
        if self.put_back:
            out.append(
                f"{len(self.put_back)} file(s) the snapshot could not save (written during the restore, "
                f"symlinks or unreadable) were left where they were: {_few(self.put_back)}"
            )
        if self.kept:
            out.append(
                f"{len(self.kept)} file(s) the snapshot could not save are kept in {staging.name}/old, "
                f"as the restored files took their place: {_few(self.kept)}; move them where you want "
                f"them, then delete {staging.name}"
            )
        return out


def _few(paths: list[str]) -> str:
    return ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def held_by(meta: dict) -> dict[str, tuple[int, str]]:
    """path -> (size, sha256) of the files a backup holds as they are on disk: for mem.yaml and
    agent.json that is the secrets copy when there is one (the config copy has its keys blanked)."""
    held: dict[str, tuple[int, str]] = {}
    for r in meta["files"]:
        if r["module"] == "secrets" or r["path"] not in held:
            held[r["path"]] = (r["size"], r["sha256"])
    return held


def _same(path: Path, want: tuple[int, str] | None) -> bool:
    if want is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size != want[0]:
            return False
        h = hashlib.sha256()
        try:
            while chunk := fh.read(CHUNK):
                h.update(chunk)
        except OSError:
            return False
    return h.hexdigest() == want[1]


def sort_out(root: Path, staging: Path, snapshot_meta: dict, metadata_slots: list[str]) -> Outcome:
    """Sort staging/old into what the snapshot holds (deleted later by finish()) and the rest,
    which is put back where it was or kept there. Runs under the workspace lock: it may write
    the workspace. What the snapshot lacks is written into the `kept` mark before anything
    moves, so a restore killed midway leaves a mark that says so."""
    out, unsaved = Outcome(), []
    old = staging / "old"
    if os.path.lexists(old):
        _sweep(old, "", held_by(snapshot_meta), out.held, unsaved)
    if unsaved:
        _mark(staging, [rel or "." for rel in unsaved])
    for rel in unsaved:
        # derived state the index lock kept anyone else from writing: nothing to put back there
        derived = any(within(rel, s) for s in metadata_slots)
        (out.put_back if rel and not derived and _put_back(root, old, rel) else out.kept).append(rel or ".")
    if unsaved and not out.kept:
        (staging / KEPT).unlink()
    elif out.kept != unsaved:
        _mark(staging, out.kept)
    return out


def finish(staging: Path, out: Outcome) -> None:
    """Delete what the snapshot holds, then the folders left empty (no lock needed: no other
    job looks into a staging folder)."""
    old = staging / "old"
    for rel in out.held:
        try:
            os.unlink(old / rel)
            out.deleted += 1
        except OSError:
            out.stuck.append(rel)
    for dirpath, _, _ in sorted(os.walk(old), key=lambda w: -len(w[0])) if os.path.isdir(old) else []:
        try:
            os.rmdir(dirpath)  # only empty ones go
        except OSError:
            pass


def _mark(staging: Path, paths: list[str]) -> None:
    atomic.write_text(staging / KEPT, "".join(f"{p}\n" for p in paths))


def _sweep(folder: Path, rel: str, snapshot: dict, held: list[str], unsaved: list[str]) -> None:
    """Sort what is under `folder`: files the snapshot holds as they are, and everything else."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        unsaved.append(rel)  # a folder that cannot be listed is kept whole
        return
    for e in entries:
        r = f"{rel}/{e.name}" if rel else e.name
        try:
            is_dir = e.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if is_dir:
            _sweep(Path(e.path), r, snapshot, held, unsaved)
        elif e.name.startswith(atomic.TEMP_MARK):
            held.append(r)  # a killed write's temp file: the real file is whole, backups skip these on purpose
        else:
            (held if _same(Path(e.path), snapshot.get(r)) else unsaved).append(r)


def _put_back(root: Path, old: Path, rel: str) -> bool:
    """Move old/rel back to rel in the workspace if nothing is there (never over a file)."""
    src, dst = old / rel, root / rel
    parts = rel.split("/")
    try:
        for i in range(1, len(parts)):
            above = root.joinpath(*parts[:i])
            if os.path.islink(above) or (os.path.lexists(above) and not above.is_dir()):
                return False  # never write through a symlink the restore brought
        dst.parent.mkdir(parents=True, exist_ok=True)
        if os.path.isdir(src) and not os.path.islink(src):
            if os.path.lexists(dst):
                return False
            os.rename(src, dst)
        else:
            try:
                os.link(src, dst, follow_symlinks=False)  # EEXIST rather than replace a file that appeared
            except PermissionError:  # another user's file (protected_hardlinks): a rename, if still free
                if os.path.lexists(dst):
                    return False
                os.rename(src, dst)
                return True
            os.unlink(src)
    except OSError:
        return False
    return True
