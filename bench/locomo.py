#!/usr/bin/env python3
"""Retrieval-quality evaluation of `mem search` on LoCoMo (issue 4).

    python bench/locomo.py                                # keyword, one vault per conversation
    python bench/locomo.py --mode hybrid --set search.vector_weight=0.3
    python bench/locomo.py --mode hybrid --variant tok=stem,fuse=minmax
    python bench/locomo.py --sweep headline --out bench/out/locomo/headline.json
    python bench/locomo.py --one-vault --conversations 3 --via-cli 20

Converts locomo10.json (CC BY-NC 4.0, Maharana et al., ACL 2024; see
docs/evaluation.md) into vaults under bench/out/locomo (never committed): one file
per session, `memory/<session date>/<conv>-session-<n>.md`, one line per turn
carrying its dialog id (`[D1:3] Caroline: ...`, image captions kept as
`[image: ...]`), so each evidence id is a file line. Every question of categories
1-4 with evidence is searched with `memcli.jobs.search.run`, the job function
`mem search` calls, in-process (`--via-cli N` runs N of them through `mem search
--json` subprocesses as well and checks both give the same hits).

Metrics, @5 from a `--limit 5` search and @10 from a `--limit 10` search (what a
user gets; the candidate pool grows with the limit):
  session level  item = a session holding evidence; a hit finds its file's session;
  turn level     item = an evidence turn; a hit finds the evidence lines inside
                 start_line..end_line, but only if those lines hold at most
                 TURN_BUDGET (600) estimated tokens (so returning whole files is not
                 rewarded).
  Recall@k = found items / items; MRR@10 = 1 / rank of the first hit finding one;
  nDCG@10 with gain = items newly found by a hit, ideal = the best order any list
  of hits within the budget could reach.
JSON on stdout (or --out), a table on stderr. Embeddings (local all-MiniLM-L6-v2)
are cached by text hash in bench/out/embeddings, so only the first vector run
pays for the model. Code-level ideas (tokenizers, fusion, MMR, recency, merging)
are prototyped here by patching memcli in this process only: see patched().
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import inspect
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
PYLIB = HERE / "out" / "pylib"  # optional extras for prototypes (snowballstemmer), never required
DEFAULT_LOCOMO = Path(os.environ.get("LOCOMO_JSON", REPO.parent / "shared" / "data" / "locomo" / "locomo10.json"))
DEFAULT_OUT = HERE / "out" / "locomo"
EMB_CACHE_DIR = HERE / "out" / "embeddings"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
# A hit counts at turn level only if the lines it returns hold at most this many estimated
# tokens (len // 4 + 1 per line, memcli's chunking estimate frozen here): 1.5 x the 400-token
# chunk of the baseline. On LoCoMo that is ~15 turn lines; every single 400-token chunk fits,
# two neighbours merged into one hit do not.
TURN_BUDGET = 600
KS = (5, 10)
# The variant docs/evaluation.md recommends shipping (prototyped here until memcli has it).
RECOMMENDED = "tok=stem+stop,merge=capkeep1.5"


def log(msg: str) -> None:
    print(f"locomo: {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- conversion

@dataclass
class Question:
    qid: str
    text: str
    category: int
    evidence: list[tuple[str, int, int]]  # (vault path, first line, last line) of each evidence item

    @property
    def sessions(self) -> set[str]:
        return {e[0] for e in self.evidence}


@dataclass
class Vault:
    name: str
    root: Path
    questions: list[Question] = field(default_factory=list)
    now: str = ""  # date of the latest session: "today" for recency decay


def session_date(value: str) -> dt.datetime:
    return dt.datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y")


def normalise_evidence(raw: list[str]) -> list[str]:
    """Dialog ids, with the few malformed ones of locomo10.json repaired.

    Seen: several ids in one string ('D8:6; D9:17', 'D9:1 D4:4'), 'D:11:26',
    zero-padded 'D30:05', and a bare 'D' (dropped)."""
    out = []
    for item in raw:
        for part in re.split(r"[;,\s]+", str(item)):
            m = re.fullmatch(r"D:?(\d+):0*(\d+)", part.strip())
            if m:
                out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return out


def write_if_changed(path: Path, text: str) -> None:
    """Keep mtimes of unchanged notes, so existing indexes stay current."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def convert(locomo: Path, out: Path, *, one_vault: bool, conversations: int | None = None,
            stats: dict | None = None) -> list[Vault]:
    data = json.loads(locomo.read_text(encoding="utf-8"))
    if conversations:
        data = data[:conversations]
    vaults: list[Vault] = []
    root_all = out / "vaults" / "all"
    shared = Vault("all", root_all) if one_vault else None
    st = stats if stats is not None else {}
    st.update(conversations=len(data), sessions=0, turns=0, questions=0, excluded_no_evidence=0,
              dropped_evidence_ids=0)
    for conv in data:
        cid = conv["sample_id"]
        c = conv["conversation"]
        vault = shared or Vault(cid, out / "vaults" / cid)
        where: dict[str, tuple[str, int]] = {}
        n = 1
        while f"session_{n}" in c:
            turns = c[f"session_{n}"]
            when = c[f"session_{n}_date_time"]
            day = session_date(when).date().isoformat()
            rel = f"memory/{day}/{cid}-session-{n}.md"
            lines = [f"# {c['speaker_a']} and {c['speaker_b']}, session {n}: {when}", ""]
            for t in turns:
                line = f"[{t['dia_id']}] {t['speaker']}: {t['text']}".replace("\n", " ")
                if t.get("blip_caption"):
                    line += f" [image: {t['blip_caption']}]"
                where[t["dia_id"]] = (rel, len(lines) + 1, len(lines) + 1)
                lines.append(line)
            write_if_changed(vault.root / rel, "\n".join(lines) + "\n")
            vault.now = max(vault.now, day)
            st["sessions"] += 1
            st["turns"] += len(turns)
            n += 1
        for i, qa in enumerate(conv["qa"]):
            if qa.get("category") not in CATEGORIES or not qa.get("evidence"):
                continue
            ids = normalise_evidence(qa["evidence"])
            ev = sorted({where[d] for d in ids if d in where})
            st["dropped_evidence_ids"] += sum(d not in where for d in ids)
            if not ev:
                st["excluded_no_evidence"] += 1
                continue
            vault.questions.append(Question(f"{cid}#{i}", str(qa["question"]), int(qa["category"]), ev))
            st["questions"] += 1
        if shared is None:
            vaults.append(vault)
    if shared is not None:
        vaults.append(shared)
    license_src = locomo.parent / "LICENSE.txt"
    if license_src.exists():  # CC BY-NC 4.0: the license and attribution travel with derived data
        shutil.copyfile(license_src, out / "LICENSE.txt")
        write_if_changed(out / "NOTICE.txt", (
            "Derived from LoCoMo (snap-research/LoCoMo, data/locomo10.json), CC BY-NC 4.0 (LICENSE.txt).\n"
            "Maharana, Lee, Tulyakov, Bansal, Barbieri, Fang. Evaluating Very Long-Term Conversational Memory\n"
            "of LLM Agents. ACL 2024 (arXiv:2402.17753). Converted by bench/locomo.py; not for commercial use.\n"))
    return vaults


# ----------------------------------------------------------------------------- embeddings

class EmbeddingCache:
    """sha256(text) -> float16 vector, one .npz per vector space, shared by all runs."""

    def __init__(self, space_id: str, dims: int):
        import numpy as np

        self.path = EMB_CACHE_DIR / f"{space_id}.npz"
        self.dims = dims
        self.vecs: dict[str, object] = {}
        self.new = 0
        if self.path.exists():
            with np.load(self.path, allow_pickle=False) as z:
                self.vecs = dict(zip(z["keys"].tolist(), z["embeddings"]))

    def save(self) -> None:
        import numpy as np

        if not self.new:
            return
        EMB_CACHE_DIR.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self.vecs), dtype="<U64")
        emb = np.array(list(self.vecs.values()), dtype="<f2").reshape(len(keys), self.dims)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys, embeddings=emb)
        os.replace(tmp, self.path)
        self.new = 0


class CachedEmbedder:
    """The local model behind a text-hash cache; same identity and space as the real one."""

    def __init__(self):
        from memcli.providers.embedding.local import LocalEmbedder

        self.inner = LocalEmbedder({"max_input_length": 8192, "max_batch_size": 10})
        for a in ("backend", "model", "dims", "endpoint", "identity"):
            setattr(self, a, getattr(self.inner, a))
        from memcli.providers.embedding.base import vector_space_id

        self.space = {"id": vector_space_id(self.backend, self.model, self.dims, self.endpoint),
                      "identity": self.identity, "dims": int(self.dims)}
        self.cache = EmbeddingCache(self.space["id"], int(self.dims))
        self.model_texts = 0
        self.model_seconds = 0.0
        self.last_save = time.monotonic()

    def embed_batch(self, texts: list[str]):
        import numpy as np

        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        miss = [i for i, k in enumerate(keys) if k not in self.cache.vecs]
        if miss:
            t0 = time.perf_counter()
            vecs = self.inner.embed_batch([texts[i] for i in miss])
            self.model_seconds += time.perf_counter() - t0
            self.model_texts += len(miss)
            for i, v in zip(miss, vecs):
                self.cache.vecs[keys[i]] = np.asarray(v, dtype="<f2")
            self.cache.new += len(miss)
            if time.monotonic() - self.last_save > 60:
                self.cache.save()
                self.last_save = time.monotonic()
        return np.stack([np.asarray(self.cache.vecs[k], dtype=np.float32) for k in keys])

    def close(self) -> None:
        pass  # keep the model loaded across searches (the CLI loads it once per process)


