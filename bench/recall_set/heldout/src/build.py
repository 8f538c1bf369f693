"""Turn the hand-typed chats in src/*.txt into sessions/<id>.json (timestamps AEST, +10:00).

    === s01 2026-06-01 19:40 [filler]
    U: a user turn (continuation lines are kept)
    A: an assistant turn
"""
import json, random, re, sys
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "sessions"
PERSONA = ("Yuting Chen, 34, Taiwanese-born chemistry teacher at Merri Creek Secondary College in "
           "Melbourne, Australia; boulderer, community-orchestra cellist, sourdough baker, learning "
           "Korean; husband Liam (electrician), ginger cat Biscuit")


def parse(text):
    sessions, cur = [], None
    for line in text.splitlines():
        m = re.match(r"^=== (s\d+) (\d{4}-\d\d-\d\d) (\d\d:\d\d)( filler)?\s*$", line)
        if m:
            cur = {"id": m[1], "date": m[2], "time": m[3], "filler": bool(m[4]), "msgs": []}
            sessions.append(cur)
            continue
        if cur is None:
            continue
        m = re.match(r"^([UA]): ?(.*)$", line)
        if m:
            cur["msgs"].append(["user" if m[1] == "U" else "assistant", m[2]])
        elif cur["msgs"]:
            cur["msgs"][-1][1] += "\n" + line
    return sessions


def main():
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(HERE.glob("*.txt")))
    ids = set()
    for s in parse(text):
        assert s["id"] not in ids, s["id"]
        ids.add(s["id"])
        rnd = random.Random(s["id"])
        t = datetime.fromisoformat(f"{s['date']}T{s['time']}:00")
        msgs = []
        for i, (role, content) in enumerate(s["msgs"]):
            content = content.strip()
            if i:
                t += timedelta(seconds=rnd.randint(12, 48) if role == "assistant" else rnd.randint(45, 240))
            msgs.append({"role": role, "content": content,
                         "created_at": t.strftime("%Y-%m-%dT%H:%M:%S") + "+10:00"})
        assert 4 <= len(msgs) <= 12, (s["id"], len(msgs))
        assert msgs[0]["created_at"][:10] == s["date"] and msgs[-1]["created_at"][:10] == s["date"], s["id"]
        doc = {"session_id": s["id"], "date": s["date"], "persona": PERSONA, "filler": s["filler"],
               "messages": msgs}
        (OUT / f"{s['id']}.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n",
                                            encoding="utf-8")
    print(len(ids), "sessions")


if __name__ == "__main__":
    main()
