"""Turn the plain-text chats in src/part*.txt into sessions/<id>.json (bench/harness/chat_text.py),
Bamberg time (CEST, +02:00; every session falls between April 9 and June 15, inside summer time)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[3]))  # the repository root: bench.harness

from bench.harness.chat_text import convert

if __name__ == "__main__":
    convert(HERE, "Xu Qing", "+02:00")