_EMBEDDER: CachedEmbedder | None = None


def embedder() -> CachedEmbedder:
    global _EMBEDDER
    if _EMBEDDER is None:
        _EMBEDDER = CachedEmbedder()
        from memcli.providers.embedding import space as embedding

        def configured(ws, *, timeout=None):
            backend = str(ws.config["embedding_model_config"].get("backend") or "")
            if backend not in ("", "local"):
                return None
            return embedding.Backend(_EMBEDDER, _EMBEDDER.space)

        embedding.configured = configured  # reindex and search look it up on the module
    return _EMBEDDER


# ----------------------------------------------------------------------------- variants
# Code-level prototypes, applied by patching memcli in this process only. A spec is a
# comma list of:
#   tok=stem|lightstem|stop|stopq|stem+stop|...  Snowball English / a light suffix stripper /
#                      English stopwords dropped (stopq: from queries only); index and query
#   merge=on|off|drop|cap<x>|capkeep<x>|perfile<n>   how hits of one file are folded
#   fuse=rrf|minmax|maxnorm|zscore   fusion of the two branches (minmax etc.: weighted sum of
#                      per-branch normalised scores over the candidates)
#   qdw=rare:<f>:<w>|len:<n>:<w>   query-dependent vector weight
#   mmr=<lambda>, recency=<half-life days>, k1=, b=, prf=<docs>:<terms>:<beta>,
#   fileprior=<gamma>, vsub=<tokens> (vector branch scored on smaller chunks)
#   round 2: ksub=<tokens>:<beta> (best-passage BM25), bi=<w> (adjacent-pair terms),
#   fdecay=<f> (per-file score decay), qx=<n>:<cos>:<w> (query expansion), vpass=<tokens>
#   (passage vectors), vprf=<docs>:<beta> (Rocchio feedback in vector space)

# the English stopword list memcli's tokenizer ships (round 1 prototyped it here)
from memcli.index.tokenizer import STOPWORDS  # noqa: E402


class Ctx:
    """Per-search context the patched functions read (query, vault date, snapshot)."""
    query = ""
    now = ""
    limit = 5
    target = 400  # chunking target tokens of the running workspace
    root = ""  # the vault being searched


def _stemmer():
    if str(PYLIB) not in sys.path and PYLIB.exists():
        sys.path.append(str(PYLIB))
    try:
        import snowballstemmer
    except ImportError:
        raise SystemExit("tok=stem needs snowballstemmer: pip install --target bench/out/pylib snowballstemmer")
    st = snowballstemmer.stemmer("english")
    memo: dict[str, str] = {}

    def stem(w: str) -> str:
        s = memo.get(w)
        if s is None:
            s = memo[w] = st.stemWord(w) if w.isascii() and w.isalpha() else w
        return s
    return stem


def tokenizer_variant(name: str):
    """(index tokenize, query_terms) replacing memcli.index.tokenizer's, or None for 'base'."""
    from memcli.index import tokenizer as tk

    base = tk.tokenize
    if name in ("base", ""):
        return None
    parts = set(name.split("+"))
    stem = _stemmer() if "stem" in parts else tk.light_stem if "lightstem" in parts else None
    stop = "stop" in parts

    def tokenize(text: str) -> list[str]:
        toks = base(text)
        if stop:
            toks = [t for t in toks if t not in STOPWORDS]
        if stem is not None:
            toks = [stem(t) for t in toks]
        return toks

    def query_terms(text: str) -> list[str]:
        toks = tokenize(text)
        if "stopq" in parts:
            toks = [t for t in toks if t not in STOPWORDS]
        return list(dict.fromkeys(toks))
    return tokenize, query_terms


def index_tag(spec: dict) -> str:
    """What of a variant changes the index: the tokenizer ('stopq' only changes queries), k1, b."""
    parts = [p for p in spec.get("tok", "base").split("+") if p not in ("stopq", "base", "")]
    tag = "+".join(sorted(parts)) or "base"
    for key in ("k1", "b", "bi"):
        if key in spec:
            tag += f"-{key}{spec[key]}"
    return tag


@contextlib.contextmanager
def patched(spec: dict):
    """Apply a variant spec to memcli in this process; restore everything afterwards."""
    from memcli.jobs import search
    from memcli.index import tokenizer as tk

    saved = [(tk, "tokenize", tk.tokenize), (tk, "query_terms", tk.query_terms),
             (tk, "FINGERPRINT", tk.FINGERPRINT), (search, "_fuse", search._fuse),
             (search, "_merge", search._merge)]
    try:
        tv = tokenizer_variant(spec.get("tok", "base"))
        if tv is not None:
            tk.tokenize, tk.query_terms = tv
            tag = index_tag({"tok": spec["tok"]})
            if tag != "base":
                tk.FINGERPRINT = hashlib.sha1(f"{tk.FINGERPRINT}+{tag}".encode()).hexdigest()[:10]
        if "k1" in spec or "b" in spec:  # index-time constants (chunk norms are precomputed)
            from memcli.index import bm25

            saved += [(bm25, "K1", bm25.K1), (bm25, "B", bm25.B)]
            bm25.K1, bm25.B = float(spec.get("k1", bm25.K1)), float(spec.get("b", bm25.B))
        if "prf" in spec:
            from memcli.index import bm25

            saved.append((bm25, "score", bm25.score))
            bm25.score = make_prf(bm25.score, spec["prf"])
        if "fileprior" in spec:
            from memcli.index import bm25

            saved.append((bm25, "score", bm25.score))
            bm25.score = make_file_prior(bm25.score, float(spec["fileprior"]), spec)
        if "bi" in spec:
            from memcli.index import bm25

            saved += [(bm25, "_terms", bm25._terms), (tk, "tokenize", tk.tokenize),
                      (tk, "query_terms", tk.query_terms)]
            install_bigrams(float(spec["bi"]))
            tk.FINGERPRINT = hashlib.sha1(f"{tk.FINGERPRINT}+bi".encode()).hexdigest()[:10]
        if "vprf" in spec:
            from memcli.retrieval import vector as _vec

            saved.append((_vec, "top", _vec.top))
            _vec.top = make_vector_prf(spec["vprf"], _vec.top)
        if "qx" in spec:
            from memcli.index import bm25

            saved.append((bm25, "_terms", bm25._terms))
            bm25._terms = make_query_expansion(spec["qx"], bm25._terms)
        if "ksub" in spec:
            from memcli.index import bm25

            saved.append((bm25, "search", bm25.search))
            bm25.search = make_sub_keyword(spec, bm25.score)
        if "vpass" in spec:
            from memcli.jobs import search as _s

            saved.append((_s, "_vector_branch", _s._vector_branch))
            _s._vector_branch = make_passage_vector_branch(int(spec["vpass"]))
        if "vsub" in spec:
            from memcli.jobs import search as _s

            saved.append((_s, "_vector_branch", _s._vector_branch))
            _s._vector_branch = make_sub_vector_branch(
                spec, pair="tuple" in str(inspect.signature(_s._vector_branch).return_annotation))
        fuse = spec.get("fuse", "rrf")
        qdw = spec.get("qdw")
        if fuse != "rrf" or qdw:
            search._fuse = make_fuse(fuse, qdw, saved[3][2])
        orig_merge = saved[4][2]
        how = spec.get("merge", "on")
        mmr = float(spec["mmr"]) if "mmr" in spec else None
        half = float(spec["recency"]) if "recency" in spec else None
        fdecay = float(spec["fdecay"]) if "fdecay" in spec else None
        if how != "on" or mmr is not None or half is not None or fdecay is not None:
            def merge(snap, hits, *rest):
                if half is not None:
                    hits = recency(hits, half)
                if mmr is not None:
                    hits = mmr_order(snap, hits, mmr)
                if how == "on":
                    hits = orig_merge(snap, hits, *rest)
                elif how != "off":
                    hits = merge_variant(snap, hits, how)
                if fdecay is not None:
                    hits = file_decay(hits, fdecay)
                return hits
            search._merge = merge
        yield
    finally:
        for mod, name, value in saved:
            setattr(mod, name, value)


def _term_scores(snap, term: str) -> dict[int, float]:
    """BM25 contribution of one (already tokenized) term to each chunk holding it."""
    from memcli.index import tokenizer as tk

    span = snap.postings(tk.term_hash(term))
    if span is None:
        return {}
    a, z = span
    n = snap.n_docs
    up = math.log(1.0 + (n - (z - a) + 0.5) / ((z - a) + 0.5)) * (float(snap.header.get("k1", 1.5)) + 1.0)
    norm = snap.doc_norm
    return {d: up * tf / (tf + norm[d]) for d, tf in zip(snap.post_doc[a:z].tolist(), snap.post_tf[a:z].tolist())}


