"""Frontmatter parsing cost: every note's block parsed, and a full keyword-only index build.

Measured to decide on a YAML-free fast path beside python-frontmatter's
YAML handler: on a 2,000-note vault it parsed 5.5x faster but saved only 0.05 s of parsing,
0.1 s (4%) of a 2.6 s build, so it was removed. `--fast MODULE:FUNC` measures a candidate
fast path again (a function source -> dict | None, None meaning "ask YAML").

    python bench/bench_frontmatter.py --vault /tmp/vault2k [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memcli.vault import frontmatter


def blocks(vault: Path) -> list[str]:
    out = []
    for p in sorted(vault.rglob("*.md")):
        src, _ = frontmatter.split(p.read_text(encoding="utf-8"))
        if src is not None:
            out.append(src)
    return out


def parse_all(sources: list[str]) -> float:
    t0 = time.perf_counter()
    for s in sources:
        frontmatter.parse(s)
    return time.perf_counter() - t0


def full_build(vault: Path) -> float:
    from memcli.index import sync
    from memcli.vault.workspace import open_workspace

    with tempfile.TemporaryDirectory() as tmp:
        ws_root = Path(tmp) / "ws"
        shutil.copytree(vault, ws_root)
        ws = open_workspace(ws_root, {"MEM_EMBEDDING_BACKEND": "none", "HOME": tmp})
        t0 = time.perf_counter()
        sync.sync(ws, full=True)
        return time.perf_counter() - t0


def measure(vault: Path, repeat: int, fast=None) -> dict:
    real = frontmatter.parse
    if fast is not None:
        frontmatter.parse = lambda source: (fast(source), None) if source and fast(source) is not None else real(source)
    try:
        sources = blocks(vault)
        parse = [parse_all(sources) for _ in range(repeat)]
        build = [full_build(vault) for _ in range(repeat)]
    finally:
        frontmatter.parse = real
    return {
        "blocks": len(sources),
        "parse_s_median": round(statistics.median(parse), 4),
        "parse_ms_per_block": round(1000 * statistics.median(parse) / max(1, len(sources)), 4),
        "build_s_median": round(statistics.median(build), 3),
        "build_s": [round(b, 3) for b in build],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--fast", help="a candidate fast path MODULE:FUNC to compare with the shipped parser")
    a = ap.parse_args()
    os.environ.setdefault("PYTHONHASHSEED", "0")
    shipped = measure(a.vault, a.repeat)
    doc = {"vault": str(a.vault), "shipped": shipped}
    if a.fast:
        import importlib

        module, _, func = a.fast.partition(":")
        fast = measure(a.vault, a.repeat, getattr(importlib.import_module(module), func))
        doc.update(
            fast_path=fast,
            parse_speedup=round(shipped["parse_s_median"] / max(1e-9, fast["parse_s_median"]), 2),
            build_saving_s=round(shipped["build_s_median"] - fast["build_s_median"], 3),
        )
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
