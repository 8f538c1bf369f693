"""What the backup commands report: JSON documents and the text lines the CLI prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def human(n: float) -> str:
    """Sizes in decimal units, as `ls -h --si` and file managers show them."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return ""


@dataclass
class CreateReport:
    path: Path
    meta: dict

    def to_json(self) -> dict:
        m = self.meta
        return {
            "file": str(self.path),
            "name": self.path.name,
            "created_at": m["created_at"],
            "kind": m["kind"],
            "mode": m["mode"],
            "modules": m["modules"],
            "workspace": m["workspace"],
            "note": m["note"],
            "files": len(m["files"]),
            "bytes": sum(f["size"] for f in m["files"]),
            "size": self.path.stat().st_size,
            "secrets_left_out": m["secrets_left_out"],
            "skipped": m["skipped"],
            "incomplete": bool(m["missing"]),
            "missing": m["missing"],
        }

    def line(self) -> str:
        d = self.to_json()
        return (
            f"Created {d['file']} ({d['mode']}: {', '.join(d['modules'])}; {d['files']} files, "
            f"{human(d['bytes'])}, zip {human(d['size'])}){incomplete_note(d['missing'])}"
        )


def incomplete_note(missing: list[dict]) -> str:
    """What an incomplete backup says after its line; nothing for a complete one."""
    if not missing:
        return ""
    first = ", ".join(m["path"] for m in missing[:3])
    more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
    return f"  INCOMPLETE: {len(missing)} unreadable path(s) not saved ({first}{more})"


def list_line(s: dict) -> str:
    """One backup of `mem backup list`: name, time, kind, size, workspace, note."""
    if "error" in s:
        return f"{s['name']}  unreadable: {s['error']}"
    # str(): a meta.json another tool wrote (or damaged) may lack these fields or hold other types
    kind = "snapshot" if s.get("kind") == "snapshot" else str(s.get("mode") or "?")
    note = f"  {s['note']!r}" if s.get("note") else ""
    return (
        f"{s['name']}  {str(s['created_at'])[:19].replace('T', ' ')}  {kind:8}  {human(s['size']):>8}  "
        f"{s['workspace']}{note}{incomplete_note(s.get('missing') or [])}"
    )


def verify_json(path: Path, res: dict) -> dict:
    m = res["meta"]
    return {
        "file": str(path),
        "ok": True,
        "files": res["files"],
        "bytes": res["bytes"],
        "kind": m["kind"],
        "mode": m["mode"],
        "modules": m["modules"],
        "created_at": m["created_at"],
        "workspace": m["workspace"],
        "incomplete": bool(res["missing"]),
        "missing": res["missing"],
    }


def verify_lines(d: dict) -> list[str]:
    """The OK line; for an incomplete backup, then one line per path it lacks."""
    head = (
        f"OK {d['file']}: {d['files']} files, {human(d['bytes'])}; every sha256 and CRC matches "
        f"({d['mode']} {d['kind']} of {d['workspace']}, {d['created_at'][:19]}Z)"
    )
    if not d["missing"]:
        return [head]
    return [
        f"{head}; INCOMPLETE: {len(d['missing'])} path(s) could not be read when it was made",
        *(f"  missing {m['path']} ({m['reason']})" for m in d["missing"]),
    ]


@dataclass
class RestoreReport:
    file: Path
    modules: list[str]
    full: bool
    files: int = 0
    snapshot: Path | None = None
    index: Any = None  # the SyncReport of the index refresh, None when it was left to the next search
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    source: str = ""  # the workspace the backup was made of
    workspace: str = ""  # the one restored into
    moves: dict[str, str] = field(default_factory=dict)  # its folders restored under this workspace's names
    cleanup: Any = None  # cleanup.Outcome: what the swap moved out and the snapshot did not hold

    def to_json(self) -> dict:
        s, c = self.index, self.cleanup
        return {
            "file": str(self.file),
            "mode": "full" if self.full else "custom",
            "modules": self.modules,
            "files": self.files,
            "snapshot": str(self.snapshot) if self.snapshot else None,
            "source_workspace": self.source,
            "other_workspace": bool(self.source) and self.source != self.workspace,
            "folders_renamed": self.moves,
            "left_in_place": c.put_back if c else [],
            "kept_in_staging": c.kept if c else [],
            "index": None
            if s is None
            else {
                "files": s.files,
                "chunks": s.chunks,
                "added": len(s.added),
                "changed": len(s.changed),
                "deleted": len(s.deleted),
            },
            "warnings": self.warnings,
            "seconds": round(self.seconds, 3),
        }

    def lines(self, verb: str) -> list[str]:
        s = self.index
        return [
            f"{verb} {', '.join(self.modules)} from {self.file.name} ({self.files} files)",
            f"Snapshot of the previous state: {self.snapshot} (undo with `mem backup rollback`)",
            f"Index: {s.files} files, {s.chunks} chunks" if s else "Index: rebuilt by the next search",
        ]


@dataclass
class PruneReport:
    kept: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"kept": self.kept, "deleted": self.deleted}

    def lines(self) -> list[str]:
        return [*(f"Deleted {p}" for p in self.deleted), f"Kept {len(self.kept)} file(s)"]