def make_prf(score, rule: str):
    """Pseudo-relevance feedback (RM3-like): `docs:terms:beta`. The `terms` best terms of the
    top `docs` chunks (tf x idf, not in the query, no stopwords) are added, each weighted
    beta x (its weight / the best one's)."""
    from collections import Counter

    from memcli.index import tokenizer as tk

    n_docs, n_terms, beta = rule.split(":")
    n_docs, n_terms, beta = int(n_docs), int(n_terms), float(beta)

    def prf(snap, query, allowed=None):
        base = score(snap, query, allowed)
        if not base:
            return base
        top = sorted(base.items(), key=lambda kv: (-kv[1], kv[0]))[:n_docs]
        q = set(tk.query_terms(query))
        tf = Counter()
        for d, _ in top:
            tf.update(t for t in tk.tokenize(snap.text(d)) if t not in q and t not in STOPWORDS and len(t) > 2
                      and not t.isdigit())
        n = snap.n_docs
        weighted = []
        for t, c in tf.items():
            span = snap.postings(tk.term_hash(t))
            if span:
                df = span[1] - span[0]
                weighted.append((c * math.log(1.0 + (n - df + 0.5) / (df + 0.5)), t))
        weighted.sort(reverse=True)
        weighted = weighted[:n_terms]
        if not weighted:
            return base
        best = weighted[0][0]
        out = dict(base)
        for w, t in weighted:
            for d, v in _term_scores(snap, t).items():
                if allowed is None or allowed(d):
                    out[d] = out.get(d, 0.0) + beta * (w / best) * v
        return out
    return prf


_FILE_SNAPS: dict = {}


def make_file_prior(score, gamma: float, spec: dict):
    """Add gamma x (best chunk score) x (the chunk's file's BM25 score / best file's): the
    file scored as one document (an index of the same vault with one chunk per file)."""
    from memcli.index import sync

    def scored(snap, query, allowed=None):
        base = score(snap, query, allowed)
        if not base or getattr(snap, "_is_file_level", False):
            return base
        entry = _FILE_SNAPS.get(Ctx.root)
        if entry is None:
            fws = workspace(Path(Ctx.root), {"chunking.target_tokens": 1_000_000, "chunking.overlap_tokens": 0},
                            {k: v for k, v in spec.items() if k in ("tok", "k1", "b")})
            ensure_index(fws, vectors=False)
            fsnap = sync.open_snapshot(fws)
            fsnap._is_file_level = True
            entry = _FILE_SNAPS[Ctx.root] = (fsnap, {_path(fsnap, fsnap.meta(d)[0]): d for d in range(fsnap.n_docs)})
        fsnap, doc_of = entry
        fs = score(fsnap, query)
        if not fs:
            return base
        top_f = max(fs.values())
        top_c = max(base.values())
        out = {}
        for d, v in base.items():
            fd = doc_of.get(_path(snap, snap.meta(d)[0]))
            out[d] = v + gamma * top_c * fs.get(fd, 0.0) / top_f
        return out
    return scored


_SUB_CACHE: dict = {}


