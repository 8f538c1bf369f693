"""Reading a backup safely: every entry name, type and size is checked against meta.json
before a byte is used, and every byte is hashed as it is read.

Refused: absolute names, backslashes, `..`/`.`/empty segments, symlink, folder,
special or encrypted entries, duplicate names, entries meta.json does not declare,
slots that would overlap one another or reach the lock folder, and any content
whose size, sha256 or zip CRC differs from what was recorded.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memcli.errors import BadInput
from memcli.jobs.backup.archive import (
    CHUNK,
    CONFIG_FILES,
    FORMAT,
    FORMAT_VERSION,
    META,
    MODULES,
    Progress,
    name_problem,
    within,
)

MAX_META = 256 << 20
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


# what an OS error says (strerror): a backup made before "missing" was recorded listed files
# it could not read among the skipped ones, with such a reason
_OS_REASONS = frozenset({os.strerror(n) for n in errno.errorcode} | {"unreadable", "unreadable folder"})


def missing(meta: dict) -> list[dict]:
    """What the backup lacks because it could not be read when it was made: [{path, reason}]."""
    listed = meta.get("missing")
    if listed is None:  # an older backup: its unreadable files are among the skipped ones
        listed = [s for s in meta.get("skipped") or [] if isinstance(s, dict) and s.get("reason") in _OS_REASONS]
    if not isinstance(listed, list):
        return [{"path": "?", "reason": "meta.json lists what is missing in a form mem cannot read"}]
    return [
        {"path": str(m.get("path")), "reason": str(m.get("reason"))}
        if isinstance(m, dict)
        else {"path": str(m), "reason": "?"}
        for m in listed
    ]


def damaged(path: Path, problem: str) -> BadInput:
    return BadInput(
        f"backup {path.name} refused: {problem}",
        "nothing was restored; check the file with `mem backup verify` or use another backup",
    )


@dataclass
class Archive:
    path: Path
    zf: zipfile.ZipFile
    meta: dict

    def entry(self, rec: dict) -> str:
        return f"{rec['module']}/{rec['path']}"

    def files(self, modules=None) -> list[dict]:
        return [r for r in self.meta["files"] if modules is None or r["module"] in modules]

    def close(self) -> None:
        self.zf.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def chunks(self, rec: dict) -> Iterator[bytes]:
        """The entry's bytes, checked against meta.json's size and sha256 and the zip CRC."""
        name, size = self.entry(rec), rec["size"]
        h, n = hashlib.sha256(), 0
        try:
            with self.zf.open(name) as fh:
                while chunk := fh.read(CHUNK):
                    n += len(chunk)
                    if n > size:
                        raise damaged(self.path, f"{name} is larger than meta.json says")
                    h.update(chunk)
                    yield chunk
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
            raise damaged(self.path, f"{name} is corrupt ({exc})") from None
        if n != size or h.hexdigest() != rec["sha256"]:
            raise damaged(self.path, f"{name}: sha256 does not match meta.json (tampered or corrupt)")

    def read(self, rec: dict) -> bytes:
        return b"".join(self.chunks(rec))


def _check_entries(path: Path, infos: list[zipfile.ZipInfo]) -> dict[str, zipfile.ZipInfo]:
    seen: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = info.filename
        problem = name_problem(name.rstrip("/")) if name.endswith("/") else name_problem(name)
        if problem:
            raise damaged(path, f"unsafe entry {name!r} ({problem})")
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind == stat.S_IFLNK:
            raise damaged(path, f"entry {name!r} is a symlink")
        if info.is_dir() or kind == stat.S_IFDIR:
            raise damaged(path, f"entry {name!r} is a folder")
        if kind not in (0, stat.S_IFREG):
            raise damaged(path, f"entry {name!r} is not a regular file")
        if info.flag_bits & 0x1:
            raise damaged(path, f"entry {name!r} is encrypted")
        if name in seen:
            raise damaged(path, f"entry {name!r} appears twice")
        seen[name] = info
    return seen


def _load_meta(path: Path, zf: zipfile.ZipFile, infos: dict) -> dict:
    info = infos.get(META)
    if info is None:
        raise damaged(path, "no meta.json: not a mem backup")
    if info.file_size > MAX_META:
        raise damaged(path, "meta.json is too large")
    try:
        meta = json.loads(zf.read(META).decode("utf-8"))
    except (zipfile.BadZipFile, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise damaged(path, f"meta.json is unreadable ({exc})") from None
    except RecursionError:
        raise damaged(path, "meta.json is nested too deeply") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise damaged(path, "meta.json is not a mem backup's")
    version = meta.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise damaged(path, "meta.json has no valid format_version")
    if version > FORMAT_VERSION:
        raise BadInput(
            f"backup {path.name} has format {version}, made by a newer mem ({meta.get('mem_version')})",
            "upgrade mem to read it",
        )
    return meta


def _check_slots(path: Path, meta: dict) -> dict[str, list[str]]:
    modules = meta.get("modules")
    if (
        not isinstance(modules, list)
        or not modules
        or len(set(modules)) != len(modules)
        or not all(m in MODULES for m in modules)
    ):
        raise damaged(path, f"meta.json modules must be a list drawn from {', '.join(MODULES)}")
    slots = meta.get("slots")
    if not isinstance(slots, dict) or set(slots) != set(modules):
        raise damaged(path, "meta.json slots do not match its modules")
    placed: list[tuple[str, str]] = []
    for module, values in slots.items():
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise damaged(path, f"meta.json slots of {module} must be a list of paths")
        for slot in values:
            problem = name_problem(slot)
            parts = slot.split("/") if not problem else []
            if not problem and parts[0].startswith(".mem-"):
                problem = "reserved name"
            elif not problem and module == "metadata" and (len(parts) != 2 or parts[1] == "locks"):
                problem = "metadata slots are the children of the metadata folder, locks/ excluded"
            elif not problem and module in ("config", "secrets") and slot not in CONFIG_FILES:
                problem = f"{module} holds only {' and '.join(CONFIG_FILES)}"
            if problem:
                raise damaged(path, f"unsafe slot {slot!r} for {module} ({problem})")
            if module != "secrets":
                for other_module, other in placed:
                    if within(slot, other) or within(other, slot):
                        raise damaged(path, f"slot {slot!r} of {module} overlaps {other!r} of {other_module}")
                placed.append((module, slot))
    return slots


def _check_listing(path: Path, meta: dict, slots: dict, infos: dict) -> None:
    files, dirs = meta.get("files"), meta.get("dirs", [])
    if not isinstance(files, list) or not isinstance(dirs, list):
        raise damaged(path, "meta.json files/dirs must be lists")
    declared: set[str] = set()
    for rec in [*files, *dirs]:
        if not isinstance(rec, dict) or rec.get("module") not in slots or not isinstance(rec.get("path"), str):
            raise damaged(path, f"meta.json has a malformed record: {str(rec)[:80]}")
        problem = name_problem(rec["path"])
        if problem or not any(within(rec["path"], s) for s in slots[rec["module"]]):
            raise damaged(
                path,
                f"unsafe path {rec['path']!r} in {rec['module']} ({problem or 'outside the slots meta.json declares'})",
            )
    for rec in files:
        name = f"{rec['module']}/{rec['path']}"
        if not (
            isinstance(rec.get("size"), int)
            and rec["size"] >= 0
            and isinstance(rec.get("sha256"), str)
            and _HEX64.match(rec["sha256"])
            and isinstance(rec.get("mtime_ns", 0), int)
        ):
            raise damaged(path, f"meta.json record of {name} lacks a valid size, sha256 or mtime_ns")
        if name in declared:
            raise damaged(path, f"meta.json lists {name} twice")
        declared.add(name)
        info = infos.get(name)
        if info is None:
            raise damaged(path, f"{name} is listed in meta.json but missing from the zip")
        if info.file_size != rec["size"]:
            raise damaged(path, f"{name}: size differs from meta.json")
    for name in infos:
        if name != META and name not in declared:
            raise damaged(path, f"entry {name!r} is outside the modules meta.json declares")


def open_archive(path: Path) -> Archive:
    """Open a backup and check its structure (no content read yet)."""
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"no backup at {path}", "see `mem backup list`")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise damaged(path, f"not a readable zip file ({exc})") from None
    try:
        infos = _check_entries(path, zf.infolist())
        meta = _load_meta(path, zf, infos)
        slots = _check_slots(path, meta)
        _check_listing(path, meta, slots, infos)
    except BaseException:
        zf.close()
        raise
    return Archive(path, zf, meta)


def verify(path: Path, progress: Progress | None = None) -> dict:
    """Read every entry; raises BadInput naming the first damaged one (and how many)."""
    with open_archive(path) as arc:
        problems: list[str] = []
        files = arc.files()
        total = 0
        for i, rec in enumerate(files):
            if progress:
                progress("Verifying", i, len(files))
            try:
                for chunk in arc.chunks(rec):
                    total += len(chunk)
            except BadInput as exc:
                problems.append(str(exc).split(" refused: ", 1)[-1])
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise damaged(arc.path, problems[0] + more)
        return {"meta": arc.meta, "files": len(files), "bytes": total, "missing": missing(arc.meta)}
