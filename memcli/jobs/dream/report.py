"""What a dream run did, in ReMe's "AutoDream completed" shape and as data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memcli.extraction.dream.schema import Topic, Unit
from memcli.jobs.dream.integrate import Plan
from memcli.jobs.dream.scan import Scan
from memcli.jobs.schedule import Due


@dataclass
class DreamReport:
    day: str
    dates: list[str]
    dry_run: bool = False
    status: str = ""  # not_due | no_change | completed | completed_with_warnings
    schedule: Due | None = None
    scan: Scan | None = None
    extractor: str = ""
    units: list[Unit] = field(default_factory=list)
    topics: list[Topic] = field(default_factory=list)
    plan: Plan = field(default_factory=Plan)
    unreadable: list[str] = field(default_factory=list)
    checkpointed: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    interests: tuple[str, str | None, int] | None = None  # (path, added/updated/None, topics in the file)
    warnings: list[str] = field(default_factory=list)
    redacted: dict[str, int] = field(default_factory=dict)  # secret kind -> values kept out of the digest
    # jobs.dream.offline.Progress: facts done, kept in their notes, left for the next run
    progress: Any = None
    max_units: int = 0

    def failed_units(self) -> list[Unit]:
        return [u for u, _ in self.plan.failed]

    def failed_paths(self) -> list[str]:
        return sorted({p for u in self.failed_units() for p in u.paths} | set(self.unreadable))

    def outcome(self) -> str:
        return "completed_with_warnings" if self.warnings or self.plan.failed or self.unreadable else "completed"

    def action_counts(self) -> dict[str, int]:
        out = dict.fromkeys(("CREATE", "CORROBORATE", "REFINE", "CORRECT"), 0)
        for r in self.plan.results:
            out[r.action] += 1
        return out

    def lines(self) -> list[str]:
        if self.status == "not_due":
            return [f"AutoDream skipped: {self.schedule.reason if self.schedule else 'not due'}"]
        if self.status == "no_change":
            return [f"No changed dream input for {', '.join(self.dates)}"]
        sc, p = self.scan, self.plan
        assert sc is not None  # every status past no_change scanned
        head = "AutoDream completed" + (" with warnings" if self.status == "completed_with_warnings" else "")
        out = [head, ""]
        if self.dry_run:
            out.append("- Dry run: nothing was written")
        out += [
            f"- Date: {self.day}",
            f"- Scan window: {', '.join(self.dates)}",
            f"- Files: {len(sc.current)} scanned, {len(sc.changed)} changed, {len(sc.unchanged)} unchanged, "
            f"{len(sc.deleted)} deleted",
            f"- Extracted: {len(self.units)} unit(s), {len(self.topics)} topic candidate(s)",
            f"- Integrated: {len(p.results)} ok, {len(p.skipped)} skipped, {len(p.failed)} failed",
            f"- Catalog: checkpointed {len(self.checkpointed)} changed path(s)",
        ]
        pr = self.progress
        if pr is not None:
            how = f"by meaning and words ({pr.model})" if pr.grouping == "meaning+words" else "by words only"
            out.append(f"- Facts: {pr.facts} new, grouped {how}")
            if pr.remaining:
                out.append(
                    f"- Left for the next run: {len(pr.remaining)} fact(s) in {len(pr.remaining_paths())} "
                    f"note(s), over --max-units {self.max_units}"
                )
            if pr.kept:
                out.append(f"- Kept in the daily notes: {len(pr.kept)} fact(s) with no clear node")
            if pr.waiting:
                out.append(f"- Waiting for a second statement: {len(pr.waiting)} fact(s) stated once")
        created = [r.target_path for r in p.results if r.action == "CREATE"]
        updated = list(dict.fromkeys(r.target_path for r in p.results if r.action != "CREATE"))
        if created:
            out.append(f"- Created: {', '.join(created)}")
        if updated:
            out.append(f"- Updated: {', '.join(updated)}")
        if self.interests and self.interests[1]:
            out.append(f"- Interests: {self.interests[2]} topic(s) in {self.interests[0]}")
        if p.results:
            out += ["", "Changes:"] + [f"- [{r.target_path}][{r.action}]: {r.note}" for r in p.results]
        if self.failed_paths():
            out.append(f"- Failed paths: {', '.join(self.failed_paths())}")
        problems = [f"{u.name}: {why}" for u, why in p.failed] + self.warnings
        if problems:
            out.append(f"- Warnings: {'; '.join(problems)}")
        return out

    def inbox_changes(self) -> list[tuple[str, str, str]]:
        """(path, action, why) per written node: the dream log users read in `mem inbox`."""
        out = [(r.target_path, r.action, r.note) for r in self.plan.results if r.target_path in self.written]
        if self.interests and self.interests[1]:
            out.append((self.interests[0], self.interests[1], ""))
        return out

    def inbox_summary(self) -> str:
        """One line for the inbox: the dream log of what changed and why."""
        why = "; ".join(
            f"{r.action} {r.target_path}: {r.note}" for r in self.plan.results if r.target_path in self.written
        )
        return f"AutoDream {self.day} ({', '.join(self.dates)}): " + (why or "no digest change")

    def to_json(self) -> dict:
        sc = self.scan
        return {
            "status": self.status,
            "date": self.day,
            "dates": self.dates,
            "dry_run": self.dry_run,
            "schedule": self.schedule.to_json() if self.schedule else None,
            "extractor": self.extractor,
            "files": {
                "scanned": len(sc.current),
                "changed": sc.changed,
                "unchanged": len(sc.unchanged),
                "deleted": sc.deleted,
            }
            if sc
            else None,
            "units": [u.to_json() for u in self.units],
            "topics": [t.to_json() for t in self.topics],
            "results": [r.to_json() for r in self.plan.results],
            "actions": self.action_counts(),
            "skipped": [{"unit": u.name, "reason": why} for u, why in self.plan.skipped],
            "failed": [{"unit": u.name, "paths": u.paths, "error": why} for u, why in self.plan.failed],
            "failed_paths": self.failed_paths(),
            "checkpointed": self.checkpointed,
            "written": self.written,
            "redacted": self.redacted,
            "facts": self._facts_json(),
            "remaining": self._remaining_json(),
            "interests": {"path": self.interests[0], "action": self.interests[1], "topics": self.interests[2]}
            if self.interests
            else None,
            "warnings": self.warnings,
        }

    def _remaining_json(self) -> dict:
        """What --max-units left for the next run: units, their facts and notes."""
        pr = self.progress
        if pr is None:
            return {"units": 0, "paths": []}
        return {"units": pr.left_units, "facts": len(pr.remaining), "paths": pr.remaining_paths()}

    def _facts_json(self) -> dict | None:
        pr = self.progress
        if pr is None:
            return None
        return {
            "new": pr.facts,
            "grouping": pr.grouping,
            "model": pr.model,
            "remaining": len(pr.remaining),
            "remaining_paths": pr.remaining_paths(),
            "kept": [{"fact": f.source(), "path": f.path, "why": why} for f, why in pr.kept],
            "waiting": [{"fact": f.source(), "path": f.path} for f in pr.waiting],
        }
