"""Chunk vectors: the active space, the request cache, and the view of a space's
per-segment vector files (memcli.index.vectors.vecseg) as one.

The chunk store keeps one vector per chunk as `_embedding_f16_b64` (ReMe's format),
but a cold search must not decode base64 for every chunk, and the vector branch
scores each chunk by its best passage (memcli.index.vectors.passages). So the passage rows
live beside the index segments, one file per segment and space, memory-mapped by a
search (ViewVectors reads them in the view's chunk numbering). A file cut into
passages of another size than the config's is not used (its chunks count as without
vectors, and `mem health` says so).

The request cache `embedding_store/default_v1_<space>.npz` (keys = sha256 of the
embedded text, embeddings float16) keeps the most recent `max_cache_size` vectors,
so text that moved or came back reuses its vector; the segment files are the
checkpoint an interrupted embedding run resumes from.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from pathlib import Path

from memcli.errors import CorruptStore
from memcli.vault import atomic


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def matrix_path(metadata: Path, space: str) -> Path:
    """The one-file matrix of earlier versions (only ever removed now)."""
    return metadata / "embedding_store" / f"vectors_{space}.f16m"


def cache_path(metadata: Path, space: str) -> Path:
    return metadata / "embedding_store" / f"default_v1_{space}.npz"


def f16_b64(row) -> str:
    import numpy as np

    return base64.b64encode(np.asarray(row, dtype="<f2").tobytes()).decode("ascii")


def from_b64(value: str, dims: int):
    import numpy as np

    arr = np.frombuffer(base64.b64decode(value), dtype="<f2")
    return arr if arr.size == dims else None


def load_cache(path: Path, dims: int) -> dict:
    """text key -> float16 vector; an unreadable cache is just empty (it is only a cache)."""
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as data:
            keys, emb = data["keys"], data["embeddings"]
            if emb.ndim != 2 or emb.shape[1] != dims or len(keys) != len(emb):
                return {}
            return {str(k): emb[i] for i, k in enumerate(keys)}
    except (OSError, ValueError, KeyError, EOFError):
        return {}


def save_cache(path: Path, cache: dict, dims: int, max_size: int) -> None:
    import io

    import numpy as np

    items = list(cache.items())[-max_size:] if max_size > 0 else []
    keys = np.array([k for k, _ in items], dtype="<U64")
    emb = np.array([v for _, v in items], dtype="<f2").reshape(len(items), dims)
    buf = io.BytesIO()
    np.savez(buf, keys=keys, embeddings=emb)
    atomic.write_bytes(path, buf.getvalue())


def space_file(metadata: Path) -> Path:
    return metadata / "embedding_store" / "space.json"


def active_space(metadata: Path) -> dict | None:
    """The vector space whose vectors the index holds: {id, identity, dims}, or None."""
    try:
        data = json.loads(space_file(metadata).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) and data.get("id") and int(data.get("dims", 0)) > 0 else None
    except (OSError, ValueError, TypeError, RecursionError):
        return None


def set_active_space(metadata: Path, space: dict | None) -> None:
    if space is None:
        atomic.remove(space_file(metadata))
    else:
        atomic.write_text(space_file(metadata), json.dumps(space, sort_keys=True))


def open_vectors(view, space: dict | None, passage_tokens: int) -> ViewVectors | None:
    """The vectors of `space` for the view's segments, or None without a space."""
    if not space or view is None:
        return None
    return ViewVectors(view, space, passage_tokens)


