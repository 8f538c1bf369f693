"""`memory/<date>/interests.yaml`: topics the user is likely to care about next (for proactive use).

Same shape as ReMe's: `date`, `topic_count` (at most this many topics a day),
`diversity_days` (a topic proposed within that many previous days is not proposed
again, compared by normalized title) and `topics: [{title, reason, evidence,
keywords, paths}]`. Topics already in the day's file are kept first.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from memcli.extraction.dream.schema import Topic
from memcli.vault import atomic
from memcli.vault.workspace import Workspace

TOPIC_COUNT = 3
DIVERSITY_DAYS = 7
FILE = "interests.yaml"


def normalize(title: str) -> str:
    return re.sub(r"[^a-z0-9\u4e00-\u9fff]+", " ", str(title).lower()).strip()


def load(path) -> list[dict]:
    """The topics of an interests file; [] when absent or unreadable (it is advisory, never fatal)."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []
    topics = data.get("topics") if isinstance(data, dict) else None
    out = []
    for t in topics if isinstance(topics, list) else []:
        if isinstance(t, dict) and str(t.get("title") or "").strip() and str(t.get("reason") or "").strip():
            out.append(
                {
                    "title": str(t["title"]).strip(),
                    "reason": str(t["reason"]).strip(),
                    "evidence": str(t.get("evidence") or "").strip(),
                    "keywords": [str(k) for k in t.get("keywords") or [] if str(k).strip()]
                    if isinstance(t.get("keywords"), list)
                    else [],
                    "paths": [str(p) for p in t.get("paths") or [] if str(p).strip()]
                    if isinstance(t.get("paths"), list)
                    else [],
                }
            )
    return out


def select(ws: Workspace, day: str, candidates: list[Topic]) -> tuple[list[dict], list[dict]]:
    """(topics to write, topics already in the day's file)."""
    path = ws.daily / day / FILE
    same_day = load(path)
    base = date.fromisoformat(day)
    recent = {
        normalize(t["title"])
        for i in range(1, DIVERSITY_DAYS + 1)
        for t in load(ws.daily / (base - timedelta(days=i)).isoformat() / FILE)
    }
    seen = {normalize(t["title"]) for t in same_day}
    out = list(same_day)
    for topic in candidates:
        key = normalize(topic.title)
        if len(out) >= TOPIC_COUNT:
            break
        if key and key not in seen and key not in recent:
            seen.add(key)
            out.append(topic.to_json())
    return out[: max(TOPIC_COUNT, len(same_day))], same_day


def write(ws: Workspace, day: str, candidates: list[Topic], *, dry_run: bool = False) -> tuple[str, str | None, int]:
    """(path, "added" | "updated" | None when nothing changed, topics in the file)."""
    import yaml

    path = ws.daily / day / FILE
    topics, same_day = select(ws, day, candidates)
    rel = ws.rel(path)
    if topics == same_day and (same_day or not candidates):
        return rel, None, len(same_day)
    payload = {"date": day, "topic_count": TOPIC_COUNT, "diversity_days": DIVERSITY_DAYS, "topics": topics}
    text = yaml.safe_dump(payload, allow_unicode=True, sort_keys=False, width=100000)
    existed = path.exists()
    try:
        if existed and path.read_text(encoding="utf-8") == text:
            return rel, None, len(topics)
    except (OSError, UnicodeDecodeError):
        pass
    if not dry_run:
        atomic.write_text(path, text)
    return rel, "updated" if existed else "added", len(topics)
