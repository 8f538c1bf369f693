"""The command-line run shared by bench/locomo.py and bench/corpus_pydoc.py: one
configuration (--mode/--set/--variant) or a named --sweep over a corpus's vaults."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.experiments import parse_variant
from bench.experiments.sweeps import SWEEPS
from bench.harness.indexes import parse_sets
from bench.harness.report import markdown, table, write_markdown
from bench.harness.run import evaluate, run_sweep


def add_run_options(ap: argparse.ArgumentParser, budget: int) -> None:
    """--mode, --set, --variant, --budget, --sweep, --details, --markdown, --out."""
    ap.add_argument("--mode", choices=("keyword", "vector", "hybrid"), default="keyword")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="config override, e.g. chunking.target_tokens=200 (repeatable)",
    )
    ap.add_argument(
        "--variant", default="", help="code-level prototype (bench/experiments), e.g. tok=stem,fuse=minmax,merge=off"
    )
    ap.add_argument("--budget", type=int, default=budget, help="turn-level token budget per hit")
    ap.add_argument(
        "--sweep", help="run a named list of configurations (bench/experiments/sweeps.py): " + ", ".join(SWEEPS)
    )
    ap.add_argument("--details", action="store_true", help="per-question metrics and hits in the JSON (for --compare)")
    ap.add_argument("--markdown", type=Path, help="write the sweep's markdown table here")
    ap.add_argument("--out", type=Path, help="write the JSON here instead of stdout")


def execute(args, vaults, stats: dict, *, categories: dict[int, str], extra: dict, title: str = "") -> dict:
    """Run the sweep or the one configuration the options name; the result document (unwritten).

    `extra` goes into the result after "data" (LoCoMo: one_vault); `title` prefixes the
    stderr table of a single run."""
    kw = {"budget": args.budget, "categories": categories, "details": args.details}
    if args.sweep:
        docs = run_sweep(args.sweep, vaults, args.set, **kw)
        result: dict = {"sweep": args.sweep, "data": stats, **extra, "runs": docs}
        md = markdown(docs)
        print("\n" + md, file=sys.stderr)
        write_markdown(md, args.markdown)
        return result
    sets = parse_sets(args.set)
    result = evaluate(vaults, mode=args.mode, sets=sets, spec=parse_variant(args.variant), **kw)
    result.update(data=stats, **extra)
    print(table(result, f"{title}mode={args.mode} set={sets} variant={args.variant or '-'}"), file=sys.stderr)
    return result
