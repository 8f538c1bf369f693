"""A small, deterministic vault for the campaigns: notes over two days, digest nodes, MEMORY.md,
resources, a session, an index and a backup of an earlier state.

Every note carries a word found nowhere else (`kestrel0628n03`), so a search for it has exactly
one right answer; a few common words (`falcon`, `migration`) make queries with many hits.
"""

from __future__ import annotations

import json
from pathlib import Path

from reliability_kit import cli, ok

DAYS = ("2026-06-28", "2026-06-29")
TOPICS = ("database", "deploy", "editor", "travel", "budget", "hiring", "backup", "metrics", "search", "garden")


def token(day: str, i: int) -> str:
    return f"kestrel{day[5:7]}{day[8:10]}n{i:02d}"


def note_text(day: str, i: int, extra: str = "") -> str:
    topic = TOPICS[i % len(TOPICS)]
    other = f"memory/{day}/{TOPICS[(i + 1) % len(TOPICS)]}-notes.md"
    paras = [
        f"# {topic.title()} notes\n",
        f"The team discussed {topic} on {day}. Marker {token(day, i)} identifies this note.\n",
        (
            f"## Decisions\n\n- Keep the falcon {topic} plan; the migration starts next week.\n"
            f"- See [[{other}]] for the related discussion.\n"
        ),
        "## Details\n\n"
        + "".join(
            f"- Detail {k} about {topic}: step {k} of the falcon migration checklist.\n" for k in range(1, 6 + i % 4)
        ),
    ]
    head = f"---\ndescription: {topic.title()} discussion of {day}.\nname: {topic}-notes\n---\n"
    return head + "\n".join(paras) + extra


