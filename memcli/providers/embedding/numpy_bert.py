"""A BERT encoder in numpy, reading its float32 weights straight out of an ONNX file.

Why: a cold `mem search` embeds one query (and a few words for expansion). Importing
onnxruntime and building a session for it costs 0.15-0.2 s and ~120 MiB, more than the
whole search; the same forward pass in numpy, over weights memory-mapped from the model
file (only the query's rows of the word-piece table are paged in), costs ~10 ms and
~25 MiB. The vectors agree with onnxruntime's to a cosine of 0.9999999 (erf by
Abramowitz-Stegun 7.1.26, max error 1.5e-7). For bulk embedding onnxruntime stays ~7x
faster and is used when installed (memcli.providers.embedding.local).

The ONNX file is read with a minimal protobuf walker: ModelProto.graph (7) ->
GraphProto.node (1) and .initializer (5) -> TensorProto dims (1), data_type (2), name
(8), raw_data (9). MatMul weights carry generated names (`onnx::MatMul_470`, `val_49`);
the bias added to the product names its layer (`encoder.layer.0.attention.self.query.bias`).
A weight-only int8 export (all-MiniLM-L6-v2 int8: Cast + Mul by a per-channel scale, then
float32 MatMul) is dequantised the same way, so it runs here too, with the same vectors.
"""

from __future__ import annotations

import mmap
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

FLOAT, INT8 = 1, 3  # TensorProto data types
_BIAS_PARTS = {
    "attention.self.query": "q",
    "attention.self.key": "k",
    "attention.self.value": "v",
    "attention.output.dense": "o",
    "intermediate.dense": "i",
    "output.dense": "f",
}
_BIAS = re.compile(r"layer\.(\d+)\.(" + "|".join(re.escape(p) for p in _BIAS_PARTS) + r")\.bias$")


class NotSupported(Exception):
    """The file is not a float32 BERT this module can run (e.g. a quantised one)."""


def _varint(b, i: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        c = b[i]
        i += 1
        out |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return out, i


def _fields(b, i: int, end: int):
    """(field number, wire type, value or start, end or None) of one protobuf message."""
    while i < end:
        key, i = _varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(b, i)
            yield num, wire, value, None
        elif wire == 2:
            n, i = _varint(b, i)
            yield num, wire, i, i + n
            i += n
        elif wire in (1, 5):
            yield num, wire, i, None
            i += 8 if wire == 1 else 4
        else:
            raise NotSupported(f"protobuf wire type {wire}")


def _tensor(mm, a: int, b: int) -> tuple[str, list[int], int, tuple[int, int] | None]:
    name, dims, dtype, raw = "", [], 0, None
    for num, wire, x, y in _fields(mm, a, b):
        if num == 1:
            if wire == 0:
                dims.append(x)
            else:  # packed
                j = x
                while j < y:
                    v, j = _varint(mm, j)
                    dims.append(v)
        elif num == 2:
            dtype = x
        elif num == 8:
            name = bytes(mm[x:y]).decode("utf-8")
        elif num == 9:
            raw = (x, y)
    return name, dims, dtype, raw


def _node(mm, a: int, b: int) -> tuple[str, list[str], list[str]]:
    op, inputs, outputs = "", [], []
    for num, _, x, y in _fields(mm, a, b):
        if num == 1:
            inputs.append(bytes(mm[x:y]).decode("utf-8"))
        elif num == 2:
            outputs.append(bytes(mm[x:y]).decode("utf-8"))
        elif num == 4:
            op = bytes(mm[x:y]).decode("utf-8")
    return op, inputs, outputs


class _Quantised:
    """An int8 weight with its float32 scale (per row or per column), dequantised on use:
    the word-piece table only for the rows a batch looks up."""

    def __init__(self, q, scale):
        self.q, self.scale = q, scale
        self.shape = q.shape

    def __getitem__(self, index):
        import numpy as np

        rows = self.scale if self.scale.shape[0] == 1 else self.scale[index]
        return self.q[index].astype(np.float32) * rows

    def full(self):
        import numpy as np

        return self.q.astype(np.float32) * self.scale


def read_onnx(path: Path) -> tuple[dict, int]:
    """(weights by short name, layer count) of a sentence-transformers BERT export: float32
    weights, or int8 ones dequantised by Cast + Mul(scale) nodes (weight-only quantisation)."""
    import numpy as np

    with open(path, "rb") as fh:
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    graph = next(((x, y) for num, _, x, y in _fields(mm, 0, len(mm)) if num == 7), None)
    if graph is None:
        raise NotSupported("no graph")
    kinds = {FLOAT: "<f4", INT8: "i1"}
    inits, nodes = {}, []
    for num, _, x, y in _fields(mm, *graph):
        if num == 5:
            name, dims, dtype, raw = _tensor(mm, x, y)
            if dtype in kinds and raw is not None:
                size = np.dtype(kinds[dtype]).itemsize
                inits[name] = np.frombuffer(
                    mm, dtype=kinds[dtype], count=(raw[1] - raw[0]) // size, offset=raw[0]
                ).reshape(dims)
        elif num == 1:
            nodes.append(_node(mm, x, y))
    tensors: dict[str, Any] = dict(inits)  # arrays, and int8 weights dequantised on use
    casts = {
        out[0]: inputs[0]
        for op, inputs, out in nodes
        if op == "Cast" and inputs and inputs[0] in inits and inits[inputs[0]].dtype == np.int8
    }
    for op, inputs, out in nodes:  # Mul(Cast(q), scale): a dequantised weight
        if op == "Mul" and len(inputs) == 2 and inputs[0] in casts and inputs[1] in inits:
            tensors[out[0]] = _Quantised(inits[casts[inputs[0]]], inits[inputs[1]])
    return _named(tensors, nodes)


def _named(tensors: dict, nodes: list) -> tuple[dict, int]:
    suffix = "embeddings.word_embeddings.weight"
    prefix = next((k[: -len(suffix)] for k in tensors if k.endswith(suffix)), None)
    if prefix is None:
        raise NotSupported("no word-piece embeddings")
    w = {
        f"emb.{short}": tensors[f"{prefix}embeddings.{long}"]
        for short, long in (
            ("word", "word_embeddings.weight"),
            ("pos", "position_embeddings.weight"),
            ("type", "token_type_embeddings.weight"),
            ("ln.w", "LayerNorm.weight"),
            ("ln.b", "LayerNorm.bias"),
        )
    }
    w["emb.pos"] = _dense(w["emb.pos"])
    # MatMul(x, weight) -> Add(bias named ...layer.<i>.<part>.bias): the bias names the weight
    weight_of = {
        out[0]: inputs[1]
        for op, inputs, out in nodes
        if op == "MatMul" and len(inputs) == 2 and inputs[1] in tensors and out
    }
    layers = 0
    for op, inputs, _ in nodes:
        if op != "Add" or len(inputs) != 2:
            continue
        bias = next((x for x in inputs if _BIAS.search(x)), None)
        product = next((x for x in inputs if x in weight_of), None)
        if bias is None or product is None:
            continue
        m = _BIAS.search(bias)
        assert m, bias  # bias was picked because _BIAS finds it
        short = _BIAS_PARTS[m.group(2)]
        w[f"l{m.group(1)}.{short}.w"] = tensors[weight_of[product]]  # int8 ones dequantised on use
        w[f"l{m.group(1)}.{short}.b"] = tensors[bias]
        layers = max(layers, int(m.group(1)) + 1)
    for i in range(layers):
        base = f"{prefix}encoder.layer.{i}."
        for short, part in (("ln1", "attention.output.LayerNorm"), ("ln2", "output.LayerNorm")):
            w[f"l{i}.{short}.w"], w[f"l{i}.{short}.b"] = (
                tensors[base + part + ".weight"],
                tensors[base + part + ".bias"],
            )
    missing = [f"l{i}.{p}.w" for i in range(layers) for p in _BIAS_PARTS.values() if f"l{i}.{p}.w" not in w]
    if not layers or missing:
        raise NotSupported(f"unexpected graph (missing {', '.join(missing[:3]) or 'layers'})")
    return w, layers


def _dense(t):
    return t.full() if isinstance(t, _Quantised) else t


def densify(w: dict) -> None:
    """Keep float32 copies of the int8 layer weights (~42 MB for all-MiniLM-L6-v2): for a
    process that embeds again and again. A cold search embeds once and does without them."""
    for key, t in w.items():
        if key[0] == "l" and isinstance(t, _Quantised):
            w[key] = t.full()


def _erf(x):
    import numpy as np

    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592
    ) * t * np.exp(-a * a)
    return np.copysign(y, x)


