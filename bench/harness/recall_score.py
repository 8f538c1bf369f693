"""Scoring a recall run: which session each search hit stands for, and the metrics.

A hit is a file of the workspace. A daily note written by `mem ingest` names its session in
its frontmatter (`session_id`); the day page (memory/<date>.md) and a digest node stand for
the sessions whose notes they link (the links in the hit's text, else every link of the
file): an agent that reads the hit follows them. Each session takes the rank of the first
hit that stands for it, so one hit may give several sessions the same rank. Inside one hit the
sessions keep the order of their links (a digest node states what is true now first and its
`## History` below): latest-first compares (rank, position), so a node that puts the current
value above the superseded one counts as putting it first; `tie` still says that one hit
stands for both.
"""

from __future__ import annotations

import re
from pathlib import Path

KS = (1, 5, 10)
_LINK = re.compile(r"\[\[(memory/[^\]|#]+?\.md)")


def frontmatter(text: str) -> dict:
    import yaml

    if not text.startswith("---\n"):
        return {}
    end = text.find("\n---", 4)
    try:
        meta = yaml.safe_load(text[4:end]) if end > 0 else None
    except yaml.YAMLError:
        return {}
    return meta if isinstance(meta, dict) else {}


class Workspace:
    """The notes of a workspace after a run: each note's session, the digest nodes."""

    def __init__(self, root: Path):
        self.root = root
        self.note_session: dict[str, str] = {}
        self.texts: dict[str, str] = {}
        for path in sorted((root / "memory").rglob("*.md")):
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            self.texts[rel] = text
            sid = frontmatter(text).get("session_id")
            if sid:
                self.note_session[rel] = str(sid)
        self.nodes = (
            {
                p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
                for p in sorted((root / "digest").rglob("*.md"))
            }
            if (root / "digest").is_dir()
            else {}
        )

    def notes_of(self, session: str) -> list[str]:
        return [p for p, s in self.note_session.items() if s == session]

    def linked_sessions(self, text: str) -> list[str]:
        out: list[str] = []
        for link in _LINK.findall(text):
            sid = self.note_session.get(link)
            if sid and sid not in out:
                out.append(sid)
        return out

    def sessions_of_hit(self, path: str, text: str) -> list[str]:
        if path in self.note_session:
            return [self.note_session[path]]
        found = self.linked_sessions(text)
        if found:
            return found
        whole = self.texts.get(path) or self.nodes.get(path)
        if whole is None and (self.root / path).is_file():
            whole = (self.root / path).read_text(encoding="utf-8")
        return self.linked_sessions(whole or "")


def session_ranks(sessions_per_hit: list[list[str]]) -> dict[str, int]:
    ranks: dict[str, int] = {}
    for rank, sessions in enumerate(sessions_per_hit, 1):
        for s in sessions:
            ranks.setdefault(s, rank)
    return ranks


def session_order(sessions_per_hit: list[list[str]]) -> dict[str, tuple[int, int]]:
    """session -> (rank of its first hit, position among that hit's sessions)."""
    out: dict[str, tuple[int, int]] = {}
    for rank, sessions in enumerate(sessions_per_hit, 1):
        for i, s in enumerate(sessions):
            out.setdefault(s, (rank, i))
    return out


def score_question(
    q: dict, ranks: dict[str, int], top_texts: list[str], order: dict[str, tuple[int, int]] | None = None
) -> dict:
    """One question's outcome: the best evidence rank, hits at k, latest-first, the answer in the top 5.
    `order` (session_order): latest-first within one hit by the order of its links."""
    ev = [ranks[s] for s in q["evidence"] if s in ranks]
    best = min(ev) if ev else None
    row = {
        "id": q["id"],
        "kind": q["kind"],
        "rank": best,
        "answer_top5": any(str(q["answer"]).lower() in t.lower() for t in top_texts[:5]),
    }
    if q["kind"] == "update":
        sup = [ranks[s] for s in q.get("superseded") or [] if s in ranks]
        row["superseded_rank"] = min(sup) if sup else None
        if order is None:
            row["latest_first"] = best is not None and all(r > best for r in sup)
        else:
            first = min((order[s] for s in q["evidence"] if s in order), default=None)
            row["latest_first"] = first is not None and all(
                order[s] > first for s in q.get("superseded") or [] if s in order
            )
        row["tie"] = best is not None and best in sup
    return row


