"""What `resource/` holds and what was made of it: walking, reading, dating, the resource catalog.

The catalog is `mem_metadata/file_catalog/resource.jsonl.zst` in the store format:
one graph-shaped record per resource (`path`, `st_mtime`, empty `links`,
`chunk_ids` and `front_matter`), then our fields: `st_size`, `sha256` of the
content, `date` (stable across scans), `note` (the owning note, "" while not
interpreted), `note_sha256` (the note as mem last wrote it, so hand edits are
noticed), `note_next` (the note as mem is about to write it: saved before the
notes are written, so a scan killed in between knows that text as its own),
`interpreted` (the content hash the note reflects), `skipped` (why the
content cannot be interpreted) and `checked_ns` (when the content was last
hashed). Like everything under mem_metadata/ it can be lost: ownership is the
note's frontmatter `source_resource: '[[resource/…]]'`, from which it is rebuilt.

ReMe (QwenPaw configures a `resource` catalog) loads and rewrites that file on
every close through its own record type, which keeps `path` and `st_mtime` and
drops our fields. So the same lines are also kept in `mem_metadata/resource/
catalog.jsonl.zst`, which ReMe never opens: a catalog record without our fields
takes that copy's record of the same path (whole, with its own st_mtime, so a
resource changed since is still hashed again). Without the copy such a record
counts as new: its hash is computed and its note found from the frontmatter.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from typing import Any

from memcli.errors import CorruptStore
from memcli.index.stores import store
from memcli.vault import dates, frontmatter
from memcli.vault.workspace import DATE_DIR, Workspace
from memcli.watch.walk import shown, utf8_name

SUFFIXES = frozenset({"md", "markdown", "txt", "json", "jsonl", "csv", "yaml", "yml", "html", "htm"})
MAX_BYTES = 10 * 1024 * 1024
OWNER_KEY = "source_resource"
_HEAD_BYTES = 64 * 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass
class Entry:
    path: str
    st_mtime: float
    st_size: int = -1
    sha256: str = ""
    date: str = ""
    note: str = ""
    note_sha256: str = ""
    interpreted: str = ""
    skipped: str = ""
    checked_ns: int = 0
    note_next: str = ""  # last: callers build entries positionally

    def line(self) -> bytes:
        head = store.catalog_line(self.path, self.st_mtime)[:-1]  # the standard record, minus its "}"
        # note_next only while a write is under way: a settled catalog keeps its usual fields
        extra = {k: v for k, v in asdict(self).items() if k not in ("path", "st_mtime") and (v or k != "note_next")}
        return head + b"," + json.dumps(extra, ensure_ascii=False, separators=(",", ":")).encode("utf-8")[1:]

    def same_stat(self, st: os.stat_result) -> bool:
        return self.st_mtime == st.st_mtime and self.st_size == st.st_size

    def wrote(self, sha: str | None) -> bool:
        """True when a note with this hash is mem's own text (last written, or about to be)."""
        return sha is not None and sha in (self.note_sha256, self.note_next)

    @property
    def pending(self) -> bool:
        """Readable content that no note reflects yet."""
        return not self.skipped and (not self.note or self.interpreted != self.sha256)


def path(ws: Workspace):
    return ws.metadata / store.CATALOG_DIR / "resource.jsonl.zst"


def own_path(ws: Workspace):
    """mem's copy of the catalog, which ReMe does not rewrite (module docstring)."""
    return ws.metadata / "resource" / "catalog.jsonl.zst"


def _own_records(ws: Workspace) -> dict[str, dict]:
    try:
        return {r["path"]: r for r in store.read_records(own_path(ws)) if isinstance(r.get("path"), str)}
    except (CorruptStore, OSError):
        return {}  # only a help: without it, records ReMe rewrote are hashed again


