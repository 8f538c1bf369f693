#!/usr/bin/env python3
"""Does offline `mem dream` put facts of one subject into one node, and only those?

    python bench/dream_eval.py                                   # bench/dream_set/set.yaml, local model
    python bench/dream_eval.py --embedding none                  # words only (MEM_EMBEDDING_BACKEND=none)
    python bench/dream_eval.py --set bench/dream_set/scenario.yaml --max-units 5
    python bench/dream_eval.py --mem-yaml llm.yaml               # the LLM that mem.yaml configures decides

A labelled set (bench/dream_set/README.md) holds facts with their subject, night and note,
supersession links and decoys. For each night the notes are written into a fresh temporary
workspace as an agent's daily notes (resources through `mem resource scan`), then
`mem dream --date <night> --json` runs through the real CLI. Afterwards the digest nodes
are read and scored; one JSON document on stdout:

  coverage         share of labelled facts that reached a node (their text is in it, or
                   the run's report put the fact into it, e.g. as a corroboration)
  pair_precision   of the pairs of facts that share a node, the share with one subject
  pair_recall      of the pairs of facts with one subject, the share that share a node
  supersessions    facts that replace an older one, recorded as an update: the node that holds
                   the new fact states it among what is true now (above `## History`) and
                   records the old fact there as previous (`- Previously: <old>, until ...`
                   under `## History`; in a chain of replacements, any older value of the
                   chain; a value replaced in turn may sit in the history too, under a later
                   value of its chain stated as true now), and the run that brought the new
                   fact created or updated that node
  false_updates    facts recorded as previous in a node whose current statements hold no
                   labelled replacement of them (a replacement of what a fact restates
                   replaces the restatement too)
  junk_nodes       nodes holding no labelled fact (e.g. a resource's structural lines)
  remaining        facts left for a later run (over --max-units) after the last night

With an LLM (--mem-yaml with llm_model_config) the model decides and the offline writer still
quotes the facts' lines, so the scoring is the same. --fuzzy scores nodes written as prose:
a fact counts as reaching a node when the node cites the fact's note and holds at least 60%
of the fact's content words (numbers and names included); a supersession is recorded when the
node holding the old fact got REFINE/CORRECT from a unit citing the new fact's note and now
holds the new fact (the old value need not stay, marked or not).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SET = ROOT / "bench" / "dream_set" / "set.yaml"
HISTORY = "## History"
PREVIOUSLY = "- Previously: "
SECTIONS = ("Facts", "Decisions", "Preferences", "Next steps")


def load(path: Path) -> dict:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    start = date.fromisoformat(str(data["start"]))
    for note in data["notes"]:
        note["day"] = (start + timedelta(days=int(note["night"]) - 1)).isoformat()
        stem = Path(note["file"]).stem if note["style"] == "resource" else note["name"]
        for f in note["facts"]:
            f["day"], f["note"] = note["day"], f"memory/{note['day']}/{stem}.md"
    data["facts"] = [f for n in data["notes"] for f in n["facts"]]
    return data


def norm(text: str) -> str:
    text = re.sub(r"^[A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2}: ", "", text.strip())
    return " ".join(text.lower().replace("’", "'").split()).rstrip(".!")


# ------------------------------------------------------------------ writing the nights' notes
def note_text(note: dict, sid: str) -> str:
    """A daily note as mem ingest (style ingest) or an agent (agent, numbered, prose) writes it."""
    name, style, facts = note["name"], note["style"], note["facts"]
    title = note.get("title") or name.replace("-", " ").capitalize()
    if style == "ingest":
        head = {
            "description": facts[0]["text"].split(": ", 1)[-1],
            "name": name,
            "session_id": sid,
            "source_conversation": f"[[mem_session/dialog/{sid}.jsonl]]",
        }
        parts = [f"# {title}"]
        for section in SECTIONS:
            lines = [f"- {f['text']}" for f in facts if f.get("section", "Facts") == section]
            if lines:
                parts += ["", f"## {section}", *lines]
    else:
        head = {"description": facts[0]["text"], "name": name}
        parts = [f"# {title}"]
        if style == "prose":
            parts += ["", " ".join(f["text"] for f in facts)]
        elif style == "numbered":
            parts += [
                "",
                f"## {note.get('section') or 'Steps'}",
                *[f"{i}. {f['text']}" for i, f in enumerate(facts, 1)],
            ]
        else:
            current = None
            for f in facts:
                if f.get("section") != current:
                    current = f.get("section")
                    parts += ["", f"## {current}"] if current else [""]
                parts.append(f"- {f['text']}")
    import yaml

    front = yaml.safe_dump(head, allow_unicode=True, sort_keys=True, width=100000)
    return f"---\n{front}---\n" + "\n".join(parts) + "\n"


def write_night(ws: Path, notes: list[dict], env: dict, mem: list[str]) -> None:
    resources = False
    for i, note in enumerate(notes):
        if note["style"] == "resource":
            path = ws / "resource" / note["day"] / note["file"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(note["content"], encoding="utf-8")
            resources = True
            continue
        path = ws / "memory" / note["day"] / f"{note['name']}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(note, f"s{note['night']:02d}{i:02d}"), encoding="utf-8")
    if resources:
        run([*mem, "-w", str(ws), "resource", "scan", "--json"], env)
    # the day index page, as ingest keeps it
    sys.path.insert(0, str(ROOT))
    from memcli.vault import notes as vault_notes
    from memcli.vault.workspace import open_workspace

    vault_notes.update_day_index(open_workspace(ws, env), notes[0]["day"])


def run(cmd: list[str], env: dict) -> str:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return proc.stdout


def environment(home: Path, embedding: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEM_", "OPENCLAW_", "CLAWDBOT_"))
        and k not in ("OPENAI_API_KEY", "DASHSCOPE_API_KEY", "GEMINI_API_KEY", "VOYAGE_API_KEY")
    }
    env.update(
        {"HOME": str(home), "TZ": "UTC", "NO_COLOR": "1", "MEM_EMBEDDING_BACKEND": embedding, "PYTHONPATH": str(ROOT)}
    )
    return env


# ------------------------------------------------------------------ scoring
def read_nodes(ws: Path) -> dict[str, str]:
    root = ws / "digest"
    return (
        {p.relative_to(ws).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))}
        if root.is_dir()
        else {}
    )


_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")
_STOP = set(
    "that this with from have will than then they them their there what when where which while "
    "about after before into over under also only just very more most some such user user's".split()
)


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(norm(text)) if (len(w) > 3 or w.isdigit()) and w not in _STOP}


def holds(body: str, note: str, text: str) -> bool:
    """The LLM test: the node cites the fact's note and holds most of its content words."""
    words = content_words(text)
    have = set(_WORD.findall(body.lower().replace("’", "'")))
    return f"[[{note}" in body and bool(words) and len(words & have) >= 0.6 * len(words)


