#!/usr/bin/env python3
"""Does mem recall what a user said over weeks of chats? mem's whole loop, through the real CLI.

    python bench/recall_eval.py --set bench/recall_set/dev               # ingest, search, nightly dream
    python bench/recall_eval.py --set bench/recall_set/dev --baseline    # + raw messages, BM25 + MiniLM, RRF
    python bench/recall_eval.py --set bench/recall_set/dev --check       # only validate the set

A recall set (bench/recall_set/README.md) is one user's sessions with labelled questions.
Two fresh workspaces (`mem init`) take the sessions in date order, each written to a file and
given to `mem ingest FILE --session-id <id> --date <date> --force --json`:

  ingest   all sessions, then `mem reindex` (vectors of the default local model): memory
           without consolidation
  dream    day by day from the first session's date to the last: that day's sessions, then
           `mem reindex` (on days with sessions) and `mem dream --date <day> --json` (every
           night); a last `mem reindex` before the questions

Then `mem search "<question>" --json --limit 10` for every question in each workspace. A hit
stands for the session whose daily note it is, or the sessions whose notes it links (the day
page, a digest node); a session takes the rank of its first hit. Metrics:

  kept             answers_kept: share of questions whose answer string is in a note written
                   from an evidence session; filler_with_note: share of chit-chat sessions that
                   left a note; sessions_with_note for the others
  R@1, R@5         share of questions with an evidence session at rank <= k
  MRR@10           mean of 1/rank of the best evidence session (0 past 10)
  latest_first     update questions whose best current-evidence session ranks above every
                   superseded session (one outside the top 10 counts as below; a tie fails)
  answer_in_top5   the answer string (case-insensitive) is in the text of one of the 5 first hits
  digest           after the nights: nodes (files under digest/), chit_chat_nodes (nodes citing
                   only chit-chat sessions' notes), answers_in_digest

--baseline adds a naive search over the raw messages (bench/harness/recall_baseline.py).
The set's dream.yaml, if any, is scored by bench/dream_eval.py (--no-dream-set to skip).
One JSON document on stdout, progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

from bench.harness import recall_data, recall_score

ROOT = HERE.parent


def log(msg: str) -> None:
    print(f"recall: {msg}", file=sys.stderr, flush=True)


def environment(home: Path) -> dict:
    """The offline default configuration: no MEM_* or provider keys from the caller's shell."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEM_", "OPENCLAW_", "CLAWDBOT_"))
        and k not in ("OPENAI_API_KEY", "DASHSCOPE_API_KEY", "GEMINI_API_KEY", "VOYAGE_API_KEY")
    }
    env.update({"HOME": str(home), "TZ": "UTC", "NO_COLOR": "1", "PYTHONPATH": str(ROOT)})
    return env


