#!/usr/bin/env python3
"""Quality check of `mem ingest` (offline extractor, or an LLM with --mem-yaml) on LoCoMo.

    python bench/ingest_locomo.py                    # first 3 conversations, Recall@5
    python bench/ingest_locomo.py --conversations 10 --limit 10 --baseline
    python bench/ingest_locomo.py --mem-yaml llm.yaml # with the LLM that mem.yaml configures

Each LoCoMo session (CC BY-NC 4.0, Maharana et al., ACL 2024; /work/shared/data/locomo)
is fed, session by session, through `mem ingest --force` as its own session
(`<conv>-s<n>`, dated by the session's date; both speakers are users named by
their speaker, LoCoMo image captions kept as `[image: …]`). Then every question of
categories 1-4 that has evidence is searched with `mem search QUESTION --limit K
--json`; a hit counts when it comes from the session note (mapped back by its
frontmatter session_id) of a session holding an evidence turn.

Reported (JSON on stdout, a summary on stderr):
  recall_at_k     questions with an evidence session among the top K hits / questions
  turn_coverage   evidence turns with at least one sentence kept verbatim in their
                  session's note / evidence turns (what the extractor kept)
  kept_sentences  sentences kept in notes / sentences in the conversations
With --baseline the same questions are also run against a vault holding each whole
session transcript as one note, the ceiling an extractor that drops nothing reaches.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path("/work/shared/data/locomo/locomo10.json")
sys.path.insert(0, str(ROOT))
from memcli.extraction.conversation.rules import sentences


def mem_cmd(args: argparse.Namespace) -> list[str]:
    return [args.mem] if args.mem else [sys.executable, "-m", "memcli"]


def env() -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith("MEM_")}
    e.update(MEM_EMBEDDING_BACKEND="none", MEM_TIMEZONE="UTC", TZ="UTC", NO_COLOR="1")
    return e


def session_date(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def turn_text(turn: dict) -> str:
    text = turn.get("text", "")
    if turn.get("blip_caption"):
        text += f" [image: {turn['blip_caption']}]"
    return text


def sessions(conv: dict) -> list[tuple[int, datetime, list[dict]]]:
    out = []
    for key, turns in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and turns:
            out.append((int(m.group(1)), session_date(conv[f"{key}_date_time"]), turns))
    return sorted(out)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env(), **kw)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:6])}… failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


def ingest_conversation(args, sample: dict, ws: Path, work: Path) -> dict[int, str]:
    """Ingest every session; returns {session number: its note's text}."""
    run([*mem_cmd(args), "init", str(ws)])
    if getattr(args, "mem_yaml", None):  # e.g. llm_model_config for a local model (docs/local-models.md)
        shutil.copyfile(args.mem_yaml, ws / "mem.yaml")
    notes: dict[int, str] = {}
    for n, when, turns in sessions(sample["conversation"]):
        # turns one second apart, so the session log keeps their order
        msgs = [
            {
                "id": t["dia_id"],
                "name": t["speaker"],
                "role": "user",
                "content": turn_text(t),
                "timestamp": (when + timedelta(seconds=i)).isoformat() + "+00:00",
            }
            for i, t in enumerate(turns)
        ]
        src = work / f"{sample['sample_id']}-s{n}.json"
        src.write_text(json.dumps(msgs, ensure_ascii=False), encoding="utf-8")
        rep = json.loads(
            run(
                [
                    *mem_cmd(args),
                    "-w",
                    str(ws),
                    "ingest",
                    str(src),
                    "-s",
                    f"{sample['sample_id']}-s{n}",
                    "--force",
                    "--json",
                ]
            ).stdout
        )
        args.extractor = rep.get("extractor", "rules")
        added = [c["path"] for c in rep["changes"] if c["path"].count("/") == 2]
        notes[n] = (ws / added[0]).read_text(encoding="utf-8") if added else ""
    return notes


def write_baseline(sample: dict, ws: Path) -> None:
    """Whole transcripts as notes: what search finds when nothing is dropped."""
    for n, when, turns in sessions(sample["conversation"]):
        path = ws / "memory" / when.date().isoformat() / f"session-{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "\n".join(f"- {t['speaker']}: {turn_text(t)}" for t in turns)
        path.write_text(
            f"---\nname: session-{n}\nsession_id: {sample['sample_id']}-s{n}\n---\n{body}\n", encoding="utf-8"
        )


def evidence_sessions(qa: dict) -> set[int]:
    return {int(s) for e in qa.get("evidence", []) for s, _ in re.findall(r"D(\d+):(\d+)", str(e))}


def session_of(ws: Path, rel: str, cache: dict) -> int | None:
    if rel not in cache:
        head = (ws / rel).read_text(encoding="utf-8").split("---")[1] if (ws / rel).exists() else ""
        m = re.search(r"^session_id: '?[^\n']*-s(\d+)'?$", head, re.MULTILINE)
        cache[rel] = int(m.group(1)) if m else None
    return cache[rel]


def recall(args, sample: dict, ws: Path) -> tuple[int, int, dict]:
    if not args.no_reindex:
        run([*mem_cmd(args), "-w", str(ws), "reindex", "--scope", "bm25"])
    found = total = 0
    by_cat: dict = defaultdict(lambda: [0, 0])
    cache: dict = {}
    for qa in sample["qa"]:
        want = evidence_sessions(qa)
        if qa.get("category") not in args.categories or not want:
            continue
        out = run(
            [
                *mem_cmd(args),
                "-w",
                str(ws),
                "search",
                str(qa["question"]),
                "--limit",
                str(args.limit),
                "--json",
                "--no-links",
                "--no-sync",
            ]
        ).stdout
        got = {session_of(ws, h["path"], cache) for h in json.loads(out)["results"]}
        hit = bool(got & want)
        found += hit
        total += 1
        by_cat[qa["category"]][0] += hit
        by_cat[qa["category"]][1] += 1
    return found, total, by_cat


def coverage(sample: dict, notes: dict[int, str]) -> tuple[int, int, int, int]:
    """(evidence turns covered, evidence turns, sentences kept, sentences)."""
    turns = {t["dia_id"]: (n, t) for n, _, ts in sessions(sample["conversation"]) for t in ts}
    kept = total = 0
    for n, _, ts in sessions(sample["conversation"]):
        for t in ts:
            for s in sentences(turn_text(t)):
                total += 1
                kept += s in notes.get(n, "")
    ev = {
        f"D{s}:{k}"
        for qa in sample["qa"]
        if qa.get("category") != 5
        for e in qa.get("evidence", [])
        for s, k in re.findall(r"D(\d+):(\d+)", str(e))
    }
    ev = [turns[d] for d in sorted(ev) if d in turns]
    covered = sum(any(s in notes.get(n, "") for s in sentences(turn_text(t))) for n, t in ev)
    return covered, len(ev), kept, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--locomo", type=Path, default=DATA)
    ap.add_argument("--conversations", type=int, default=3)
    ap.add_argument("--limit", type=int, default=5)
    ap.add_argument("--categories", default="1,2,3,4")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "ingest_locomo")
    ap.add_argument("--mem", help="the mem executable (default: this Python's memcli)")
    ap.add_argument("--baseline", action="store_true", help="also search whole transcripts")
    ap.add_argument("--mem-yaml", type=Path, help="a mem.yaml copied into each workspace (e.g. an LLM)")
    ap.add_argument("--no-reindex", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.categories = {int(c) for c in args.categories.split(",")}
    data = json.loads(args.locomo.read_text(encoding="utf-8"))[: args.conversations]
    shutil.rmtree(args.out, ignore_errors=True)
    (args.out / "inputs").mkdir(parents=True)
    t0 = time.perf_counter()
    totals = defaultdict(int)
    cats: dict = defaultdict(lambda: [0, 0])
    base = [0, 0]
    per_conv = []
    for sample in data:
        ws = args.out / sample["sample_id"]
        notes = ingest_conversation(args, sample, ws, args.out / "inputs")
        found, total, by_cat = recall(args, sample, ws)
        cov, ev, kept, sents = coverage(sample, notes)
        row = {
            "conversation": sample["sample_id"],
            "sessions": len(notes),
            "questions": total,
            f"recall_at_{args.limit}": round(found / total, 4),
            "turn_coverage": round(cov / ev, 4),
            "kept_sentences": round(kept / sents, 4),
        }
        for k, v in (
            ("found", found),
            ("questions", total),
            ("covered", cov),
            ("evidence_turns", ev),
            ("kept", kept),
            ("sentences", sents),
        ):
            totals[k] += v
        for c, (f, t) in by_cat.items():
            cats[c][0] += f
            cats[c][1] += t
        if args.baseline:
            bws = args.out / f"{sample['sample_id']}-baseline"
            run([*mem_cmd(args), "init", str(bws)])
            write_baseline(sample, bws)
            bf, bt, _ = recall(args, sample, bws)
            base[0] += bf
            base[1] += bt
            row[f"baseline_recall_at_{args.limit}"] = round(bf / bt, 4)
        per_conv.append(row)
        print(json.dumps(row), file=sys.stderr)
    result = {
        "conversations": len(data),
        "questions": totals["questions"],
        "categories": sorted(args.categories),
        f"recall_at_{args.limit}": round(totals["found"] / totals["questions"], 4),
        f"recall_at_{args.limit}_by_category": {str(c): round(f / t, 4) for c, (f, t) in sorted(cats.items())},
        "turn_coverage": round(totals["covered"] / totals["evidence_turns"], 4),
        "kept_sentences": round(totals["kept"] / totals["sentences"], 4),
        "per_conversation": per_conv,
        "seconds": round(time.perf_counter() - t0, 1),
        "search": "keyword (MEM_EMBEDDING_BACKEND=none)",
        "extractor": "rules (offline)" if getattr(args, "extractor", "rules") == "rules" else args.extractor,
    }
    if args.baseline:
        result[f"baseline_recall_at_{args.limit}"] = round(base[0] / base[1], 4)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
