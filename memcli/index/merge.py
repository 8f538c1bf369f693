"""When and how segments merge (memcli.index.commit calls it before writing the stores).

Tiered, as Lucene and tantivy merge: every update adds one small segment, and once
there are more than MAX_SMALL segments besides the full ones, the MAX_SMALL + 1
adjacent segments with the fewest live chunks merge into one. So seven updates in
eight write only their own segment, a segment is rewritten about
log9(SEGMENT_DOCS / its size) times in its life, and a search reads at most
MAX_SMALL + (vault / SEGMENT_DOCS) + 1 segments. A segment whose deletions pass
DEAD_SHARE of its chunks is rewritten without them; one with no live file is
dropped. Merging keeps the chunks' order (segment after segment), so the numbering
the chunk store follows does not change; the merged segment's vector files are
written from the members' (memcli.index.vectors.carry).
"""

from __future__ import annotations

from memcli.index.keyword import assemble
from memcli.index.stores.mirror import source_lines
from memcli.index.vectors import vecseg

SEGMENT_DOCS = 8_192  # chunks a full build puts in one segment (~1,200 notes); merges stop there
MAX_SMALL = 8
DEAD_SHARE = 0.25


def plan(live: list[int], total: list[int]) -> list[list[int]]:
    """Groups of consecutive segment numbers: each becomes one segment (a group of one is kept
    as it is unless its deletions pass DEAD_SHARE; those are in `rewrite`)."""
    groups = [[i] for i in range(len(live))]
    sizes = list(live)
    while True:
        full = sum(1 for n in sizes if n >= SEGMENT_DOCS // 2)
        if len(groups) <= full + MAX_SMALL or len(groups) < 2:
            return groups
        width = min(MAX_SMALL + 1, len(groups))
        k = min(range(len(groups) - width + 1), key=lambda i: (sum(sizes[i : i + width]), i))
        groups[k : k + width] = [[g for group in groups[k : k + width] for g in group]]
        sizes[k : k + width] = [sum(sizes[k : k + width])]


def needs_rewrite(live: int, total: int) -> bool:
    return total > 0 and (total - live) > DEAD_SHARE * total


def apply(commit, parts: list) -> list:
    """The parts after merging (memcli.index.commit.Part); merged ones are written now."""
    parts = [p for p in parts if p.live_files > 0]  # nothing current left in it: dropped
    groups = plan([p.live_docs for p in parts], [p.snap.n_docs for p in parts])
    out = []
    for group in groups:
        members = [parts[i] for i in group]
        if len(members) == 1 and not needs_rewrite(members[0].live_docs, members[0].snap.n_docs):
            out.append(members[0])
        else:
            out.append(merged(commit, members))
    return out


def merged(commit, members: list):
    """One new segment holding the live files of `members`, in their order."""
    asm = assemble.Assembly()
    for part in members:
        recs = [part.snap.record(j) for j in range(len(part.snap.paths)) if j not in part.dead_files]
        assemble.carry_segment(asm, part.snap, recs, dict(source_lines(part, "chunks")))
    out = commit.write_segment(asm)
    if commit.carrier is not None:
        commit.written += [
            commit.folder / f"{out.name}.vec-{space}"
            for space in {s for m in members for s in vecseg.spaces_of(commit.folder, m.name)}
        ]
        commit.carrier.merged(members, out.name)
    for part in members:
        if part.new:  # written by this commit and merged at once: nothing refers to it any more
            part.src = {}
            part.snap.close()
    return out