def note_path(f: dict) -> str:
    return f["note"]


def forms(facts: list[dict], reports: list[dict]) -> dict[str, set[str]]:
    """fact id -> the normalised texts a node may hold it in: the labelled text, and the statement
    the run's report says the node holds for it (offline dream writes the user in the third person)."""
    out = {f["id"]: {norm(f["text"])} for f in facts}
    by_text = {norm(f["text"]): f["id"] for f in facts}
    for rep in reports:
        for r in rep.get("results", []):
            for line, said in zip(r.get("facts", []), r.get("statements", [])):
                fid = by_text.get(norm(line))
                if fid:
                    out[fid].add(norm(said))
    return out


def placements(
    facts: list[dict], nodes: dict[str, str], reports: list[dict], fuzzy: bool = False
) -> dict[str, set[str]]:
    """fact id -> the nodes it reached."""
    if fuzzy:
        return {f["id"]: {p for p, b in nodes.items() if holds(b, note_path(f), f["text"])} for f in facts}
    bodies = {p: " ".join(t.lower().replace("’", "'").split()) for p, t in nodes.items()}
    said = forms(facts, reports)
    out = {f["id"]: {p for p, b in bodies.items() if any(x in b for x in said[f["id"]])} for f in facts}
    by_text = {norm(f["text"]): f["id"] for f in facts}
    for rep in reports:
        for r in rep.get("results", []):
            for line in r.get("facts", []):
                fid = by_text.get(norm(line))
                if fid and r["target_path"] in nodes:
                    out[fid].add(r["target_path"])
    return out


