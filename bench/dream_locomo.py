#!/usr/bin/env python3
"""Quality check of `mem dream` (offline rules) on LoCoMo.

    python bench/dream_locomo.py                    # conversation 1
    python bench/dream_locomo.py --conversations 3 --max-units 5

Each LoCoMo conversation (CC BY-NC 4.0, Maharana et al., ACL 2024;
/work/shared/data/locomo) is first ingested offline, session by session, exactly as
bench/ingest_locomo.py does (`mem ingest --force`, one dated note per session). Then
`mem dream --date <session date>` runs once per session date, oldest first, as a
nightly schedule would. Derived data stays under bench/out/ (not committed).

Reported (JSON on stdout, one line per conversation on stderr):
  nodes             digest nodes written
  actions           CREATE / CORROBORATE / REFINE / CORRECT counts over all runs
  skipped, failed   units that changed nothing / could not be integrated
  sources_resolve   share of digest nodes whose `## Sources` cites at least one note and
                    every cited file exists
  links_resolve     share of digest nodes whose every [[...]] points at an existing file
  abstract_words    min / median / max words above `## Sources`
  rerun             the same nightly runs again with the dream catalog deleted (every fact seen
                    twice): units that changed a node, and digest files added or changed (0 = no
                    duplicates, no churn)
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
import ingest_locomo as il

from memcli.extraction.dream import node as dream_node


def dream_conversation(args, sample: dict, ws: Path) -> dict:
    counts: Counter = Counter()
    skipped = failed = runs = 0
    days = sorted({when.date().isoformat() for _, when, _ in il.sessions(sample["conversation"])})
    for day in days:
        out = il.run(
            [
                *il.mem_cmd(args),
                "-w",
                str(ws),
                "dream",
                "--date",
                day,
                "--scan-days",
                str(args.scan_days),
                "--max-units",
                str(args.max_units),
                "--json",
            ]
        ).stdout
        rep = json.loads(out)
        runs += 1
        counts.update(rep.get("actions") or {})
        skipped += len(rep.get("skipped") or [])
        failed += len(rep.get("failed") or [])
    return {"runs": runs, "actions": dict(counts), "skipped": skipped, "failed": failed}


def digest_texts(ws: Path) -> dict[str, str]:
    return {p.relative_to(ws).as_posix(): p.read_text(encoding="utf-8") for p in (ws / "digest").rglob("*.md")}


def check_nodes(ws: Path) -> dict:
    nodes = sorted((ws / "digest").rglob("*.md"))
    sources_ok = links_ok = 0
    words = []
    by_bucket: Counter = Counter()
    for path in nodes:
        text = path.read_text(encoding="utf-8")
        node = dream_node.parse(path.relative_to(ws).as_posix(), text)
        by_bucket[path.parent.name] += 1
        cited = dream_node.cited(node.body)
        sources_ok += bool(cited) and all(
            (ws / c).is_file() and re.match(r"memory/\d{4}-\d{2}-\d{2}/", c) for c in cited
        )
        links_ok += all((ws / link).is_file() for link in dream_node.links(node.body))
        words.append(dream_node.abstract_words(node.body))
    n = len(nodes) or 1
    return {
        "nodes": len(nodes),
        "by_bucket": dict(by_bucket),
        "sources_resolve": round(sources_ok / n, 4),
        "links_resolve": round(links_ok / n, 4),
        "abstract_words": [min(words, default=0), statistics.median(words) if words else 0, max(words, default=0)],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--locomo", type=Path, default=il.DATA)
    ap.add_argument("--conversations", type=int, default=1)
    ap.add_argument("--max-units", type=int, default=5)
    ap.add_argument("--scan-days", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "dream_locomo")
    ap.add_argument("--mem", help="the mem executable (default: this Python's memcli)")
    args = ap.parse_args()
    data = json.loads(args.locomo.read_text(encoding="utf-8"))[: args.conversations]
    shutil.rmtree(args.out, ignore_errors=True)
    (args.out / "inputs").mkdir(parents=True)
    t0 = time.perf_counter()
    rows, totals = [], Counter()
    for sample in data:
        ws = args.out / sample["sample_id"]
        il.ingest_conversation(args, sample, ws, args.out / "inputs")
        row = {"conversation": sample["sample_id"], **dream_conversation(args, sample, ws), **check_nodes(ws)}
        before = digest_texts(ws)
        (ws / "mem_metadata" / "file_catalog" / "dream.jsonl.zst").unlink()
        again = dream_conversation(args, sample, ws)
        after = digest_texts(ws)
        row["rerun"] = {
            "changed_nodes_by_units": sum(again["actions"].values()),
            "files_added": len(after.keys() - before.keys()),
            "files_changed": sum(before[k] != after[k] for k in before.keys() & after.keys()),
        }
        totals.update(row["actions"])
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    nodes = sum(r["nodes"] for r in rows) or 1
    result = {
        "conversations": len(rows),
        "nodes": sum(r["nodes"] for r in rows),
        "actions": dict(totals),
        "skipped": sum(r["skipped"] for r in rows),
        "failed": sum(r["failed"] for r in rows),
        "sources_resolve": round(sum(r["sources_resolve"] * r["nodes"] for r in rows) / nodes, 4),
        "links_resolve": round(sum(r["links_resolve"] * r["nodes"] for r in rows) / nodes, 4),
        "rerun_files_changed": sum(r["rerun"]["files_added"] + r["rerun"]["files_changed"] for r in rows),
        "per_conversation": rows,
        "seconds": round(time.perf_counter() - t0, 1),
        "backend": "rules (offline)",
        "search": "keyword (MEM_EMBEDDING_BACKEND=none)",
        "max_units": args.max_units,
        "scan_days": args.scan_days,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
