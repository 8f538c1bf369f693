"""`mem dream` founds a node only for a subject stated at least `dream_min_statements` times
(default 2): a lone statement waits in its note for a second one, then stays there."""

from __future__ import annotations

import json
from pathlib import Path

from test_dream import digest_files, dream, every_statement, session_note

D1, D2, D3, LATE = "2026-06-01", "2026-06-02", "2026-06-03", "2026-07-15"


def state(root: Path) -> dict:
    return json.loads((root / "mem_metadata/dream/state.json").read_text(encoding="utf-8"))


def test_a_lone_statement_waits_and_a_second_one_founds_the_node_with_both(ws, mem):
    session_note(ws, D1, "ride", "s1", {"Facts": ["User: I commute on a Brompton folding bike."]})
    rep = dream(mem, ws, "--date", D1)
    assert rep["results"] == [] and digest_files(ws) == {}
    assert [w["fact"] for w in rep["facts"]["waiting"]] == ["User: I commute on a Brompton folding bike."]
    assert rep["checkpointed"] == [] and f"memory/{D1}/ride.md" in state(ws)["pending"]
    assert list(state(ws)["waiting"]) == [f"memory/{D1}/ride.md"]  # held as a node would be, next night
    code, out, err = mem("-w", ws, "dream", "--date", D2)  # nothing new: the note is read again, still alone
    assert code == 0, err
    assert "- Waiting for a second statement: 1 fact(s) stated once" in out
    session_note(ws, D3, "bike", "s2", {"Facts": ["User: The Brompton folding bike got a new chain."]})
    rep = dream(mem, ws, "--date", D3)
    assert [r["action"] for r in rep["results"]] == ["CREATE"]
    (path, text), *rest = digest_files(ws).items()
    assert rest == [] and "commute" in text and "new chain" in text
    assert f"[[memory/{D1}/ride.md]]" in text and f"[[memory/{D3}/bike.md]]" in text
    assert "pending" not in state(ws) and "waiting" not in state(ws)
    assert sorted(rep["checkpointed"]) == [f"memory/{D1}/ride.md", f"memory/{D3}/bike.md"]


def test_a_statement_never_repeated_stays_in_its_note_after_the_wait(ws, mem):
    session_note(ws, D1, "pun", "s1", {"Facts": ["User: The Kafka consumer limerick made the standup laugh."]})
    assert dream(mem, ws, "--date", D1)["results"] == []
    rep = dream(mem, ws, "--date", LATE)  # 44 days later: the wait (30 days) is over
    assert rep["results"] == [] and digest_files(ws) == {}
    (kept,) = rep["facts"]["kept"]
    assert kept["path"] == f"memory/{D1}/pun.md" and "dream_min_statements (2) within 30 days" in kept["why"]
    assert rep["checkpointed"] == [f"memory/{D1}/pun.md"] and "pending" not in state(ws)
    code, out, _ = mem("-w", ws, "dream", "--date", LATE)
    assert code == 0 and out.startswith("No changed dream input")


def test_two_statements_of_one_note_and_a_statement_joining_a_node_do_not_wait(ws, mem):
    session_note(
        ws,
        D1,
        "tea",
        "s1",
        {
            "Preferences": [
                "User: I prefer Darjeeling oolong tea over coffee.",
                "User: I drink my Darjeeling oolong tea without sugar.",
            ]
        },
    )
    rep = dream(mem, ws, "--date", D1)
    assert [r["action"] for r in rep["results"]] == ["CREATE"] and rep["facts"]["waiting"] == []
    session_note(
        ws, D2, "tea-again", "s2", {"Preferences": ["User: I still prefer Darjeeling oolong tea over coffee."]}
    )
    rep = dream(mem, ws, "--date", D2)
    assert [r["action"] for r in rep["results"]] == ["CORROBORATE"] and rep["facts"]["waiting"] == []
    assert len(digest_files(ws)) == 1


def test_min_statements_one_founds_a_node_for_every_statement(ws, mem):
    every_statement(ws)
    session_note(ws, D1, "ride", "s1", {"Facts": ["User: I commute on a Brompton folding bike."]})
    rep = dream(mem, ws, "--date", D1)
    assert [r["action"] for r in rep["results"]] == ["CREATE"] and rep["facts"]["waiting"] == []
