"""Currency: which dated statement a newer one supersedes (derived state, docs/currency.md).

Built by every sync (`mem reindex`, the sync before a search, ingest, watch): the notes whose
stat changed are read again (a dated note's statements, an undated note's lines citing a dated
note), their claims (memcli.index.currency.subjects) kept per file in
`mem_metadata/currency/claims.json`, and the relations worked out again over all of them into
`mem_metadata/currency/relations.json`, the small file a search reads. The Markdown is never
touched; deleting the folder only makes the next sync read the dated notes again.

Order is the note's date (its path), then its modification time, then the line. A claim
supersedes the live claims of the same subject with another value; one with the same value
is a restatement and supersedes nothing. A claim naming its previous value ("instead of
9:30", "from Helix to Zed") also supersedes any older statement that names the subject and
that value; one giving a thing up ("the pegasus are retired") the older statements holding it.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from memcli.index.currency import kinds, vocab
from memcli.index.currency.relate import relate
from memcli.index.currency.statements import read_file
from memcli.vault import atomic, dates
from memcli.vault.workspace import Workspace

VERSION = 7  # 4: glosses read apart, CJK claims' English words, things adopted; 5: speakers; 6: vocab; 7: its shards


def folder(metadata: Path) -> Path:
    return metadata / "currency"


def _records(args: tuple) -> list[tuple[str, dict]]:
    """In a worker: the claims.json entries of a share of the notes (a vault's hundred thousand
    statements take seconds on one core)."""
    locate, daily_dir, todo = args
    date_of = functools.partial(dates.of, daily_dir)
    return [(rel, read_file(locate(rel), rel, date_of, st)[0]) for rel, st in todo]


def _read_all(ws: Workspace, todo: list[tuple[str, tuple]]) -> tuple[dict, dict]:
    """(path -> its claims.json entry, path -> its statements when read here) for `todo`."""
    from memcli.index.notes import parse  # (its worker processes: a full rebuild's many notes)

    with parse.Workers(len(todo)) as workers:
        if workers.pool is None:
            fresh = {rel: read_file(ws.locate(rel), rel, ws.date_of, st) for rel, st in todo}
            return {rel: got[0] for rel, got in fresh.items()}, {rel: got[1] for rel, got in fresh.items()}
        locate = parse._locator(ws.resolver())
        shares = [
            workers.pool.submit(_records, (locate, ws.settings.daily_dir, part))
            for part in parse._split(todo, workers.workers * 4)
        ]
        return {rel: rec for f in shares for rel, rec in f.result()}, {}


def refresh(ws: Workspace, current: dict[str, tuple[int, int]], *, full: bool = False) -> bool:
    """Bring the claims and relations up to date with `current` (path -> (mtime_ns, size), the
    sync's view of the vault). True when something was written."""
    base = folder(ws.metadata)
    dated = {rel: st for rel, st in current.items() if rel.endswith(".md")}  # (undated: lines citing a dated note)
    seen = _fingerprint(dated)
    vectors = kinds.stamp(ws.metadata)  # the word vectors that say which kind a thing is
    known = None if full else _load(base / "relations.json")
    if known is not None and known.get("seen") == seen and known.get("vectors", "") == vectors:
        return False  # nothing changed: claims.json is not even read
    cache = None if full else _load(base / "claims.json")
    files: dict = (cache or {}).get("files", {})
    changed = [rel for rel, st in dated.items() if (files.get(rel) or {}).get("stat") != list(st)]
    gone = [rel for rel in files if rel not in dated]
    for rel in gone:
        del files[rel]
    read, fresh = _read_all(ws, [(rel, dated[rel]) for rel in changed])
    files.update(read)
    base.mkdir(parents=True, exist_ok=True)
    vocab.update(base, {rel: (rec["stat"], rec.pop("vocab")) for rel, rec in read.items()}, gone, full=cache is None)
    atomic.write_text(base / "claims.json", json.dumps({"version": VERSION, "files": files}, ensure_ascii=False))
    _write_relations(ws, files, vectors, fresh, seen)
    return True


def _fingerprint(dated: dict[str, tuple[int, int]]) -> str:
    """What a sync saw of the dated notes, in 32 hex digits: the same twice, nothing changed."""
    return hashlib.blake2b(repr(sorted(dated.items())).encode("utf-8"), digest_size=16).hexdigest()


def revisit(ws: Workspace) -> bool:
    """Work the relations out again when the word vectors changed since (after an embedding
    run wrote them: a thing adopted may now be of a known kind). True when written."""
    base = folder(ws.metadata)
    cache, rel = _load(base / "claims.json"), _load(base / "relations.json")
    vectors = kinds.stamp(ws.metadata)
    if cache is None or (rel is not None and rel.get("vectors", "") == vectors):
        return False
    _write_relations(ws, cache.get("files", {}), vectors, {}, (rel or {}).get("seen", ""))
    return True


def _write_relations(ws: Workspace, files: dict, vectors: str, fresh: dict[str, list[tuple]], seen: str) -> None:
    def read(rel: str) -> list[tuple]:  # a note's statements: just read, or read again now
        if rel not in fresh:
            fresh[rel] = read_file(ws.locate(rel), rel, ws.date_of, ())[1]
        return fresh[rel]

    base = folder(ws.metadata)
    found = relate(files, kinds.Vectors(ws.metadata) if vectors else None, read, vocab.Lazy(base, files))
    atomic.write_text(
        base / "relations.json",
        json.dumps({"version": VERSION, "vectors": vectors, "seen": seen, "superseded": found}, ensure_ascii=False),
    )


def _load(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("version") == VERSION else None


def load(metadata: Path) -> dict[str, list[dict]]:
    """path -> its superseded statements ({line, text, subject, value, by, current}); {} when
    nothing was built yet."""
    data = _load(folder(metadata) / "relations.json")
    got = (data or {}).get("superseded")
    return got if isinstance(got, dict) else {}