class Mem:
    """`mem` in a subprocess on one workspace; each call's seconds are added up per command."""

    def __init__(self, cmd: list[str], ws: Path, env: dict):
        self.cmd, self.ws, self.env = cmd, ws, env
        self.seconds: dict[str, float] = {}

    def __call__(self, *args: str) -> dict:
        t = time.perf_counter()
        proc = subprocess.run(
            [*self.cmd, "-w", str(self.ws), *args], env=self.env, capture_output=True, text=True, timeout=900
        )
        self.seconds[args[0]] = self.seconds.get(args[0], 0.0) + time.perf_counter() - t
        if proc.returncode != 0:
            raise SystemExit(f"mem {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
        return json.loads(proc.stdout) if "--json" in args else {}

    def ingest(self, session, tmp: Path) -> dict:
        path = tmp / f"{session.id}.json"
        path.write_text(json.dumps(session.messages, ensure_ascii=False), encoding="utf-8")
        return self("ingest", str(path), "--session-id", session.id, "--date", session.date, "--force", "--json")


def make_workspace(base: Path, name: str, args) -> Mem:
    ws, home = base / name, base / f"{name}-home"
    home.mkdir(parents=True)
    mem = Mem(args.mem.split(), ws, environment(home))
    subprocess.run([*mem.cmd, "init", str(ws), "--json"], env=mem.env, capture_output=True, check=True)
    return mem


def ingest_all(rs, mem: Mem, tmp: Path) -> None:
    for s in rs.in_order():
        mem.ingest(s, tmp)
    mem("reindex", "--json")


def nightly(rs, mem: Mem, tmp: Path, args) -> list[dict]:
    sessions = rs.in_order()
    first, last = date.fromisoformat(sessions[0].date), date.fromisoformat(sessions[-1].date)
    nights = []
    day = first
    while day <= last:
        todays = [s for s in sessions if s.date == day.isoformat()]
        for s in todays:
            mem.ingest(s, tmp)
        if todays:
            mem("reindex", "--json")
        t = time.perf_counter()
        rep = mem("dream", "--date", day.isoformat(), "--max-units", str(args.max_units), "--json")
        facts = rep.get("facts") or {}
        nights.append(
            {
                "date": day.isoformat(),
                "sessions": [s.id for s in todays],
                "seconds": round(time.perf_counter() - t, 2),
                "actions": rep.get("actions"),
                "new_facts": facts.get("new", 0),
                "remaining": (rep.get("remaining") or {}).get("facts", 0),
            }
        )
        day += timedelta(days=1)
    mem("reindex", "--json")
    return nights


def ask(rs, mem: Mem, limit: int) -> tuple[list[dict], recall_score.Workspace]:
    ws = recall_score.Workspace(mem.ws)
    rows = []
    for q in rs.questions:
        res = mem("search", q["question"], "--json", "--limit", str(limit))
        hits = res.get("results") or []
        per_hit = [ws.sessions_of_hit(h["path"], h.get("text", "")) for h in hits]
        ranks = recall_score.session_ranks(per_hit)
        row = recall_score.score_question(
            q, ranks, [h.get("text", "") for h in hits], recall_score.session_order(per_hit)
        )
        row["hits"] = [h["path"] for h in hits]
        rows.append(row)
    return rows, ws


def measure(rs, mem: Mem, limit: int, dreamt: bool) -> dict:
    rows, ws = ask(rs, mem, limit)
    out = {"kept": recall_score.kept(rs, ws), **recall_score.aggregate(rows)}
    if dreamt:
        out["digest"] = recall_score.digest_summary(rs, ws)
    out["seconds"] = {k: round(v, 1) for k, v in mem.seconds.items()}
    out["questions"] = rows
    return out


def dream_set(rs, args) -> dict | None:
    path = rs.root / "dream.yaml"
    if args.no_dream_set or not path.exists():
        return None
    log(f"dream set: bench/dream_eval.py --set {path}")
    proc = subprocess.run(
        [sys.executable, str(HERE / "dream_eval.py"), "--set", str(path), "--mem", args.mem],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    if proc.returncode != 0:
        return {"error": proc.stderr.strip()[-1000:]}
    doc = json.loads(proc.stdout)
    keep = (
        "facts",
        "subjects",
        "nodes",
        "coverage",
        "pair_precision",
        "pair_recall",
        "junk_nodes",
        "wrong_pairs_by_subjects",
        "missed",
        "remaining",
        "seconds",
    )
    out = {k: doc.get(k) for k in keep}
    sup = doc["supersessions"]
    out["supersessions"] = {
        "recorded": sup["recorded"],
        "total": sup["total"],
        "missed": [s["fact"] for s in sup["each"] if not s["recorded"]],
    }
    out["false_updates"] = len(doc["false_updates"])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", type=Path, default=ROOT / "bench" / "recall_set" / "dev", help="the recall set folder")
    ap.add_argument("--check", action="store_true", help="validate the set and print its counts, then exit")
    ap.add_argument("--baseline", action="store_true", help="also the naive raw-message search (rank-bm25)")
    ap.add_argument("--no-dream", action="store_true", help="skip the workspace with nightly dream")
    ap.add_argument("--no-dream-set", action="store_true", help="skip scoring the set's dream.yaml")
    ap.add_argument("--max-units", type=int, default=5, help="mem dream --max-units (its default: 5)")
    ap.add_argument("--limit", type=int, default=10, help="mem search --limit")
    ap.add_argument("--keep", type=Path, help="build the workspaces under this (empty) folder and keep them")
    ap.add_argument("--details", action="store_true", help="every question's ranks and hits in the output")
    ap.add_argument("--mem", default=f"{sys.executable} -m memcli", help="how to run mem")
    args = ap.parse_args(argv)
    rs = recall_data.load(args.set)
    problems = recall_data.check(rs)
    result = {"set": str(args.set), "counts": recall_data.counts(rs), "problems": problems}
    if problems or args.check:
        for p in problems:
            log(p)
        json.dump(result, sys.stdout, indent=1, ensure_ascii=False)
        print()
        return 1 if problems else 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="recall-eval-") as tmp:
        base = args.keep or Path(tmp)
        if base.exists() and any(base.iterdir()):
            raise SystemExit(f"{base} is not empty")
        msgs = Path(tmp) / "messages"
        msgs.mkdir()
        log(f"{len(rs.sessions)} sessions, {len(rs.questions)} questions: ingest, reindex, search")
        mem = make_workspace(base, "ingest", args)
        ingest_all(rs, mem, msgs)
        result["ingest"] = measure(rs, mem, args.limit, dreamt=False)
        log(f"ingest: {brief(result['ingest'])}")
        if not args.no_dream:
            mem = make_workspace(base, "dream", args)
            nights = nightly(rs, mem, msgs, args)
            result["dream"] = measure(rs, mem, args.limit, dreamt=True)
            result["dream"]["nights"] = {
                "count": len(nights),
                "seconds": round(sum(n["seconds"] for n in nights), 1),
                "left_after_last": nights[-1]["remaining"],
            }
            if args.details:
                result["dream"]["nights"]["each"] = nights
            log(f"dream: {brief(result['dream'])}, {result['dream']['digest']['nodes']} nodes")
    if args.baseline:
        from bench.harness import recall_baseline

        rows, info = recall_baseline.run(rs, args.limit)
        result["baseline"] = {**info, **recall_score.aggregate(rows), "questions": rows}
        log(f"baseline: {brief(result['baseline'])}")
    result["dream_set"] = dream_set(rs, args)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    if not args.details:
        for part in ("ingest", "dream", "baseline"):
            if part in result:
                result[part].pop("questions")
    json.dump(result, sys.stdout, indent=1, ensure_ascii=False)
    print()
    return 0


def brief(part: dict) -> str:
    a = part["all"]
    return (
        f"R@1 {a['R@1']} R@5 {a['R@5']} MRR@10 {a['MRR@10']} latest-first {a.get('latest_first')} "
        f"answer@5 {a['answer_in_top5']}"
    )


if __name__ == "__main__":
    sys.exit(main())
