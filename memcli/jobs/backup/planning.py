"""Planning a restore: which modules, which workspace slots are replaced, and where each of
the backup's folders goes (memcli.jobs.backup.layout) when it comes from a workspace that
names its folders otherwise. Nothing is written here; what the plan finds worth saying
before the user confirms (another workspace, another layout, an incomplete backup) is in
its warnings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memcli.errors import BadInput
from memcli.jobs.backup import layout
from memcli.jobs.backup.archive import FULL_MODULES, MODULES, module_slots, name_problem, within
from memcli.jobs.backup.verification import Archive, missing
from memcli.vault import lock
from memcli.vault.workspace import Workspace


@dataclass
class Plan:
    archive: Archive
    modules: list[str]  # restored modules (secrets included when chosen)
    full: bool
    replace: dict[str, list[str]]  # module -> workspace slots replaced whole
    moves: dict[str, str] = field(default_factory=dict)  # backup slot -> workspace slot (another layout)
    layout: dict[str, str] = field(default_factory=dict)  # the folder names the workspace has after it
    warnings: list[str] = field(default_factory=list)

    def slots(self) -> list[str]:
        return sorted({s for values in self.replace.values() for s in values})

    def target(self, path: str) -> str:
        """Where the backup's `path` goes in the workspace."""
        for src, dst in self.moves.items():
            if within(path, src):
                return dst + path[len(src) :]
        return path

    def renamed(self) -> dict[str, str]:
        """The backup's note, session and resource folders restored under other names."""
        derived = set(self.archive.meta["slots"].get("metadata", []))
        return {a: b for a, b in sorted(self.moves.items()) if a not in derived}

    @property
    def source(self) -> str:
        return str(self.archive.meta.get("workspace") or "")


def merge_slots(*lists) -> list[str]:
    """Union of slot lists without nesting (a slot inside another one is dropped)."""
    every = sorted({s for values in lists for s in values})
    return [s for s in every if not any(o != s and within(s, o) for o in every)]


def _choose(arc: Archive, modules: list[str] | None) -> tuple[list[str], bool]:
    have = arc.meta["modules"]
    if modules is None:
        if not set(have) >= FULL_MODULES:
            raise BadInput(
                f"{arc.path.name} is a partial backup ({', '.join(have)}); a full restore needs "
                f"{', '.join(sorted(FULL_MODULES))}",
                f"restore some modules with --modules {','.join(have)}",
            )
        return list(have), True
    absent = [m for m in modules if m not in have]
    if absent:
        raise BadInput(f"{arc.path.name} has no {', '.join(absent)} module (it holds {', '.join(have)})")
    if "secrets" in modules and "config" not in modules:
        raise BadInput(
            "secrets are restored into mem.yaml/agent.json with the config module", "add config to --modules"
        )
    return [m for m in MODULES if m in modules], False


def _config_files(arc: Archive) -> list[str]:
    # a backup replaces only the files it has: a QwenPaw agent.json is never deleted for lack of a
    # copy; a snapshot replaces both, so a rollback removes a config file the restore brought
    if arc.meta.get("kind") == "snapshot":
        return sorted(arc.meta["slots"]["config"])
    return sorted(r["path"] for r in arc.files({"config"}))


def plan(ws: Workspace, arc: Archive, modules: list[str] | None) -> Plan:
    chosen, full = _choose(arc, modules)
    config = _config_files(arc) if "config" in chosen else []
    if config:
        records = {r["path"]: r for r in arc.files({"config"})}
        target = layout.after_config(ws.root, {n: arc.read(records[n]) if n in records else None for n in config})
    else:
        target = layout.of_settings(ws.settings)
    moves = layout.moves(arc.meta, target, chosen)
    warnings = []
    if set(moves) - set(arc.meta["slots"].get("metadata", [])) and "metadata" in chosen:
        chosen.remove("metadata")  # its index and catalogs name the backup's folders: rebuilt instead
        warnings.append(
            "the backup's metadata (index, catalogs) names its own folders, so it is left out; "
            "the index is rebuilt from the restored notes"
        )
    current = module_slots(ws)
    replace: dict[str, list[str]] = {}
    for m in chosen:
        if m == "secrets":
            continue
        if m == "config":
            replace[m] = config
            continue
        mine = [moves.get(s, s) for s in arc.meta["slots"][m]]
        # metadata: the backup's children replace all current ones (but locks/)
        replace[m] = merge_slots(mine, current["metadata"]) if m == "metadata" else mine
    _check_overlap(arc, replace)
    _check_targets(ws, [s for values in replace.values() for s in values])
    p = Plan(arc, chosen, full, replace, moves, target)
    p.warnings = _warnings(ws, p, bool(config)) + warnings
    return p


def _warnings(ws: Workspace, p: Plan, config: bool) -> list[str]:
    out, arc = [], p.archive
    if p.source and p.source != str(ws.root):
        out.append(f"{arc.path.name} is a backup of another workspace ({p.source}), restored into {ws.root}")
    if p.renamed():
        out.append(
            f"its folders are restored under this workspace's names: {layout.describe(p.renamed())}"
            + ("" if config else " (restore the config module too to keep the backup's names)")
        )
    now = layout.of_settings(ws.settings)
    changed = [k for k in layout.KEYS if k != "metadata_dir" and now[k] != p.layout.get(k, now[k])]
    left = [
        f"{now[k]}/" for k in changed if (ws.root / now[k]).is_dir() and not any(within(now[k], s) for s in p.slots())
    ]
    if config and changed:
        out.append(
            f"the restored config names other folders ({', '.join(f'{k} {p.layout[k]}' for k in changed)})"
            + (f": {', '.join(left)} stay as they are but are no longer searched" if left else "")
        )
    lacking = missing(arc.meta)
    if lacking:
        first = ", ".join(m["path"] for m in lacking[:3]) + (
            f" and {len(lacking) - 3} more" if len(lacking) > 3 else ""
        )
        out.append(
            f"{arc.path.name} is incomplete: {len(lacking)} path(s) could not be read when it was made and "
            f"are not in it ({first})"
        )
    return out


def _check_overlap(arc: Archive, replace: dict[str, list[str]]) -> None:
    every = [(m, s) for m, values in replace.items() if m != "secrets" for s in values]
    for i, (m, s) in enumerate(every):
        for m2, s2 in every[i + 1 :]:
            if within(s, s2) or within(s2, s):
                raise BadInput(
                    f"cannot restore {arc.path.name} here: its {m} and {m2} would both go to {min(s, s2, key=len)}",
                    "restore the config module too, or fewer modules",
                )


def _check_targets(ws: Workspace, slots: list[str]) -> None:
    locks = ws.rel(ws.lock_path(lock.WORKSPACE).parent)
    for slot in slots:
        problem = name_problem(slot) or ("reserved name" if slot.startswith(".mem-") else None)
        if problem:  # a folder name taken from a restored config: never outside the workspace
            raise BadInput(f"refusing to restore into {slot!r}: {problem}")
        if within(slot, locks) or within(locks, slot):
            raise BadInput(f"refusing to restore {slot}: it holds the workspace's lock folder {locks}")
        parts = slot.split("/")
        for i in range(1, len(parts)):
            above = ws.root.joinpath(*parts[:i])
            if above.is_symlink() or (above.exists() and not above.is_dir()):
                raise BadInput(f"refusing to restore {slot}: {'/'.join(parts[:i])} is a symlink or a file")
