"""Incremental indexing: bring the stores and the search snapshot up to date.

Change detection: a file whose mtime and size match the snapshot is unchanged,
unless its mtime is so close to the last index time that an edit in the same
clock tick could hide (then its hash decides, as git does for "racy" files). A
file whose stat differs is re-hashed; only a different hash re-chunks it.
Unchanged files keep their chunks, postings, texts and store lines (and any
vectors in them) as they are.

The index is a list of segments (memcli.index.keyword.segments); an update writes its fresh
files as a new segment, marks their old versions dead, and commits with a new
manifest after the stores (memcli.index.commit), which records their stamps. A
crash before it leaves the old manifest, whose stamps no longer match; the next
sync judges the stores by their records. A full build reads and writes the vault
segment by segment, so its memory follows a segment, not the vault.

A store whose stamp differs from the snapshot's is judged by its decoded records
(memcli.index.previous: the index an update starts from).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memcli.errors import CorruptStore
from memcli.index import PARSER_VERSION, previous, sources
from memcli.index import journaled as by_journal
from memcli.index.keyword import segments, tokenizer
from memcli.vault import atomic
from memcli.vault.workspace import Workspace
from memcli.watch import journal, walk
from memcli.watch.stamps import RACY_NS

PARSE_BATCH = 600  # files read and tokenized at a time by a full build

Progress = Callable[[str, int, int], None]


@dataclass
class SyncReport:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    files: int = 0
    chunks: int = 0
    full: bool = False
    wrote: bool = False
    reason: str = ""
    current: dict = field(default_factory=dict, repr=False)  # path -> (mtime_ns, size): the vault as synced

    @property
    def changes(self) -> int:
        return len(self.added) + len(self.changed) + len(self.deleted)


def snapshot_path(ws: Workspace) -> Path:
    """The index's manifest: the list of its segments, the commit point of every update."""
    return ws.metadata / "keyword_index" / f"bm25_default_{tokenizer.NAME}_{tokenizer.FINGERPRINT}_v1.segments.json"


def chunking_params(ws: Workspace) -> dict:
    c = ws.settings.chunking
    return {
        "target_tokens": c.target_tokens,
        "overlap_tokens": c.overlap_tokens,
        "parser": PARSER_VERSION,
        "sources": ws.settings.search.source_conversations,
    }


def open_snapshot(ws: Workspace) -> segments.View | None:
    """The index as one (memcli.index.keyword.segments.View), None when there is none yet."""
    return segments.open_view(snapshot_path(ws))


def scan(
    ws: Workspace, dirs: dict | None = None, snap=None, problems: list | None = None
) -> dict[str, tuple[int, int]]:
    """Every indexed file's (mtime_ns, size); `dirs` receives the folders' mtimes (memcli.index.quick).
    `snap`: the index, whose size tells whether the walk is worth splitting (memcli.watch.walk).
    `problems` receives (path, why) of the folders and names the walk went round; the files
    `snap` holds below a folder that cannot be read are given as indexed (memcli.index.journaled.keep_unreadable)."""
    found: list[tuple[str, str]] = []
    current = dict(
        ws.iter_watched(dirs, split=snap is not None and snap.n_files >= walk.SPLIT_MIN_FILES, problems=found)
    )
    if found and snap is not None:
        by_journal.keep_unreadable(current, snap.stats(), found)
    if problems is not None:
        problems.extend(found)
    return current


def stale_paths(snap, current: dict[str, tuple[int, int]]) -> list[str]:
    """Paths whose stat differs from the snapshot (added, changed, deleted): no reads."""
    known = snap.stats() if snap else {}
    was = known.get
    return sorted({p for p, st in current.items() if was(p) != st} | (known.keys() - current.keys()))


def sync(ws: Workspace, *, full: bool = False, progress: Progress | None = None, strict: bool = False) -> SyncReport:
    """Update derived state from the Markdown. The caller holds the index lock. Currency that
    cannot be written is a warning (it is derived, and the next sync writes it: a search goes
    on), or with `strict` (`mem reindex`, whose job is writing it) the error."""
    report = _sync(ws, full=full, progress=progress)
    from memcli.index.currency import update as currency  # which statement supersedes which (docs/currency.md)

    try:
        currency.refresh(ws, report.current, full=full)
    except OSError as exc:
        if strict:
            raise
        report.warnings.append(("mem_metadata/currency", f"not updated: {exc.strerror or exc}"))
    return report


