"""What the backup commands report: JSON documents and the text lines the CLI prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


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
        return {"file": str(self.path), "name": self.path.name, "created_at": m["created_at"], "kind": m["kind"],
                "mode": m["mode"], "modules": m["modules"], "workspace": m["workspace"], "note": m["note"],
                "files": len(m["files"]), "bytes": sum(f["size"] for f in m["files"]),
                "size": self.path.stat().st_size, "secrets_left_out": m["secrets_left_out"],
                "skipped": m["skipped"]}

    def line(self) -> str:
        d = self.to_json()
        return (f"Created {d['file']} ({d['mode']}: {', '.join(d['modules'])}; {d['files']} files, "
                f"{human(d['bytes'])}, zip {human(d['size'])})")


def list_line(s: dict) -> str:
    """One backup of `mem backup list`: name, time, kind, size, workspace, note."""
    if "error" in s:
        return f"{s['name']}  unreadable: {s['error']}"
    # str(): a meta.json another tool wrote (or damaged) may lack these fields or hold other types
    kind = "snapshot" if s.get("kind") == "snapshot" else str(s.get("mode") or "?")
    note = f"  {s['note']!r}" if s.get("note") else ""
    return (f"{s['name']}  {str(s['created_at'])[:19].replace('T', ' ')}  {kind:8}  {human(s['size']):>8}  "
            f"{s['workspace']}{note}")


def verify_json(path: Path, res: dict) -> dict:
    m = res["meta"]
    return {"file": str(path), "ok": True, "files": res["files"], "bytes": res["bytes"], "kind": m["kind"],
            "mode": m["mode"], "modules": m["modules"], "created_at": m["created_at"], "workspace": m["workspace"]}


def verify_line(d: dict) -> str:
    return (f"OK {d['file']}: {d['files']} files, {human(d['bytes'])}; every sha256 and CRC matches "
            f"({d['mode']} {d['kind']} of {d['workspace']}, {d['created_at'][:19]}Z)")


@dataclass
class RestoreReport:
    file: Path
    modules: list[str]
    full: bool
    files: int = 0
    snapshot: Path | None = None
    index: object = None  # the SyncReport of the index refresh, None when it was left to the next search
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict:
        s = self.index
        return {"file": str(self.file), "mode": "full" if self.full else "custom", "modules": self.modules,
                "files": self.files, "snapshot": str(self.snapshot) if self.snapshot else None,
                "index": None if s is None else {"files": s.files, "chunks": s.chunks, "added": len(s.added),
                                                  "changed": len(s.changed), "deleted": len(s.deleted)},
                "warnings": self.warnings, "seconds": round(self.seconds, 3)}

    def lines(self, verb: str) -> list[str]:
        s = self.index
        return [f"{verb} {', '.join(self.modules)} from {self.file.name} ({self.files} files)",
                f"Snapshot of the previous state: {self.snapshot} (undo with `mem backup rollback`)",
                f"Index: {s.files} files, {s.chunks} chunks" if s else "Index: rebuilt by the next search"]


@dataclass
class PruneReport:
    kept: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"kept": self.kept, "deleted": self.deleted}

    def lines(self) -> list[str]:
        return [*(f"Deleted {p}" for p in self.deleted), f"Kept {len(self.kept)} file(s)"]
