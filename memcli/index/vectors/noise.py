"""The noise floor of a vector space: what nonsense reaches against this vault's passages.

A seeded set of nonsense probes is embedded once per space (their vectors are kept in the
record, noise_record), so a later run re-measures the floor against
the current passages without a request. A vector hit must score above the floor.

One floor per script. A model reads nonsense in a script it was not trained on much like
any text of that script: all-MiniLM-L6-v2 puts Han nonsense at cosine 0.70 (0.9 quantile)
of a vault's Chinese notes, Hangul at 0.72, where Latin nonsense reaches 0.29; a Chinese
question about something nobody wrote down scored 0.49-0.59 there and passed the Latin
floor. The probes are as long as a question: a static model's mean vector nears the
script's centroid as a text grows, so short probes set the floor too low. So the probes come in each script the vault holds (Latin always; Han, kana, Hangul,
Cyrillic when a segment's text has them) and in the query's own script when a search meets
one not measured yet; a query is held to the floor of its script (`floor_for`). The record
is the Latin one as before (`floor`, `measured`, ...) plus `scripts`: {script: the same
fields} and `held`: the scripts found in the vault. Only the Latin floor is capped
(FLOOR_CAP): in another script a high floor costs vector-only hits the model cannot
tell from nonsense, while the keyword branch still finds the real ones by their words.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

from memcli.errors import ProviderError
from memcli.index.vectors import vectors
from memcli.vault import atomic
from memcli.vault.workspace import Workspace

# The noise floor of a space: what nonsense reaches against this vault's passages. Each
# probe (noise_probes) scores its best passage cosine; the floor is the
# FLOOR_QUANTILE of those (the maximum is one lucky probe, `polka` is a word), and a vector
# hit must score above it. The Latin floor is never above FLOOR_CAP, so that a space in which
# nonsense scores high (a test's hash vectors, a model whose cosines all crowd near 1) keeps its
# hits; the floors of other scripts (below) are not capped.
NOISE_VERSION = 1  # bump when the probes or the rule change: floors are measured again
# Two weak signals that agree make a match: a chunk reached only by an expansion term ("boss":
# manager) whose cosine is at most AGREE below the floor is shown (near_floor). Measured on the
# tune sets (534 questions): at 0.08 eight more questions find their session in the top 10 (seven
# of them paraphrases, "Who is the boss at present?" had no result at all), R@5 503 -> 507, while
# 40 general-knowledge questions asked of three vaults return results as often as before (89 ->
# 90 of 120); at 0.16 that rose to 105.
AGREE = 0.08
FLOOR_QUANTILE = 0.9
FLOOR_CAP = 0.5


def noise_path(metadata: Path, space: str) -> Path:
    return metadata / "embedding_store" / f"noise_{space}.json"


def load_noise(metadata: Path, space: dict) -> dict | None:
    """The space's noise record {version, space, floor, measured, passages, probes, vectors},
    or None when it is missing, damaged or from other probes."""
    try:
        data = json.loads(noise_path(metadata, space["id"]).read_text(encoding="utf-8"))
        ok = (
            isinstance(data, dict)
            and data.get("version") == NOISE_VERSION
            and data.get("space") == space["id"]
            and isinstance(data.get("floor"), float)
            and isinstance(data.get("vectors"), str)
        )
        return data if ok else None
    except (OSError, ValueError, TypeError, RecursionError):
        return None


def noise_record(
    space: dict, probe_vecs, vecs: vectors.ViewVectors, old: dict | None = None, cap: float | None = FLOOR_CAP
) -> dict:
    """Measure the floor of `space` against the embedded passages of `vecs` (none: 0), never
    above `cap` (None: the measurement itself).

    Each probe's best cosine per segment is a maximum, so a record that kept them
    (`best`, over the segments it names) is brought up to date from the segments it has
    not seen; it is measured from scratch once a third of the passages it counted are
    gone (a maximum cannot forget the deleted ones)."""
    import numpy as np

    probes = np.asarray(probe_vecs, dtype=np.float32)
    probes = probes / np.maximum(np.linalg.norm(probes, axis=1, keepdims=True), 1e-12)
    best = np.full(len(probes), -1.0, dtype=np.float32)
    seen: set[str] = set()
    live = vecs.n_rows_embedded()
    if (
        old
        and old.get("best")
        and isinstance(old.get("segments"), list)
        and int(old.get("passages", 0)) * 2 <= live * 3
    ):
        prior = np.frombuffer(base64.b64decode(old["best"]), dtype="<f4")
        if prior.size == len(probes):
            best, seen = prior.copy(), set(old["segments"])
    for _, block in vecs.embedded_blocks(skip=seen):
        for a in range(0, block.shape[0], 32768):
            best = np.maximum(best, (np.asarray(block[a : a + 32768], dtype=np.float32) @ probes.T).max(axis=0))
    found = live and len(best)
    measured = round(float(np.quantile(best, FLOOR_QUANTILE)), 4) if found else 0.0
    packed = base64.b64encode(np.asarray(probe_vecs, dtype="<f2").tobytes()).decode("ascii")
    return {
        "version": NOISE_VERSION,
        "space": space["id"],
        "floor": measured if cap is None else min(measured, cap),
        "measured": measured,
        "max": round(float(best.max()), 4) if found else 0.0,
        "quantile": FLOOR_QUANTILE,
        "cap": cap,
        "passages": int(live),
        "probes": len(probes),
        "vectors": packed,
        "best": base64.b64encode(best.astype("<f4").tobytes()).decode("ascii"),
        "segments": sorted(vecs.names()),
    }


def noise_vectors(record: dict, dims: int):
    """The probe vectors a noise record keeps (so a later run re-measures without a request)."""
    import numpy as np

    arr = np.frombuffer(base64.b64decode(record["vectors"]), dtype="<f2")
    n = int(record.get("probes", 0))
    return arr.reshape(n, dims).astype(np.float32) if n and arr.size == n * dims else None


def save_noise(metadata: Path, record: dict) -> None:
    atomic.write_text(noise_path(metadata, record["space"]), json.dumps(record, sort_keys=True))


# Nonsense the floor is measured with (noise_probes): seeded, so every vault and every
# run sends the same texts; a new seed or count needs a new NOISE_VERSION.
PROBE_SEED, PROBE_COUNT = 14, 48
_SYLLABLES = (
    "ka lo mi tren vor sha qu bel dor nix pra zu ek oth gri mav sel tup wen fa rok bli und cha ix pol dre sku yo gam"
).split()
# the material of the other scripts' nonsense: common characters in random order
_HAN = (
    "人大中国年上下不会子出生家时地们来到说可为对成就主动工以学同经发种面作方后多行力然心三自前里定"
    "现所开起实当没看文道两十手高长法事新问明见部全本天机意正外想头只间无电点业理此因路进走应都些"
    "她通结东又它情物体才相使西加美回老名量数性第位度儿表北产己知分水气月平和期次公信身海"
)
_HIRAGANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわんがぎぐげござじずぜぞだでどばびぶべぼ"
_KATAKANA = "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワンガギグゲゴザジズゼゾダデドバビブベボー"
_PARTICLES = ("の", "は", "を", "に", "が", "で", "と", "から", "まで")
_HANGUL = "가나다라마바사아자차카타파하거너더러머버서어저고노도로모보소오조구누두루무부수우주그느드르므브스으즈기니디리미비시이지개내대래매배새애재한강산정원선민김박이"
_CYR_C, _CYR_V = "бвгджзклмнпрстфхцчшщ", "аеиоуыяюэ"
_CYR_END = ("ый", "ая", "ов", "ение", "ать", "ить", "ой", "ие", "ка", "ник", "ство", "ом")

SCRIPTS = ("latin", "han", "kana", "hangul", "cyrillic")
# a query's script: the first of these it holds (Japanese mixes kana with Han); else Latin
_QUERY_SCRIPT = (
    ("kana", re.compile("[\u3040-\u30ff\uff66-\uff9f]")),
    ("hangul", re.compile("[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")),
    ("han", re.compile("[\u3400-\u9fff\uf900-\ufaff]")),
    ("cyrillic", re.compile("[\u0400-\u04ff]")),
)
# the same scripts as UTF-8 byte patterns: a segment's text is scanned without decoding it
_HELD = (
    ("kana", re.compile(rb"\xe3[\x81-\x83][\x80-\xbf]")),
    ("hangul", re.compile(rb"\xea[\xb0-\xbf][\x80-\xbf]|[\xeb\xec][\x80-\xbf]{2}|\xed[\x80-\x9e][\x80-\xbf]")),
    ("han", re.compile(rb"\xe3[\x90-\xbf][\x80-\xbf]|[\xe4-\xe9][\x80-\xbf]{2}|\xef[\xa4-\xab][\x80-\xbf]")),
    ("cyrillic", re.compile(rb"[\xd0-\xd3][\x80-\xbf]")),
)


def noise_probes(script: str = "latin") -> list[str]:
    """PROBE_COUNT texts that mean nothing in `script`. Latin: half random letter strings
    (`xcvoj vmmydi`), half words of shuffled syllables (`tupcha grimav`), one to four words
    each; the others: common characters of the script in random order, shaped like its
    text (Chinese without spaces, Japanese with a particle between Han and kana, Korean
    and Russian as words)."""
    import random

    rnd = random.Random(PROBE_SEED if script == "latin" else f"{PROBE_SEED}:{script}")
    return [_PROBE[script](rnd, i) for i in range(PROBE_COUNT)]


def _latin(rnd, i: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    if i % 2:
        words = ("".join(rnd.choice(_SYLLABLES) for _ in range(rnd.randint(2, 4))) for _ in range(rnd.randint(1, 4)))
    else:
        words = ("".join(rnd.choice(letters) for _ in range(rnd.randint(3, 8))) for _ in range(rnd.randint(1, 4)))
    return " ".join(words)


def _pick(rnd, chars, lo: int, hi: int) -> str:
    return "".join(rnd.choice(chars) for _ in range(rnd.randint(lo, hi)))


def _kana(rnd, i: int) -> str:
    if i % 3 == 0:  # a katakana word, a particle, a Han word
        return _pick(rnd, _KATAKANA, 3, 6) + rnd.choice(_PARTICLES) + _pick(rnd, _HAN, 2, 2)
    return _pick(rnd, _HAN, 1, 3) + rnd.choice(_PARTICLES) + _pick(rnd, _HAN, 1, 3) + _pick(rnd, _HIRAGANA, 0, 3)


_PROBE = {
    "latin": _latin,
    "han": lambda rnd, i: "".join(_pick(rnd, _HAN, 2, 4) for _ in range(rnd.randint(2, 4))),
    "kana": _kana,
    "hangul": lambda rnd, i: " ".join(_pick(rnd, _HANGUL, 2, 4) for _ in range(rnd.randint(2, 4))),
    "cyrillic": lambda rnd, i: " ".join(
        "".join(rnd.choice(_CYR_C) + rnd.choice(_CYR_V) for _ in range(rnd.randint(1, 3)))
        + rnd.choice(_CYR_C)
        + rnd.choice(_CYR_END)
        for _ in range(rnd.randint(2, 4))
    ),
}


def script_of(text: str) -> str:
    """The script a query is held to: kana, Hangul, Han or Cyrillic when it has any (in that
    order), else Latin (also for scripts without probes of their own)."""
    if not text.isascii():
        for name, pattern in _QUERY_SCRIPT:
            if pattern.search(text):
                return name
    return "latin"


def _entry(record: dict, script: str) -> dict | None:
    return record if script == "latin" else (record.get("scripts") or {}).get(script)


def floor_for(record: dict | None, query: str) -> float | None:
    """The floor a vector hit for `query` must clear: its script's; a script the record has not
    measured (another agent's vault in team search) takes the highest floor it has."""
    if record is None:
        return None
    entry = _entry(record, script_of(query))
    if entry is not None:
        return entry["floor"]
    return max([record["floor"], *(e["floor"] for e in (record.get("scripts") or {}).values())])


def near_floor(floor: float | None, query: str) -> float | None:
    """The cosine above which a chunk that only an expansion term reaches is a match all the same
    (two weak signals agreeing, memcli.retrieval.rank): AGREE under a Latin query's floor. None
    for another script, whose floor nonsense already reaches (the model cannot tell them apart)."""
    return floor - AGREE if floor is not None and script_of(query) == "latin" else None


def missing(record: dict | None, query: str) -> dict[str, list[str]]:
    """{script: probes} a search must embed with its query: the Latin ones when the space has
    no floor yet, and those of the query's script when it is not measured."""
    script = script_of(query)
    need = ["latin"] if record is None else []
    if script != "latin" and (record is None or _entry(record, script) is None):
        need.append(script)
    return {s: noise_probes(s) for s in need}


def held_scripts(matrix, skip=()) -> set[str]:
    """The scripts (other than Latin) in the text of the segments with vectors not in `skip`."""
    found: set[str] = set()
    for seg, vs in matrix.parts:
        if vs is None or seg.name in skip:
            continue
        text = seg.snap.raw("text")
        if not text.tobytes().isascii():
            found.update(name for name, pattern in _HELD if name not in found and pattern.search(text))
        seg.snap.release_pages()
    return found


def record_of(space: dict, probe_vecs: dict, matrix, old: dict | None, held: set[str] | None = None) -> dict:
    """The record of `space`: each script of `probe_vecs` measured against `matrix` (from the
    part of `old` it brings up to date), the other scripts `old` has kept as they were; `held`:
    the scripts a scan of the segments `old` had not seen found (None: no scan was made)."""
    latin = noise_record(space, probe_vecs["latin"], matrix, old) if "latin" in probe_vecs else dict(old or {})
    scripts = dict((old or {}).get("scripts") or {})
    for script, vecs in probe_vecs.items():
        if script != "latin":
            entry = noise_record(space, vecs, matrix, scripts.get(script), cap=None)
            scripts[script] = {k: v for k, v in entry.items() if k not in ("version", "space")}
    latin["scripts"] = scripts
    latin.pop("held", None)
    if held is not None:
        latin["held"] = sorted(set((old or {}).get("held", ())) | held)
    elif old is not None and "held" in old:
        latin["held"] = old["held"]
    return latin


def keep(ws: Workspace, space: dict, old: dict | None, probe_vecs: dict, matrix) -> dict:
    """The record with the floors a search just measured from its own request, kept (a
    read-only workspace measures them again next time)."""
    record = record_of(space, probe_vecs, matrix, old)
    try:
        save_noise(ws.metadata, record)
    except OSError:
        pass
    return record


def outdated(record: dict | None) -> bool:
    """No record, or one from before the vault's scripts were looked for."""
    return record is None or "held" not in record


def measure_noise(ws: Workspace, space: dict, embed_batch, batch_size: int, view) -> dict | None:
    """Measure and keep the noise floors of `space` against its matrix in `view` (the index as
    it is now, memcli.index.embed opens it): Latin, each script the vault holds and each the
    record has; the probes are embedded once per space and script. Rewritten only when a floor
    changed. None when the space has no vectors or the provider failed (the next run or search
    measures it)."""
    import numpy as np

    matrix = vectors.open_vectors(view, space, ws.settings.chunking.passage_tokens)
    if matrix is None or not matrix.usable:
        return None
    old = load_noise(ws.metadata, space)
    held = held_scripts(matrix, skip=set(old.get("segments", ())) if old and "held" in old else ())
    probe_vecs, texts = {}, []
    for script in ["latin", *sorted(held | set((old or {}).get("scripts") or {}) | set((old or {}).get("held", ())))]:
        entry = _entry(old, script) if old else None
        kept = noise_vectors(entry, int(space["dims"])) if entry else None
        if kept is None:
            texts += [(script, t) for t in noise_probes(script)]
        else:
            probe_vecs[script] = kept
    if texts:
        size = batch_size if batch_size > 0 else len(texts)
        try:
            rows = np.vstack([embed_batch([t for _, t in texts[i : i + size]]) for i in range(0, len(texts), size)])
        except ProviderError:
            return None
        for script in dict.fromkeys(s for s, _ in texts):
            probe_vecs[script] = rows[[i for i, (s, _) in enumerate(texts) if s == script]]
    record = record_of(space, probe_vecs, matrix, old, held)
    if old is None or _summary(old) != _summary(record):
        save_noise(ws.metadata, record)
    return record


def _summary(record: dict) -> list:
    """What a rewrite of the record is for: each script's floor and what it was measured on."""
    keys = ("floor", "measured", "passages", "segments")
    return [
        [record.get(k) for k in keys],
        record.get("held"),
        {s: [e.get(k) for k in keys] for s, e in (record.get("scripts") or {}).items()},
    ]