def load(ws: Workspace) -> tuple[dict[str, Entry], str | None]:
    """The catalog by resource path, and a problem when it had to be dropped (absent is no problem)."""
    out: dict[str, Entry] = {}
    try:
        records = store.read_records(path(ws))
    except CorruptStore as exc:
        return {}, f"{exc}; rebuilt from the notes' source_resource links"
    except OSError as exc:
        return {}, f"cannot read the resource catalog ({exc.strerror}); rebuilt from the notes"
    blank = Entry("", 0.0)
    own = _own_records(ws) if any("st_size" not in rec for rec in records) else {}
    for rec in records:
        if "st_size" not in rec:  # rewritten by ReMe: our fields are gone, our copy has them
            rec = own.get(str(rec.get("path")), rec)
        kw: dict[str, Any] | None
        kw = {}
        for key in Entry.__dataclass_fields__:
            value, want = rec.get(key), type(getattr(blank, key))
            if value is None:
                continue  # a record written by ReMe has only path and st_mtime: the rest takes defaults
            if want is float and isinstance(value, int):
                value = float(value)
            if not isinstance(value, want) or isinstance(value, bool):
                kw = None
                break
            kw[key] = value
        if kw and kw.get("path") and "st_mtime" in kw:
            if kw.get("date") and not dates.calendar_date(kw["date"]):
                kw["date"] = ""  # (a hand-edited or damaged record) dated again like a new resource
            out[kw["path"]] = Entry(**kw)
    return out, None


def save(ws: Workspace, entries: dict[str, Entry]) -> None:
    lines = [entries[p].line() for p in sorted(entries)]
    store.write_lines(own_path(ws), lines)  # first: the copy is never older than the catalog
    store.write_lines(path(ws), lines)


def walk(ws: Workspace, others: list[tuple[str, str]] | None = None) -> dict[str, os.stat_result]:
    """Every watched resource file (suffix in SUFFIXES, any case): workspace-relative path -> stat.

    Dot-files, dot-folders and symlinks are skipped, as for notes: a link could lead
    out of the workspace or loop. Files of other types are listed in `others` with the
    reason, so a scan can name every file it leaves out; so are folders that cannot be
    read (`resource/private/`, with its slash: `unreachable` tells them) and names that are
    not UTF-8.
    """
    cut = len(str(ws.root)) + 1
    out: dict[str, os.stat_result] = {}
    said = others if others is not None else []
    stack = [str(ws.resource)]
    if os.path.islink(stack[0]):
        return out
    while stack:
        folder = stack.pop()
        try:
            it = os.scandir(folder)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            said.append((_rel(folder, cut) + "/", f"folder cannot be read ({exc.strerror})"))
            continue
        blocked = False
        with it:
            for e in it:
                try:
                    _entry(e, cut, stack, out, said)
                except FileNotFoundError:
                    continue
                except OSError as exc:  # listed but not searchable (mode r--)
                    if not blocked:
                        said.append((_rel(folder, cut) + "/", f"folder cannot be searched ({exc.strerror})"))
                    blocked = True
    return out


def _rel(path: str, cut: int) -> str:
    return shown(path[cut:].replace(os.sep, "/"))


def _entry(e: os.DirEntry, cut: int, stack: list[str], out: dict, others: list[tuple[str, str]]) -> None:
    if e.name.startswith("."):
        return
    if e.is_symlink():
        others.append((_rel(e.path, cut), "a symbolic link (not followed)"))
    elif not utf8_name(e.name):
        others.append((_rel(e.path, cut), "name is not valid UTF-8; rename it"))
    elif e.is_dir(follow_symlinks=False):
        stack.append(e.path)
    elif not e.is_file(follow_symlinks=False):
        return
    elif "." in e.name and e.name.rsplit(".", 1)[1].lower() in SUFFIXES:
        out[e.path[cut:].replace(os.sep, "/")] = e.stat(follow_symlinks=False)
    else:
        kind = f".{e.name.rsplit('.', 1)[1].lower()} files" if "." in e.name else "files without a suffix"
        others.append((_rel(e.path, cut), f"unsupported type ({kind} are not read)"))