def make_sub_vector_branch(spec: dict, pair: bool):
    """Vector branch scored on small chunks: each (keyword-sized) chunk gets the best cosine
    of the `vsub`-token chunks (20% overlap) of the same file that overlap its lines.
    Those small chunks live in their own index (metadata folder) of the same vault."""
    import numpy as np

    from memcli.index import sync
    from memcli.index import vectors as vecmod

    target = int(spec["vsub"])

    def branch(ws, snap, query, candidates, allowed, warnings, required=False, **_):
        key = (str(ws.root), snap.header.get("generation"), target)
        entry = _SUB_CACHE.get(key)
        if entry is None:
            sub_ws = workspace(ws.root, {"chunking.target_tokens": target, "chunking.passage_tokens": 0,
                                         "chunking.overlap_tokens": target // 5}, {})
            ensure_index(sub_ws, vectors=True)
            sub = sync.open_snapshot(sub_ws)
            m = vecmod.open_matrix(sub_ws.metadata, vecmod.active_space(sub_ws.metadata),
                                   sub.header.get("generation", ""), 0)  # one row per small chunk
            rows = np.asarray(m.rows, dtype=np.float32)
            by_path: dict[str, list[tuple[int, int, int]]] = {}
            for d in range(sub.n_docs):
                f, a, b, _ = sub.meta(d)
                by_path.setdefault(_path(sub, f), []).append((a, b, d))
            owners, members = [], []
            for d in range(snap.n_docs):
                f, a, b, _ = snap.meta(d)
                for sa, sb, sd in by_path.get(_path(snap, f), []):
                    if sa <= b and sb >= a:
                        owners.append(d)
                        members.append(sd)
            entry = _SUB_CACHE[key] = (rows, np.array(owners), np.array(members))
            sub.close()
        rows, owners, members = entry
        q = embedder().embed_batch([query])[0]
        cos = rows @ (q / (np.linalg.norm(q) or 1.0))
        best = np.full(snap.n_docs, -np.inf, dtype=np.float32)
        np.maximum.at(best, owners, cos[members])
        if allowed is not None:
            best[[not allowed(d) for d in range(snap.n_docs)]] = -np.inf
        k = min(candidates, int(np.isfinite(best).sum()))
        idx = np.argsort(-best, kind="stable")[:k]
        found = [(int(d), float(best[d])) for d in idx]
        from memcli.jobs import search as _s

        if hasattr(_s, "VectorBranch"):  # search.py since query expansion
            return _s.VectorBranch(found, None, [])
        return (found, None) if pair else found  # newer search.py also takes a has-vector test
    return branch


_KSUB_CACHE: dict = {}


def make_vector_prf(rule: str, top):
    """Rocchio feedback in vector space: `vprf=<docs>:<beta>`; the query vector plus beta x
    the mean chunk row of the first search's best `docs` chunks, searched again."""
    import numpy as np

    n, beta = rule.split(":")
    n, beta = int(n), float(beta)

    def prf_top(rows, mask, query, k, allowed=None, offsets=None, chunk_rows=None):
        first = top(rows, mask, query, max(k, n), allowed, offsets, chunk_rows)
        if not first or chunk_rows is None:
            return first[:k]
        q = np.asarray(query, dtype=np.float32)
        q = q / np.linalg.norm(q)
        cen = np.asarray(chunk_rows[[d for d, _ in first[:n]]], dtype=np.float32).mean(axis=0)
        return top(rows, mask, q + beta * cen, k, allowed, offsets, chunk_rows)
    return prf_top
_PASS_CACHE: dict = {}


def make_passage_vector_branch(target: int):
    """Vector branch scored per chunk as the best cosine of its own passages (the prototype
    of memcli.index.passages, which now ships; kept to reproduce round 2's sweep)."""
    import numpy as np

    from memcli.index.passages import split as split_passages

    def branch(ws, snap, query, candidates, allowed, warnings, required=False, **_):
        key = (str(ws.root), snap.header.get("generation"), target)
        entry = _PASS_CACHE.get(key)
        if entry is None:
            texts, owners = [], []
            for d in range(snap.n_docs):
                _, _, _, crumb = snap.meta(d)
                for t in split_passages(snap.text(d), crumb, target):
                    texts.append(t)
                    owners.append(d)
            emb = embedder()
            rows = np.concatenate([emb.embed_batch(texts[i:i + 64]) for i in range(0, len(texts), 64)])
            emb.cache.save()
            rows /= np.linalg.norm(rows, axis=1, keepdims=True)
            entry = _PASS_CACHE[key] = (rows, np.array(owners))
        rows, owners = entry
        q = embedder().embed_batch([query])[0]
        cos = rows @ (q / (np.linalg.norm(q) or 1.0))
        best = np.full(snap.n_docs, -np.inf, dtype=np.float32)
        np.maximum.at(best, owners, cos)
        if allowed is not None:
            best[[not allowed(d) for d in range(snap.n_docs)]] = -np.inf
        k = min(candidates, int(np.isfinite(best).sum()))
        idx = np.argsort(-best, kind="stable")[:k]
        from memcli.jobs import search as _s

        return _s.VectorBranch([(int(d), float(best[d])) for d in idx], None, [])
    return branch
_VOCAB: dict = {}


def make_query_expansion(rule: str, terms_fn):
    """Semantic query expansion with the local model: `qx=<m>:<min cos>:<beta>`. Each
    content word of the query adds up to m words of the vault's vocabulary whose
    embedding (the local model on the single word) is at least `min cos` similar, each
    weighted beta x cos x its own idf."""
    import math as _m

    import numpy as np

    from memcli.index import tokenizer as tk

    m, tau, beta = rule.split(":")
    m, tau, beta = int(m), float(tau), float(beta)
    word_re = re.compile(r"[a-z]{3,}")

    def vocab():
        if Ctx.root not in _VOCAB:
            words: set[str] = set()
            for f in sorted(Path(Ctx.root).glob("[md]*/**/*.md")):
                words |= set(word_re.findall(f.read_text(encoding="utf-8").lower()))
            words = sorted(w for w in words if w not in STOPWORDS)
            emb = embedder()
            vecs = np.concatenate([emb.embed_batch(words[i:i + 256]) for i in range(0, len(words), 256)])
            emb.cache.save()
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            toks = [(tk.tokenize(w) or [w])[0] for w in words]
            _VOCAB[Ctx.root] = dict(words=words, vecs=vecs, toks=toks)
        return _VOCAB[Ctx.root]

    def _terms(snap, query, extra=()):
        base = terms_fn(snap, query, extra)
        V = vocab()
        own = set(tk.query_terms(query))
        qwords = [w for w in word_re.findall(query.lower()) if w not in STOPWORDS]
        if not qwords:
            return base
        qv = embedder().embed_batch(qwords)
        qv /= np.linalg.norm(qv, axis=1, keepdims=True)
        sims = qv @ V["vecs"].T
        n = snap.n_docs
        k1 = float(snap.header.get("k1", 1.5))
        extra: dict[str, float] = {}
        for row in sims:
            took = 0
            for j in np.argsort(-row)[:50]:
                t = V["toks"][j]
                if row[j] < tau or took >= m:
                    break
                if t in own:
                    continue
                took += 1
                extra[t] = max(extra.get(t, 0.0), float(row[j]))
        out = list(base)
        for t, c in extra.items():
            span = snap.postings(tk.term_hash(t))
            if span is None:
                continue
            a, z = span
            idf = _m.log(1.0 + (n - (z - a) + 0.5) / ((z - a) + 0.5))
            out.append((a, z, beta * c * idf * (k1 + 1.0)))
        return out
    return _terms
BIGRAM = "\x01"


def install_bigrams(weight: float):
    """Sequential-dependence-like proximity: every pair of adjacent index terms (after
    stopwords) is indexed as one more term `a\x01b`; a query's pairs count `weight`
    times a single term's BM25 weight."""
    import math as _m

    from memcli.index import bm25
    from memcli.index import tokenizer as tk

    tok, qt = tk.tokenize, tk.query_terms

    def pairs(toks):
        return [f"{a}{BIGRAM}{b}" for a, b in zip(toks, toks[1:])]

    def tokenize(text):
        out = []
        for line in text.split("\n"):
            t = tok(line)
            out += t + pairs(t)
        return out

    def query_terms(text):
        t = qt(text)
        return list(dict.fromkeys(t + pairs(t)))

    def _terms(snap, query, extra=()):
        n = snap.n_docs
        k1 = float(snap.header.get("k1", 1.5))
        terms = []
        for term, w in [(t, 1.0) for t in query_terms(query)] + list(extra):
            span = snap.postings(tk.term_hash(term))
            if span is not None:
                a, z = span
                idf = _m.log(1.0 + (n - (z - a) + 0.5) / ((z - a) + 0.5))
                if idf > 0:
                    terms.append((a, z, idf * (k1 + 1.0) * w * (weight if BIGRAM in term else 1.0)))
        return terms
    tk.tokenize, tk.query_terms, bm25._terms = tokenize, query_terms, _terms


def make_sub_keyword(spec: dict, score):
    """Keyword branch with a best-passage term: `ksub=<tokens>:<beta>`. A chunk's score is
    (1 - beta) x its BM25 / the best chunk's + beta x the best BM25 of the small
    (`tokens`, 20% overlap) chunks of its file overlapping its lines / the best small
    chunk's. Query terms close together (in one turn) then count for more."""
    from memcli.index import sync

    target, beta = spec["ksub"].split(":")
    target, beta = int(target), float(beta)

    def search(snap, query, k, allowed=None, extra=()):  # keyword mode: no expansion to pass on
        key = (Ctx.root, snap.header.get("generation"), target)
        entry = _KSUB_CACHE.get(key)
        if entry is None:
            sub_ws = workspace(Path(Ctx.root), {"chunking.target_tokens": target,
                                                "chunking.overlap_tokens": target // 5},
                               {k2: v for k2, v in spec.items() if k2 in ("tok", "k1", "b")})
            ensure_index(sub_ws, vectors=False)
            sub = sync.open_snapshot(sub_ws)
            by_path: dict[str, list[tuple[int, int, int]]] = {}
            for d in range(sub.n_docs):
                f, a, b, _ = sub.meta(d)
                by_path.setdefault(_path(sub, f), []).append((a, b, d))
            owners: dict[int, list[int]] = {}
            for d in range(snap.n_docs):
                f, a, b, _ = snap.meta(d)
                for sa, sb, sd in by_path.get(_path(snap, f), []):
                    if sa <= b and sb >= a:
                        owners.setdefault(sd, []).append(d)
            entry = _KSUB_CACHE[key] = (sub, owners)
        sub, owners = entry
        base = score(snap, query, allowed)
        if not base:
            return []
        subs = score(sub, query)
        best: dict[int, float] = {}
        for sd, s in subs.items():
            for d in owners.get(sd, ()):
                if s > best.get(d, 0.0):
                    best[d] = s
        mb = max(base.values())
        ms = max(best.values()) if best else 1.0
        out = {d: (1 - beta) * base.get(d, 0.0) / mb + beta * best.get(d, 0.0) / ms
               for d in set(base) | {d for d in best if allowed is None or allowed(d)}}
        return sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    return search


def _path(snap, fidx: int) -> str:
    paths = getattr(snap, "paths", None)
    return paths[fidx] if paths is not None else snap.files[fidx]["path"]


def _norm(pairs, how: str) -> dict[int, float]:
    if not pairs:
        return {}
    vals = [s for _, s in pairs]
    hi, lo = max(vals), min(vals)
    if how == "minmax":
        span = hi - lo
        return {d: (s - lo) / span if span > 0 else 1.0 for d, s in pairs}
    if how == "maxnorm":
        return {d: s / hi if hi > 0 else 0.0 for d, s in pairs}
    if how == "zscore":
        mu = statistics.fmean(vals)
        sd = statistics.pstdev(vals) or 1.0
        return {d: (s - mu) / sd for d, s in pairs}
    raise SystemExit(f"unknown fusion {how!r}")


def query_vector_weight(snap, base_w: float, rule: str) -> float:
    """Query-dependent weight of the vector branch.

    rare:<idf frac>:<w>  a query term whose idf is above frac * ln(N+1) (a rare, exact
                         token: a name, number, identifier) sets the weight to w.
    len:<n>:<w>          queries of at most n tokens get weight w (short = lookup).
    """
    from memcli.index import tokenizer as tk

    kind, a, b = rule.split(":")
    terms = tk.query_terms(Ctx.query)
    if kind == "len":
        return float(b) if len(terms) <= int(a) else base_w
    n = snap.n_docs
    top = 0.0
    for t in terms:
        span = snap.postings(tk.term_hash(t))
        if span is None:
            continue
        df = span[1] - span[0]
        top = max(top, math.log(1.0 + (n - df + 0.5) / (df + 0.5)))
    return float(b) if top >= float(a) * math.log(n + 1.0) else base_w


def _doc_hit(snap, files, doc: int, score: float):
    """search._doc_hit across its two signatures (with and without the file table)."""
    from memcli.jobs import search

    if "files" in inspect.signature(search._doc_hit).parameters:
        return search._doc_hit(snap, files, doc, score)
    return search._doc_hit(snap, doc, score)


def make_fuse(how: str, qdw: str | None, rrf):
    """A replacement for search._fuse, whatever its exact signature (it has changed:
    with or without `files`, with or without `embedded`)."""
    sig = inspect.signature(rrf)

    def fuse(snap, *args):
        a = sig.bind(snap, *args).arguments
        vector, keyword = a["vector"], a["keyword"]
        w = query_vector_weight(snap, a["vector_weight"], qdw) if qdw else a["vector_weight"]
        if how == "rrf":
            return rrf(**dict(a, vector_weight=w))
        files = a.get("files")
        nv, nk = _norm(vector, how), _norm(keyword, how)
        floor_v = min(nv.values()) if how == "zscore" and nv else 0.0
        floor_k = min(nk.values()) if how == "zscore" and nk else 0.0
        merged: dict[int, object] = {}
        for d in list(nv) + [d for d in nk if d not in nv]:
            merged[d] = _doc_hit(snap, files, d, w * nv.get(d, floor_v) + (1 - w) * nk.get(d, floor_k))
        for d, s in vector:
            merged[d].vector = s
        for d, s in keyword:
            merged[d].keyword = s
        return sorted(merged.values(), key=lambda h: -h.score)
    return fuse


def _touches(a, b) -> bool:
    return a.path == b.path and a.start_line <= b.end_line + 1 and a.end_line >= b.start_line - 1


def _span_tokens(snap, a, b) -> int:
    from memcli.index.chunker import estimate_tokens
    from memcli.jobs import search

    trial = search.Hit(a.path, a.start_line, a.end_line, a.text, a.score, docs=a.docs + b.docs)
    search._rebuild_text(snap, trial)
    return sum(estimate_tokens(x) for x in trial.text.split("\n"))


def merge_variant(snap, hits, how: str):
    """drop: a hit touching a better-ranked one is dropped (its slot freed, nothing grows).
    cap<x>: merged as shipped while the merged text stays within x * chunking target
    tokens; a hit that would grow it further is dropped instead (capkeep<x>: kept apart).
    perfile<n>: no merging, but at most n hits of one file ahead of every other file's."""
    from memcli.index.chunker import estimate_tokens
    from memcli.jobs import search

    if how.startswith("perfile"):  # unmerged, but at most N hits of one file before all others
        n = int(how[7:])
        count: dict[str, int] = {}
        first, rest = [], []
        for h in hits:
            count[h.path] = count.get(h.path, 0) + 1
            (first if count[h.path] <= n else rest).append(h)
        return first + rest
    keep = how.startswith("capkeep")
    cap = float(how[7 if keep else 3:]) * Ctx.target if how.startswith("cap") else None
    if how != "drop" and cap is None:
        raise SystemExit(f"unknown merge variant {how!r}")
    kept = []
    for h in hits:
        target = next((k for k in kept if _touches(h, k)), None)
        if target is None:
            kept.append(h)
        elif cap is not None:
            if keep and _span_tokens(snap, target, h) > cap:
                kept.append(h)  # too big to merge: shown on its own
                continue
            trial = search.Hit(target.path, target.start_line, target.end_line, target.text, target.score,
                               docs=target.docs + h.docs)
            search._rebuild_text(snap, trial)
            if sum(estimate_tokens(x) for x in trial.text.split("\n")) <= cap:
                target.docs, target.start_line, target.end_line, target.text = \
                    trial.docs, trial.start_line, trial.end_line, trial.text
                for attr in ("vector", "keyword"):
                    mine, theirs = getattr(target, attr), getattr(h, attr)
                    if theirs is not None and (mine is None or theirs > mine):
                        setattr(target, attr, theirs)
    return kept


def file_decay(hits, factor: float):
    """Soft per-file diversity: the n-th hit of a file has its score times factor^(n-1)."""
    seen: dict[str, int] = {}
    scored = []
    for i, h in enumerate(hits):
        n = seen.get(h.path, 0)
        seen[h.path] = n + 1
        scored.append((-(h.score * factor ** n), i, h))
    return [h for _, _, h in sorted(scored)]


def recency(hits, half_life: float):
    """Score x 0.5^(age / half-life), age in days before the vault's newest note."""
    if not Ctx.now:
        return hits
    now = dt.date.fromisoformat(Ctx.now)
    for h in hits:
        m = re.search(r"(\d{4}-\d{2}-\d{2})", h.path)
        if m:
            age = max(0, (now - dt.date.fromisoformat(m.group(1))).days)
            h.score *= 0.5 ** (age / half_life)
    return sorted(hits, key=lambda h: -h.score)


def mmr_order(snap, hits, lam: float):
    """Maximal marginal relevance over token sets (Jaccard), relevance = score / best score."""
    from memcli.index import tokenizer as tk

    if len(hits) < 2:
        return hits
    best = max(h.score for h in hits) or 1.0
    toks = [set(tk.tokenize(h.text)) for h in hits]
    rel = [lam * h.score / best for h in hits]
    sim = [0.0] * len(hits)  # highest Jaccard similarity to anything already picked
    left = set(range(len(hits)))
    order: list[int] = []
    while left:
        i = max(left, key=lambda j: (rel[j] - (1 - lam) * sim[j], -j))
        order.append(i)
        left.discard(i)
        for j in left:
            sim[j] = max(sim[j], len(toks[i] & toks[j]) / (len(toks[i] | toks[j]) or 1))
    return [hits[i] for i in order]


def parse_variant(text: str) -> dict:
    spec: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        key, _, value = part.partition("=")
        if key not in ("tok", "fuse", "merge", "mmr", "recency", "qdw", "k1", "b", "prf", "vsub", "fileprior", "ksub", "bi", "fdecay", "qx", "vpass", "vprf"):
            raise SystemExit(f"unknown variant part {part!r}")
        spec[key] = value
    return spec


# ----------------------------------------------------------------------------- indexes

def parse_sets(items: list[str]) -> dict:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set wants key=value, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def workspace(root: Path, sets: dict, spec: dict):
    """The vault's workspace with `sets` as config overrides and a metadata folder per
    chunking x index tokenizer, so variants never rebuild each other's indexes."""
    from memcli.vault.workspace import open_workspace

    probe = open_workspace(root, {}, sets)
    c = probe.config["chunking"]
    tag = f"t{c['target_tokens']}o{c['overlap_tokens']}-{index_tag(spec)}"
    return open_workspace(root, {}, dict(sets, metadata_dir=f"mem_metadata/{tag}"))


def ensure_index(ws, vectors: bool) -> dict:
    """Keyword index current; with `vectors`, every chunk has one (from the cache if known)."""
    from memcli.index import passages, sync
    from memcli.index import vectors as vecmod
    from memcli.jobs import reindex

    t0 = time.perf_counter()
    rep = reindex.run(ws, scope="bm25")
    info = {"chunks": rep.sync.chunks, "rebuilt": rep.sync.wrote, "seconds": 0.0, "embedded": 0}
    if vectors:
        emb = embedder()
        snap = sync.open_snapshot(ws)
        try:
            m = vecmod.open_matrix(ws.metadata, vecmod.active_space(ws.metadata), snap.header.get("generation", ""),
                                   passages.configured(ws.config))
            complete = m is not None and m.n_docs == snap.n_docs and int(m.mask.sum()) == snap.n_docs
        finally:
            snap.close()
        if complete and int(ws.config["search"].get("expand_terms", 0)) > 0:  # word vectors too
            from memcli.index import terms

            complete = terms.store_path(ws.metadata, vecmod.active_space(ws.metadata)["id"]).exists()
        if not complete:
            before = emb.model_texts
            rep = reindex.run(ws, scope="embedding")
            info["embedded"] = emb.model_texts - before
            emb.cache.save()
    info["seconds"] = time.perf_counter() - t0
    return info


# ----------------------------------------------------------------------------- metrics

def dcg(gains: list[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def line_tokens(line: str) -> int:
    return len(line) // 4 + 1 if line.isascii() else len(line.encode("utf-8")) // 3 + 1


class Costs:
    """Estimated tokens of any line range of a vault's files (prefix sums, read once)."""

    def __init__(self, root: Path):
        self.root = root
        self.prefix: dict[str, list[int]] = {}

    def __call__(self, path: str, a: int, b: int) -> int:
        pre = self.prefix.get(path)
        if pre is None:
            lines = (self.root / path).read_text(encoding="utf-8").split("\n")
            pre = [0]
            for x in lines:
                pre.append(pre[-1] + line_tokens(x))
            self.prefix[path] = pre
        b = min(b, len(pre) - 1)
        return pre[b] - pre[a - 1] if b >= a else 0


def ideal_turn_gains(evidence: list[tuple[str, int, int]], budget: int, k: int, cost) -> list[int]:
    """Largest evidence counts any k hits within the budget could find, best first
    (windows chosen greedily: the one covering most unfound evidence, repeatedly)."""
    left = set(evidence)
    gains = []
    while left and len(gains) < k:
        best = 0
        best_set: set = set()
        for p, line, _ in left:
            # a hit from `line` within the budget finds every item starting inside it
            win = {e for e in left if e[0] == p and line <= e[1] and cost(p, line, e[1]) <= budget}
            if len(win) > best:
                best, best_set = len(win), win
        gains.append(best)
        left -= best_set
    return gains


def score_question(q: Question, runs: dict[int, list[tuple[str, int, int]]], budget: int, cost) -> dict:
    """Session and turn metrics of one question from its @5 and @10 hit lists."""
    out: dict[str, float] = {}
    sess = q.sessions
    ev = set(q.evidence)
    for k, hits in runs.items():
        seen_s: set[str] = set()
        seen_t: set = set()
        g_s, g_t = [], []
        for path, a, b in hits[:k]:
            new_s = path in sess and path not in seen_s
            seen_s.add(path)
            g_s.append(1.0 if new_s else 0.0)
            found = {e for e in ev if e[0] == path and a <= e[2] and e[1] <= b} \
                if cost(path, a, b) <= budget else set()
            g_t.append(float(len(found - seen_t)))
            seen_t |= found
        out[f"session_R@{k}"] = sum(g_s) / len(sess)
        out[f"turn_R@{k}"] = sum(g_t) / len(ev)
        if k == 10:
            out["session_nDCG@10"] = dcg(g_s) / dcg([1.0] * min(len(sess), 10))
            out["turn_nDCG@10"] = dcg(g_t) / dcg(ideal_turn_gains(q.evidence, budget, 10, cost))
            out["session_MRR@10"] = next((1 / (i + 1) for i, g in enumerate(g_s) if g), 0.0)
            out["turn_MRR@10"] = next((1 / (i + 1) for i, g in enumerate(g_t) if g), 0.0)
        if k == 5:
            out["lines@5"] = float(sum(b - a + 1 for _, a, b in hits[:5]))
            out["tokens@5"] = float(sum(cost(p, a, b) for p, a, b in hits[:5]))
    return out


METRICS = ["session_R@5", "session_R@10", "session_nDCG@10", "session_MRR@10",
           "turn_R@5", "turn_R@10", "turn_nDCG@10", "turn_MRR@10", "lines@5", "tokens@5"]


def aggregate(rows: list[tuple[int, dict]], categories: dict[int, str]) -> dict:
    groups: dict[str, list[dict]] = {"overall": [r for _, r in rows]}
    for cat in categories:
        groups[str(cat)] = [r for c, r in rows if c == cat]
    return {g: {"n": len(rs), **{m: round(statistics.fmean(r[m] for r in rs), 4) for m in METRICS}}
            for g, rs in groups.items() if rs}


# ----------------------------------------------------------------------------- running

def search_hits(ws, query: str, limit: int, mode: str) -> list[tuple[str, int, int]]:
    from memcli.jobs import search

    Ctx.query, Ctx.limit = query, limit
    res = search.run(ws, query, limit=limit, mode=mode, auto_sync=False)
    if res.warnings:
        raise SystemExit(f"search warned ({mode}): {res.warnings}")
    return [(h.path, h.start_line, h.end_line) for h in res.hits]


def memcli_version() -> str:
    """The commit of the memcli code measured (+dirty when memcli/ has local changes)."""
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=False).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "memcli"],
                               capture_output=True, text=True, check=False).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except OSError:
        return "unknown"


def evaluate(vaults: list[Vault], *, mode: str, sets: dict, spec: dict, budget: int = TURN_BUDGET,
             details: bool = False, categories: dict[int, str] = CATEGORIES) -> dict:
    """Run every question of every vault; returns the result document (see module docstring)."""
    t0 = time.perf_counter()
    rows: list[tuple[int, dict]] = []
    per_q = []
    index_info = []
    search_s = 0.0
    with patched(spec):
        for v in vaults:
            ws = workspace(v.root, sets, spec)
            Ctx.target = int(ws.config["chunking"]["target_tokens"])
            index_info.append(ensure_index(ws, vectors=mode != "keyword"))
            Ctx.now, Ctx.root = v.now, str(v.root)
            cost = Costs(v.root)
            ts = time.perf_counter()
            for q in v.questions:
                runs = {k: search_hits(ws, q.text, k, mode) for k in KS}
                r = score_question(q, runs, budget, cost)
                rows.append((q.category, r))
                if details:
                    per_q.append({"qid": q.qid, "category": q.category, **r, "hits@10": runs[10]})
            search_s += time.perf_counter() - ts
    n_search = 2 * len(rows)
    doc = {
        "memcli": memcli_version(),
        "mode": mode, "set": sets, "variant": spec, "turn_budget_tokens": budget,
        "vaults": len(vaults), "questions": len(rows),
        "chunks": sum(i["chunks"] for i in index_info),
        "categories": {str(c): name for c, name in categories.items()},
        "metrics": aggregate(rows, categories),
        "seconds": {"total": round(time.perf_counter() - t0, 1),
                    "index": round(sum(i["seconds"] for i in index_info), 1),
                    "per_search_ms": round(1000 * search_s / max(1, n_search), 2)},
        "embedded_now": sum(i["embedded"] for i in index_info),
    }
    if details:
        doc["per_question"] = per_q
    return doc


def via_cli(vaults: list[Vault], n: int, *, mode: str, sets: dict, spec: dict) -> dict:
    """Run `n` questions through `mem search --json` subprocesses and compare with run()."""
    import yaml

    if any(k for k in spec):
        raise SystemExit("--via-cli compares the shipped code: use it without --variant")
    mem = shutil.which("mem", path=str(Path(sys.executable).parent)) or "mem"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEM_")}
    checked = agree = 0
    diffs = []
    per_vault = max(1, n // max(1, len(vaults)))
    for v in vaults:
        ws = workspace(v.root, sets, {})
        ensure_index(ws, vectors=mode != "keyword")
        conf: dict = {}
        for key, value in dict(sets, metadata_dir=ws.config["metadata_dir"]).items():
            node = conf
            parts = key.split(".")
            for p in parts[:-1]:
                node = node.setdefault(p, {})
            node[parts[-1]] = yaml.safe_load(value) if isinstance(value, str) else value
        cfg_file = v.root / "mem.yaml"
        cfg_file.write_text(yaml.safe_dump(conf), encoding="utf-8")
        try:
            for q in v.questions[:per_vault]:
                for k in KS:
                    proc = subprocess.run([mem, "-w", str(v.root), "search", "--json", "--no-sync",
                                           "--limit", str(k), "--mode", mode, "--", q.text],
                                          capture_output=True, text=True, env=env, timeout=300, check=False)
                    if proc.returncode != 0:
                        raise SystemExit(f"mem search failed: {proc.stderr.strip()}")
                    cli = [(r["path"], r["start_line"], r["end_line"]) for r in json.loads(proc.stdout)["results"]]
                    inproc = search_hits(ws, q.text, k, mode)
                    checked += 1
                    if cli == inproc:
                        agree += 1
                    else:
                        diffs.append({"qid": q.qid, "limit": k, "cli": cli, "in_process": inproc})
        finally:
            cfg_file.unlink()
    return {"checked": checked, "agree": agree, "differences": diffs[:5]}


def table(doc: dict, title: str = "") -> str:
    head = (f"{'category':<12} {'n':>5} | {'sR@5':>6} {'sR@10':>6} {'sNDCG':>6} {'sMRR':>6} | "
            f"{'tR@5':>6} {'tR@10':>6} {'tNDCG':>6} {'tMRR':>6} | {'lines@5':>7} {'tok@5':>6}")
    out = [title, head, "-" * len(head)] if title else [head, "-" * len(head)]
    for g, m in doc["metrics"].items():
        name = "overall" if g == "overall" else f"{g} {doc['categories'][g]}"
        out.append(f"{name:<12} {m['n']:>5} | " + " ".join(f"{m[x]:>6.3f}" for x in METRICS[:4]) + " | "
                   + " ".join(f"{m[x]:>6.3f}" for x in METRICS[4:8]) + f" | {m['lines@5']:>7.1f} {m['tokens@5']:>6.0f}")
    return "\n".join(out)


# ----------------------------------------------------------------------------- sweeps
# name -> list of (label, mode, --set dict, variant spec string)

def _chunk(t: int, frac: int) -> dict:
    return {"chunking.target_tokens": t, "chunking.overlap_tokens": t * frac // 100}


def _sweeps() -> dict[str, list[tuple[str, str, dict, str]]]:
    vw = "search.vector_weight"
    out: dict[str, list] = {}
    out["chunking"] = [(f"{mode} {t}/{t * frac // 100} merge={m}", mode, _chunk(t, frac), f"merge={m}")
                       for mode in ("keyword",) for m in ("on", "off")
                       for t in (100, 200, 400, 800) for frac in (0, 20)]
    sizes = [(200, 20), (100, 20), (400, 0), (800, 20), (400, 20)]
    out["vector-chunking"] = [(f"vector {t}/{t * frac // 100} merge={m}", "vector", _chunk(t, frac), f"merge={m}")
                              for t, frac in sizes for m in ("off", "on")]
    ss = "tok=stem+stop,merge=off"
    rec = RECOMMENDED
    full = [("BM25 baseline (400/80, shipped code)", "keyword", {}, "")]
    full += [(f"keyword tok={t} merge=off", "keyword", {}, f"tok={t},merge=off")
             for t in ("base", "stem", "lightstem", "stop", "stopq", "stem+stop")]
    full += [(f"keyword stem+stop merge={m}", "keyword", {}, f"tok=stem+stop,merge={m}")
             for m in ("on", "drop", "cap1.5", "capkeep1.5", "perfile1", "perfile2")]
    full += [("keyword stem+stop k1=1.2 b=0.5", "keyword", {}, ss + ",k1=1.2,b=0.5"),
             ("keyword stem+stop MMR 0.7", "keyword", {}, ss + ",mmr=0.7"),
             ("keyword stem+stop recency 30d", "keyword", {}, ss + ",recency=30"),
             ("keyword stem+stop recency 180d", "keyword", {}, ss + ",recency=180")]
    full += [(f"shipped keyword, candidate_multiplier {c}", "keyword", {"search.candidate_multiplier": c}, "")
             for c in (1, 5, 10)]
    full += [("vector only (shipped code)", "vector", {}, ""),
             ("vector only merge=off", "vector", {}, "merge=off"),
             ("vector only 200/40 merge=off", "vector", _chunk(200, 20), "merge=off"),
             ("vector only 100/20 merge=on", "vector", _chunk(100, 20), "")]
    full += [(f"hybrid RRF k=60 {w} (shipped code)", "hybrid", {vw: w}, "") for w in (0.7, 0.3)]
    full += [(f"hybrid RRF k=60 {w}, rec. keyword side", "hybrid", {vw: w}, rec) for w in (0.7, 0.5, 0.3, 0.2, 0.1)]
    full += [(f"hybrid RRF k={k} {w}, rec. keyword side", "hybrid", {vw: w, "search.rrf_k": k}, rec)
             for k, w in ((5, 0.2), (5, 0.3), (10, 0.3), (20, 0.3), (100, 0.3))]
    full += [(f"hybrid {f} {w}, rec. keyword side", "hybrid", {vw: w}, rec + f",fuse={f}")
             for f, w in (("minmax", 0.1), ("minmax", 0.2), ("minmax", 0.3), ("minmax", 0.5), ("maxnorm", 0.3),
                          ("zscore", 0.3))]
    full += [("hybrid minmax 0.3 merge=off", "hybrid", {vw: 0.3}, ss + ",fuse=minmax"),
             ("hybrid minmax 0.3, rare query token -> 0.1", "hybrid", {vw: 0.3}, rec + ",fuse=minmax,qdw=rare:0.7:0.1"),
             ("hybrid minmax 0.3, short query -> 0.5", "hybrid", {vw: 0.3}, rec + ",fuse=minmax,qdw=len:3:0.5"),
             ("hybrid minmax 0.3 candidate_multiplier 1", "hybrid", {vw: 0.3, "search.candidate_multiplier": 1},
              rec + ",fuse=minmax"),
             ("hybrid minmax 0.3 candidate_multiplier 10", "hybrid", {vw: 0.3, "search.candidate_multiplier": 10},
              rec + ",fuse=minmax"),
             ("hybrid minmax 0.3 200/40 merge<=2x", "hybrid", dict(_chunk(200, 20), **{vw: 0.3}),
              "tok=stem+stop,merge=capkeep2,fuse=minmax"),
             ("hybrid minmax 0.3 MMR 0.7", "hybrid", {vw: 0.3}, rec + ",fuse=minmax,mmr=0.7"),
             ("vector only on 100-token sub-chunks", "vector", {}, "merge=capkeep1.5,vsub=100"),
             ("hybrid minmax 0.3, vectors on 100-token sub-chunks", "hybrid", {vw: 0.3}, rec + ",fuse=minmax,vsub=100"),
             ("keyword rec. + PRF 3 docs 10 terms 0.3", "keyword", {}, rec + ",prf=3:10:0.3")]
    out["full"] = full
    # the previous shipped default: one vector per chunk, no query expansion
    prev = {"chunking.passage_tokens": 0, "search.expand_terms": 0}
    out["headline"] = [
        ("BM25 (shipped keyword side)", "keyword", {}, ""),
        ("vector only, one vector per chunk", "vector", prev, ""),
        ("vector only, passage vectors (shipped)", "vector", {}, ""),
        ("hybrid RRF k=60 0.7 (reference formula), one vector per chunk", "hybrid",
         dict(prev, **{"search.fusion": "rrf", vw: 0.7}), ""),
        ("hybrid min-max 0.3, one vector per chunk (previous default)", "hybrid", prev, ""),
        ("+ passage vectors", "hybrid", {"search.expand_terms": 0}, ""),
        ("+ query expansion (shipped default)", "hybrid", {}, ""),
    ]
    out["round2"] = [
        ("previous default (hybrid min-max 0.3, one vector per chunk, no expansion)", "hybrid", prev, ""),
        ("BM25 (shipped keyword side)", "keyword", {}, ""),
        ("keyword + best 100-token passage BM25 0.3", "keyword", {}, "ksub=100:0.3"),
        ("keyword + best 100-token passage BM25 0.5", "keyword", {}, "ksub=100:0.5"),
        ("keyword + best 50-token passage BM25 0.3", "keyword", {}, "ksub=50:0.3"),
        ("keyword, chunk overlap 160", "keyword", {"chunking.overlap_tokens": 160}, ""),
        ("keyword, chunk overlap 200", "keyword", {"chunking.overlap_tokens": 200}, ""),
    ] + [
        (f"keyword, BM25 k1={k1} b={b}", "keyword", {}, f"k1={k1},b={b}")
        for k1, b in ((1.2, 0.5), (0.9, 0.4), (2.0, 0.75), (1.5, 0.9))
    ] + [
        (f"keyword + adjacent-pair terms, weight {w}", "keyword", {}, f"bi={w}") for w in (0.3, 1.0)
    ] + [
        (f"keyword + query expansion (prototype) {x}", "keyword", {}, f"qx={x}")
        for x in ("3:0.6:0.5", "5:0.5:0.3", "5:0.5:0.5", "8:0.45:0.3")
    ] + [
        (f"previous default, per-file score decay {f}", "hybrid", prev, f"fdecay={f}") for f in (0.9, 0.75, 0.5)
    ] + [
        ("previous default + vectors on 100-token sub-chunks of the file", "hybrid", prev, "vsub=100"),
    ] + [
        (f"previous default + passage vectors {t}", "hybrid", dict(prev, **{"chunking.passage_tokens": t}), "")
        for t in (60, 100, 150)
    ] + [
        ("previous default + query expansion", "hybrid", {"chunking.passage_tokens": 0}, ""),
        ("shipped default (passages 100 + expansion 5/0.5/0.3, vector 0.3)", "hybrid", {}, ""),
    ] + [
        (f"shipped, vector weight {w}", "hybrid", {vw: w}, "") for w in (0.2, 0.4)
    ] + [
        (f"shipped, expansion {n} per word, similarity >= {m}, weight {x}", "hybrid",
         {"search.expand_terms": n, "search.expand_min_similarity": m, "search.expand_weight": x}, "")
        for n, m, x in ((3, 0.5, 0.3), (5, 0.6, 0.3), (5, 0.5, 0.2), (5, 0.5, 0.5), (8, 0.45, 0.3))
    ] + [
        ("shipped + adjacent-pair terms 0.3", "hybrid", {}, "bi=0.3"),
        ("shipped + per-file score decay 0.7", "hybrid", {}, "fdecay=0.7"),
        ("shipped + adjacent-pair terms 0.3, vector weight 0.2", "hybrid", {vw: 0.2}, "bi=0.3"),
    ]
    out["pydoc"] = [
        ("BM25 baseline (400/80, shipped code)", "keyword", {}, ""),
        ("keyword merge=off", "keyword", {}, "merge=off"),
        ("keyword stem merge=off", "keyword", {}, "tok=stem,merge=off"),
        ("keyword stop merge=off", "keyword", {}, "tok=stop,merge=off"),
        ("keyword stem+stop merge=off", "keyword", {}, "tok=stem+stop,merge=off"),
        ("keyword stem+stop merge<=1.5x (recommended)", "keyword", {}, rec),
        ("keyword lightstem+stop merge<=1.5x (no dependency)", "keyword", {}, "tok=lightstem+stop,merge=capkeep1.5"),
        ("keyword stem+stop 200/40 merge=off", "keyword", _chunk(200, 20), "tok=stem+stop,merge=off"),
        ("keyword stem+stop 800/160 merge=off", "keyword", _chunk(800, 20), "tok=stem+stop,merge=off"),
        ("keyword stem+stop MMR 0.7", "keyword", {}, rec + ",mmr=0.7"),
        ("vector only (shipped code)", "vector", {}, ""),
        ("vector only merge=off", "vector", {}, "merge=off"),
        ("hybrid RRF 0.7 (reference, shipped code)", "hybrid", {vw: 0.7}, ""),
        ("hybrid RRF 0.3 (shipped code)", "hybrid", {vw: 0.3}, ""),
        ("hybrid RRF k=60 0.3, stem+stop merge<=1.5x", "hybrid", {vw: 0.3}, rec),
        ("hybrid RRF k=5 0.2, stem+stop merge<=1.5x", "hybrid", {vw: 0.2, "search.rrf_k": 5}, rec),
        ("hybrid min-max 0.2, stem+stop merge<=1.5x", "hybrid", {vw: 0.2}, rec + ",fuse=minmax"),
        ("hybrid min-max 0.3, stem+stop merge<=1.5x (recommended)", "hybrid", {vw: 0.3}, rec + ",fuse=minmax"),
        ("+ vectors on 100-token sub-chunks", "hybrid", {vw: 0.3}, rec + ",fuse=minmax,vsub=100"),
        ("hybrid min-max 0.5, stem+stop merge<=1.5x", "hybrid", {vw: 0.5}, rec + ",fuse=minmax"),
    ]
    out["one-vault"] = out["headline"]
    out["pydoc-round2"] = [r for r in out["round2"] if not r[3].startswith(("k1", "ksub", "fdecay=0.", "qx"))
                           or r[3] in ("ksub=100:0.3", "fdecay=0.7", "qx=5:0.5:0.3")]
    rec = RECOMMENDED
    out["extra"] = [
        ("keyword rec. + file-level BM25 prior 0.2", "keyword", {}, rec + ",fileprior=0.2"),
    ] + [
        (f"keyword rec. {t}/{t * f // 100}", "keyword", _chunk(t, f), rec) for t, f in ((200, 20), (300, 20), (400, 0),
                                                                                 (500, 20), (600, 20))
    ] + [
        ("hybrid minmax 0.3, vectors on 50-token sub-chunks", "hybrid", {vw: 0.3}, rec + ",fuse=minmax,vsub=50"),
        ("keyword lightstem+stop merge<=1.5x (no dependency)", "keyword", {}, "tok=lightstem+stop,merge=capkeep1.5"),
        ("hybrid minmax 0.3, lightstem+stop merge<=1.5x", "hybrid", {vw: 0.3},
         "tok=lightstem+stop,merge=capkeep1.5,fuse=minmax"),
    ]
    return out


def run_sweep(name: str, vaults, args, **kw) -> list[dict]:
    sweeps = _sweeps()
    if name not in sweeps:
        raise SystemExit(f"unknown sweep {name!r}: {', '.join(sweeps)}")
    docs = []
    for label, mode, sets, variant in sweeps[name]:
        sets = {k: str(v) for k, v in sets.items()}
        sets.update(parse_sets(args.set))
        doc = evaluate(vaults, mode=mode, sets=sets, spec=parse_variant(variant), **kw)
        doc["label"] = label
        print(table(doc, f"\n== {label}: mode={mode} set={sets} variant={variant or '-'} "
                         f"({doc['seconds']['total']}s)"), file=sys.stderr, flush=True)
        docs.append(doc)
    return docs


def markdown(docs: list[dict]) -> str:
    """One row per run: overall and per-category session nDCG@10 / turn R@5."""
    cats = docs[0]["categories"]
    head = ("| variant | sR@5 | sR@10 | sNDCG@10 | sMRR | tR@5 | tR@10 | tNDCG@10 | tMRR | tokens@5 | "
            + " | ".join(f"{c} {name} sNDCG / tR@5" for c, name in cats.items()) + " |")
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for d in docs:
        m = d["metrics"]["overall"]
        cells = [f"{m[x]:.3f}" for x in METRICS[:8]] + [f"{m['tokens@5']:.0f}"]
        cells += [f"{d['metrics'][c]['session_nDCG@10']:.3f} / {d['metrics'][c]['turn_R@5']:.3f}"
                  if c in d["metrics"] else "-" for c in cats]
        out.append(f"| {d.get('label', d['mode'])} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def compare(base: Path, new: Path, resamples: int = 2000, seed: int = 0) -> str:
    """Paired bootstrap over the questions of two `--details` runs: mean difference (new - base)
    of each metric with a 95% interval, and how many questions got better or worse."""
    import numpy as np

    a, b = ({r["qid"]: r for r in json.loads(p.read_text(encoding="utf-8"))["per_question"]} for p in (base, new))
    if set(a) != set(b):
        raise SystemExit("the two runs answered different questions")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(b), (resamples, len(b)))
    rows = ["| metric | new - base | 95% interval | better | worse |", "|---|---|---|---|---|"]
    for m in ("session_R@5", "session_nDCG@10", "turn_R@5", "turn_nDCG@10"):
        d = np.array([b[q][m] - a[q][m] for q in sorted(b)])
        lo, hi = np.percentile(d[picks].mean(axis=1), [2.5, 97.5])
        rows.append(f"| {m} | {d.mean():+.4f} | [{lo:+.4f}, {hi:+.4f}] | {int((d > 0).sum())} | {int((d < 0).sum())} |")
    return "\n".join(rows)


def write_result(result: dict, out: Path | None, t0: float) -> None:
    """finish() the result document, stamp its wall time, write it to `out` or stdout."""
    finish(result)
    result["wall_seconds"] = round(time.perf_counter() - t0, 1)
    text = json.dumps(result, indent=2, ensure_ascii=False)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
    else:
        print(text)


def report(paths: list[Path]) -> str:
    """Markdown tables (overall; per category) of the runs in sweep JSON files, for the docs."""
    docs = [d for p in paths for d in json.loads(p.read_text(encoding="utf-8"))["runs"]]
    cats = docs[0]["categories"]
    out = ["| # | variant | mode | sR@5 | sR@10 | sNDCG@10 | sMRR@10 | tR@5 | tR@10 | tNDCG@10 | tMRR@10 | tokens@5 |",
           "|---|---|---|" + "---|" * 9]
    for i, d in enumerate(docs, 1):
        m = d["metrics"]["overall"]
        out.append(f"| {i} | {d['label']} | {d['mode']} | " + " | ".join(f"{m[x]:.3f}" for x in METRICS[:8])
                   + f" | {m['tokens@5']:.0f} |")
    out += ["", "| # | " + " | ".join(f"{c} {n}: sR@5 / sNDCG / tR@5 / tNDCG" for c, n in cats.items()) + " |",
            "|---|" + "---|" * len(cats)]
    for i, d in enumerate(docs, 1):
        cells = []
        for c in cats:
            m = d["metrics"].get(c)
            cells.append(" / ".join(f"{m[x]:.3f}" for x in ("session_R@5", "session_nDCG@10", "turn_R@5",
                                                              "turn_nDCG@10")) if m else "-")
        out.append(f"| {i} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def finish(result: dict) -> None:
    """Save the embedding cache and record what the model had to embed in this run."""
    if _EMBEDDER is None:
        return
    _EMBEDDER.cache.save()
    result["embedding"] = {"model_texts": _EMBEDDER.model_texts, "model_seconds": round(_EMBEDDER.model_seconds, 1)}
    if _EMBEDDER.model_texts:
        log(f"embedded {_EMBEDDER.model_texts} new texts with the local model in "
            f"{_EMBEDDER.model_seconds:.0f}s ({_EMBEDDER.model_texts / _EMBEDDER.model_seconds:.1f}/s)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO, help="locomo10.json")
    ap.add_argument("--out-dir", type=Path, default=DEFAULT_OUT, help="vault cache (default bench/out/locomo)")
    ap.add_argument("--mode", choices=("keyword", "vector", "hybrid"), default="keyword")
    ap.add_argument("--one-vault", action="store_true", help="all conversations in one vault (harder)")
    ap.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="config override, e.g. chunking.target_tokens=200 (repeatable)")
    ap.add_argument("--variant", default="", help="code-level prototype, e.g. tok=stem,fuse=minmax,merge=off")
    ap.add_argument("--budget", type=int, default=TURN_BUDGET, help="turn-level token budget per hit")
    ap.add_argument("--sweep", help="run a named list of configurations: " + ", ".join(_sweeps()))
    ap.add_argument("--via-cli", type=int, default=0, metavar="N", help="also run N questions through `mem search`")
    ap.add_argument("--details", action="store_true", help="per-question metrics and hits in the JSON")
    ap.add_argument("--markdown", type=Path, help="write the sweep's markdown table here")
    ap.add_argument("--out", type=Path, help="write the JSON here instead of stdout")
    ap.add_argument("--report", type=Path, nargs="+", help="print markdown tables of sweep JSON files and exit")
    ap.add_argument("--compare", type=Path, nargs=2, metavar=("BASE", "NEW"),
                    help="paired bootstrap of two --details runs (NEW - BASE per question) and exit")
    args = ap.parse_args(argv)
    if args.report:
        print(report(args.report))
        return 0
    if args.compare:
        print(compare(*args.compare))
        return 0
    if not args.locomo.exists():
        raise SystemExit(f"{args.locomo} not found: pass --locomo or set LOCOMO_JSON")
    stats: dict = {}
    t0 = time.perf_counter()
    vaults = convert(args.locomo, args.out_dir, one_vault=args.one_vault, conversations=args.conversations,
                     stats=stats)
    log(f"{stats['conversations']} conversations, {stats['sessions']} sessions, {stats['turns']} turns, "
        f"{stats['questions']} questions (categories 1-4 with evidence; {stats['excluded_no_evidence']} "
        f"without a valid evidence id left out)")
    if args.sweep:
        docs = run_sweep(args.sweep, vaults, args)
        result: dict = {"sweep": args.sweep, "data": stats, "one_vault": args.one_vault, "runs": docs}
        md = markdown(docs)
        print("\n" + md, file=sys.stderr)
        if args.markdown:
            args.markdown.parent.mkdir(parents=True, exist_ok=True)
            args.markdown.write_text(md + "\n", encoding="utf-8")
    else:
        sets = parse_sets(args.set)
        spec = parse_variant(args.variant)
        result = evaluate(vaults, mode=args.mode, sets=sets, spec=spec, budget=args.budget, details=args.details)
        result.update(data=stats, one_vault=args.one_vault)
        print(table(result, f"mode={args.mode} set={sets} variant={args.variant or '-'}"), file=sys.stderr)
        if args.via_cli:
            result["via_cli"] = via_cli(vaults, args.via_cli, mode=args.mode, sets=sets, spec=spec)
            vc = result["via_cli"]
            log(f"via CLI: {vc['agree']}/{vc['checked']} searches gave the same hits as the job function")
    write_result(result, args.out, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
