"""Currency: which dated statement a newer one supersedes (derived state, docs/currency.md).

Built by every sync (`mem reindex`, the sync before a search, ingest, watch): the notes whose
stat changed are read again (a dated note's statements, an undated note's lines citing a dated
note), their claims (memcli.index.currency.subjects) kept per file in
`mem_metadata/currency/claims.json`, and the relations worked out again over all of them into
`mem_metadata/currency/relations.json`, the small file a search reads (`load`, here: a search
imports nothing more). The Markdown is never touched; deleting the folder only makes the next
sync read the dated notes again. Writing it is memcli.index.currency.update.

Order is the note's date (its path), then its modification time, then the line. A claim
supersedes the live claims of the same subject with another value; one with the same value
is a restatement and supersedes nothing. A claim naming its previous value ("instead of
9:30", "from Helix to Zed") also supersedes any older statement that names the subject and
that value; one giving a thing up ("the pegasus are retired") the older statements holding it.
"""

from __future__ import annotations

import json
from pathlib import Path

VERSION = 20  # 4: glosses read apart, CJK claims' English words, things adopted; 5: speakers; 6: vocab; 7: its shards; 8: shifts; 9: a change naming only its values; 10: "done with"; 11: "the old hilux"; 12: lead-ins, "X says", "from next monday", "5:30 not 6"; 13: a possessive is its noun; 14: a number written onto letters is a name; 15: someone in a role; 16: a change meets a frame ending in its word;
# 17: frames of an event verb need another shared word; 18: a list step's number and a unit alone set nothing;
# 19: a digest's History and its copies of the notes it cites relate nothing, nor one note's frames of one word;
# 20: a unit after a number is the value's, a number changed needs a shared word, a digit ties no frames


def folder(metadata: Path) -> Path:
    return metadata / "currency"


def read_state(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("version") == VERSION else None


def outdated(metadata: Path) -> bool:
    """The relations were written by another version of these rules, or never: the next sync
    must work them out again even when no note changed (a search after an upgrade would
    otherwise rank without them). Reads only the file's first bytes: `update` writes the
    version first."""
    try:
        with (folder(metadata) / "relations.json").open("rb") as f:
            head = f.read(32)
    except OSError:
        return True
    return not head.startswith(f'{{"version": {VERSION},'.encode())


def load(metadata: Path) -> dict[str, list[dict]]:
    """path -> its superseded statements ({line, text, subject, value, by, current}); {} when
    nothing was built yet."""
    data = read_state(folder(metadata) / "relations.json")
    got = (data or {}).get("superseded")
    return got if isinstance(got, dict) else {}