def unreachable(others: list[tuple[str, str]]) -> tuple[str, ...]:
    """The folders `walk` could not read, as path prefixes: what they hold was not seen, so
    it is not deleted either."""
    return tuple(p for p, _ in others if p.endswith("/"))


def path_date(ws: Workspace, rel: str) -> str | None:
    """The date of `resource/YYYY-MM-DD/…` (any depth below it), else None."""
    name = _date_shaped(ws, rel)
    return dates.calendar_date(name) if name else None


def date_problem(ws: Workspace, rel: str) -> str | None:
    """Why `resource/<name>/…` is undated although <name> has the shape of a date, else None."""
    name = _date_shaped(ws, rel)
    return dates.warning(name) if name and dates.calendar_date(name) is None else None


def _date_shaped(ws: Workspace, rel: str) -> str | None:
    prefix = ws.settings.resource_dir.rstrip("/") + "/"
    parts = rel[len(prefix) :].split("/")
    return parts[0] if len(parts) >= 2 and DATE_DIR.match(parts[0]) else None


def read(ws: Workspace, rel: str, st: os.stat_result) -> tuple[str | None, str, str | None]:
    """(text, sha256, None) or (None, sha256 or "", why it is skipped)."""
    if _CONTROL.search(rel):
        return None, "", "file name has control characters"
    if st.st_size > MAX_BYTES:
        return None, "", f"larger than 10 MiB ({st.st_size / 1024 / 1024:.1f} MiB)"
    try:
        with open(ws.root / rel, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        return None, "", f"unreadable: {exc.strerror}"
    sha = hashlib.sha256(data).hexdigest()
    if len(data) > MAX_BYTES:
        return None, sha, "larger than 10 MiB"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, sha, "UTF-16 text; convert it to UTF-8"
    if b"\0" in data:
        return None, sha, "binary content"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return None, sha, f"not valid UTF-8 (line {line}, byte {exc.start})"
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    if not text.strip():
        return None, sha, "empty"
    return text, sha, None


def note_sha(ws: Workspace, note: str) -> str | None:
    try:
        return hashlib.sha256((ws.root / note).read_bytes()).hexdigest()
    except OSError:
        return None


def link(rel: str) -> str:
    return f"[[{rel}]]"


def owned_by(ws: Workspace, note: str, rel: str) -> bool:
    """True when `note` exists and its frontmatter names `rel` as its source."""
    return _owner_target(ws.root / note) == rel


def _owner_target(file) -> str | None:
    try:
        with open(file, "rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError:
        return None
    if OWNER_KEY.encode() not in head:
        return None
    src, _ = frontmatter.split(head.decode("utf-8", errors="replace").removeprefix("\ufeff").replace("\r\n", "\n"))
    value = frontmatter.parse(src)[0].get(OWNER_KEY)
    if not isinstance(value, str) or not value.startswith("[[") or not value.endswith("]]"):
        return None
    return value[2:-2]


def owners(ws: Workspace) -> dict[str, str]:
    """resource path -> its owning daily note, from every `memory/<date>/*.md` frontmatter.

    Read when the catalog cannot say (first scan, lost catalog, a new resource);
    when two notes claim one resource, the first by path wins.
    """
    out: dict[str, str] = {}
    try:
        days = sorted(
            e.name for e in os.scandir(ws.daily) if e.is_dir(follow_symlinks=False) and DATE_DIR.match(e.name)
        )
    except OSError:
        return out
    for day in days:
        try:
            names = sorted(
                e.name
                for e in os.scandir(ws.daily / day)
                if e.name.endswith(".md") and not e.name.startswith(".") and e.is_file(follow_symlinks=False)
            )
        except OSError:
            continue
        for name in names:
            target = _owner_target(ws.daily / day / name)
            if target and target not in out:
                out[target] = ws.rel(ws.daily / day / name)
    return out