def _layer_norm(x, w, b, eps: float = 1e-12):
    import numpy as np

    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def hidden(w: dict, layers: int, ids, mask, heads: int = 12):
    """Last hidden states (batch, tokens, dims) for int ids and a 0/1 mask, as BERT computes them."""
    import numpy as np

    batch, n = ids.shape
    x = w["emb.word"][ids] + w["emb.pos"][:n][None] + w["emb.type"][0][None, None]
    x = _layer_norm(x, w["emb.ln.w"], w["emb.ln.b"])
    bias = (1.0 - mask[:, None, None, :].astype(np.float32)) * np.float32(-1e9)
    dims = x.shape[-1]
    d = dims // heads
    scale = np.float32(1.0 / np.sqrt(d))
    for i in range(layers):
        p = f"l{i}."
        q = (x @ _dense(w[p + "q.w"]) + w[p + "q.b"]).reshape(batch, n, heads, d).transpose(0, 2, 1, 3)
        k = (x @ _dense(w[p + "k.w"]) + w[p + "k.b"]).reshape(batch, n, heads, d).transpose(0, 2, 3, 1)
        v = (x @ _dense(w[p + "v.w"]) + w[p + "v.b"]).reshape(batch, n, heads, d).transpose(0, 2, 1, 3)
        s = (q @ k) * scale + bias
        s -= s.max(-1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(-1, keepdims=True)
        a = (s @ v).transpose(0, 2, 1, 3).reshape(batch, n, dims)
        x = _layer_norm(a @ _dense(w[p + "o.w"]) + w[p + "o.b"] + x, w[p + "ln1.w"], w[p + "ln1.b"])
        h = x @ _dense(w[p + "i.w"]) + w[p + "i.b"]
        h = 0.5 * h * (1.0 + _erf(h * np.float32(0.7071067811865476)))
        x = _layer_norm(h @ _dense(w[p + "f.w"]) + w[p + "f.b"] + x, w[p + "ln2.w"], w[p + "ln2.b"])
    return x.astype(np.float32, copy=False)
