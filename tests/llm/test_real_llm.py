"""mem's LLM paths against a real small model (Qwen2.5-Coder-0.5B-Instruct on llama.cpp's server).

Ingest, dream and resource scan run through the CLI in a subprocess, as a user runs them.
The assertions are about structure and facts kept, never wording: a 0.5B model is weak,
and what must hold is that mem turns its replies into valid notes and nodes (repairing
what is mechanical) instead of failing. The figures (facts kept, seconds) are printed;
docs/local-models.md has the measured ones.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.llm
DATA = Path(__file__).parent / "data"
DAY = "2026-06-29"
TIMEOUT = 900  # seconds for one command: a few model calls of ~20-40 s each, with room
# the five facts planted in data/nurse.json; each is kept when every pattern matches the note
FACTS = {
    "identity (Priya Raman, nurse)": [r"priya", r"nurse"],
    "decision (rota from Excel to Notion)": [r"notion"],
    "preference (no messages before 2 pm)": [r"\b2\s*(?:pm|p\.m\.)|14:00"],
    "deadline (CPR renewal by August 15)": [r"cpr", r"aug(?:ust)?\.? 15|08-15|15 aug"],
    "identifier (course BLS-4471)": [r"bls-4471"],
}


def kept(text: str) -> list[str]:
    low = text.lower()
    return [fact for fact, patterns in FACTS.items() if all(re.search(p, low) for p in patterns)]


def mem_json(run_mem, *args) -> tuple[dict, float]:
    t0 = time.monotonic()
    code, out, err = run_mem(*args, "--json", timeout=TIMEOUT)
    seconds = time.monotonic() - t0
    assert code == 0, err
    return json.loads(out), seconds


def frontmatter(text: str) -> dict:
    import yaml

    assert text.startswith("---\n"), text[:80]
    return yaml.safe_load(text.split("---\n", 2)[1])


@pytest.fixture(scope="module")
def ingested(tmp_path_factory, llm_server, llm_yaml):
    """A workspace with data/nurse.json ingested by the model (once for the module)."""
    import subprocess
    import sys

    ws = tmp_path_factory.mktemp("nurse") / "ws"
    (ws / "memory").mkdir(parents=True)
    llm_yaml(ws)
    t0 = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "memcli",
            "-w",
            str(ws),
            "ingest",
            str(DATA / "nurse.json"),
            "-s",
            "s1",
            "--force",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=_env(),
    )
    assert proc.returncode == 0, proc.stderr
    return ws, json.loads(proc.stdout), time.monotonic() - t0


def _env() -> dict:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("MEM_")}
    env.update(MEM_EMBEDDING_BACKEND="none", NO_COLOR="1", TZ="UTC")
    return env


def test_ingest_writes_a_valid_note_that_keeps_the_facts(ingested):
    ws, rep, seconds = ingested
    assert rep["extracted"] and rep["extractor"] == "llamacpp:qwen2.5-coder-0.5b-instruct"
    [note] = [c["path"] for c in rep["changes"] if c["path"].startswith(f"memory/{DAY}/")]
    text = (ws / note).read_text(encoding="utf-8")
    meta = frontmatter(text)
    assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", meta["name"]) and note.endswith(f"/{meta['name']}.md")
    assert meta["description"] and meta["session_id"] == "s1"
    body = text.split("---\n", 2)[2]
    assert body.startswith("# ") and re.search(r"^## \w", body, re.MULTILINE)
    facts = kept(text)
    print(f"\ningest: {len(facts)} of {len(FACTS)} facts kept in {seconds:.1f} s: {facts}")
    assert len(facts) >= 3, text


def test_search_finds_the_ingested_note(ingested, run_mem):
    ws, rep, _ = ingested
    out, _ = mem_json(run_mem, "-w", ws, "search", "CPR certification course", "--limit", "3")
    assert any(h["path"].startswith(f"memory/{DAY}/") for h in out["results"])


def check_nodes(ws: Path) -> str:
    """Every digest node valid (path, frontmatter, sources, links); their texts together."""
    everything = ""
    for path in sorted((ws / "digest").rglob("*.md")):
        rel = path.relative_to(ws).as_posix()
        assert re.fullmatch(r"digest/(personal|procedure|wiki)/[a-z0-9]+(?:-[a-z0-9]+)*\.md", rel)
        text = path.read_text(encoding="utf-8")
        meta = frontmatter(text)
        assert meta["name"] == path.stem and meta["description"]
        body = text.split("---\n", 2)[2]
        assert "\n## Sources\n" in body and f"[[memory/{DAY}/" in body.split("## Sources")[1]
        assert "<<<" not in body and f"[[{rel}]]" not in body  # the prompt's quoting, a link to itself
        for link in re.findall(r"\[\[([^\]|#]+)", body):
            assert (ws / link).exists(), link
        everything += text
    return everything


def test_dream_turns_the_note_into_valid_digest_nodes(ingested, run_mem):
    ws, _, _ = ingested
    rep, seconds = mem_json(run_mem, "-w", ws, "dream", "--date", DAY, "--max-units", "2")
    print(
        f"\ndream: {len(rep['results'])} node action(s), {len(rep['failed'])} failed, "
        f"{rep['remaining']['units']} unit(s) left, in {seconds:.1f} s"
    )
    assert rep["status"] in ("completed", "completed_with_warnings") and not rep["failed"], rep
    assert 1 <= len(list((ws / "digest").rglob("*.md"))) <= 2
    assert kept(check_nodes(ws)), check_nodes(ws)  # the nodes hold at least one planted fact
    for _ in range(2):  # what --max-units left is taken by the next runs
        if not rep["remaining"]["units"]:
            break
        assert rep["remaining"]["paths"] and not set(rep["checkpointed"]) & set(rep["remaining"]["paths"])
        rep, seconds = mem_json(run_mem, "-w", ws, "dream", "--date", DAY, "--max-units", "10")
        print(
            f"dream again: {len(rep['results'])} node action(s), {rep['remaining']['units']} left, in {seconds:.1f} s"
        )
        assert not rep["failed"], rep
    assert rep["remaining"]["units"] == 0
    check_nodes(ws)
    again, _ = mem_json(run_mem, "-w", ws, "dream", "--date", DAY, "--max-units", "2")
    assert again["status"] == "no_change"  # nothing changed since: no model call, nothing written


def test_resource_scan_writes_grounded_notes(tmp_path, llm_yaml, run_mem):
    ws = tmp_path / "res"
    day = ws / "resource" / "2026-07-14"
    day.mkdir(parents=True)
    for name in ("sales.csv", "onboarding.md"):
        (day / name).write_text((DATA / name).read_text(encoding="utf-8"), encoding="utf-8")
    llm_yaml(ws)
    rep, seconds = mem_json(run_mem, "-w", ws, "resource", "scan")
    print(f"\nresource scan: {len(rep['notes'])} note(s) in {seconds:.1f} s; warnings: {rep['warnings']}")
    assert not any("offline digest instead" in w for w in rep["warnings"]), rep["warnings"]
    texts = {}
    for name in ("sales", "onboarding"):
        text = (ws / "memory" / "2026-07-14" / f"{name}.md").read_text(encoding="utf-8")
        meta = frontmatter(text)
        assert meta["source_resource"].startswith("[[resource/2026-07-14/") and meta["description"]
        body = text.split("---\n", 2)[2]
        assert body.startswith("# ") and "\nSource: [[resource/2026-07-14/" in body
        texts[name] = body
    assert "| 2026-07-03 | APAC | 19 | 5120.75 |" in texts["sales"]  # the exact rows, not the model's
    assert "## Outline" in texts["onboarding"]
    words = ("bootstrap", "dana", "2026-07-31", "good-first-issue", "vpn", "friday")
    assert sum(w in texts["onboarding"].lower() for w in words) >= 2, texts["onboarding"]


# three nights of an agent's notes: two subjects, one value that changes, one line of small talk
NIGHTS = {
    "2026-07-06": {
        "commute": (
            "Commute",
            [
                "The user commutes to the office on a Brompton folding bike.",
                "The ride takes about 20 minutes along the canal.",
            ],
        ),
        "billing": ("Billing", ["The billing service uses a pgbouncer pool of 25 connections."]),
    },
    "2026-07-07": {
        "chat": ("Chat", ["User: Thanks, that was really helpful!"]),
        "billing-pool": ("Billing pool", ["The billing pgbouncer pool was increased from 25 to 50 connections."]),
    },
    "2026-07-08": {"bike": ("Bike", ["The user replaced the Brompton with an e-bike."])},
}


def test_dream_over_three_nights_decides_each_statement_and_keeps_the_facts(tmp_path, llm_yaml, run_mem):
    """Dream asks the model one short question at a time; every night exits 0, every statement's
    decision says who made it (the model, or the rules when its reply was unusable) and why."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    llm_yaml(ws)
    facts = []
    for day, notes in NIGHTS.items():
        for name, (title, lines) in notes.items():
            path = ws / "memory" / day / f"{name}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                f"---\ndescription: {json.dumps(lines[0])}\nname: {name}\n---\n# {title}\n\n"
                + "".join(f"- {ln}\n" for ln in lines),
                encoding="utf-8",
            )
            facts += [ln for ln in lines if not ln.startswith("User: Thanks")]
        rep, seconds = mem_json(run_mem, "-w", ws, "dream", "--date", day)
        assert rep["status"] in ("completed", "completed_with_warnings") and not rep["failed"], rep
        decisions = [d for r in rep["results"] for d in r["decisions"]]
        print(
            f"\n{day}: {rep['actions']} in {seconds:.1f} s; "
            + "; ".join(f"{d['action']} by {d['decided_by']} ({d['reason'][:60]})" for d in decisions)
        )
        assert all(d["decided_by"] in ("model", "rules") and d["reason"] for d in decisions)
        assert all(r["decided_by"] and r["target_path"].startswith("digest/") for r in rep["results"])
    everything = ""
    for path in sorted((ws / "digest").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        meta = frontmatter(text)
        assert meta["name"] == path.stem and meta["description"] and "\n## Sources\n" in text
        for link in re.findall(r"\[\[([^\]|#]+)", text):
            assert (ws / link).exists(), link
        everything += text
    # the writer quotes statements, no paraphrase; a replaced one is in `## History` ("Previously: <it>, until")
    reached = [f for f in facts if f.rstrip(".") in everything]
    print(f"facts in nodes: {len(reached)} of {len(facts)}; nodes: {len(list((ws / 'digest').rglob('*.md')))}")
    assert len(reached) > len(facts) // 2, everything
    assert "\n## History\n" in everything  # the pool size or the bike changed: the old value is history
    assert "Thanks, that was really helpful" not in everything  # small talk stays in its note
    again, _ = mem_json(run_mem, "-w", ws, "dream", "--date", "2026-07-08")
    assert again["status"] == "no_change"
