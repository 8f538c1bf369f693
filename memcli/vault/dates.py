"""Dates read from paths: `memory/<YYYY-MM-DD>/...` and the day page `memory/<YYYY-MM-DD>.md`.

A name of that shape may still name no day (2026-11-31, 2026-02-30, 2026-13-01): such a
note is undated everywhere a date is derived from its path (search's --since/--until, the
shared index's note_date, dream's window, day pages), and the jobs that meet it say so
with `problem`'s warning. A date that names no day never reaches a comparison, a day page
or PostgreSQL, which rejects it ("date/time field value out of range").
"""

from __future__ import annotations

import re
from datetime import date as _date
from functools import lru_cache

DATE_DIR = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DAY_PAGE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")


@lru_cache(maxsize=4096)  # a date-filtered search asks once per indexed path: few distinct days
def calendar_date(text: str) -> str | None:
    """`text` when it is a YYYY-MM-DD day of the calendar, else None."""
    if not DATE_DIR.match(text):
        return None
    try:
        _date.fromisoformat(text)
    except ValueError:
        return None
    return text


def shaped(daily_dir: str, rel: str) -> str | None:
    """The date-shaped name that dates `rel`: the segment right after daily_dir, or the day
    page's name; None for a path that is not a daily note."""
    daily = daily_dir.rstrip("/") + "/"
    if not rel.startswith(daily):
        return None
    seg = rel[len(daily):].split("/", 1)[0]
    if DATE_DIR.match(seg):
        return seg
    m = DAY_PAGE.match(seg)
    return m.group(1) if m else None


def of(daily_dir: str, rel: str) -> str | None:
    """The date of the daily note `rel`, None when it has none or its name names no day."""
    name = shaped(daily_dir, rel)
    return calendar_date(name) if name else None


def warning(name: str) -> str:
    """What a job says of a path dated by `name`, a name that names no day (after the path)."""
    return f"{name} is not a calendar date: treated as undated (rename it to fix)"


def problem(daily_dir: str, rel: str) -> str | None:
    """`warning` for a daily note whose date-shaped name names no day, else None."""
    name = shaped(daily_dir, rel)
    return warning(name) if name and calendar_date(name) is None else None
