#!/usr/bin/env python3
"""Retrieval-quality evaluation of `mem search` on LoCoMo.

    python bench/locomo.py                                # keyword, one vault per conversation
    python bench/locomo.py --mode hybrid --set search.vector_weight=0.3
    python bench/locomo.py --mode hybrid --variant tok=stem,fuse=minmax
    python bench/locomo.py --sweep headline --out bench/out/locomo/headline.json
    python bench/locomo.py --one-vault --conversations 3 --via-cli 20

Converts locomo10.json (CC BY-NC 4.0, Maharana et al., ACL 2024; see
docs/evaluation.md) into vaults under bench/out/locomo (never committed; see
harness/locomo_data.py) and searches every question of categories 1-4 with
`memcli.jobs.search.run`, the job function `mem search` calls, in-process (`--via-cli N`
runs N of them through `mem search --json` subprocesses as well and checks both give the
same hits). Metrics: session and turn level Recall@5/@10, MRR@10, nDCG@10
(harness/scoring.py). JSON on stdout (or --out), a table on stderr. Embeddings (local
all-MiniLM-L6-v2) are cached by text hash in bench/out/embeddings. Code-level ideas are
prototyped in bench/experiments/ by patching memcli in this process only; named sweeps
are bench/experiments/sweeps.py. See bench/README.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the harness is imported as bench.* from the repository root; bench/ itself stays off
# sys.path, where its scripts would shadow standard modules of the same name
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

from bench.harness import cli
from bench.harness.compare import compare
from bench.harness.locomo_data import CATEGORIES, convert
from bench.harness.paths import DEFAULT_LOCOMO, OUT, log
from bench.harness.report import report, write_result
from bench.harness.run import via_cli
from bench.harness.scoring import TURN_BUDGET


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO, help="locomo10.json")
    ap.add_argument("--out-dir", type=Path, default=OUT / "locomo", help="vault cache (default bench/out/locomo)")
    ap.add_argument("--one-vault", action="store_true", help="all conversations in one vault (harder)")
    ap.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    cli.add_run_options(ap, TURN_BUDGET)
    ap.add_argument("--via-cli", type=int, default=0, metavar="N", help="also run N questions through `mem search`")
    ap.add_argument("--report", type=Path, nargs="+", help="print markdown tables of sweep JSON files and exit")
    ap.add_argument(
        "--compare",
        type=Path,
        nargs=2,
        metavar=("BASE", "NEW"),
        help="paired bootstrap of two --details runs (NEW - BASE per question) and exit",
    )
    args = ap.parse_args(argv)
    if args.report:
        print(report(args.report))
        return 0
    if args.compare:
        print(compare(*args.compare))
        return 0
    if not args.locomo.exists():
        raise SystemExit(f"{args.locomo} not found: pass --locomo or set LOCOMO_JSON")
    stats: dict = {}
    t0 = time.perf_counter()
    vaults = convert(args.locomo, args.out_dir, one_vault=args.one_vault, conversations=args.conversations, stats=stats)
    log(
        f"{stats['conversations']} conversations, {stats['sessions']} sessions, {stats['turns']} turns, "
        f"{stats['questions']} questions (categories 1-4 with evidence; {stats['excluded_no_evidence']} "
        f"without a valid evidence id left out)"
    )
    result = cli.execute(args, vaults, stats, categories=CATEGORIES, extra={"one_vault": args.one_vault})
    if args.via_cli and not args.sweep:
        result["via_cli"] = vc = via_cli(
            vaults, args.via_cli, mode=args.mode, sets=result["set"], spec=result["variant"]
        )
        log(f"via CLI: {vc['agree']}/{vc['checked']} searches gave the same hits as the job function")
    write_result(result, args.out, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
