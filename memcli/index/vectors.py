"""Chunk vectors: a memory-mappable matrix aligned with the search snapshot.

The chunk store keeps each vector as `_embedding_f16_b64` (ReMe's format), but a
cold search must not decode base64 for every chunk. So the vectors of the active
vector space also live in `embedding_store/vectors_<space>.f16m`: a header, a
has-vector mask and an N x dims float16 matrix in snapshot document order. The
header carries the snapshot's generation token; a matrix whose generation differs
from the snapshot's is not used (the vector branch pauses rather than returning
vectors of the wrong chunks).

The request cache `embedding_store/default_v1_<space>.npz` (keys = sha256 of the
embedded text, embeddings float16) lets re-chunked but unchanged text reuse its
vector, and is the checkpoint an interrupted embedding run resumes from.
"""

from __future__ import annotations

import base64
import hashlib
import json
import mmap
import struct
from pathlib import Path

from memcli.index.store import CorruptStore
from memcli.vault import atomic

MAGIC = b"MEMVEC02"
# float32, not float16 like the store: BLAS multiplies float32 directly, while
# converting 100k float16 rows costs more than the product itself
MATRIX_DTYPE = "<f4"


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def matrix_path(metadata: Path, space: str) -> Path:
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


def write_matrix(path: Path, header: dict, mask, rows) -> None:
    import numpy as np

    mask = np.ascontiguousarray(mask, dtype=np.uint8)
    rows = np.ascontiguousarray(rows, dtype=MATRIX_DTYPE)
    hjson = json.dumps(header, separators=(",", ":")).encode()
    head = MAGIC + struct.pack("<I", len(hjson)) + hjson
    head += b" " * ((-len(head)) & 7)
    body = mask.tobytes()
    body += b"\0" * ((-len(body)) & 7)
    atomic.write_bytes(path, head + body + rows.tobytes())


class Matrix:
    """Read side: header, mask and rows as numpy views over an mmap."""

    def __init__(self, path: Path):
        import numpy as np

        self.path = path
        try:
            with open(path, "rb") as fh:
                self._mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            if self._mm[:8] != MAGIC:
                raise ValueError("bad magic")
            (hlen,) = struct.unpack_from("<I", self._mm, 8)
            self.header = json.loads(self._mm[12:12 + hlen])
            off = 12 + hlen
            off += (-off) & 7
            n, dims = int(self.header["n_docs"]), int(self.header["dims"])
            self.mask = np.frombuffer(self._mm, dtype=np.uint8, count=n, offset=off)
            off += n + ((-n) & 7)
            self.rows = np.frombuffer(self._mm, dtype=MATRIX_DTYPE, count=n * dims, offset=off).reshape(n, dims)
        except (OSError, ValueError, KeyError, TypeError, struct.error) as exc:
            raise CorruptStore(f"vector matrix {path.name} is damaged ({exc})") from None
        self.n_docs, self.dims = n, dims

    @property
    def generation(self) -> str:
        return str(self.header.get("generation", ""))


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


def open_matrix(metadata: Path, space: dict | None, generation: str) -> Matrix | None:
    """The matrix of `space` if it is aligned with the snapshot `generation`."""
    if not space:
        return None
    p = matrix_path(metadata, space["id"])
    if not p.exists():
        return None
    try:
        m = Matrix(p)
    except CorruptStore:
        return None
    return m if m.generation == generation and m.dims == int(space["dims"]) else None


def store_vectors(lines: list[bytes], dims: int) -> dict:
    """text key -> vector harvested from chunk store lines (used when rebuilding from scratch)."""
    out = {}
    for line in lines:
        if b'"_embedding_f16_b64"' not in line:
            continue
        try:
            rec = json.loads(line)
            vec = from_b64(rec["_embedding_f16_b64"], dims)
        except (ValueError, KeyError, TypeError):
            continue
        if vec is not None:
            out[text_key(rec.get("text", ""))] = vec
    return out


def carry(metadata: Path, old, keep_mask, has_fresh: bool, lines: list[bytes], text_of, generation: str) -> None:
    """Carry the active space's vectors to the new document order; reuse vectors of equal text.

    Kept documents keep their rows. A fresh chunk gets a vector when the same text
    had one before (in the old matrix, the old chunk store or the request cache),
    so re-chunking after an edit does not call the embedding provider again.
    `lines` (chunk store lines, new order) get `_embedding_f16_b64` for those.
    """
    import numpy as np

    from memcli.index import store

    space = active_space(metadata)
    if space is None:
        return
    dims = int(space["dims"])
    n = len(lines)
    rows = np.zeros((n, dims), dtype=MATRIX_DTYPE)
    mask = np.zeros(n, dtype=np.uint8)
    n_kept = int(keep_mask.sum()) if keep_mask is not None else 0
    lookup: dict = {}
    if old is not None:
        m = open_matrix(metadata, space, old.header.get("generation", ""))
        if m is not None and m.n_docs == old.n_docs:
            if keep_mask is not None:
                rows[:n_kept] = m.rows[keep_mask]
                mask[:n_kept] = m.mask[keep_mask]
            if has_fresh:
                for d in np.flatnonzero(m.mask).tolist():
                    lookup[text_key(old.text(d))] = m.rows[d]
    elif has_fresh:
        try:
            lookup = store_vectors(store.read_raw_lines(metadata / store.CHUNK_STORE), dims)
        except store.CorruptStore:
            lookup = {}
    if n > n_kept:
        cache = load_cache(cache_path(metadata, space["id"]), dims)
        for d in range(n_kept, n):
            key = text_key(text_of(d))
            vec = lookup.get(key)
            if vec is None:
                vec = cache.get(key)
            if vec is not None:
                rows[d] = vec
                mask[d] = 1
                lines[d] = store.with_vector(lines[d], f16_b64(vec))
    write_matrix(matrix_path(metadata, space["id"]),
                         {"generation": generation, "space": space["id"], "identity": space.get("identity", ""),
                          "dims": dims, "n_docs": n}, mask, rows)
