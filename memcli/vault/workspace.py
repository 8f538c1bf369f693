"""A workspace: its folders, which files are indexed, and how it is found.

Indexed ("watched") files are MEMORY.md, the Markdown under daily_dir and digest_dir, and the
OpenClaw `extra_paths` (absolute or workspace-relative, `~` expanded; a folder is walked for `.md`,
a file is taken as it is; symlinks are skipped). Every indexed file is named by one posix string,
the same in the stores, search output, `mem get` and the MCP tools: its workspace-relative path,
or for an extra path outside the workspace `extra/<name>/<path inside it>` (memcli.vault.extras
names them); `Workspace.locate` turns either back into the file. mem only reads extra paths outside the workspace.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcli.config.settings import Settings, build
from memcli.errors import BadInput
from memcli.vault import dates
from memcli.vault.dates import DATE_DIR, DAY_PAGE  # noqa: F401 - where other modules import them from
from memcli.vault.extras import ExtraRoot, Resolver, plan_extras, within
from memcli.watch import walk


@dataclass
class Workspace:
    root: Path
    config: dict[str, Any]  # the merged config as mem.yaml would spell it (`mem config` prints it)
    ignored_keys: list[str] = field(default_factory=list)
    settings: Settings = field(default_factory=Settings)  # the same, typed and validated: what jobs read
    openclaw: Any = None  # memcli.config.openclaw.Layer: the OpenClaw settings merged in, if any
    _extras: tuple | None = field(default=None, init=False, repr=False, compare=False)
    _resolver: Resolver = field(init=False, repr=False, compare=False)  # set by extra_roots()

    def _dir(self, key: str) -> Path:
        return self.root / getattr(self.settings, key)

    @property
    def metadata(self) -> Path:
        return self._dir("metadata_dir")

    @property
    def daily(self) -> Path:
        return self._dir("daily_dir")

    @property
    def digest(self) -> Path:
        return self._dir("digest_dir")

    @property
    def resource(self) -> Path:
        return self._dir("resource_dir")

    @property
    def sessions(self) -> Path:
        return self._dir("session_dir") / "dialog"

    @property
    def memory_md(self) -> Path:
        return self.root / "MEMORY.md"

    def lock_path(self, name: str) -> Path:
        return self.metadata / "locks" / f"{name}.lock"

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    # Extra paths ---------------------------------------------------------------
    def extra_roots(self) -> tuple[ExtraRoot, ...]:
        """The configured extra paths, classified once (no file is read)."""
        if self._extras is None:
            s = self.settings
            self._extras = plan_extras(self.root, s.extra_paths, [s.daily_dir, s.digest_dir])
            self._resolver = Resolver(
                str(self.root), tuple((r.rel, r.path) for r in self._outside()), s.search.source_conversations
            )
        return self._extras

    def _outside(self) -> list[ExtraRoot]:
        return [r for r in self.extra_roots() if not r.inside and not r.problem]

    def resolver(self) -> Resolver:
        """Indexed path (relative or `extra/<name>/...`) -> absolute file path, as a callable."""
        self.extra_roots()
        return self._resolver

    def locate(self, rel: str) -> Path:
        return Path(self.resolver()(rel))

    def virtual_path(self, path: str) -> str | None:
        """The indexed path of `path` (absolute, or relative with `..`: OpenClaw's form) when it
        lies in an extra path outside the workspace; None otherwise."""
        full = os.path.normpath(os.path.join(str(self.root), path))
        for r in self._outside():
            if full == r.path:
                return r.file_rel()
            if within(full, r.path):
                return f"{r.rel}/{os.path.relpath(full, r.path).replace(os.sep, '/')}"
        return None

    def anchor(self, rel: str) -> tuple[Path, list[str]]:
        """(folder, names below it) that lead to `rel`: each name is checked for symlinks."""
        for r in self._outside():
            if rel.startswith(r.rel + "/"):
                rest, base = rel[len(r.rel) + 1 :], os.path.basename(r.path)
                parts = [base] if rest == base and not os.path.isdir(r.path) else [base, *rest.split("/")]
                return Path(os.path.dirname(r.path)), parts
        return self.root, rel.split("/")

    def extra_path_problems(self) -> list[tuple[str, str]]:
        """(configured entry, why it gives no files): missing, a symlink, not Markdown, ..."""
        out = []
        for r in self.extra_roots():
            if r.problem:
                out.append((r.entry, r.problem))
                continue
            try:
                st = os.lstat(r.path)
            except (FileNotFoundError, NotADirectoryError):
                out.append((r.entry, f"extra path not found ({r.path})"))
                continue
            except OSError as exc:
                out.append((r.entry, f"extra path cannot be read ({r.path}: {exc.strerror})"))
                continue
            if stat.S_ISLNK(st.st_mode):
                out.append((r.entry, f"extra path is a symlink ({r.path}); mem does not follow symlinks"))
            elif stat.S_ISREG(st.st_mode) and not r.path.endswith(".md"):
                out.append((r.entry, "extra path is a file but not Markdown (.md)"))
            elif not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
                out.append((r.entry, "extra path is neither a file nor a folder"))
        return out

    def config_warnings(self) -> list[tuple[str, str]]:
        """extra_path_problems() and the OpenClaw settings left out: (where, what)."""
        out = self.extra_path_problems()
        if self.openclaw is not None:
            out += [(self.openclaw.path, w) for w in self.openclaw.warnings]
        return out

    # Indexed ("watched") files -------------------------------------------------
    def watched_roots(self) -> list[str]:
        """daily_dir, digest_dir and the extra paths inside the workspace (relative paths)."""
        s = self.settings
        return [s.daily_dir, s.digest_dir, *(r.rel for r in self.extra_roots() if r.inside and not r.problem)]

    def _bases(self) -> list[tuple[str, str, str, bool]]:
        """(absolute path, indexed path, indexed path when it is a file, outside) per watched root."""
        root = str(self.root)
        out = []
        for sub in (self.settings.daily_dir, self.settings.digest_dir):
            base = os.path.normpath(os.path.join(root, sub))
            if base.startswith(root + os.sep):
                rel = base[len(root) + 1 :].replace(os.sep, "/")
                out.append((base, rel, rel, False))
        for r in self.extra_roots():
            if not r.problem:
                base = os.path.normpath(os.path.join(root, r.rel)) if r.inside else r.path
                out.append((base, r.rel, r.file_rel(), not r.inside))
        return out

    def iter_watched(
        self, dirs: dict | None = None, split: bool = False, problems: list | None = None
    ) -> Iterator[tuple[str, tuple[int, int]]]:
        """Yield (indexed posix path, (st_mtime_ns, st_size)) of every indexed Markdown file;
        `dirs`, when given, receives what watched_dirs() returns, from the same walk, and
        `problems` (indexed path, why) of what the walk had to go round (memcli.watch.walk.walk).
        `split`: the caller expects a large vault, worth walking on two cores (memcli.watch.walk).

        Symlinks are skipped (OpenClaw ignores them; following them could leave the
        workspace or loop). Dot-files and dot-folders (temp files, .obsidian) too. A walk of
        an extra path outside the workspace skips the workspace and the other extra paths.
        """
        if split:
            return walk.in_two(self._watched, dirs, problems)
        return self._watched(dirs, None, problems)

    def _watched(
        self, dirs: dict | None, half: walk.Half | None = None, problems: list | None = None
    ) -> Iterator[tuple[str, tuple[int, int]]]:
        """iter_watched()'s files, or those of one half (memcli.watch.walk)."""
        mem = self.memory_md
        try:
            st = os.lstat(mem)
            if os.path.isfile(mem) and not os.path.islink(mem) and walk.mine("MEMORY.md", half):
                yield "MEMORY.md", (st.st_mtime_ns, st.st_size)
        except OSError:
            pass
        seen: set[str] = set()
        bases = self._bases()
        skip = frozenset()
        if any(out for *_, out in bases):
            root = str(self.root)
            skip = frozenset({root, os.path.realpath(root), *(b for b, *_, out in bases if out)})
        for base, vbase, file_rel, out in bases:
            try:
                st = os.lstat(base)
            except OSError:
                if dirs is not None:
                    dirs[base] = -1
                continue
            if stat.S_ISREG(st.st_mode):
                if base.endswith(".md") and file_rel not in seen and walk.mine(file_rel.rsplit("/", 1)[-1], half):
                    seen.add(file_rel)
                    yield file_rel, (st.st_mtime_ns, st.st_size)
            elif stat.S_ISDIR(st.st_mode):
                if dirs is not None:
                    dirs[base] = st.st_mtime_ns
                yield from walk.walk(base, vbase, seen, skip - {base} if out else frozenset(), dirs, half, problems)

    def watched_dirs(self) -> dict[str, int]:
        """mtime_ns of every folder iter_watched walks, by absolute path (-1: a watched root
        that is missing). A file added, deleted, renamed or saved by replacement changes its
        folder's mtime: memcli.index.quick compares them instead of stat-ing every file."""
        dirs: dict[str, int] = {}
        for _ in self.iter_watched(dirs):
            pass
        return dirs

    def watched_folders(self) -> Iterator[str]:
        """The root and every folder iter_watched descends into (dot and symlinked ones
        excepted), absolute: what a file watch has to watch (memcli.mcp.watch, memcli.watch.feed)."""
        root = os.path.realpath(self.root)
        yield root
        tops = [os.path.normpath(os.path.join(root, sub)) for sub in self.watched_roots()]
        tops = [t for t in tops if t.startswith(root + os.sep) and not os.path.islink(t)]
        for base in tops + [r.path for r in self._outside() if not os.path.islink(r.path)]:
            while not os.path.isdir(base) and os.path.dirname(base) not in (base, root):  # not there yet
                base = os.path.dirname(base)  # a file, or a folder not made yet: watch what holds it
            for folder, _ in walk.folders(base):
                yield folder

    def watched_stat(self, rel: str) -> tuple[int, int] | None:
        """(mtime_ns, size) of the indexed file `rel` (inside the workspace), None when it is
        not one now: gone, not Markdown, a dot name or a symlink (iter_watched's rules)."""
        if not (rel.endswith(".md") and self.is_watched_path(rel)) or any(p[:1] in (".", "") for p in rel.split("/")):
            return None
        try:
            st = os.lstat(self.locate(rel))
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size) if stat.S_ISREG(st.st_mode) else None

    def watched_under(
        self, folder: str, dirs: dict | None = None, problems: list | None = None
    ) -> Iterator[tuple[str, tuple[int, int]]]:
        """iter_watched()'s files below the workspace folder `folder` (a relative path), and
        the mtimes of its folders into `dirs`."""
        seen: set[str] = set()
        for base, vbase, _, out in self._bases():
            if out:
                continue
            if folder == vbase or folder.startswith(vbase + "/"):
                start, vstart = os.path.join(base, *folder[len(vbase) + 1 :].split("/")), folder
            elif vbase.startswith(folder + "/"):
                start, vstart = base, vbase  # the folder holds a whole watched root
            else:
                continue
            if os.path.isdir(start) and not os.path.islink(start):
                if dirs is not None:
                    dirs[start] = os.lstat(start).st_mtime_ns
                yield from walk.walk(start, vstart, seen, frozenset(), dirs, None, problems)

    def is_watched_path(self, rel: str) -> bool:
        if rel == "MEMORY.md":
            return True
        if any(rel == r or rel.startswith(r.rstrip("/") + "/") for r in self.watched_roots()):
            return True
        return any(rel.startswith(r.rel + "/") for r in self._outside())

    def date_of(self, rel: str) -> str | None:
        """The note's date: the path segment right after daily_dir (or the day page's name),
        when that names a day of the calendar (memcli.vault.dates)."""
        return dates.of(self.settings.daily_dir, rel)

    def date_problem(self, rel: str) -> str | None:
        """Why `rel` is undated although its name has the shape of a date, else None."""
        return dates.problem(self.settings.daily_dir, rel)


