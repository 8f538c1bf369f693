"""A recall set's chats typed as plain text, as session JSON (bench/recall_set/README.md).

A session starts with `### <id> <date> <HH:MM:SS> [filler]`; `@user` / `@assistant` lines
start a message. Timestamps are the start time plus a few tens of seconds to a few minutes
per message (a seeded generator, so the files do not change between runs). A set's
`src/convert.py` calls `convert` with its persona and UTC offset.
"""

import json
import random
import re
from datetime import datetime, timedelta
from pathlib import Path


def parse(text):
    sessions = []
    cur = None
    role = None
    buf = []

    def flush():
        if cur is not None and role is not None:
            cur["messages"].append({"role": role, "content": "\n".join(buf).strip()})

    for line in text.splitlines():
        m = re.match(r"^### (s\d\d) (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)( filler)?\s*$", line)
        if m:
            flush()
            role, buf = None, []
            cur = {
                "session_id": m.group(1),
                "date": m.group(2),
                "start": m.group(3),
                "filler": bool(m.group(4)),
                "messages": [],
            }
            sessions.append(cur)
            continue
        if line.strip() in ("@user", "@assistant"):
            flush()
            role, buf = line.strip()[1:], []
            continue
        if role is not None:
            buf.append(line)
    flush()
    return sessions


def convert(src: Path, persona: str, tz: str) -> None:
    """Write <set>/sessions/<id>.json from the set's src/part*.txt; `tz` is the UTC offset of the
    timestamps ("+03:00")."""
    out_dir = src.parent / "sessions"
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(src.glob("part*.txt")))
    sessions = parse(text)
    out_dir.mkdir(exist_ok=True)
    for old in out_dir.glob("*.json"):
        old.unlink()
    for s in sessions:
        rng = random.Random(s["session_id"])
        t = datetime.fromisoformat(f"{s['date']}T{s['start']}")
        msgs = []
        for i, m in enumerate(s["messages"]):
            if i:
                if m["role"] == "assistant":
                    t += timedelta(seconds=rng.randint(12, 30) + min(len(m["content"]) // 25, 110))
                else:
                    t += timedelta(seconds=rng.randint(25, 200) + min(len(m["content"]) // 6, 90))
            assert t.date().isoformat() == s["date"], (s["session_id"], t)
            msgs.append({"role": m["role"], "content": m["content"], "created_at": t.isoformat() + tz})
        obj = {
            "session_id": s["session_id"],
            "date": s["date"],
            "persona": persona,
            "filler": s["filler"],
            "messages": msgs,
        }
        (out_dir / f"{s['session_id']}.json").write_text(
            json.dumps(obj, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
    print(
        len(sessions),
        "sessions,",
        sum(s["filler"] for s in sessions),
        "filler,",
        sum(len(s["messages"]) for s in sessions),
        "messages",
    )
