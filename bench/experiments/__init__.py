"""Named experiments: the sweeps (sweeps.py) and the code-level prototypes (one module each).

A prototype is an idea memcli does not ship (or did not when it was measured), applied
by patching memcli *inside the benchmark process only*. `--variant` takes a comma list
of key=value parts; each key belongs to the module listed in PROTOTYPES, whose docstring
says what it tried and what docs/evaluation.md recorded for it:

    tok=stem|lightstem|stop|stopq|stem+stop|...   tokenizers   (keyword tuning)
    k1=<f>, b=<f>                                 bm25_params  (keyword and passage tuning)
    prf=<docs>:<terms>:<beta>                     prf          (keyword tuning)
    fileprior=<gamma>                             fileprior    (keyword tuning)
    bi=<w>                                        bigram       (passage tuning)
    vprf=<docs>:<beta>                            vprf         (passage tuning)
    qx=<n>:<cos>:<w>                              qx           (passage tuning; ships as search.expand_*)
    ksub=<tokens>:<beta>                          ksub         (passage tuning)
    vpass=<tokens>                                vpass        (passage tuning; ships as chunking.passage_tokens)
    vsub=<tokens>                                 vsub         (keyword tuning)
    fuse=minmax|maxnorm|zscore, qdw=rare:<f>:<w>|len:<n>:<w>   fuse   (keyword tuning; min-max ships)
    merge=on|off|drop|cap<x>|capkeep<x>|perfile<n>             merging (keyword tuning; capkeep1.5 ships)
    qcov=<covered>:<partial>:<weak>               qcov         (adaptive fusion; ships in search.fusion: adaptive)
    mmr=<lambda>, recency=<half-life days>, fdecay=<f>         mmr, recency, fdecay

With no variant the shipped code runs. To add one: a module with `install(spec, patch)`
(patch.set(module, name, value) for every memcli attribute it replaces), an entry in
PROTOTYPES and INSTALL_ORDER, and a row in a sweep (sweeps.py).
"""

from __future__ import annotations

import contextlib

from bench.experiments import (
    bigram,
    bm25_params,
    fdecay,
    fileprior,
    fuse,
    hits,
    ksub,
    merging,
    mmr,
    prf,
    qcov,
    qx,
    recency,
    tokenizers,
    vpass,
    vprf,
    vsub,
)

# variant key -> the module prototyping it
PROTOTYPES = {
    "tok": tokenizers,
    "k1": bm25_params,
    "b": bm25_params,
    "prf": prf,
    "fileprior": fileprior,
    "bi": bigram,
    "vprf": vprf,
    "qx": qx,
    "ksub": ksub,
    "vpass": vpass,
    "vsub": vsub,
    "fuse": fuse,
    "qdw": fuse,
    "qcov": qcov,
    "merge": merging,
    "mmr": mmr,
    "recency": recency,
    "fdecay": fdecay,
}
# installed in this order, each wrapping what the ones before it put in place; `hits` is the
# post-fusion stage (recency, MMR, merge rule, file decay) built from the last four modules
INSTALL_ORDER = (tokenizers, bm25_params, prf, fileprior, bigram, vprf, qx, ksub, vpass, vsub, fuse, qcov, hits)


def parse_variant(text: str) -> dict:
    """`key=value,key=value` as a spec dict (in the order given)."""
    spec: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        key, _, value = part.partition("=")
        if key not in PROTOTYPES:
            raise SystemExit(f"unknown variant part {part!r}")
        spec[key] = value
    return spec


class Patch:
    """memcli attributes replaced for one variant, put back (last first) afterwards."""

    def __init__(self):
        self.saved: list[tuple[object, str, object]] = []

    def set(self, obj, name: str, value) -> None:
        self.saved.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)

    def restore(self) -> None:
        while self.saved:
            obj, name, value = self.saved.pop()
            setattr(obj, name, value)


@contextlib.contextmanager
def patched(spec: dict):
    """Apply a variant spec to memcli in this process; restore everything afterwards."""
    patch = Patch()
    try:
        for module in INSTALL_ORDER:
            if any(PROTOTYPES.get(key) is module for key in spec) or module is hits:
                module.install(spec, patch)
        yield
    finally:
        patch.restore()
