"""The post-fusion stage of a variant: recency, then MMR, then the merge rule, then file decay.

memcli.retrieval.fusion.merge is replaced when any of merge= (other than on), mmr=,
recency= or fdecay= is given; the steps are the prototypes of recency.py, mmr.py,
merging.py and fdecay.py.
"""

from __future__ import annotations

from bench.experiments.fdecay import file_decay
from bench.experiments.merging import merge_variant
from bench.experiments.mmr import mmr_order
from bench.experiments.recency import recency


def install(spec: dict, patch) -> None:
    from memcli.retrieval import fusion

    how = spec.get("merge", "on")
    lam = float(spec["mmr"]) if "mmr" in spec else None
    half = float(spec["recency"]) if "recency" in spec else None
    fdecay = float(spec["fdecay"]) if "fdecay" in spec else None
    if how == "on" and lam is None and half is None and fdecay is None:
        return
    shipped = fusion.merge

    def merge(snap, hits, *rest):
        if half is not None:
            hits = recency(hits, half)
        if lam is not None:
            hits = mmr_order(snap, hits, lam)
        if how == "on":
            hits = shipped(snap, hits, *rest)
        elif how != "off":
            hits = merge_variant(snap, hits, how)
        if fdecay is not None:
            hits = file_decay(hits, fdecay)
        return hits

    patch.set(fusion, "merge", merge)