class ViewVectors:
    """A space's segment vector files (memcli.index.vectors.vecseg) read as one, in the view's dense
    chunk numbering. A segment whose file is missing, damaged or cut into passages of
    another size counts as chunks without vectors; `problems` says which were damaged."""

    def __init__(self, view, space: dict, passage_tokens: int):
        from memcli.index.keyword import segments
        from memcli.index.vectors import vecseg

        self.view, self.space, self.dims = view, space, int(space["dims"])
        self.passage_tokens = passage_tokens
        folder = view.path.parent / segments.FOLDER
        self.parts: list = []  # (segment, VecSeg or None)
        self.problems: list[str] = []
        self.other_size = 0  # files cut into passages of another size
        self.sizes: dict = {}  # segment -> that size
        for seg in view.segments:
            path = vecseg.file_path(folder, seg.name, space["id"])
            vs = None
            if path.exists():
                try:
                    vs = vecseg.VecSeg(path)
                    if vs.dims != self.dims or vs.n_docs != seg.snap.n_docs:
                        raise CorruptStore(f"segment vectors {path.name} do not match their segment")
                    if vs.passage_tokens != passage_tokens:
                        self.other_size += 1
                        self.sizes[seg.name] = vs.passage_tokens
                        vs.close()
                        vs = None
                except CorruptStore as exc:
                    self.problems.append(str(exc))
                    vs = None
            self.parts.append((seg, vs))
        self._by_name = {seg.name: vs for seg, vs in self.parts}
        self.n_docs = view.n_docs
        self._mask = None

    @property
    def usable(self) -> int:
        return sum(1 for _, vs in self.parts if vs is not None)

    def names(self) -> list[str]:
        return [seg.name for seg, vs in self.parts if vs is not None]

    @staticmethod
    def live(seg):
        """The segment's live local chunk numbers (numpy)."""
        import numpy as np

        every = np.arange(seg.snap.n_docs, dtype=np.intp)
        return np.delete(every, seg.dead_docs) if seg.dead_docs else every

    @property
    def mask(self):
        """1 per chunk of the view with all its passages embedded (dense numbering)."""
        import numpy as np

        if self._mask is None:
            parts = [
                vs.mask[self.live(seg)] if vs is not None else np.zeros(seg.n_live, dtype=np.uint8)
                for seg, vs in self.parts
            ]
            self._mask = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)
        return self._mask

    def with_vectors(self) -> int:
        return int(self.mask.sum())

    def _at(self, d: int):
        seg, local = self.view._doc(d)
        return self._by_name[seg.name], local

    def has(self, d: int) -> bool:
        vs, local = self._at(d)
        return vs is not None and bool(vs.mask[local])

    def doc_rows(self, d: int):
        vs, local = self._at(d)
        return vs.doc_rows(local)

    def chunk_row(self, d: int):
        vs, local = self._at(d)
        return vs.chunk_rows[local]

    def n_rows_embedded(self) -> int:
        """Passages of the live embedded chunks."""
        import numpy as np

        total = 0
        for seg, vs in self.parts:
            if vs is not None:
                live = self.live(seg)
                live = live[vs.mask[live] == 1]
                off = vs.offsets.astype(np.int64)
                total += int((off[live + 1] - off[live]).sum())
        return total

    def embedded_blocks(self, skip=()):
        """(segment name, passage rows of its live embedded chunks) of each usable file not in
        `skip`."""
        from memcli.index.vectors import vecseg

        for seg, vs in self.parts:
            if vs is None or seg.name in skip:
                continue
            live = self.live(seg)
            rows = vs.rows[vecseg.passage_index(vs.offsets, live[vs.mask[live] == 1])[0]]
            vs.release()
            yield seg.name, rows

    def stamp(self) -> int:
        """The newest file's change time (what the team publisher compares)."""
        out = 0
        for _, vs in self.parts:
            if vs is not None:
                try:
                    out = max(out, vs.path.stat().st_mtime_ns)
                except OSError:
                    pass
        return out

    def close(self) -> None:
        for _, vs in self.parts:
            if vs is not None:
                vs.close()


def store_vectors(metadata: Path, space: dict, passage_tokens: int) -> dict:
    """text key -> vector from the chunk store lines of `space`, for chunks whose text is
    surely one passage now (for those the store's chunk vector is the passage's). Used
    where no segment vectors fit (an index rebuilt from scratch, an older version's)."""
    from memcli.index.stores import store
    from memcli.index.vectors.passages import surely_single

    try:
        lines = store.read_raw_lines(metadata / store.CHUNK_STORE)
    except CorruptStore:
        return {}
    dims = int(space["dims"])
    out = {}
    for line in lines:
        if b'"_embedding_f16_b64"' not in line:
            continue
        try:
            rec = json.loads(line)
            text = rec.get("text", "")
            vec = from_b64(rec["_embedding_f16_b64"], dims) if surely_single(text, passage_tokens) else None
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if vec is not None:
            out[text_key(text)] = vec
    return out


def legacy_passage_tokens(metadata: Path, space: dict) -> int | None:
    """The passage size of an earlier version's one-file matrix of `space` (0 for its first
    format, one vector per chunk), None when there is none."""
    try:
        with open(matrix_path(metadata, space["id"]), "rb") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return None
    if head[:8] == b"MEMVEC02":
        return 0
    try:
        (hlen,) = struct.unpack_from("<I", head, 8)
        value = json.loads(head[12 : 12 + hlen]).get("passage_tokens")
    except (ValueError, struct.error, AttributeError):
        return None
    return value if isinstance(value, int) else None


def drop_vectors(meta: Path, folder: Path) -> None:
    """Forget the active space's vectors (a full re-embedding follows); the request cache stays."""
    space = active_space(meta)
    if space:
        atomic.remove(matrix_path(meta, space["id"]))
        for p in folder.glob(f"*.vec-{space['id']}") if folder.exists() else ():
            atomic.remove(p)
    set_active_space(meta, None)  # the noise record stays: its probes' vectors are still valid