def parts(body: str) -> tuple[list[str], list[str]]:
    """(lines stating what is true now, `- Previously:` lines under `## History`) of a node."""
    lines = body.split("\n")
    end = next((i for i, x in enumerate(lines) if x.strip() == "## Sources"), len(lines))
    at = next((i for i, x in enumerate(lines[:end]) if x.strip() == HISTORY), end)
    return lines[:at], [x for x in lines[at + 1 : end] if x.strip().startswith(PREVIOUSLY)]


def recorded(body: str, old: set[str], new: set[str], later: set[str] = frozenset()) -> bool:
    """Whether the node records the old fact as previous and states the new one as true now, or
    (`later`: the forms of the facts that replaced the new one in turn) records the new one as
    previous too, under a later value of its chain that is true now: A -> B -> C leaves A and B
    in the history, and B's update of A was recorded all the same."""
    now, history = parts(body)
    if not any(any(o in norm(x) for o in old) for x in history):
        return False
    if any(any(n in norm(x) for n in new) for x in now):
        return True
    return any(any(n in norm(x) for n in new) for x in history) and any(any(n in norm(x) for n in later) for x in now)


def replaced(fact: dict, by_id: dict[str, dict]) -> list[dict]:
    """The facts `fact` replaces, newest first: what it supersedes, what that superseded, ..."""
    out: list[dict] = []
    while fact.get("supersedes") in by_id and by_id[fact["supersedes"]] not in out:
        fact = by_id[fact["supersedes"]]
        out.append(fact)
    return out


