#!/usr/bin/env python3
"""The vector margin of each semantic-set target with and without the query's recall framing.

    python bench/experiments/framing_margins.py

Embeds every note of bench/semantic_set/set.json whole (one line each) with the default local
model, then each query as it is and as memcli.retrieval.framing.topic leaves it. Prints, per
query, the target's lead over the next note (negative: another note is first). JSON on stdout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]  # its tokenizers.py is not the library
sys.path.insert(0, str(ROOT))


def main() -> int:
    import numpy as np

    from memcli.providers.embedding.local import LocalEmbedder
    from memcli.retrieval.framing import topic

    data = json.loads((ROOT / "bench/semantic_set/set.json").read_text(encoding="utf-8"))
    emb = LocalEmbedder({})
    ids = list(data["notes"])

    def unit(rows):
        rows = np.asarray(rows, dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=-1, keepdims=True)

    notes = unit(emb.embed_batch([data["notes"][i] for i in ids]))
    out = []
    for q in data["queries"]:
        row = {"id": q["id"], "query": q["query"], "topic": topic(q["query"])}
        for key in ("query", "topic"):
            s = notes @ unit(emb.embed_batch([row[key]])[0])
            t = ids.index(q["target"])
            row[f"lead_{key}"] = round(float(s[t] - np.max(np.delete(s, t))), 3)
        out.append(row)
        print(f"{row['lead_query']:+.3f} {row['lead_topic']:+.3f}  {q['query']}", file=sys.stderr)
    json.dump(out, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
