"""recency=<half-life days>: recency decay of the scores (keyword tuning). Applied by `hits`.

Score x 0.5^(age / half-life), age in days before the vault's newest note (the note's
date from its path). Harmful on LoCoMo, whose questions ask about any point of a
year-long conversation: stem+stop keyword side, half-life 30 days session nDCG@10 0.456
/ turn R@5 0.528, 180 days 0.745 / 0.774, against 0.810 / 0.827 without. Off.
"""

from __future__ import annotations

import datetime as dt
import re

from bench.harness.context import Ctx


def recency(hits, half_life: float):
    if not Ctx.now:
        return hits
    now = dt.date.fromisoformat(Ctx.now)
    for h in hits:
        m = re.search(r"(\d{4}-\d{2}-\d{2})", h.path)
        if m:
            age = max(0, (now - dt.date.fromisoformat(m.group(1))).days)
            h.score *= 0.5 ** (age / half_life)
    return sorted(hits, key=lambda h: -h.score)
