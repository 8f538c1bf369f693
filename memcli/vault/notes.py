"""Daily notes `memory/<date>/<name>.md` and the day index page `memory/<date>.md`.

One note per session per day, found by its frontmatter `session_id` or
`source_conversation`. The day index lists the day's notes between the
`<!-- notes:auto -->` markers (docs/architecture.md, Jobs); text outside them is the user's and is
kept. Writers only write when the text changes, so re-running a job is a no-op.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import date as _date
from datetime import datetime, tzinfo
from pathlib import Path

from memcli.errors import BadInput, ConfigError
from memcli.vault import atomic, frontmatter
from memcli.vault.workspace import Workspace

AUTO_OPEN, AUTO_CLOSE = "<!-- notes:auto -->", "<!-- /notes:auto -->"
HIDDEN_KEYS = ("name", "description", "session_id", "source_conversation")
# kebab-case: lowercase letters (any script) and digits in words joined by single hyphens
KEBAB = re.compile(r"^[^\W_]+(?:-[^\W_]+)*$")
DATE_IN_NAME = re.compile(r"(?:19|20)\d{2}-?\d{2}(?:-?\d{2})?|\d{8}")
MAX_NAME = 64


def zone(ws: Workspace) -> tzinfo:
    """The configured time zone (`timezone`), else this machine's local zone."""
    name = ws.settings.timezone.strip()
    if not name:
        local = datetime.now().astimezone().tzinfo
        assert local is not None  # astimezone() always gives an aware datetime
        return local
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(
            f"unknown timezone {name!r}", "use an IANA name such as Europe/Berlin, or leave it empty"
        ) from None


def today(ws: Workspace, now: datetime | None = None) -> str:
    now = now or datetime.now().astimezone()
    return now.astimezone(zone(ws)).date().isoformat()


def check_date(value: str) -> str:
    """A YYYY-MM-DD calendar date, or BadInput."""
    if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise BadInput(f"date {value!r} is not YYYY-MM-DD")
    try:
        _date.fromisoformat(value)
    except ValueError:
        raise BadInput(f"date {value!r} is not a calendar date") from None
    return value


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a note name (kebab-case topic, no date), or None."""
    if not isinstance(name, str) or not name:
        return "name is empty"
    if len(name) > MAX_NAME:
        return f"name is longer than {MAX_NAME} characters"
    if not KEBAB.match(name) or name != name.lower():
        return f"name {name!r} is not kebab-case (lowercase words joined by '-')"
    if DATE_IN_NAME.search(name):
        return f"name {name!r} contains a date; the date is already in the folder"
    return None


@dataclass
class Note:
    path: Path
    meta: dict = field(default_factory=dict)
    body: str = ""

    def render(self) -> str:
        head = frontmatter.render(self.meta) if self.meta else ""
        return head + self.body


def read(path: Path) -> Note:
    text = Path(path).read_text(encoding="utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    src, n = frontmatter.split(text)
    meta, _ = frontmatter.parse(src)
    body = "\n".join(text.split("\n")[n:]) if n else text
    return Note(Path(path), meta, body)


def day_dir(ws: Workspace, day: str) -> Path:
    return ws.daily / day


def day_notes(ws: Workspace, day: str) -> list[Path]:
    """The day's notes, sorted by file name (no dot-files, no symlinks, no subfolders)."""
    d = day_dir(ws, day)
    try:
        entries = list(os.scandir(d))
    except OSError:
        return []
    return sorted(
        (
            Path(e.path)
            for e in entries
            if e.name.endswith(".md")
            and not e.name.startswith(".")
            and not e.is_symlink()
            and e.is_file(follow_symlinks=False)
        ),
        key=lambda p: p.name,
    )


def conversation_link(ws: Workspace, sid: str) -> str:
    return f"[[{ws.rel(ws.sessions / f'{sid}.jsonl')}]]"


def find_session_note(ws: Workspace, day: str, sid: str) -> Note | None:
    link = conversation_link(ws, sid)
    for path in day_notes(ws, day):
        try:
            note = read(path)
        except (OSError, UnicodeDecodeError):
            continue
        if str(note.meta.get("session_id", "")) == sid or str(note.meta.get("source_conversation", "")) == link:
            return note
    return None


def free_path(ws: Workspace, day: str, name: str) -> tuple[Path, str]:
    """A file for a new note called `name`; another session's note of that name gets -2, -3…"""
    base, n = name, 1
    while True:
        path = day_dir(ws, day) / f"{name}.md"
        if not path.exists():
            return path, name
        n += 1
        name = f"{base[: MAX_NAME - 4]}-{n}"


def write(note: Note) -> bool:
    """Write the note if its text changed; True when it did."""
    text = note.render()
    try:
        if note.path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    atomic.write_text(note.path, text)
    return True


def _value(v) -> str:
    if isinstance(v, list):
        return ", ".join(str(x) for x in v if x not in (None, ""))
    if isinstance(v, dict):
        return ", ".join(f"{k}={x}" for k, x in v.items())
    return " ".join(str(v).split())


def index_lines(ws: Workspace, day: str) -> list[str]:
    lines = []
    for path in day_notes(ws, day):
        try:
            meta = read(path).meta
        except (OSError, UnicodeDecodeError):
            meta = {}
        rel = ws.rel(path)
        line = f"- [[{rel}]] name: {_value(meta.get('name') or path.stem)} description: {_value(meta.get('description') or '')}"
        for key in sorted(meta):
            if key not in HIDDEN_KEYS and _value(meta[key]):
                line += f" {key}: {_value(meta[key])}"
        lines.append(line)
    return lines


def page_problem(path: Path) -> str | None:
    """Why the note at `path` cannot be rewritten without losing some of it (it cannot be
    read, is not UTF-8, or its frontmatter does not parse), else None (also when absent)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    except UnicodeDecodeError as exc:
        line = exc.object.count(b"\n", 0, exc.start) + 1
        return f"not valid UTF-8 (line {line}, byte {exc.start})"
    return frontmatter.parse(frontmatter.split(text.removeprefix("\ufeff").replace("\r\n", "\n"))[0])[1]


def update_day_index(ws: Workspace, day: str, warnings: list[str] | None = None) -> tuple[Path, str]:
    """Rebuild `memory/<day>.md`; returns (path, "added" | "updated" | "unchanged" | "kept").
    "kept": the page (an OpenClaw daily log is the user's own) cannot be rewritten without
    loss (page_problem), so it is left as it is, named in `warnings`."""
    path = ws.daily / f"{day}.md"
    why = page_problem(path)
    if why is not None:
        if warnings is not None:
            warnings.append(
                f"left {ws.rel(path)} as it is: {why}; its list of the day's notes is updated once that is fixed"
            )
        return path, "kept"
    entries = index_lines(ws, day)
    block = "\n".join([AUTO_OPEN, *entries, AUTO_CLOSE])
    existed = path.exists()
    note = read(path) if existed else Note(path)
    note.meta = {**note.meta, "name": day, "description": f"{len(entries)} note(s) today."}
    lines = note.body.split("\n")
    try:
        start = next(i for i, x in enumerate(lines) if x.strip() == AUTO_OPEN)
        end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() == AUTO_CLOSE)
        note.body = "\n".join([*lines[:start], block, *lines[end + 1 :]])
    except StopIteration:  # no block yet (a new page, or an OpenClaw daily log): add it after the text
        text = note.body.rstrip("\n")
        note.body = (text + "\n\n" if text else "") + block + "\n"
    changed = write(note)
    return path, ("added" if not existed else "updated") if changed else "unchanged"