def score(data: dict, nodes: dict[str, str], reports: list[dict], fuzzy: bool = False) -> dict:
    facts = data["facts"]
    by_id = {f["id"]: f for f in facts}
    placed = placements(facts, nodes, reports, fuzzy)
    tp = fp = fn = 0
    wrong: dict[tuple[str, str], int] = {}
    for a, b in combinations(facts, 2):
        same, share = a["subject"] == b["subject"], bool(placed[a["id"]] & placed[b["id"]])
        tp += same and share
        fp += share and not same
        fn += same and not share
        if share and not same:
            key = tuple(sorted((a["subject"], b["subject"])))
            wrong[key] = wrong.get(key, 0) + 1
    sup = []
    said = forms(facts, reports)
    brought = {
        (r["target_path"], fid)
        for rep in reports
        for r in rep.get("results", [])
        if r["action"] in ("CREATE", "REFINE", "CORRECT")
        for line in r.get("facts", [])
        for fid in [f["id"] for f in facts if norm(f["text"]) == norm(line)]
    }
    for f in facts:
        if not f.get("supersedes"):
            continue
        old = by_id[f["supersedes"]]
        line = replaced(f, by_id)  # in a chain the node may record any older value of the chain
        holders = [p for p in nodes if any(p in placed[g["id"]] for g in line)]
        if fuzzy:
            # an update of the old fact's node, from a unit citing the new fact's note, that holds it now
            by_llm = {
                r["target_path"]
                for rep in reports
                for r in rep.get("results", [])
                if r["action"] in ("REFINE", "CORRECT") and note_path(f) in r.get("paths", [])
            }
            holders = holders or [p for p in nodes if p in by_llm]
            ok = [p for p in holders if p in by_llm and p in placed[f["id"]]]
            sup.append(
                {"fact": f["id"], "replaces": old["id"], "recorded": bool(ok), "node": (ok or holders or [None])[0]}
            )
            continue
        olds = set().union(*(said[g["id"]] for g in line))
        later = set().union(*(said[g["id"]] for g in facts if f in replaced(g, by_id)))
        ok = [
            p
            for p in nodes
            if p in placed[f["id"]] and (p, f["id"]) in brought and recorded(nodes[p], olds, said[f["id"]], later)
        ]
        sup.append(
            {
                "fact": f["id"],
                "replaces": old["id"],
                "recorded": bool(ok),
                "node": (ok or [p for p in nodes if p in placed[f["id"]]] or holders or [None])[0],
            }
        )
    # a later value records any older one of its chain; a corroboration of a later value does too
    labelled = {(g["id"], f["id"]) for f in facts for g in replaced(f, by_id)}
    labelled |= {
        (g["id"], f["id"]) for f in facts if f.get("restates") in by_id for g in replaced(by_id[f["restates"]], by_id)
    }
    # ... and a later value replaces the restatements of what it replaces ("still going for 200"
    # restating the goal of 200, when the goal is lowered to 175)
    labelled |= {
        (r["id"], f["id"]) for f in facts for g in replaced(f, by_id) for r in facts if r.get("restates") == g["id"]
    }
    false_updates = []
    for p, body in nodes.items():
        now, history = parts(body)
        current_ids = {g["id"] for g in facts if any(any(x in norm(n) for x in said[g["id"]]) for n in now)}
        for x in history:
            old = next((g["id"] for g in facts if any(o in norm(x) for o in said[g["id"]])), None)
            if not any((old, new) in labelled for new in current_ids):
                false_updates.append({"node": p, "old": old, "line": x.strip()[:160]})
    junk = [p for p in nodes if not any(p in s for s in placed.values())]
    return {
        "facts": len(facts),
        "subjects": len({f["subject"] for f in facts}),
        "nodes": len(nodes),
        "coverage": round(sum(1 for s in placed.values() if s) / len(facts), 3),
        "pair_precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "pair_recall": round(tp / (tp + fn), 3) if tp + fn else None,
        "pairs": {"same_subject_shared": tp, "other_subject_shared": fp, "same_subject_apart": fn},
        "supersessions": {"recorded": sum(s["recorded"] for s in sup), "total": len(sup), "each": sup},
        "false_updates": false_updates,
        "junk_nodes": junk,
        "wrong_pairs_by_subjects": {f"{a}+{b}": n for (a, b), n in sorted(wrong.items(), key=lambda kv: -kv[1])},
        "missed": sorted(f["id"] for f in facts if not placed[f["id"]]),
        "split_subjects": {
            s: sorted({n for f in facts if f["subject"] == s for n in placed[f["id"]]})
            for s in sorted({f["subject"] for f in facts})
            if len({n for f in facts if f["subject"] == s for n in placed[f["id"]]}) > 1
        },
    }


# ------------------------------------------------------------------ the nights
def _who(decision: dict) -> str:
    """model; rules after a model reply that failed validation twice; rules with nothing to ask."""
    why = decision.get("reason") or ""
    if decision.get("decided_by") != "rules":
        return str(decision.get("decided_by"))
    return "rules (model reply invalid)" if "model reply invalid" in why else "rules (no close node to ask about)"


