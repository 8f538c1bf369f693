#!/usr/bin/env python3
"""Semantic-match evaluation: does a clear paraphrase beat notes that merely share a word?

    python bench/semantic_eval.py                       # default model, every mode
    python bench/semantic_eval.py --model all-MiniLM-L6-v2-int8 --set search.fusion=minmax
    python bench/semantic_eval.py --out bench/out/semantic/l3.json

bench/semantic_set/set.json: 21 queries (the five examples of the reference text, 16 of
our own split into dev and test, 3 of them exact identifiers) whose one target note
shares few or no words with the query, among 50 everyday distractor notes that each
share a word with some query ("The choice of font for the slides…" for "Database choice
for the project") and 10 unrelated fillers. One vault, one note per file; every query is
run through memcli.jobs.search.run (what `mem search` calls) in auto (hybrid), vector and
keyword mode. Reported per mode and split: hit@1 (the target ranks first), MRR@10 and
the target's rank for each query. JSON on stdout (or --out), a table on stderr.
Embeddings come from the bench's text-hash cache (bench/harness/embeddings.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

from bench.experiments import parse_variant, patched
from bench.harness.indexes import ensure_index, parse_sets, workspace
from bench.harness.paths import OUT
from bench.harness.vaults import write_if_changed

SET = HERE / "semantic_set" / "set.json"
DAY = "memory/2026-05-01"
MODES = ("auto", "vector", "keyword")


def build_vault(root: Path, data: dict) -> dict[str, str]:
    """One note per file; returns note id -> path."""
    paths = {}
    for nid, text in data["notes"].items():
        rel = f"{DAY}/{nid}.md"
        write_if_changed(root / rel, text + "\n")
        paths[nid] = rel
    return paths


def rank_of(ws, query: str, target: str, mode: str) -> tuple[int | None, list[str]]:
    from memcli.jobs import search

    res = search.run(ws, query, limit=10, mode=mode, auto_sync=False, links=False)
    order = [h.path for h in res.hits]
    return (order.index(target) + 1 if target in order else None), order[:3]


def summarise(rows: list[dict], mode: str) -> dict:
    out = {}
    for split in ("all", "reference", "dev", "test", "paraphrase", "identifier"):
        sel = [r for r in rows if split == "all" or r["split"] == split or r["kind"] == split]
        if not sel:
            continue
        ranks = [r["modes"][mode]["rank"] for r in sel]
        out[split] = {
            "n": len(sel),
            "hit@1": round(sum(1 for k in ranks if k == 1) / len(sel), 3),
            "mrr@10": round(sum(1 / k for k in ranks if k) / len(sel), 3),
        }
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="", help="local embedding model (embedding_model_config.model_name)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    ap.add_argument("--variant", default="", help="code-level prototype (bench/experiments)")
    ap.add_argument("--data", type=Path, default=SET, help="the query/note set (JSON)")
    ap.add_argument("--out", type=Path, help="write the JSON here instead of stdout")
    args = ap.parse_args(argv)
    data = json.loads(args.data.read_text(encoding="utf-8"))
    root = OUT / "semantic" / args.data.stem
    paths = build_vault(root, data)
    sets = parse_sets(args.set)
    if args.model:
        sets["embedding_model_config.model_name"] = args.model
    spec = parse_variant(args.variant)
    rows = []
    with patched(spec):
        ws = workspace(root, sets, spec)
        ensure_index(ws, vectors=True)
        for q in data["queries"]:
            row = {"id": q["id"], "split": q["split"], "kind": q["kind"], "query": q["query"], "modes": {}}
            for mode in MODES:
                rank, top = rank_of(ws, q["query"], paths[q["target"]], mode)
                row["modes"][mode] = {"rank": rank, "top3": top}
            rows.append(row)
    from bench.harness.embeddings import model_of, record

    result = {
        "model": model_of(ws),
        "set": sets,
        "variant": spec,
        "data": str(args.data.name),
        "notes": len(data["notes"]),
        "queries": len(rows),
        "summary": {m: summarise(rows, m) for m in MODES},
        "per_query": rows,
    }
    record(result)
    print(f"model={result['model']} set={sets} variant={args.variant or '-'}", file=sys.stderr)
    print(f"{'mode':8} " + " ".join(f"{s:>16}" for s in result["summary"]["auto"]), file=sys.stderr)
    for m in MODES:
        cells = [f"{v['hit@1']:.2f} / {v['mrr@10']:.2f} ({v['n']})" for v in result["summary"][m].values()]
        print(f"{m:8} " + " ".join(f"{c:>16}" for c in cells), file=sys.stderr)
    misses = [f"{r['id']}:{r['modes']['auto']['rank']}" for r in rows if r["modes"]["auto"]["rank"] != 1]
    print(f"auto misses (id:rank): {' '.join(misses) or '-'}", file=sys.stderr)
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
