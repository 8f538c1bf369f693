"""Turn the plain-text chats in src/part*.txt into sessions/<id>.json with bench/harness/chat_text.py,
Singapore time (SGT, +08:00 all year, no daylight saving; every session falls between 2030-03-04
and 2030-05-10)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[3]))  # the repository root: bench.harness

from bench.harness.chat_text import convert

if __name__ == "__main__":
    convert(HERE, "Oh Ha-eun", "+08:00")
