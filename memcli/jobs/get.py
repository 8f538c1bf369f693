"""Read a memory file, or a line range of it, by its indexed path (memory_get)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from memcli.errors import BadInput
from memcli.vault.workspace import Workspace

MAX_BYTES = 10 * 1024 * 1024


@dataclass
class Excerpt:
    path: str
    start_line: int
    end_line: int
    total_lines: int
    text: str
    # statements in these lines a newer one superseded (memcli.index.currency): {line, text, by, current}
    superseded: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "total_lines": self.total_lines,
            "text": self.text,
            "superseded": self.superseded,
        }

    def superseded_lines(self) -> list[str]:
        """One line per superseded statement: which line, and what holds its value now."""
        return [
            f"Superseded: line {s['line']} ({s['text']}) by {s['current']['text']} "
            f"({s['current']['path']}, {s['current']['date']})"
            for s in self.superseded
        ]


def check_path(ws: Workspace, path: str) -> str:
    """Validate an agent-supplied path; returns its indexed form (workspace-relative, or
    `extra/<name>/...` for an extra path outside the workspace, which may also be given as
    an absolute path or OpenClaw's `../<folder>/...`)."""
    raw = (path or "").strip()
    if not raw:
        raise BadInput("path is empty")
    if any(ord(c) < 32 for c in raw) or "\\" in raw:
        raise BadInput(f"invalid path {raw!r}")
    p = PurePosixPath(raw)
    if p.is_absolute() or ".." in p.parts:
        virtual = ws.virtual_path(raw)
        if virtual is None:
            raise BadInput(f"path {raw!r} must be relative to the workspace and must not contain '..'")
        p = PurePosixPath(virtual)
    rel = p.as_posix()
    if not rel.endswith(".md"):
        raise BadInput(f"{rel} is not a Markdown memory file (.md)")
    if not ws.is_watched_path(rel):
        extra = ", extra_paths" if ws.settings.extra_paths else ""
        raise BadInput(
            f"{rel} is outside the memory areas (MEMORY.md, {ws.settings.daily_dir}/, {ws.settings.digest_dir}/{extra})"
        )
    cur, parts = ws.anchor(rel)
    for part in parts:
        cur = cur / part
        if os.path.islink(cur):
            raise BadInput(f"{rel} goes through a symlink; refusing to follow it")
    if not cur.is_file():
        raise BadInput(f"{rel} does not exist", "find paths with `mem search`")
    return rel


def run(ws: Workspace, path: str, *, start: int = 1, lines: int | None = None) -> Excerpt:
    if (path or "").strip().startswith("@"):  # @<agent_id>/<path>: another agent's, from the shared index
        from memcli.jobs import team

        path, text = team.read(ws, path)
        if text is not None:
            return excerpt(path, text, start, lines)
    rel = check_path(ws, path)
    _check_range(start, lines)
    full = ws.locate(rel)
    if full.stat().st_size > MAX_BYTES:
        raise BadInput(f"{rel} is larger than 10 MiB; read it with --from/--lines from a smaller file")
    try:
        text = full.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{rel} is not valid UTF-8 (byte {exc.start})") from None
    out = excerpt(rel, text, start, lines)
    out.superseded = superseded(ws, out)
    return out


def superseded(ws: Workspace, ex: Excerpt) -> list[dict]:
    """The excerpt's statements a newer one superseded, as the last sync recorded them."""
    from memcli.index import currency

    return [
        {k: e[k] for k in ("line", "text", "subject", "value", "by", "current") if k in e}
        for e in currency.load(ws.metadata).get(ex.path, ())
        if ex.start_line <= e.get("line", 0) <= ex.end_line
    ]


def _check_range(start: int, lines: int | None) -> None:
    if start < 1:
        raise BadInput(f"--from must be at least 1, got {start}")
    if lines is not None and lines < 1:
        raise BadInput(f"--lines must be at least 1, got {lines}")


def excerpt(rel: str, text: str, start: int = 1, lines: int | None = None) -> Excerpt:
    """Lines start.. of a file's text (all of them, or `lines`)."""
    _check_range(start, lines)
    all_lines = text.split("\n")
    if all_lines and all_lines[-1] == "":
        all_lines.pop()
    total = len(all_lines)
    if start > max(total, 1):
        raise BadInput(f"--from {start} is past the end of {rel} ({total} lines)")
    end = total if lines is None else min(total, start + lines - 1)
    return Excerpt(rel, start, end, total, "\n".join(all_lines[start - 1 : end]))