def _sync(ws: Workspace, *, full: bool = False, progress: Progress | None = None) -> SyncReport:
    report = SyncReport()
    params = chunking_params(ws)
    base, report.reason = (None, "") if full else previous.load(ws, snapshot_path(ws), params)
    old = base.snap if base else None
    redo = base.redo if base else frozenset()
    if full and not report.reason:
        report.reason = "full rebuild requested"
    report.full = old is None
    if progress:
        progress("scan", 0, 0)
    known = old.stats() if old else {}  # path -> (mtime_ns, size); records are decoded on demand
    now = journal.confirm(ws.metadata)  # a running `mem watch` knows what changed: first, then walk
    dirs: dict[str, int] | None = {}
    got = by_journal.since(ws, old, known, now) if old is not None and now is not None else None
    racy_limit = (old.header.get("indexed_at_ns", 0) - RACY_NS) if old else 0
    # to read: new or changed stat, a racy one (changed maybe within the index's clock tick), redo
    walked: list[tuple[str, str]] = []
    if got is None:
        current = report.current = scan(ws, dirs, old, walked)
        was = known.get
        stale = {rel for rel, st in current.items() if st[0] >= racy_limit or was(rel) != st}
    else:  # every journaled file is read (its hash decides), and the racy ones as ever
        current, dirs, journaled, walked = got
        report.current = current
        stale = journaled & current.keys()
        stale.update(rel for rel, st in current.items() if st[0] >= racy_limit)
    stale.update(redo & current.keys())
    relog = sources.notes_of_changed_logs(ws, old) & current.keys()  # read again: their log changed
    stale.update(relog)
    cuts = tuple(p for p, _ in walked if p.endswith("/"))
    if cuts:  # below a folder that cannot be read: kept as indexed, not read (it would fail again)
        stale = {p for p in stale if not p.startswith(cuts)}
    todo = [
        (rel, _indexed_sha(old, rel) if rel in known and rel not in redo and rel not in relog else None)
        for rel in sorted(stale)
    ]  # (in path order: a full build's segments follow the paths)
    report.skipped += walked  # before any update: the journal mark is then held (_held)
    report.deleted = sorted(known.keys() - current.keys())
    report.files = len(current)
    mark = now.record() if now is not None else (old.header.get("watch") if old else None)
    if old is not None and base is not None and not todo and not report.deleted and not base.rewrite:
        report.chunks = old.n_docs
        _refresh_quick(ws, old, current, {}, dirs, mark)
        old.close()
        return report
    try:
        return _update(ws, base, todo, current, known, params, report, progress, dirs, mark)
    finally:
        if old is not None:
            old.close()


def _indexed_sha(old: segments.View | None, rel: str) -> str | None:
    """The content hash the index holds for `rel` (None: it holds no such file)."""
    i = old.file_index(rel) if old is not None else None
    return old.record(i)["sha"] if old is not None and i is not None else None


