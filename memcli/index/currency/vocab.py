"""Each note's vocabulary, kept beside claims.json in shards by path (mem_metadata/currency/vocab/).

A note's vocabulary (the stemmed content words of all its statements,
memcli.index.currency.reading.vocabulary) tells relating which notes may hold a thing given up
or a value named as the previous one. It is most of what currency keeps (3 KB a note), and is
needed only when some claim gives a thing up or names an old value: kept inside claims.json it
was loaded and written again by every sync (65 MB for 20,000 notes). In 64 shards, an update
writes the shards of the notes it read, and relating loads them only when it looks a thing up.
An entry keeps its note's stat: one that disagrees with claims.json is not used, so a note
whose vocabulary is missing or stale is read again instead of being passed over.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

from memcli.vault import atomic

SHARDS = 64


def _shard(rel: str) -> int:
    return zlib.crc32(rel.encode("utf-8")) % SHARDS


def _path(base: Path, shard: int) -> Path:
    return base / "vocab" / f"{shard:02d}.json"


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def update(base: Path, fresh: dict[str, tuple[list, str]], gone: list[str], *, full: bool) -> None:
    """Write the vocabularies of `fresh` (path -> (stat, vocabulary)) and drop those of `gone`;
    `full`: every shard is written from `fresh` alone."""
    touched: dict[int, dict] = {s: {} for s in range(SHARDS)} if full else {}
    for rel in [*fresh, *gone]:
        s = _shard(rel)
        if s not in touched:
            touched[s] = _read(_path(base, s))
    for rel in gone:
        touched[_shard(rel)].pop(rel, None)
    for rel, (stat, words) in fresh.items():
        touched[_shard(rel)][rel] = [list(stat), words]
    (base / "vocab").mkdir(parents=True, exist_ok=True)
    for s, entries in touched.items():
        atomic.write_text(_path(base, s), json.dumps(entries, ensure_ascii=False))


class Lazy:
    """path -> its note's vocabulary, or None when not known for the note's stat in `files`:
    the shards are read at the first question."""

    def __init__(self, base: Path, files: dict):
        self.base, self.files = base, files
        self.entries: dict | None = None  # path -> [stat, vocabulary], once the shards are read

    def __call__(self, rel: str) -> str | None:
        if self.entries is None:
            self.entries = {}
            for s in range(SHARDS):
                self.entries.update(_read(_path(self.base, s)))
        got = self.entries.get(rel)
        if not isinstance(got, list) or len(got) != 2 or got[0] != (self.files.get(rel) or {}).get("stat"):
            return None  # not known for the stat the note has now: read it again
        return got[1] if isinstance(got[1], str) else None
