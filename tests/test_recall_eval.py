"""The recall set (bench/recall_set) and its bench (bench/recall_eval.py): the set is sound, the
checker finds what breaks a set, hits map to sessions, and the bench runs mem's loop end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.harness import recall_data, recall_score  # noqa: E402

DEV = REPO / "bench" / "recall_set" / "dev"


@pytest.mark.parametrize("name", ["dev", "dev2", "dev3"])
def test_the_tuning_sets_are_consistent_and_as_large_as_promised(name):
    rs = recall_data.load(DEV.parent / name)
    assert recall_data.check(rs) == []
    c = recall_data.counts(rs)
    assert c["sessions"] >= 32 and 7 <= c["filler"] <= 10 and c["cjk_sessions"] >= 4
    assert c["questions"] >= 60 and set(c["kinds"]) == set(recall_data.KINDS)
    assert c["changing_facts"] >= 12 and c["changed_twice"] >= 2
    assert c["kinds"]["update"] == c["changing_facts"]
    dream = rs.dream
    facts = [f for n in dream["notes"] for f in n["facts"]]
    assert len(facts) >= 24 and len({f["subject"] for f in facts}) >= 6
    assert sum("supersedes" in f for f in facts) >= 3 and sum("restates" in f for f in facts) >= 3
    assert sum("decoy" in f for f in facts) >= 4
    ids = {f["id"] for f in facts}
    assert all(f.get("supersedes", f["id"]) in ids and f.get("restates", f["id"]) in ids for f in facts)


def _session(root: Path, sid: str, day: str, lines: list[str], filler: bool = False) -> None:
    msgs = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": t, "created_at": f"{day}T09:0{i}:00+00:00"}
        for i, t in enumerate(lines)
    ]
    (root / "sessions").mkdir(parents=True, exist_ok=True)
    (root / "sessions" / f"{sid}.json").write_text(
        json.dumps({"session_id": sid, "date": day, "filler": filler, "messages": msgs}), encoding="utf-8"
    )


def _tiny_set(root: Path, questions: list[dict], updates: list[dict] | None = None) -> Path:
    _session(
        root,
        "s1",
        "2026-03-02",
        [
            "I switched to Helix last week, VS Code was too slow.",
            "Helix is a fast modal editor; want a config for Python?",
            "yes please, with ruff as the formatter",
            "Here it is: formatter = ruff.",
        ],
    )
    _session(
        root,
        "s2",
        "2026-03-02",
        ["write a limerick about a cat", "A cat with a hat sat on a mat.", "lol thanks", "Any time!"],
        filler=True,
    )
    _session(
        root,
        "s3",
        "2026-03-03",
        [
            "I left Helix, I'm on Zed now because Helix has no plugins.",
            "Zed has a vim mode and extensions.",
            "vim mode on, theme catppuccin",
            'Set "vim_mode": true in settings.json.',
        ],
    )
    (root / "questions.yaml").write_text(yaml.safe_dump(questions), encoding="utf-8")
    (root / "updates.yaml").write_text(yaml.safe_dump(updates or []), encoding="utf-8")
    return root


EDITOR = {
    "id": "q1",
    "kind": "update",
    "question": "Which code editor does the user use now?",
    "answer": "Zed",
    "evidence": ["s3"],
    "superseded": ["s1"],
}
EDITOR_UPDATE = {
    "subject": "editor",
    "question": "q1",
    "values": [{"value": "Helix", "session": "s1"}, {"value": "Zed", "session": "s3"}],
}


def test_the_checker_finds_what_breaks_a_set(tmp_path):
    good = _tiny_set(tmp_path / "good", [EDITOR], [EDITOR_UPDATE])
    assert recall_data.check(recall_data.load(good)) == []
    bad = _tiny_set(
        tmp_path / "bad",
        [
            {**EDITOR, "answer": "Neovim"},  # answer not there
            {"id": "q2", "kind": "single-fact", "question": "Formatter?", "answer": "ruff", "evidence": ["s9"]},
            {
                "id": "q3",
                "kind": "paraphrase",
                "question": "Which vim plugins now?",
                "answer": "zed",
                "evidence": ["s3"],
            },  # shares two words
            {
                "id": "q4",
                "kind": "preference",
                "question": "What did the user ask for?",
                "answer": "limerick",
                "evidence": ["s2"],
            },  # filler as evidence
            {
                "id": "q5",
                "kind": "update",
                "question": "Editor?",
                "answer": "Helix",
                "evidence": ["s1"],
                "superseded": ["s3"],
            },
        ],  # superseded is newer
        [
            {
                "subject": "editor",
                "question": "q1",
                "values": [{"value": "Zed", "session": "s3"}, {"value": "Helix", "session": "s1"}],
            }
        ],
    )
    problems = "\n".join(recall_data.check(recall_data.load(bad)))
    for expected in (
        "q1: answer 'Neovim' is in no evidence session",
        "q2: no evidence, or unknown sessions ['s9']",
        "q3: paraphrase shares ['plugin', 'vim']",
        "q4: a filler session is evidence",
        "q5: a superseded session is not older",
        "values not in date order",
        "q5: an update question without an updates.yaml entry",
    ):
        assert expected in problems, problems


def test_hits_stand_for_the_sessions_of_the_notes_they_are_or_link(tmp_path):
    (tmp_path / "memory" / "2026-03-02").mkdir(parents=True)
    (tmp_path / "digest" / "wiki").mkdir(parents=True)
    (tmp_path / "memory" / "2026-03-02" / "helix.md").write_text("---\nsession_id: s1\n---\n- User: Helix\n")
    (tmp_path / "memory" / "2026-03-02" / "zed.md").write_text("---\nsession_id: s3\nname: zed\n---\n- User: Zed\n")
    (tmp_path / "memory" / "2026-03-02.md").write_text(
        "---\nname: '2026-03-02'\n---\n- [[memory/2026-03-02/helix.md]] x\n- [[memory/2026-03-02/zed.md]] y\n"
    )
    (tmp_path / "digest" / "wiki" / "editor.md").write_text(
        "# Editor\n\n- Zed ([[memory/2026-03-02/zed.md]])\n\n## Sources\n- [[memory/2026-03-02/helix.md]]\n"
    )
    ws = recall_score.Workspace(tmp_path)
    assert ws.sessions_of_hit("memory/2026-03-02/zed.md", "- User: Zed") == ["s3"]
    assert ws.sessions_of_hit("memory/2026-03-02.md", "- [[memory/2026-03-02/zed.md]] y") == ["s3"]
    assert ws.sessions_of_hit("digest/wiki/editor.md", "# Editor") == ["s3", "s1"]  # no link in the chunk: the file's
    ranks = recall_score.session_ranks([["s3", "s1"], ["s1"]])
    tie = recall_score.score_question(EDITOR, ranks, ["zed here"])
    assert tie["rank"] == 1 and tie["tie"] and not tie["latest_first"] and tie["answer_top5"]
    first = recall_score.score_question(
        EDITOR, recall_score.session_ranks([["s2"], ["s3"]]), ["", "", "", "", "", "Zed"]
    )
    assert first["rank"] == 2 and first["latest_first"] and not first["answer_top5"]  # s1 outside the top: below
    agg = recall_score.aggregate([tie, first])["all"]
    assert agg["R@1"] == 0.5 and agg["MRR@10"] == 0.75 and agg["latest_first"] == 0.5 and agg["latest_first_ties"] == 1


def test_the_bench_runs_mems_loop_through_the_cli(tmp_path):
    root = _tiny_set(
        tmp_path / "set",
        [
            EDITOR,
            {
                "id": "q2",
                "kind": "preference",
                "answer": "ruff",
                "question": "Which formatter does the user want?",
                "evidence": ["s1"],
            },
        ],
        [EDITOR_UPDATE],
    )
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "recall_eval.py"),
            "--set",
            str(root),
            "--details",
            "--keep",
            str(tmp_path / "ws"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["problems"] == [] and doc["dream_set"] is None
    for part in ("ingest", "dream"):
        res = doc[part]
        assert res["kept"]["notes"] >= 2 and res["all"]["n"] == 2
        assert all(0 <= res["all"][k] <= 1 for k in ("R@1", "R@5", "MRR@10", "answer_in_top5", "latest_first"))
        assert {q["id"] for q in res["questions"]} == {"q1", "q2"}
        assert res["seconds"]["ingest"] > 0 and res["seconds"]["search"] > 0
    assert doc["dream"]["nights"]["count"] == 2  # every day from the first session's to the last
    nodes = list((tmp_path / "ws" / "dream" / "digest").rglob("*.md"))
    assert doc["dream"]["digest"]["nodes"] == len(nodes)
    assert not list((tmp_path / "ws" / "ingest" / "digest").rglob("*.md"))  # no dream in that one
    notes = [p for p in (tmp_path / "ws" / "ingest" / "memory").rglob("*.md") if p.parent.name != "memory"]
    assert {recall_score.frontmatter(p.read_text())["session_id"] for p in notes} >= {"s1", "s3"}


def test_latest_first_inside_one_hit_follows_the_order_of_its_links():
    """A digest node that states the current value first and the old one under History puts the
    current session first; the same node listing the old note first does not."""
    q = {"id": "q", "kind": "update", "answer": "1:52", "evidence": ["s15"], "superseded": ["s04"]}
    for per_hit, first in (([["s15", "s04"], ["s07"]], True), ([["s04", "s15"]], False)):
        row = recall_score.score_question(
            q, recall_score.session_ranks(per_hit), ["goal 1:52"], recall_score.session_order(per_hit)
        )
        assert (row["rank"], row["tie"], row["latest_first"]) == (1, True, first)
    # without the order, one hit standing for both is no latest-first
    assert not recall_score.score_question(q, {"s15": 1, "s04": 1}, [""])["latest_first"]


def test_both_halves_of_a_set_are_reported():
    rows = [
        {"id": f"q{i}", "kind": "update" if i < 2 else "single-fact", "rank": 1 if i % 2 else 3, "answer_top5": True}
        | ({"latest_first": i == 1, "tie": False, "superseded_rank": None} if i < 2 else {})
        for i in range(4)
    ]
    halves = recall_score.aggregate(rows)["by_half"]
    assert halves["tune"]["R@1"] == 0.0 and halves["held_back"]["R@1"] == 1.0
    assert (halves["tune"]["latest_first"], halves["held_back"]["latest_first"]) == ("0/1", "1/1")