def conversation(session: str, day: str, start_minute: int, n: int, word: str) -> list[dict]:
    """A conversation whose user turns are worth remembering (decisions, preferences, plans)."""
    lines = [
        "We decided to move the {w} service to PostgreSQL 16 because we need JSONB.",
        "I prefer short standups for the {w} team.",
        "I'll write the {w} runbook by Friday.",
        "Remember that the {w} deploy window is Tuesday 14:00 UTC.",
        "We agreed the {w} budget stays at 4000 EUR per month.",
    ]
    out = []
    for k in range(n):
        minute = start_minute + k
        role = "user" if k % 2 == 0 else "assistant"
        text = lines[(k // 2) % len(lines)].format(w=word) if role == "user" else f"Noted about {word} ({k})."
        out.append(
            {
                "id": f"{session}-m{minute:04d}",
                "role": role,
                "content": text,
                "timestamp": f"{day}T{10 + minute // 60:02d}:{minute % 60:02d}:00+00:00",
            }
        )
    return out


def write(root: Path, rel: str, text: str | bytes) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return p


def day_indexes(root: Path) -> None:
    import os

    from memcli.vault import notes
    from memcli.vault.workspace import open_workspace

    ws = open_workspace(root.resolve(), dict(os.environ))
    for day in DAYS:
        notes.update_day_index(ws, day)


def build(base: Path, notes_per_day: int = 8) -> dict:
    """Build the vault under base/ws; returns paths the campaigns use (conversations, the backup)."""
    root = base / "ws"
    for day in DAYS:
        for i in range(notes_per_day):
            write(root, f"memory/{day}/{TOPICS[i % len(TOPICS)]}-notes.md", note_text(day, i))
    write(
        root,
        "MEMORY.md",
        "# Long-term memory\n\n- The user prefers dark mode; marker kestrelmemory.\n"
        "- Production runs on the falcon cluster.\n",
    )
    write(
        root,
        "digest/wiki/falcon-cluster.md",
        "---\ndescription: The falcon cluster runs production.\nname: falcon-cluster\n---\n"
        "The falcon cluster hosts production services; marker kestreldigest.\n\n## Sources\n"
        f"- [[memory/{DAYS[0]}/database-notes.md]]\n",
    )
    write(
        root,
        "digest/personal/dark-mode.md",
        "---\ndescription: Prefers dark mode.\nname: dark-mode\n---\nThe user prefers dark mode in editors.\n",
    )
    write(
        root,
        "resource/2026-06-28/architecture.md",
        "# Architecture\n\nThe kestrelresource gateway fronts the falcon services.\n",
    )
    write(root, "resource/notes/contacts.csv", "name,role\nAda,lead\nLin,ops\n")
    write(root, "resource/2026-06-29/plan.json", json.dumps({"plan": "falcon migration", "weeks": 3}))
    day_indexes(root)
    conv_old = write(base, "conv-old.json", json.dumps(conversation("s-old", DAYS[1], 0, 8, "heron")))
    ok(cli("-w", root, "ingest", conv_old, "-s", "s-old", "--force"), "ingest s-old")
    ok(cli("-w", root, "resource", "scan"), "resource scan")
    ok(cli("-w", root, "reindex"), "reindex")
    # the backup a restore goes back to: this state, before the edits below
    ok(cli("-w", root, "backup", "create", "--out", base / "backups", "--note", "state A"), "backup create")
    backup = next((base / "backups").glob("*.zip"))
    # state T: edits, an added and a deleted note, resources added, changed and deleted
    write(root, f"memory/{DAYS[1]}/database-notes.md", note_text(DAYS[1], 0, "\nEdited after the backup.\n"))
    (root / f"memory/{DAYS[0]}/editor-notes.md").unlink()
    write(root, f"memory/{DAYS[1]}/orchard-notes.md", note_text(DAYS[1], 11).replace("garden", "orchard"))
    write(root, "MEMORY.md", (root / "MEMORY.md").read_text() + "- Added after the backup: kestrelafter.\n")
    day_indexes(root)
    write(
        root,
        "resource/2026-06-29/runbook.txt",
        "Runbook: restart the kestrelrunbook queue, then the falcon workers.\nCheck the dashboards.\n",
    )
    write(root, "resource/2026-06-29/budget.yaml", "budget:\n  falcon: 4000\n  kestrelyaml: 12\n")
    write(
        root,
        "resource/2026-06-28/architecture.md",
        "# Architecture v2\n\nThe kestrelresource gateway now fronts the falcon and heron services.\n",
    )
    (root / "resource/notes/contacts.csv").unlink()
    ok(cli("-w", root, "reindex"), "reindex T")
    conv_new = write(base, "conv-new.json", json.dumps(conversation("s-new", DAYS[1], 100, 9, "ibis")))
    conv_more = write(base, "conv-more.json", json.dumps(conversation("s-old", DAYS[1], 8, 6, "heron")))
    return {"root": root, "backup": backup, "conv_new": conv_new, "conv_more": conv_more}


QUERIES = [
    "kestrel0629n03",
    "kestrelafter",
    "kestrelresource",
    "kestrelrunbook",
    "ibis runbook",
    "falcon migration",
    "kestrel0628n02",
    "heron PostgreSQL",
]


def scenarios(v: dict, ws: Path, trial: Path) -> dict[str, tuple[list, dict]]:
    """name -> (mem arguments, extra environment) for a workspace copy `ws` in folder `trial`."""
    return {
        "ingest-new": (["-w", ws, "ingest", v["conv_new"], "-s", "s-new", "--force"], {}),
        "ingest-append": (["-w", ws, "ingest", v["conv_more"], "-s", "s-old", "--force"], {}),
        "resource-scan": (["-w", ws, "resource", "scan"], {}),
        "reindex-full": (["-w", ws, "reindex", "--full"], {}),
        "backup-create": (["-w", ws, "backup", "create", "--out", trial / "out"], {}),
        "backup-restore": (["-w", ws, "backup", "restore", v["backup"], "--yes"], {"MEM_BACKUP_DIR": trial / "bk"}),
        "dream": (["-w", ws, "dream", "--date", DAYS[1], "--scan-days", "2", "--max-units", "50"], {}),
    }