# what marks a folder as a workspace: mem's own files, or a QwenPaw agent's config
MARKERS = (("mem.yaml", False), ("mem_metadata", True), ("agent.json", False))


def find_root(explicit: str | None, env: Mapping[str, str], cwd: Path, *, create: bool = False) -> Path:
    """Workspace resolution: flag, MEM_WORKSPACE, the nearest folder (cwd or a parent) holding
    mem.yaml, mem_metadata/ or a QwenPaw agent.json, else the OpenClaw agent workspace holding cwd,
    ~/.mem/workspace."""
    chosen = explicit or env.get("MEM_WORKSPACE")
    if chosen:
        p = Path(chosen).expanduser()
        p = p if p.is_absolute() else cwd / p
        if p.exists() and not p.is_dir():
            raise BadInput(f"workspace {p} is not a folder")
        if not p.exists() and not create:
            raise BadInput(f"workspace {p} does not exist", f"create it with `mem init {chosen}`")
        return p.resolve() if p.exists() else p.absolute()
    for d in [cwd, *cwd.parents]:
        if any((d / name).is_dir() if folder else (d / name).is_file() for name, folder in MARKERS):
            return d
    from memcli.config import openclaw

    claw = openclaw.workspace_holding(str(cwd), env)
    if claw is not None:
        return Path(claw)
    home = Path(env.get("HOME") or Path.home()) / ".mem" / "workspace"
    if not home.exists() and not create:
        raise BadInput("no workspace found", "run `mem init` or pass -w PATH")
    return home


def open_workspace(root: Path, env: Mapping[str, str], overrides: Mapping[str, Any] | None = None) -> Workspace:
    from memcli.config import layers

    notes: dict[str, Any] = {}
    cfg, ignored = layers.resolve(root, env, overrides, notes=notes)
    return Workspace(root=root, config=cfg, ignored_keys=ignored, settings=build(cfg), openclaw=notes.get("openclaw"))
