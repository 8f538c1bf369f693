"""A day page mem cannot rewrite without loss is left as it is, named, and the write goes on.

`memory/<day>.md` may be an OpenClaw daily log: the user's own text, frontmatter included.
mem refreshes its list of the day's notes in it; a page whose frontmatter does not parse
was rewritten with none (the user's lines lost), and one that is not UTF-8 made the write
fail after its note was written. Now the page is kept byte for byte and named.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

PAGES = {
    "broken frontmatter": (
        b"---\ntitle: [my sailing log\n---\n# My log\n\nWent sailing.\n",
        "broken frontmatter at line 3: did not find expected ',' or ']'",
    ),
    "latin-1": ("# Caf\u00e9 log\n\nCroissants.\n".encode("latin-1"), "not valid UTF-8 (line 1, byte 5)"),
}


def today() -> str:
    return datetime.now(UTC).date().isoformat()  # the tests run with TZ=UTC


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_remember_keeps_a_day_page_it_cannot_rewrite(ws, run_mem, kind):
    data, why = PAGES[kind]
    day = today()
    page = ws / "memory" / f"{day}.md"
    page.write_bytes(data)
    code, out, err = run_mem("-w", ws, "remember", "My passport expires in 2031", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["path"] == f"memory/{day}/remembered-facts.md"
    assert (
        f"left memory/{day}.md as it is: {why}; its list of the day's notes is updated once that is fixed"
        in rep["warnings"]
    )
    assert page.read_bytes() == data
    assert "passport" in (ws / rep["path"]).read_text(encoding="utf-8")
    code, out, err = run_mem("-w", ws, "search", "passport")
    assert code == 0 and f"memory/{day}/remembered-facts.md" in out


def test_resource_scan_keeps_a_day_page_it_cannot_rewrite(ws, run_mem):
    data, why = PAGES["broken frontmatter"]
    (ws / "resource" / "2026-07-14").mkdir(parents=True)
    (ws / "resource" / "2026-07-14" / "tides.txt").write_text("High tide at 06:12.\n", encoding="utf-8")
    page = ws / "memory" / "2026-07-14.md"
    page.write_bytes(data)
    code, out, err = run_mem("-w", ws, "resource", "scan", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["notes"] == [
        {"resource": "resource/2026-07-14/tides.txt", "note": "memory/2026-07-14/tides.md", "action": "added"}
    ]
    assert any(w.startswith(f"left memory/2026-07-14.md as it is: {why}") for w in rep["warnings"])
    assert page.read_bytes() == data
    (ws / "resource" / "2026-07-14" / "tides.txt").unlink()  # its note goes; the page stays, whole
    code, out, err = run_mem("-w", ws, "resource", "scan", "--json")
    assert code == 0 and not (ws / "memory" / "2026-07-14" / "tides.md").exists()
    assert page.read_bytes() == data