def _update(ws, base, todo, current, known, params, report, progress, dirs, mark) -> SyncReport:
    from memcli.index import commit  # deferred: searches import this module only to check staleness
    from memcli.index.notes import parse

    old = base.snap if base else None
    aligned = base.lines if base else None
    if old is not None and aligned is None and (old.header.get("store") or {}).get("layout") is None:
        aligned = previous.aligned_lines(ws, old)
        if aligned is None:  # the store changed under the index: start over from the Markdown
            old.close()
            report.reason, report.full = "chunk store does not match the search snapshot", True
            return _sync(ws, full=True, progress=progress)
    try:
        job = commit.Commit(ws.metadata, snapshot_path(ws), old, ws.settings.chunking.passage_tokens, aligned)
    except CorruptStore as exc:  # the stores lost track of a segment: start over from the Markdown
        if old is not None:
            old.close()
        report.reason, report.full = str(exc), True
        return _sync(ws, full=True, progress=progress)
    try:
        gone = set(report.deleted)
        touched: list[tuple[str, str | None]] = []  # (path, None): read again whatever its hash
        with parse.Workers(len(todo)) as workers:
            if old is None and job.carrier is None and workers.pool is not None:
                from memcli.index import build  # the workers write the segments (its docstring)

                build.build(
                    job,
                    workers,
                    ws.resolver(),
                    todo,
                    current,
                    params["target_tokens"],
                    params["overlap_tokens"],
                    lambda res: _take(job, res, current, known, report, gone, touched, written=True),
                    progress,
                )
            else:
                done = 0
                batches = [todo[i : i + PARSE_BATCH] for i in range(0, len(todo), PARSE_BATCH)]
                for results in workers.stream(
                    ws.resolver(), batches, params["target_tokens"], params["overlap_tokens"]
                ):
                    for res in results:
                        _take(job, res, current, known, report, gone, touched)
                    done += len(results)
                    if progress:
                        progress("chunk", done, len(todo))
        if touched:  # same content, new stat: indexed again so the segments hold the new stat
            for res in parse.process(ws.resolver(), touched, params["target_tokens"], params["overlap_tokens"]):
                _take(job, res, current, known, SyncReport(), gone, [])
        if old is not None and not gone and not base.rewrite and not job.pending and not any(p.new for p in job.parts):
            report.chunks = old.n_docs
            job.abort()
            _refresh_quick(ws, old, current, job.hashes, dirs, _held(mark, old, report))
            return report
        if progress:
            progress("write", 0, 0)
        dropped = job.delete(gone)
        from memcli.index import quick

        man = job.finish(
            dropped,
            {
                "chunking": params,
                "watch": _held(mark, old, report),
                "quick": quick.record(ws, current, job.hashes, dirs) if dirs is not None else None,
            },
            force_store=old is None or base.rewrite,
        )
    except BaseException:
        job.abort()
        raise
    report.chunks = int(man["n_docs"])
    report.wrote = True
    report.warnings += [(rel, why) for rel in report.added + report.changed if (why := ws.date_problem(rel))]
    for p in snapshot_path(ws).parent.glob("bm25_default_*"):
        if p != snapshot_path(ws):
            atomic.remove(p)  # index of an older tokenizer or format: never read again
    return report


def _refresh_quick(ws, old, current, hashes, dirs, mark) -> None:
    """Nothing changed, but the quick freshness record no longer matches (a folder's mtime
    moved: a file came and went), or the watcher's journal went on: record them anew so
    searches skip the full check again, and the next sync reads the journal from here."""
    from memcli.index import quick

    header = dict(old.header, watch=mark)
    if old.header.get("quick") is not None and dirs is not None and not quick.unchanged(old):
        header["quick"] = quick.record(ws, current, hashes, dirs)
    if header != old.header:
        try:
            segments.write_manifest(snapshot_path(ws), header)
        except OSError:
            pass  # (read-only workspace) the full check goes on answering


def _held(mark, old, report: SyncReport):
    """The journal mark the new index can claim: not past a file it could not read (that
    one is tried again by the next sync only if it is still among the journaled changes)."""
    if any(rel not in report.deleted for rel, _ in report.skipped) and old is not None:
        return old.header.get("watch")
    return mark


def _take(job, res, current, known, report, gone: set, touched: list, written: bool = False) -> None:
    """Route one parse result: a fresh file into the commit, an unchanged one left as it is.
    `written`: its chunks are in a segment already (memcli.index.build)."""
    job.hashes[res.rel] = res.sha
    if res.error:
        report.skipped.append((res.rel, res.error))
        if res.rel in known:
            pass  # unreadable now: its indexed version stays until it can be read
        return
    if res.unchanged:
        if known.get(res.rel) != current[res.rel]:
            touched.append((res.rel, None))
        return
    if not written:
        job.add(res.rel, res, current[res.rel])
    if res.rel in known:
        gone.add(res.rel)
    (report.changed if res.rel in known else report.added).append(res.rel)
    if res.skipped:
        report.skipped.append((res.rel, res.problem or "skipped"))
    elif res.problem:
        report.warnings.append((res.rel, res.problem))
