"""Scoring one question's hit lists, and averaging over questions (overall, per category).

@5 numbers come from a `--limit 5` search and @10 from a `--limit 10` search (what a
user gets; the candidate pool grows with the limit).
  session level  item = a session (note) holding evidence; a hit finds its file's session;
  turn level     item = an evidence turn (section); a hit finds the evidence lines inside
                 start_line..end_line, but only if those lines hold at most the budget
                 (TURN_BUDGET, 600 estimated tokens), so returning whole files is not rewarded.
  Recall@k = found items / items; MRR@10 = 1 / rank of the first hit finding one;
  nDCG@10 with gain = items newly found by a hit, ideal = the best order any list of
  hits within the budget could reach.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from bench.harness.vaults import Question

# A hit counts at turn level only if the lines it returns hold at most this many estimated
# tokens (len // 4 + 1 per line, memcli's chunking estimate frozen here): 1.5 x the 400-token
# chunk of the baseline. On LoCoMo that is ~15 turn lines; every single 400-token chunk fits,
# two neighbours merged into one hit do not.
TURN_BUDGET = 600
KS = (5, 10)
METRICS = [
    "session_R@5",
    "session_R@10",
    "session_nDCG@10",
    "session_MRR@10",
    "turn_R@5",
    "turn_R@10",
    "turn_nDCG@10",
    "turn_MRR@10",
    "lines@5",
    "tokens@5",
]


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
            found = {e for e in ev if e[0] == path and a <= e[2] and e[1] <= b} if cost(path, a, b) <= budget else set()
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


def aggregate(rows: list[tuple[int, dict]], categories: dict[int, str]) -> dict:
    """Mean of every metric over the questions: overall and per category."""
    groups: dict[str, list[dict]] = {"overall": [r for _, r in rows]}
    for cat in categories:
        groups[str(cat)] = [r for c, r in rows if c == cat]
    return {
        g: {"n": len(rs), **{m: round(statistics.fmean(r[m] for r in rs), 4) for m in METRICS}}
        for g, rs in groups.items()
        if rs
    }
