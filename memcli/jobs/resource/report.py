"""What a resource scan planned and did: the actions, and the report the CLI renders."""

from __future__ import annotations

from dataclasses import dataclass, field

VERBS = {"added": "Added", "updated": "Updated", "deleted": "Removed", "linked": "Linked"}
DRY_VERBS = {"added": "Would add", "updated": "Would update", "deleted": "Would remove", "linked": "Would link"}


@dataclass
class Action:
    kind: str  # "write" | "remove" | "adopt" | "forget" (note already gone) | "none" (service failed)
    resource: str
    note: str
    text: str | None = None  # the resource's text, when it was read while planning
    new: bool = False  # the note does not exist yet (its path was chosen while planning)
    description: str = ""
    body: str = ""


@dataclass
class ResourceReport:
    dry_run: bool = False
    interpret: bool = True
    interpreter: str = "offline digest"
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)  # not interpreted yet (catalog only, kept note, failure)
    notes: list[dict] = field(default_factory=list)  # {resource, note, action}
    changes: list[tuple[str, str]] = field(default_factory=list)  # Markdown files written or removed
    warnings: list[str] = field(default_factory=list)
    redacted: dict[str, int] = field(default_factory=dict)  # secret kind -> values replaced in notes

    def summary(self) -> str:
        total = len(self.added) + len(self.modified) + len(self.unchanged) + len(self.skipped)
        out = (
            f"{total} resource(s): {len(self.added)} added, {len(self.modified)} modified, "
            f"{len(self.deleted)} deleted, {len(self.skipped)} skipped, {len(self.unchanged)} unchanged"
        )
        if self.interpret:
            out += f" ({self.interpreter})"
        if self.pending:
            out += f"; {len(self.pending)} left to interpret"
        return out

    def lines(self) -> list[str]:
        verbs = DRY_VERBS if self.dry_run else VERBS
        out = []
        for n in self.notes:
            word = verbs.get(n["action"], n["action"].capitalize())
            why = "was deleted" if n["action"] == "deleted" else "existing note" if n["action"] == "linked" else ""
            out.append(f"{word} {n['note']} ({n['resource']}{' ' + why if why else ''})")
        noted = {n["note"] for n in self.notes}
        out += [f"{'Removed' if a == 'deleted' else a.capitalize()} {p}" for p, a in self.changes if p not in noted]
        out += [f"Skipped {p}: {why}" for p, why in self.skipped]
        out.append(("Dry run, nothing written: " if self.dry_run else "Scanned ") + self.summary())
        return out

    def to_json(self) -> dict:
        return {
            "dry_run": self.dry_run,
            "interpreter": self.interpreter if self.interpret else None,
            "resources": {
                "added": self.added,
                "modified": self.modified,
                "deleted": self.deleted,
                "unchanged": self.unchanged,
            },
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "pending": self.pending,
            "notes": self.notes,
            "changes": [{"path": p, "action": a} for p, a in self.changes],
            "redacted": self.redacted,
            "warnings": self.warnings,
        }
