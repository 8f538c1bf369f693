"""Dream input: the scan window, change detection against the dream catalog, the checkpoint.

Inputs are the day index pages `memory/<day>.md` and every note under
`memory/<day>/` for the days of the window. The dream catalog
(`mem_metadata/file_catalog/dream.jsonl.zst`, ReMe's record shape: path and
st_mtime) remembers each input as it was when it was last dreamed; a file is
changed when it is not there or its mtime differs, or its size differs from the
size we keep beside it (ReMe's catalog has no size field). The checkpoint
records the stat seen at scan time, so a file edited while dream runs is still
changed next time. A note whose facts an offline run left for the next one (over
--max-units; the dream state's `pending`) is changed until they are done, even after it
has left the scan window.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from datetime import date, timedelta

from memcli.errors import CorruptStore
from memcli.index.stores import store
from memcli.vault import atomic, dates
from memcli.vault.dates import DATE_DIR, DAY_PAGE
from memcli.vault.workspace import Workspace

CATALOG = "dream.jsonl.zst"


@dataclass
class Scan:
    day: str
    dates: list[str]
    current: dict[str, tuple[float, int]]  # path -> (st_mtime, st_size) at scan time
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    catalog: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def window(day: str, scan_days: int) -> list[str]:
    """The scan window ending on `day`; days before year 1 do not exist and are left out."""
    base = date.fromisoformat(day)
    days = min(scan_days, (base - date.min).days + 1)
    return [(base - timedelta(days=i)).isoformat() for i in range(days - 1, -1, -1)]


def catalog_path(ws: Workspace):
    return ws.metadata / store.CATALOG_DIR / CATALOG


def state_path(ws: Workspace):
    return ws.metadata / "dream" / "state.json"


def load_state(ws: Workspace) -> dict:
    """{"last_success": ISO time, "sizes": {path: size}}; {} when absent or unreadable."""
    try:
        data = json.loads(state_path(ws).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}  # no state: every input counts as changed, and the schedule starts afresh
    return data if isinstance(data, dict) else {}


def save_state(ws: Workspace, state: dict) -> None:
    atomic.write_text(state_path(ws), json.dumps(state, ensure_ascii=False, sort_keys=True) + "\n")


def inputs(ws: Workspace, days: list[str], warnings: list[str] | None = None) -> dict[str, tuple[float, int]]:
    """Day pages and notes of `days` (dot-files and symlinks skipped), with their stat; a
    folder or file that cannot be read is left out, named in `warnings`."""
    out: dict[str, tuple[float, int]] = {}
    said = warnings if warnings is not None else []
    for day in days:
        page = ws.daily / f"{day}.md"
        try:
            st = os.lstat(page)
            if stat.S_ISREG(st.st_mode):
                out[ws.rel(page)] = (st.st_mtime, st.st_size)
        except FileNotFoundError:
            pass
        except OSError as exc:
            said.append(f"skipped {ws.rel(page)}: cannot be read ({exc.strerror})")
        stack = [] if (ws.daily / day).is_symlink() else [str(ws.daily / day)]
        while stack:
            folder = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except FileNotFoundError:
                continue
            except OSError as exc:  # its notes are not dreamed: say so, and go on with the others
                said.append(f"skipped {_rel(ws, folder)}/: folder cannot be read ({exc.strerror})")
                continue
            for e in entries:
                _entry(ws, e, stack, out, said)
    return dict(sorted(out.items()))


def _entry(ws: Workspace, e: os.DirEntry, stack: list[str], out: dict, warnings: list[str]) -> None:
    if e.name.startswith(".") or e.is_symlink():
        return
    try:
        if e.is_dir(follow_symlinks=False):
            stack.append(e.path)
        elif e.name.endswith(".md") and e.is_file(follow_symlinks=False):
            st = e.stat(follow_symlinks=False)
            out[_rel(ws, e.path)] = (st.st_mtime, st.st_size)
    except FileNotFoundError:
        pass  # deleted while listed
    except OSError as exc:
        warnings.append(f"skipped {_rel(ws, e.path)}: cannot be read ({exc.strerror})")


def _rel(ws: Workspace, path: str) -> str:
    return os.path.relpath(path, ws.root).replace(os.sep, "/")


def undated(ws: Workspace, days: list[str]) -> list[str]:
    """Warnings for the day folders and day pages whose date-shaped names name no day
    (2026-11-31, 2026-13-01) in the window's months (or years, for a month that is none):
    no window ever holds them, so the notes a user filed there are never dreamed."""
    months, years = {d[:7] for d in days}, {d[:4] for d in days}
    try:
        names = sorted(e.name for e in os.scandir(ws.daily) if not e.name.startswith("."))
    except OSError:
        return []
    out = []
    for name in names:
        m = DAY_PAGE.match(name)
        shaped = m.group(1) if m else name if DATE_DIR.match(name) else None
        if not shaped or dates.calendar_date(shaped):
            continue
        if shaped[:7] in months or (shaped[:4] in years and not "01" <= shaped[5:7] <= "12"):
            out.append(f"skipped {ws.rel(ws.daily / name)}{'' if m else '/'}: {dates.warning(shaped)}")
    return out


def load_catalog(ws: Workspace, warnings: list[str]) -> dict[str, float]:
    try:
        records = store.read_records(catalog_path(ws))
    except CorruptStore as exc:
        # the catalog is derived: starting from empty re-dreams the window, which changes no node twice
        warnings.append(f"{exc}; every input in the window counts as changed")
        return {}
    out = {}
    for rec in records:
        if isinstance(rec.get("path"), str) and isinstance(rec.get("st_mtime"), (int, float)):
            out[rec["path"]] = float(rec["st_mtime"])
    return out


def in_window(ws: Workspace, rel: str, days: list[str]) -> bool:
    return ws.date_of(rel) in days


def scan(ws: Workspace, day: str, scan_days: int, state: dict) -> Scan:
    days = window(day, scan_days)
    sc = Scan(day, days, {})
    sc.current = inputs(ws, days, sc.warnings)
    sc.warnings += undated(ws, days)
    sc.catalog = load_catalog(ws, sc.warnings)
    sizes = given if isinstance(given := state.get("sizes"), dict) else {}
    for rel, (mtime, size) in sc.current.items():
        known = sc.catalog.get(rel)
        same = known is not None and known == mtime and sizes.get(rel, size) == size
        (sc.unchanged if same else sc.changed).append(rel)
    sc.deleted = sorted(p for p in sc.catalog if p not in sc.current and in_window(ws, p, days))
    pending = given if isinstance(given := state.get("pending"), dict) else {}
    for rel in sorted(p for p in pending if isinstance(p, str) and p not in sc.current):
        path = ws.root / rel
        try:
            st = os.lstat(path)
        except OSError:
            continue  # gone, or not readable now: checkpoint() drops or keeps it as for any note
        if rel.endswith(".md") and ".." not in rel.split("/") and stat.S_ISREG(st.st_mode):
            sc.current[rel] = (st.st_mtime, st.st_size)
            sc.changed.append(rel)
    return sc


def checkpoint(
    ws: Workspace, sc: Scan, done: list[str], state: dict, pending: dict[str, list[str]] | None = None
) -> None:
    """Record `done` inputs with their scan-time stat; drop deleted ones. Writes the catalog and
    the sizes kept in the dream state, and its `pending` facts: the given ones, plus those of
    earlier runs for notes this run did not read (the caller saves the state)."""
    before = given if isinstance(given := state.get("pending"), dict) else {}
    kept = {p: v for p, v in before.items() if p not in sc.changed and p not in done and (ws.root / p).is_file()}
    kept.update(pending or {})
    if kept:
        state["pending"] = dict(sorted(kept.items()))
    else:
        state.pop("pending", None)
    catalog = {p: m for p, m in sc.catalog.items() if p not in sc.deleted}
    sizes = {p: s for p, s in (state.get("sizes") or {}).items() if p not in sc.deleted and p in catalog}
    for rel in done:
        catalog[rel], sizes[rel] = sc.current[rel]
    if catalog != sc.catalog or not catalog_path(ws).exists():
        store.write_lines(catalog_path(ws), (store.catalog_line(p, m) for p, m in sorted(catalog.items())))
    state["sizes"] = dict(sorted(sizes.items()))
