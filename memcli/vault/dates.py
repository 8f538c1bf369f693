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
    return _segment(rel[len(daily) :].partition("/")[0])[0]


def of(daily_dir: str, rel: str) -> str | None:
    """The date of the daily note `rel`, None when it has none or its name names no day
    (a date-filtered search asks this of every indexed path: one cached look-up a path)."""
    if daily_dir.endswith("/"):
        daily_dir = daily_dir.rstrip("/")
    n = len(daily_dir)
    if not rel.startswith(daily_dir) or rel[n : n + 1] != "/":
        return None
    return _segment(rel[n + 1 :].partition("/")[0])[1]


@lru_cache(maxsize=8192)
def _segment(seg: str) -> tuple[str | None, str | None]:
    """(its date-shaped name, the day it names) of a path segment below daily_dir."""
    m = DAY_PAGE.match(seg)
    name = m.group(1) if m else seg if DATE_DIR.match(seg) else None
    return name, calendar_date(name) if name else None


def warning(name: str) -> str:
    """What a job says of a path dated by `name`, a name that names no day (after the path)."""
    return f"{name} is not a calendar date: treated as undated (rename it to fix)"


def problem(daily_dir: str, rel: str) -> str | None:
    """`warning` for a daily note whose date-shaped name names no day, else None."""
    name = shaped(daily_dir, rel)
    return warning(name) if name and calendar_date(name) is None else None
