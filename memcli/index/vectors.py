"""Chunk vectors: a memory-mappable matrix aligned with the search snapshot.

The chunk store keeps one vector per chunk as `_embedding_f16_b64` (ReMe's
format), but a cold search must not decode base64 for every chunk. And the
vector branch scores each chunk by its best passage (memcli.index.passages), so
the vectors of the active space live in `embedding_store/vectors_<space>.f16m`:
a header, a per-chunk mask (1 = every passage has a vector), passage offsets
(chunk d owns rows offsets[d]..offsets[d+1]) and the passage rows, in snapshot
document order. The header carries the snapshot's generation token and the
passage size; a matrix whose generation or passage size differs from the
snapshot's and the config's is not used (the vector branch pauses rather than
scoring vectors of the wrong texts).

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

MAGIC = b"MEMVEC05"  # 02: one row per chunk; 03-04: float32 passages; all are rebuilt
# Chunk rows are float32: every search multiplies all of them, and BLAS takes float32
# directly. Passage rows are float16, like the request cache they come from (so nothing
# is lost): a search converts only the shortlisted chunks' passages, and every sync
# rewrites the file, whose bulk they are (a 2,000-note vault: 44 MB instead of 88).
MATRIX_DTYPE = "<f4"
PASSAGE_DTYPE = "<f2"
OFFSET_DTYPE = "<u4"


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


def write_matrix(path: Path, header: dict, mask, offsets, rows, chunk_rows=None) -> None:
    """Header (with n_docs, n_rows, passage_tokens), mask, passage offsets, passage rows,
    then one row per chunk: the normalised mean of its passages (the shortlist of
    memcli.retrieval.vector.top, and the chunk store's vector)."""
    import numpy as np

    from memcli.index import passages

    rows = np.ascontiguousarray(rows, dtype=PASSAGE_DTYPE)
    if chunk_rows is None:
        chunk_rows = passages.mean_vectors(rows, offsets)
    write_matrix_parts(path, header, mask, offsets, len(rows), [rows.reshape(-1).view(np.uint8)],
                       [np.ascontiguousarray(chunk_rows, dtype=MATRIX_DTYPE).reshape(-1).view(np.uint8)])


def write_matrix_parts(path: Path, header: dict, mask, offsets, n_rows: int, row_parts, chunk_parts) -> None:
    """write_matrix from pieces: `row_parts` (float16 passage rows) and `chunk_parts` (float32
    chunk rows) are bytes-like, e.g. slices of the previous file's mmap, so a sync copies
    the rows it keeps straight from the old file to the new one."""
    import numpy as np

    mask = np.ascontiguousarray(mask, dtype=np.uint8)
    offsets = np.ascontiguousarray(offsets, dtype=OFFSET_DTYPE)
    header = dict(header, n_docs=len(mask), n_rows=int(n_rows))
    hjson = json.dumps(header, separators=(",", ":")).encode()
    head = MAGIC + struct.pack("<I", len(hjson)) + hjson
    head += b" " * ((-len(head)) & 7)
    parts = [head]
    for arr in (mask, offsets):
        body = arr.tobytes()
        parts += [body, b"\0" * ((-len(body)) & 7)]
    dims = int(header["dims"])
    parts += list(row_parts) + [b"\0" * ((-(2 * n_rows * dims)) & 7)]
    atomic.write_parts(path, parts + list(chunk_parts))


class Matrix:
    """Read side: header, mask, passage offsets, passage rows and chunk rows as numpy
    views over an mmap.

    Doc d's passages are rows offsets[d]..offsets[d+1] (every doc has at least one);
    mask[d] = 1 when all of them have a vector.
    """

    def __init__(self, path: Path):
        import numpy as np

        self.path = path
        try:
            with open(path, "rb") as fh:
                self._mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            if self._mm[:8] != MAGIC:
                raise ValueError("bad magic (an older format is rebuilt by `mem reindex`)")
            (hlen,) = struct.unpack_from("<I", self._mm, 8)
            self.header = json.loads(self._mm[12:12 + hlen])
            off = 12 + hlen
            off += (-off) & 7
            n, dims, n_rows = int(self.header["n_docs"]), int(self.header["dims"]), int(self.header["n_rows"])
            self.mask = np.frombuffer(self._mm, dtype=np.uint8, count=n, offset=off)
            off += n + ((-n) & 7)
            self.offsets = np.frombuffer(self._mm, dtype=OFFSET_DTYPE, count=n + 1, offset=off)
            off += 4 * (n + 1) + ((-4 * (n + 1)) & 7)
            self.rows = np.frombuffer(self._mm, dtype=PASSAGE_DTYPE, count=n_rows * dims,
                                      offset=off).reshape(n_rows, dims)
            self.rows_offset = off  # byte offset of the passage rows, for write_matrix_parts
            off += 2 * n_rows * dims
            off += (-off) & 7
            self.chunk_rows_offset = off
            self.chunk_rows = np.frombuffer(self._mm, dtype=MATRIX_DTYPE, count=n * dims,
                                            offset=off).reshape(n, dims)
            # a damaged offset table would score rows against the wrong chunks
            if self.offsets[0] != 0 or self.offsets[-1] != n_rows or (n and np.diff(self.offsets).min() < 1):
                raise ValueError("passage offsets are inconsistent")
        except (OSError, ValueError, KeyError, TypeError, struct.error) as exc:
            raise CorruptStore(f"vector matrix {path.name} is damaged ({exc})") from None
        self.n_docs, self.n_rows, self.dims = n, n_rows, dims

    @property
    def generation(self) -> str:
        return str(self.header.get("generation", ""))

    @property
    def passage_tokens(self) -> int | None:
        value = self.header.get("passage_tokens")
        return value if isinstance(value, int) else None

    def doc_rows(self, d: int):
        return self.rows[int(self.offsets[d]):int(self.offsets[d + 1])]

    def raw(self, start: int, end: int) -> memoryview:
        """Bytes start..end of the file (no copy), for write_matrix_parts."""
        return memoryview(self._mm)[start:end]


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


# The noise floor of a space: what nonsense reaches against this vault's passages. Each
# probe (memcli.index.embed.noise_probes) scores its best passage cosine; the floor is the
# FLOOR_QUANTILE of those (the maximum is one lucky probe, `polka` is a word), and a vector
# hit must score above it. Never above FLOOR_CAP, so that a space in which nonsense scores
# high (a test's hash vectors, a model whose cosines all crowd near 1) keeps its hits.
NOISE_VERSION = 1  # bump when the probes or the rule change: floors are measured again
FLOOR_QUANTILE = 0.9
FLOOR_CAP = 0.5


def noise_path(metadata: Path, space: str) -> Path:
    return metadata / "embedding_store" / f"noise_{space}.json"


def load_noise(metadata: Path, space: dict) -> dict | None:
    """The space's noise record {version, space, floor, measured, passages, probes, vectors},
    or None when it is missing, damaged or from other probes."""
    try:
        data = json.loads(noise_path(metadata, space["id"]).read_text(encoding="utf-8"))
        ok = (isinstance(data, dict) and data.get("version") == NOISE_VERSION and data.get("space") == space["id"]
              and isinstance(data.get("floor"), float) and isinstance(data.get("vectors"), str))
        return data if ok else None
    except (OSError, ValueError, TypeError, RecursionError):
        return None


def noise_record(space: dict, probe_vecs, matrix: "Matrix") -> dict:
    """Measure the floor of `space` against the embedded passages of `matrix` (none: 0)."""
    import numpy as np

    rows = matrix.rows
    if not matrix.mask.all():
        rows = rows[np.repeat(matrix.mask.astype(bool), np.diff(matrix.offsets).astype(np.intp))]
    probes = np.asarray(probe_vecs, dtype=np.float32)
    probes = probes / np.maximum(np.linalg.norm(probes, axis=1, keepdims=True), 1e-12)
    best = np.full(len(probes), -1.0, dtype=np.float32)
    for a in range(0, rows.shape[0], 32768):
        block = np.asarray(rows[a:a + 32768], dtype=np.float32)
        best = np.maximum(best, (block @ probes.T).max(axis=0))
    found = rows.shape[0] and len(best)
    measured = round(float(np.quantile(best, FLOOR_QUANTILE)), 4) if found else 0.0
    packed = base64.b64encode(np.asarray(probe_vecs, dtype="<f2").tobytes()).decode("ascii")
    return {"version": NOISE_VERSION, "space": space["id"], "floor": min(measured, FLOOR_CAP),
            "measured": measured, "max": round(float(best.max()), 4) if found else 0.0,
            "quantile": FLOOR_QUANTILE, "cap": FLOOR_CAP, "passages": int(rows.shape[0]),
            "probes": len(probes), "vectors": packed}


def noise_vectors(record: dict, dims: int):
    """The probe vectors a noise record keeps (so a later run re-measures without a request)."""
    import numpy as np

    arr = np.frombuffer(base64.b64decode(record["vectors"]), dtype="<f2")
    n = int(record.get("probes", 0))
    return arr.reshape(n, dims).astype(np.float32) if n and arr.size == n * dims else None


def save_noise(metadata: Path, record: dict) -> None:
    atomic.write_text(noise_path(metadata, record["space"]), json.dumps(record, sort_keys=True))


def load_matrix(metadata: Path, space: dict | None) -> Matrix | None:
    """The matrix file of `space` as it is (any generation), or None when missing or damaged."""
    if not space:
        return None
    p = matrix_path(metadata, space["id"])
    if not p.exists():
        return None
    try:
        return Matrix(p)
    except CorruptStore:
        return None


def open_matrix(metadata: Path, space: dict | None, generation: str, passage_tokens: int) -> Matrix | None:
    """The matrix of `space` if it is aligned with the snapshot `generation` and cut into
    passages of the configured size (other passages would be scored against other texts)."""
    m = load_matrix(metadata, space)
    if m is None or m.generation != generation or m.dims != int(space["dims"]):
        return None
    return m if m.passage_tokens == passage_tokens else None


def _store_passage_tokens(metadata: Path, space: dict) -> int | None:
    """The passage size the chunk store's vectors were computed with: the matrix's, written
    together with them (MEMVEC02 = one vector per chunk, as with 0); None when unknown."""
    try:
        with open(matrix_path(metadata, space["id"]), "rb") as fh:
            magic = fh.read(8)
    except OSError:
        return None
    if magic == b"MEMVEC02":
        return 0
    m = load_matrix(metadata, space)
    return m.passage_tokens if m is not None else None


def store_vectors(metadata: Path, space: dict, passage_tokens: int) -> dict:
    """text key -> vector from the chunk store lines of `space`, for chunks that are surely one
    passage both now and when the vector was written: for those the store's chunk vector is
    the passage's; for others it is a mean of passages."""
    from memcli.index import store
    from memcli.index.passages import surely_single

    written = _store_passage_tokens(metadata, space)
    if written is None:
        return {}
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
            single = surely_single(text, passage_tokens) and surely_single(text, written)
            vec = from_b64(rec["_embedding_f16_b64"], dims) if single else None
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if vec is not None:
            out[text_key(text)] = vec
    return out


def drop_matrix(meta: Path) -> None:
    """Forget the active space's matrix (a full re-embedding follows); the request cache stays."""
    space = active_space(meta)
    if space:
        atomic.remove(matrix_path(meta, space["id"]))
    set_active_space(meta, None)  # the noise record stays: its probes' vectors are still valid