def aggregate(rows: list[dict]) -> dict:
    def summary(rs: list[dict]) -> dict:
        n = len(rs)
        out = {"n": n}
        for k in KS[:2]:
            out[f"R@{k}"] = round(sum(r["rank"] is not None and r["rank"] <= k for r in rs) / n, 3) if n else None
        out["MRR@10"] = (
            round(sum(1 / r["rank"] for r in rs if r["rank"] is not None and r["rank"] <= 10) / n, 3) if n else None
        )
        out["answer_in_top5"] = round(sum(r["answer_top5"] for r in rs) / n, 3) if n else None
        return out

    total = summary(rows)
    # a set tuned on may hold half of its questions back: those at odd positions of questions.yaml
    # (bench/recall_set/README.md); both halves are reported for every set
    halves = {"tune": rows[0::2], "held_back": rows[1::2]}
    updates = [r for r in rows if r["kind"] == "update"]
    if updates:
        total["latest_first"] = round(sum(r["latest_first"] for r in updates) / len(updates), 3)
        total["latest_first_ties"] = sum(r["tie"] for r in updates)
    total["missed_at_5"] = [r["id"] for r in rows if r["rank"] is None or r["rank"] > 5]
    total["not_latest_first"] = [r["id"] for r in updates if not r["latest_first"]]
    kinds = sorted({r["kind"] for r in rows})

    def with_latest(rs: list[dict]) -> dict:
        out = summary(rs)
        ups = [r for r in rs if r["kind"] == "update"]
        out["latest_first"] = f"{sum(r['latest_first'] for r in ups)}/{len(ups)}"
        return out

    return {
        "all": total,
        "by_kind": {k: summary([r for r in rows if r["kind"] == k]) for k in kinds},
        "by_half": {name: with_latest(part) for name, part in halves.items() if part},
    }


def kept(rs, ws: Workspace) -> dict:
    """What ingest kept: questions whose answer is in a note of an evidence session, filler sessions with a note."""
    per_kind: dict[str, list[bool]] = {}
    lost = []
    for q in rs.questions:
        texts = [ws.texts[p] for s in q["evidence"] for p in ws.notes_of(s)]
        ok = any(str(q["answer"]).lower() in t.lower() for t in texts)
        per_kind.setdefault(q["kind"], []).append(ok)
        if not ok:
            lost.append(q["id"])
    every = [x for v in per_kind.values() for x in v]
    fillers = [s.id for s in rs.sessions.values() if s.filler]
    noted = [s for s in fillers if ws.notes_of(s)]
    content = [s.id for s in rs.sessions.values() if not s.filler]
    return {
        "answers_kept": round(sum(every) / len(every), 3) if every else None,
        "answers_kept_by_kind": {k: round(sum(v) / len(v), 3) for k, v in sorted(per_kind.items())},
        "answers_lost": lost,
        "sessions_with_note": round(sum(bool(ws.notes_of(s)) for s in content) / len(content), 3) if content else None,
        "filler_with_note": round(len(noted) / len(fillers), 3) if fillers else None,
        "filler_noted": noted,
        "notes": len(ws.note_session),
    }


def digest_summary(rs, ws: Workspace) -> dict:
    """The digest after the nights: nodes, nodes citing only chit-chat, answers that reached a node."""
    filler = {s.id for s in rs.sessions.values() if s.filler}
    chit = []
    for path, body in ws.nodes.items():
        cited = set(ws.linked_sessions(body))
        if cited and cited <= filler:
            chit.append(path)
    in_digest = [q["id"] for q in rs.questions if any(str(q["answer"]).lower() in b.lower() for b in ws.nodes.values())]
    return {
        "nodes": len(ws.nodes),
        "chit_chat_nodes": len(chit),
        "chit_chat": chit,
        "answers_in_digest": round(len(in_digest) / len(rs.questions), 3) if rs.questions else None,
    }
