"""Wikilinks: `[[target]]`, `[[target|alias]]`, `[[target#anchor]]`, read from the body."""

from __future__ import annotations

import re

WIKILINK = re.compile(r"\[\[([^\[\]\n|#]*)(?:#([^\[\]\n|]*))?(?:\|[^\[\]\n]*)?\]\]")
MAX_LINKS_PER_FILE = 2000  # a wikilink flood must not blow up the graph


def extract(path: str, body_lines: list[str]) -> list[dict]:
    links: list[dict] = []
    seen: set[tuple[str, str]] = set()
    fence = None
    for line in body_lines:
        s = line.lstrip()
        if s.startswith(("```", "~~~")):
            mark = s[:3]
            fence = None if fence == mark else (fence or mark)
            continue
        if fence or "[[" not in line:
            continue
        for m in WIKILINK.finditer(line):
            target = m.group(1).strip()
            anchor = (m.group(2) or "").strip()
            if not target or (target, anchor) in seen:
                continue
            seen.add((target, anchor))
            links.append({"source_path": path, "target_path": target, "target_anchor": anchor})
            if len(links) >= MAX_LINKS_PER_FILE:
                return links
    return links
