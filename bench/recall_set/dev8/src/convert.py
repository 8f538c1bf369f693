"""Turn the plain-text chats in src/*.txt into sessions/<id>.json.

A session starts with `### <id> <date> <HH:MM:SS> [filler]`; `@user` / `@assistant` lines
start a message. Timestamps are the start time plus a few tens of seconds to a few minutes
per message (a seeded generator, so the files do not change between runs), São Paulo time
(BRT, -03:00; Brazil has had no daylight saving since 2019).
"""

import json
import random
import re
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "sessions"
PERSONA = "Beatriz Okada"
TZ = "-03:00"


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


def main():
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(HERE.glob("part*.txt")))
    sessions = parse(text)
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("*.json"):
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
            msgs.append({"role": m["role"], "content": m["content"], "created_at": t.isoformat() + TZ})
        obj = {
            "session_id": s["session_id"],
            "date": s["date"],
            "persona": PERSONA,
            "filler": s["filler"],
            "messages": msgs,
        }
        (OUT / f"{s['session_id']}.json").write_text(
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


if __name__ == "__main__":
    main()
