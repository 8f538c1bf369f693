"""Currency's derived state brought up to date: by every sync (`refresh`), and after an embedding
run that rewrote the word vectors (`revisit`). What it writes is read by `load`
(memcli.index.currency); docs/currency.md says what each file holds.
"""

from __future__ import annotations

import functools
import hashlib
import json

from memcli.index.currency import VERSION, folder, kinds, read_state, vocab
from memcli.index.currency.relate import relate
from memcli.index.currency.statements import read_file, read_statements
from memcli.vault import atomic, dates
from memcli.vault.workspace import Workspace


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
    known = None if full else read_state(base / "relations.json")
    if known is not None and known.get("seen") == seen and known.get("vectors", "") == vectors:
        return False  # nothing changed: claims.json is not even read
    cache = None if full else read_state(base / "claims.json")
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
    cache, rel = read_state(base / "claims.json"), read_state(base / "relations.json")
    vectors = kinds.stamp(ws.metadata)
    if cache is None or (rel is not None and rel.get("vectors", "") == vectors):
        return False
    _write_relations(ws, cache.get("files", {}), vectors, {}, (rel or {}).get("seen", ""))
    return True


def _write_relations(ws: Workspace, files: dict, vectors: str, fresh: dict[str, list[tuple]], seen: str) -> None:
    def read(rel: str) -> list[tuple]:  # a note's statements: just read, or read again now
        if rel not in fresh:
            fresh[rel] = read_statements(ws.locate(rel), rel, ws.date_of)  # (not its claims again)
        return fresh[rel]

    base = folder(ws.metadata)
    found = relate(files, kinds.Vectors(ws.metadata) if vectors else None, read, vocab.Lazy(base, files))
    atomic.write_text(
        base / "relations.json",
        json.dumps({"version": VERSION, "vectors": vectors, "seen": seen, "superseded": found}, ensure_ascii=False),
    )
