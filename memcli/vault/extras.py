"""The configured extra paths (OpenClaw's `extra_paths`): which are inside the workspace, and
the virtual folder `extra/<name>` each one outside is indexed under.

An extra path inside the workspace is indexed under its own relative path. One outside is named
`extra/<name>/<path inside it>` (<name>: the folder's name or the file's stem, made unique with
`-2`, `-3`, ... in config order), so its names depend on the config alone and stay stable; a
Resolver turns such a name back into the file (memcli.vault.workspace.Workspace.locate).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

VIRTUAL = "extra"  # extra paths outside the workspace are indexed as extra/<name>/...
_UNSAFE_NAME = re.compile(r"[^\w.\- ]+")


@dataclass(frozen=True)
class ExtraRoot:
    """One configured extra path."""

    entry: str  # as configured
    path: str  # absolute and normalised (`~` expanded, a relative entry taken from the workspace)
    inside: bool  # inside the workspace: indexed under its own relative path
    rel: str  # inside: that relative path; outside: its virtual folder `extra/<name>`
    problem: str = ""  # why it is never indexed, whatever is on disk

    def file_rel(self) -> str:
        """The indexed path of this entry when it is a Markdown file."""
        return self.rel if self.inside else f"{self.rel}/{os.path.basename(self.path)}"


@dataclass(frozen=True)
class Resolver:
    """Indexed path -> absolute file path; picklable, so index workers can take it."""

    root: str
    extras: tuple[tuple[str, str], ...] = ()  # (virtual folder `extra/<name>`, absolute path)
    # index a note's source conversation with it (mem.yaml search.source_conversations)
    sources: bool = True

    def __call__(self, rel: str) -> str:
        if self.extras and rel.startswith(VIRTUAL + "/"):
            for vdir, path in self.extras:
                if rel.startswith(vdir + "/"):
                    rest = rel[len(vdir) + 1 :]
                    if rest == os.path.basename(path) and not os.path.isdir(path):
                        return path  # an extra path that is a file
                    return os.path.join(path, *rest.split("/"))
        return os.path.join(self.root, rel)


def within(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def _name_of(path: str) -> str:
    base = os.path.basename(path.rstrip(os.sep)) or "root"
    if base.lower().endswith(".md") and len(base) > 3:
        base = base[:-3]
    return _UNSAFE_NAME.sub("-", base).strip(". ") or "root"


def plan_extras(root: Path, entries, watched: list[str]) -> tuple[ExtraRoot, ...]:
    """Classify the configured extra paths; `watched` are daily_dir and digest_dir.

    Inside or outside is decided lexically, and by realpath (a workspace reached through a
    symlinked folder); names depend on the config alone, so they stay stable."""
    top = os.path.normpath(str(root))
    real_top = os.path.realpath(top)
    inside: list[tuple[str, str, str]] = []  # entry, path, rel
    outside: list[tuple[str, str]] = []  # entry, path
    seen: set[str] = set()
    for entry in entries:
        entry = str(entry).strip()
        path = os.path.normpath(os.path.join(top, entry))  # an absolute entry stays itself
        if not entry or path in seen:
            continue
        seen.add(path)
        real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
        if within(path, top) or within(real, real_top):
            rel = os.path.relpath(path, top) if within(path, top) else os.path.relpath(real, real_top)
            inside.append((entry, path, rel.replace(os.sep, "/")))
        else:
            outside.append((entry, path))
    out = [
        ExtraRoot(e, p, True, r, "the workspace itself cannot be an extra path" if r == "." else "")
        for e, p, r in inside
    ]
    rels = [w.strip("/") for w in watched] + [r.rel for r in out if not r.problem]
    taken = any(r == VIRTUAL or r.startswith(VIRTUAL + "/") for r in rels)
    names: set[str] = set()
    for entry, path in outside:
        base, n = _name_of(path), 1
        while (f"{base}-{n}" if n > 1 else base).casefold() in names:
            n += 1
        name = f"{base}-{n}" if n > 1 else base
        names.add(name.casefold())
        problem = (
            f"not indexed: its virtual folder {VIRTUAL}/ is also an indexed folder of the workspace "
            f"(rename that folder)"
            if taken
            else ""
        )
        out.append(ExtraRoot(entry, path, False, f"{VIRTUAL}/{name}", problem))
    return tuple(out)
