"""Where the benchmark reads its data and keeps what it derives (bench/out/, git-ignored)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent
REPO = BENCH.parent
OUT = BENCH / "out"
PYLIB = OUT / "pylib"  # optional extras for prototypes (snowballstemmer), never required
EMB_CACHE_DIR = OUT / "embeddings"
DEFAULT_LOCOMO = Path(os.environ.get("LOCOMO_JSON", REPO.parent / "shared" / "data" / "locomo" / "locomo10.json"))


def log(msg: str) -> None:
    print(f"locomo: {msg}", file=sys.stderr, flush=True)
