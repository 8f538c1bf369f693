"""Turn the plain-text chats in src/part*.txt into sessions/<id>.json (bench/harness/chat_text.py),
São Paulo time (BRT, -03:00; Brazil has had no daylight saving since 2019)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[3]))  # the repository root: bench.harness

from bench.harness.chat_text import convert

if __name__ == "__main__":
    convert(HERE, "Beatriz Okada", "-03:00")
