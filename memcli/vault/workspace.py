"""A workspace: its folders, which files are indexed, and how it is found."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from memcli.errors import BadInput
from memcli.vault.settings import Settings, build

DATE_DIR = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DAY_PAGE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")


@dataclass
class Workspace:
    root: Path
    config: dict[str, Any]  # the merged config as mem.yaml would spell it (`mem config` prints it)
    ignored_keys: list[str] = field(default_factory=list)
    settings: Settings = field(default_factory=Settings)  # the same, typed and validated: what jobs read

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

    # Indexed ("watched") files -------------------------------------------------
    def watched_roots(self) -> list[str]:
        return [self.settings.daily_dir, self.settings.digest_dir, *self.settings.extra_paths]

    def iter_watched(self) -> Iterator[tuple[str, os.stat_result]]:
        """Yield (workspace-relative posix path, stat) of every indexed Markdown file.

        Symlinks are skipped (OpenClaw ignores them; following them could leave the
        workspace or loop). Dot-files and dot-folders (temp files, .obsidian) too.
        """
        root = str(self.root)
        cut = len(root) + 1
        mem = self.memory_md
        try:
            st = os.lstat(mem)
            if os.path.isfile(mem) and not os.path.islink(mem):
                yield "MEMORY.md", st
        except OSError:
            pass
        seen: set[str] = set()
        for sub in self.watched_roots():
            base = os.path.normpath(os.path.join(root, sub))
            if not base.startswith(root + os.sep) and base != root:
                continue  # extra path outside the workspace: ignored
            if os.path.islink(base):
                continue
            if os.path.isfile(base) and base.endswith(".md"):
                rel = os.path.relpath(base, root).replace(os.sep, "/")
                if rel not in seen:
                    seen.add(rel)
                    yield rel, os.lstat(base)
                continue
            stack = [base]
            while stack:
                d = stack.pop()
                prefix = d[cut:].replace(os.sep, "/") + "/"  # once per folder, not per file
                try:
                    it = os.scandir(d)
                except OSError:
                    continue
                with it:
                    for e in it:
                        name = e.name
                        if name[0] == ".":
                            continue
                        try:
                            if name.endswith(".md"):
                                # d_type answers these without a system call
                                if e.is_file(follow_symlinks=False) and not e.is_symlink():
                                    rel = prefix + name
                                    if rel not in seen:
                                        seen.add(rel)
                                        yield rel, e.stat(follow_symlinks=False)
                                    continue
                            if e.is_dir(follow_symlinks=False):
                                stack.append(e.path)
                        except OSError:
                            continue

    def is_watched_path(self, rel: str) -> bool:
        if rel == "MEMORY.md":
            return True
        return any(rel == r or rel.startswith(r.rstrip("/") + "/") for r in self.watched_roots())

    def date_of(self, rel: str) -> str | None:
        """The note's date: the path segment right after daily_dir (or the day page's name)."""
        daily = self.settings.daily_dir.rstrip("/") + "/"
        if not rel.startswith(daily):
            return None
        seg = rel[len(daily):].split("/", 1)[0]
        if DATE_DIR.match(seg):
            return seg
        m = DAY_PAGE.match(seg)
        return m.group(1) if m else None


def find_root(explicit: str | None, env: Mapping[str, str], cwd: Path, *, create: bool = False) -> Path:
    """Workspace resolution: flag, MEM_WORKSPACE, nearest marked parent, ~/.mem/workspace."""
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
        if (d / "mem.yaml").is_file() or (d / "mem_metadata").is_dir():
            return d
    home = Path(env.get("HOME") or Path.home()) / ".mem" / "workspace"
    if not home.exists() and not create:
        raise BadInput("no workspace found", "run `mem init` or pass -w PATH")
    return home


def open_workspace(root: Path, env: Mapping[str, str], overrides: Mapping[str, Any] | None = None) -> Workspace:
    from memcli.vault import config as cfgmod

    cfg, ignored = cfgmod.resolve(root, env, overrides)
    return Workspace(root=root, config=cfg, ignored_keys=ignored, settings=build(cfg))
