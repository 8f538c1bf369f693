#!/usr/bin/env python3
"""A second, non-conversational retrieval set for `mem search`: Python's own docstrings.

    python bench/corpus_pydoc.py                     # keyword, default chunking
    python bench/corpus_pydoc.py --mode hybrid --set search.vector_weight=0.3
    python bench/corpus_pydoc.py --sweep headline

One note per standard-library module, a section per public function, class and method
holding its signature and its docstring without the summary paragraph; the summary is
the query and its section the one relevant item (harness/pydoc_data.py). Levels, as in
bench/locomo.py: "note" (the module's file; keys session_*) and "section" (keys turn_*:
a hit finds the section when its lines intersect it and it holds at most the budget of
estimated tokens). Categories: 1 function, 2 class, 3 method. The numbers depend a
little on the Python version (docstrings change); the JSON records it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the harness is imported as bench.* from the repository root; bench/ itself stays off
# sys.path, where its scripts would shadow the standard modules documented here
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

from bench.harness import cli
from bench.harness.paths import OUT
from bench.harness.pydoc_data import KINDS, MAX_QUERIES, build
from bench.harness.report import write_result
from bench.harness.scoring import TURN_BUDGET

BUDGET = TURN_BUDGET  # the same token budget per hit as on LoCoMo


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", type=Path, default=OUT / "pydoc")
    ap.add_argument("--max-queries", type=int, default=MAX_QUERIES)
    cli.add_run_options(ap, BUDGET)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    vaults, stats = build(args.out_dir, args.max_queries)
    print(
        f"pydoc: Python {stats['python']}, {stats['modules']} modules, {stats['sections']} sections, "
        f"{stats['questions']} of {stats['candidates']} queries",
        file=sys.stderr,
    )
    result = cli.execute(args, vaults, stats, categories=KINDS, extra={}, title="pydoc ")
    write_result(result, args.out, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
