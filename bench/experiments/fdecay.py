"""fdecay=<f>: soft per-file diversity (passage tuning). Applied by `hits`, after merging.

The n-th hit of a file has its score times f^(n-1), for more distinct sessions in the
list. LoCoMo, session nDCG@10 / turn R@5: on the previous default f 0.9 0.813 / 0.833,
0.75 0.815 / 0.830, 0.5 0.817 / 0.824 (against 0.811 / 0.832); on the shipped default 0.7
0.828 / 0.846 (against 0.822 / 0.849); pydoc 0.7 section R@5 0.836 vs 0.872. A session-level
gain paid for at turn level (a session's second hit often holds the evidence); not shipped.
"""

from __future__ import annotations


def file_decay(hits, factor: float):
    seen: dict[str, int] = {}
    scored = []
    for i, h in enumerate(hits):
        n = seen.get(h.path, 0)
        seen[h.path] = n + 1
        scored.append((-(h.score * factor**n), i, h))
    return [h for _, _, h in sorted(scored)]
