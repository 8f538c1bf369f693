"""The zstd-compressed JSONL stores under mem_metadata/ (formats as ReMe writes them).

Chunk store: file_store/file_chunks_default_v1.jsonl.zst; graph:
file_graph/default.jsonl.zst; catalogs: file_catalog/<name>.jsonl.zst. Each is one
zstd frame (level 3) of UTF-8 JSON lines, written atomically. A store that does
not decode completely raises CorruptStore: the caller rebuilds from the Markdown
rather than working from half a store.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from json.encoder import encode_basestring as _enc
from pathlib import Path

from memcli.errors import CorruptStore
from memcli.vault import atomic

CHUNK_STORE = "file_store/file_chunks_default_v1.jsonl.zst"
GRAPH_STORE = "file_graph/default.jsonl.zst"
CATALOG_DIR = "file_catalog"
ZSTD_LEVEL = 3
MAX_DECOMPRESSED = 8 << 30
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def chunk_id(path: str, start: int, end: int, text: str) -> str:
    import hashlib  # (here: a search reads this module, but only writes hash)

    return hashlib.sha256(f"{path} {start} {end} {text}".encode()).hexdigest()


def chunk_line(cid: str, text: str, path: str, start: int, end: int, emb_b64: str | None = None) -> bytes:
    """One chunk record, byte-identical to json.dumps(..., ensure_ascii=False, compact) of
    {id, text, metadata, path, start_line, end_line, scores[, _embedding_f16_b64]}, built
    with the C string encoder because a full build writes tens of thousands of them."""
    tail = f',"_embedding_f16_b64":"{emb_b64}"' if emb_b64 else ""
    return (
        f'{{"id":"{cid}","text":{_enc(text)},"metadata":{{}},"path":{_enc(path)},'
        f'"start_line":{int(start)},"end_line":{int(end)},"scores":{{}}{tail}}}'
    ).encode()


def line_id(line: bytes) -> str | None:
    """The id of a chunk store line: read from its head when the line starts with it (both
    writers put it first), else from the decoded record."""
    if line.startswith(b'{"id":"') and line[71:73] == b'",':
        return line[7:71].decode("ascii", "replace")
    try:
        rec = json.loads(line)
    except (ValueError, RecursionError):
        raise CorruptStore("chunk store line is not JSON") from None
    cid = rec.get("id") if isinstance(rec, dict) else None
    return cid if isinstance(cid, str) else None


def with_vector(line: bytes, emb_b64: str | None) -> bytes:
    """The chunk store line with its `_embedding_f16_b64` set to `emb_b64` (dropped when None);
    the same line object when nothing changes."""
    rec = json.loads(line)
    if rec.get("_embedding_f16_b64") == emb_b64:
        return line
    rec.pop("_embedding_f16_b64", None)
    if emb_b64:
        rec["_embedding_f16_b64"] = emb_b64
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def compress(data) -> bytes:
    import zstandard

    # threads only split the work; the output is still one frame
    return zstandard.ZstdCompressor(level=ZSTD_LEVEL, threads=-1 if len(data) > 4 << 20 else 0).compress(data)


def decompress(raw, name: str) -> bytes:
    """The content of a store: one zstd frame, or several concatenated (mem writes one run of
    frames per index segment; ReMe and zstd read them as one stream)."""
    import zstandard

    out = []
    view = memoryview(raw)
    try:
        dctx = zstandard.ZstdDecompressor()
        while True:
            # decompressobj handles frames without a content size and reports truncation
            obj = dctx.decompressobj()
            out.append(obj.decompress(view))
            if not obj.eof:
                raise CorruptStore(f"{name} is truncated")
            rest = len(obj.unused_data)
            if not rest:
                return b"".join(out)
            view = view[len(view) - rest :]
            if bytes(view[:4]) != ZSTD_MAGIC:
                raise CorruptStore(f"{name} has trailing garbage")
    except zstandard.ZstdError as exc:
        raise CorruptStore(f"{name} does not decode: {exc}") from None


def write_lines(path: Path, lines: Iterable[bytes]) -> bytes:
    """Write JSON lines as one zstd frame; returns the compressed bytes."""
    body = b"\n".join([*lines, b""])
    raw = compress(body)
    del body
    atomic.write_bytes(path, raw)
    return raw


def read_raw_lines(path: Path, raw: bytes | None = None) -> list[bytes]:
    """Decompressed lines of a store (no JSON parsing); [] when the store is absent."""
    if raw is None:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return []
    data = decompress(raw, path.name)
    if data and not data.endswith(b"\n"):
        raise CorruptStore(f"{path.name} ends mid-record")
    return data.split(b"\n")[:-1] if data else []


def read_records(path: Path) -> list[dict]:
    out = []
    for i, line in enumerate(read_raw_lines(path), 1):
        try:
            rec = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            raise CorruptStore(f"{path.name} line {i} is not JSON") from None
        if not isinstance(rec, dict):
            raise CorruptStore(f"{path.name} line {i} is not an object")
        out.append(rec)
    return out


# json.dumps(obj, ensure_ascii=False, separators=(",", ":")), its encoder made once (dumps makes
# one per call for these options: a build writes two lines per file)
_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def graph_line(path: str, st_mtime: float, links: list, chunk_ids: list[str], front_matter: dict) -> bytes:
    """One graph record; same bytes as json.dumps(..., ensure_ascii=False, compact), assembled
    by hand because every index update writes one per file."""
    fm = {"name": front_matter.get("name", "") or "", "description": front_matter.get("description", "") or ""}
    fm.update({k: v for k, v in front_matter.items() if k not in fm})
    epath = _enc(path)
    # no anchor is null, as ReMe writes it (so a graph ReMe rewrote decodes to the same records)
    link_parts = ",".join(
        f'{{"source_path":{epath},"target_path":{_enc(t)},"target_anchor":{_enc(a) if a else "null"}}}'
        for t, a in links
    )
    ids = '","'.join(chunk_ids)
    return (
        f'{{"path":{epath},"st_mtime":{float(st_mtime)!r},"links":[{link_parts}],'
        f'"chunk_ids":[{f"{chr(34)}{ids}{chr(34)}" if chunk_ids else ""}],'
        f'"front_matter":{_compact(fm)}}}'
    ).encode()


def catalog_line(path: str, st_mtime: float) -> bytes:
    return graph_line(path, st_mtime, [], [], {})


def graph_and_catalog(files: list[dict], hexids: str, ordered: bool = False) -> tuple[list[bytes], list[bytes]]:
    """The graph and catalog lines of indexed files (records with path, mtime, links, fm and
    their documents first..first+count; `hexids` the chunk ids in document order, hex), by
    path, or in the order given (`ordered`)."""
    graph, catalog = [], []
    for rec in files if ordered else sorted(files, key=lambda r: r["path"]):
        a, cnt = rec["first"], rec["count"]
        cids = [hexids[64 * d : 64 * d + 64] for d in range(a, a + cnt)]
        graph.append(graph_line(rec["path"], rec["mtime"], rec["links"], cids, rec["fm"]))
        catalog.append(catalog_line(rec["path"], rec["mtime"]))
    return graph, catalog
