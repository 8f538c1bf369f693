"""Paired bootstrap over the questions of two runs made with --details."""

from __future__ import annotations

import json
from pathlib import Path


def compare(base: Path, new: Path, resamples: int = 2000, seed: int = 0) -> str:
    """Mean difference (new - base) of each metric with a 95% interval, and how many
    questions got better or worse, as a Markdown table."""
    import numpy as np

    a, b = ({r["qid"]: r for r in json.loads(p.read_text(encoding="utf-8"))["per_question"]} for p in (base, new))
    if set(a) != set(b):
        raise SystemExit("the two runs answered different questions")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(b), (resamples, len(b)))
    rows = ["| metric | new - base | 95% interval | better | worse |", "|---|---|---|---|---|"]
    for m in ("session_R@5", "session_nDCG@10", "turn_R@5", "turn_nDCG@10"):
        d = np.array([b[q][m] - a[q][m] for q in sorted(b)])
        lo, hi = np.percentile(d[picks].mean(axis=1), [2.5, 97.5])
        rows.append(f"| {m} | {d.mean():+.4f} | [{lo:+.4f}, {hi:+.4f}] | {int((d > 0).sum())} | {int((d < 0).sum())} |")
    return "\n".join(rows)
