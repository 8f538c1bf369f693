"""LoCoMo (locomo10.json, CC BY-NC 4.0, Maharana et al., ACL 2024) converted into vaults.

One note per session, `memory/<session date>/<conv>-session-<n>.md`, one line per turn
carrying its dialog id (`[D1:3] Caroline: ...`, image captions kept as `[image: ...]`),
so each evidence id is a file line. Questions: categories 1-4 with evidence.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

from bench.harness.vaults import Question, Vault, write_if_changed

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
NOTICE = (
    "Derived from LoCoMo (snap-research/LoCoMo, data/locomo10.json), CC BY-NC 4.0 (LICENSE.txt).\n"
    "Maharana, Lee, Tulyakov, Bansal, Barbieri, Fang. Evaluating Very Long-Term Conversational Memory\n"
    "of LLM Agents. ACL 2024 (arXiv:2402.17753). Converted by bench/locomo.py; not for commercial use.\n"
)


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


def convert(
    locomo: Path, out: Path, *, one_vault: bool, conversations: int | None = None, stats: dict | None = None
) -> list[Vault]:
    """The vaults (one per conversation, or one for all) under out/vaults, with their questions."""
    data = json.loads(locomo.read_text(encoding="utf-8"))
    if conversations:
        data = data[:conversations]
    vaults: list[Vault] = []
    shared = Vault("all", out / "vaults" / "all") if one_vault else None
    st = stats if stats is not None else {}
    st.update(conversations=len(data), sessions=0, turns=0, questions=0, excluded_no_evidence=0, dropped_evidence_ids=0)
    for conv in data:
        vault = shared or Vault(conv["sample_id"], out / "vaults" / conv["sample_id"])
        where = _write_sessions(conv, vault, st)
        _add_questions(conv, vault, where, st)
        if shared is None:
            vaults.append(vault)
    if shared is not None:
        vaults.append(shared)
    license_src = locomo.parent / "LICENSE.txt"
    if license_src.exists():  # CC BY-NC 4.0: the license and attribution travel with derived data
        shutil.copyfile(license_src, out / "LICENSE.txt")
        write_if_changed(out / "NOTICE.txt", NOTICE)
    return vaults


def _write_sessions(conv: dict, vault: Vault, st: dict) -> dict[str, tuple[str, int, int]]:
    """Write one note per session; returns dialog id -> (note path, line, line)."""
    cid, c = conv["sample_id"], conv["conversation"]
    where: dict[str, tuple[str, int, int]] = {}
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
    return where


def _add_questions(conv: dict, vault: Vault, where: dict, st: dict) -> None:
    cid = conv["sample_id"]
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
