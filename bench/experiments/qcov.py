"""qcov=<covered>:<partial>:<weak>[:<margin low>:<margin high>]: the query-dependent vector weight of the calibrated fusion
(memcli.retrieval.fusion.weak_keyword_weight, shipped as COVERED, PARTIAL,
WEAK_WEIGHT, MARGIN_LOW, MARGIN_HIGH). A query whose best keyword chunk covers at least `covered` of its BM25 ideal
keeps search.vector_weight; at most `partial`, the vector branch weighs `weak`; linear
between; and that raise scaled by how clearly the vector branch's best note leads the
next (0 below `margin low`, full from `margin high`; 0:0 = no margin condition). Runs with
search.fusion adaptive (the default). Before the margin condition and with BM25 scaled to
the query's ideal instead of the best candidate (no longer in memcli), LoCoMo lost 0.004-0.009
turn R@5 (docs/evaluation.md). Results: docs/evaluation.md, "Fusion".
"""

from __future__ import annotations


def install(spec: dict, patch) -> None:
    from memcli.retrieval import fusion

    if "qcov" in spec:
        parts = [float(x) for x in spec["qcov"].split(":")]
        for name, value in zip(("COVERED", "PARTIAL", "WEAK_WEIGHT", "MARGIN_LOW", "MARGIN_HIGH"), parts):
            patch.set(fusion, name, value)
