"""What a run reports: the result JSON, a table on stderr, and Markdown tables for the docs."""

from __future__ import annotations

import json
import time
from pathlib import Path

from bench.harness.embeddings import record
from bench.harness.scoring import METRICS


def table(doc: dict, title: str = "") -> str:
    """One run as a fixed-width table, overall and per category (stderr)."""
    head = (
        f"{'category':<12} {'n':>5} | {'sR@5':>6} {'sR@10':>6} {'sNDCG':>6} {'sMRR':>6} | "
        f"{'tR@5':>6} {'tR@10':>6} {'tNDCG':>6} {'tMRR':>6} | {'lines@5':>7} {'tok@5':>6}"
    )
    out = [title, head, "-" * len(head)] if title else [head, "-" * len(head)]
    for g, m in doc["metrics"].items():
        name = "overall" if g == "overall" else f"{g} {doc['categories'][g]}"
        out.append(
            f"{name:<12} {m['n']:>5} | "
            + " ".join(f"{m[x]:>6.3f}" for x in METRICS[:4])
            + " | "
            + " ".join(f"{m[x]:>6.3f}" for x in METRICS[4:8])
            + f" | {m['lines@5']:>7.1f} {m['tokens@5']:>6.0f}"
        )
    return "\n".join(out)


def markdown(docs: list[dict]) -> str:
    """One row per run: overall and per-category session nDCG@10 / turn R@5 (--markdown)."""
    cats = docs[0]["categories"]
    head = (
        "| variant | sR@5 | sR@10 | sNDCG@10 | sMRR | tR@5 | tR@10 | tNDCG@10 | tMRR | tokens@5 | "
        + " | ".join(f"{c} {name} sNDCG / tR@5" for c, name in cats.items())
        + " |"
    )
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for d in docs:
        m = d["metrics"]["overall"]
        cells = [f"{m[x]:.3f}" for x in METRICS[:8]] + [f"{m['tokens@5']:.0f}"]
        cells += [
            f"{d['metrics'][c]['session_nDCG@10']:.3f} / {d['metrics'][c]['turn_R@5']:.3f}"
            if c in d["metrics"]
            else "-"
            for c in cats
        ]
        out.append(f"| {d.get('label', d['mode'])} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def report(paths: list[Path]) -> str:
    """Markdown tables (overall; per category) of the runs in sweep JSON files, for the docs."""
    docs = [d for p in paths for d in json.loads(p.read_text(encoding="utf-8"))["runs"]]
    cats = docs[0]["categories"]
    out = [
        "| # | variant | mode | sR@5 | sR@10 | sNDCG@10 | sMRR@10 | tR@5 | tR@10 | tNDCG@10 | tMRR@10 | tokens@5 |",
        "|---|---|---|" + "---|" * 9,
    ]
    for i, d in enumerate(docs, 1):
        m = d["metrics"]["overall"]
        out.append(
            f"| {i} | {d['label']} | {d['mode']} | "
            + " | ".join(f"{m[x]:.3f}" for x in METRICS[:8])
            + f" | {m['tokens@5']:.0f} |"
        )
    out += [
        "",
        "| # | " + " | ".join(f"{c} {n}: sR@5 / sNDCG / tR@5 / tNDCG" for c, n in cats.items()) + " |",
        "|---|" + "---|" * len(cats),
    ]
    for i, d in enumerate(docs, 1):
        cells = []
        for c in cats:
            m = d["metrics"].get(c)
            cells.append(
                " / ".join(f"{m[x]:.3f}" for x in ("session_R@5", "session_nDCG@10", "turn_R@5", "turn_nDCG@10"))
                if m
                else "-"
            )
        out.append(f"| {i} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def write_result(result: dict, out: Path | None, t0: float) -> None:
    """Record the embedding work, stamp the wall time, write the JSON to `out` or stdout."""
    record(result)
    result["wall_seconds"] = round(time.perf_counter() - t0, 1)
    text = json.dumps(result, indent=2, ensure_ascii=False)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
    else:
        print(text)


def write_markdown(md: str, path: Path | None) -> None:
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(md + "\n", encoding="utf-8")