def _tally(values) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def nightly(
    data: dict, ws: Path, env: dict, mem: list[str], max_units: int, scan_days: int, drain: int, keep: bool = False
) -> tuple[list[dict], list[dict]]:
    reports, nights = [], []
    days = sorted({n["day"] for n in data["notes"]})
    runs = [(d, True) for d in days] + [(days[-1], False)] * drain
    for day, fresh in runs:
        if fresh:
            write_night(ws, [n for n in data["notes"] if n["day"] == day], env, mem)
        t = time.perf_counter()
        out = run(
            [
                *mem,
                "-w",
                str(ws),
                "dream",
                "--date",
                day,
                "--scan-days",
                str(scan_days),
                "--max-units",
                str(max_units),
                "--json",
            ],
            env,
        )
        rep = json.loads(out)
        reports.append(rep)
        if keep:  # a kept workspace keeps each run's report beside the state, to see why a fact stayed put
            (ws / "mem_metadata" / f"dream-report-{len(reports):02d}-{day}.json").write_text(out, encoding="utf-8")
        facts = rep.get("facts") or {}
        nights.append(
            {
                "date": day,
                "seconds": round(time.perf_counter() - t, 2),
                "actions": rep.get("actions"),
                "new_facts": facts.get("new"),
                "remaining": rep.get("remaining"),
                "kept": len(facts.get("kept") or []),
                "kept_why": [f"{k.get('why')}: {k.get('fact')}" for k in facts.get("kept") or []],
                "grouping": facts.get("grouping"),
                "checkpointed": len(rep.get("checkpointed") or []),
                # with a model: statements it decided, and those the rules decided for it
                "decided_by": _tally(_who(d) for r in rep.get("results", []) for d in r.get("decisions", [])),
            }
        )
        if not fresh and not (rep.get("remaining") or {}).get("units"):
            break
    return reports, nights


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", type=Path, default=DEFAULT_SET, help="the labelled set (YAML)")
    ap.add_argument(
        "--embedding",
        choices=("local", "none"),
        default="local",
        help="MEM_EMBEDDING_BACKEND for the runs (none: grouping by words only)",
    )
    ap.add_argument("--max-units", type=int, default=5)
    ap.add_argument("--scan-days", type=int, default=2)
    ap.add_argument("--drain", type=int, default=0, help="extra runs after the last night while facts remain")
    ap.add_argument("--keep", type=Path, help="build the workspace here (kept) instead of a temporary folder")
    ap.add_argument("--mem", default=f"{sys.executable} -m memcli", help="how to run mem")
    ap.add_argument("--mem-yaml", type=Path, help="a mem.yaml for the workspace (an LLM: llm_model_config)")
    ap.add_argument(
        "--fuzzy",
        action="store_true",
        help="score nodes written as prose (60%% of a fact's words; any update counts as recorded)",
    )
    args = ap.parse_args(argv)
    data = load(args.set)
    mem = args.mem.split()
    with tempfile.TemporaryDirectory(prefix="dream-eval-") as tmp:
        ws = args.keep or Path(tmp) / "ws"
        if ws.exists() and any(ws.iterdir()):
            raise SystemExit(f"{ws} is not empty")
        (ws / "memory").mkdir(parents=True, exist_ok=True)
        (ws / "digest").mkdir(exist_ok=True)
        llm = args.mem_yaml is not None and "llm_model_config" in args.mem_yaml.read_text(encoding="utf-8")
        if args.mem_yaml:
            (ws / "mem.yaml").write_text(args.mem_yaml.read_text(encoding="utf-8"), encoding="utf-8")
        home = Path(tmp) / "home"
        home.mkdir()
        env = environment(home, args.embedding)
        t = time.perf_counter()
        reports, nights = nightly(data, ws, env, mem, args.max_units, args.scan_days, args.drain, args.keep is not None)
        result = {
            "set": str(args.set.relative_to(ROOT) if args.set.is_relative_to(ROOT) else args.set),
            "embedding": args.embedding,
            "max_units": args.max_units,
            "scan_days": args.scan_days,
            "decided_by": "llm" if llm else "offline rules",
            **score(data, read_nodes(ws), reports, fuzzy=args.fuzzy),
            "remaining": (reports[-1].get("remaining") or {}) if reports else None,
            "runs": len(reports),
            "seconds": round(time.perf_counter() - t, 1),
            "nights": nights,
        }
    json.dump(result, sys.stdout, indent=1, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
