"""Link expansion: a result's real wikilink neighbours, with their name and description."""

from __future__ import annotations


def expand(snap, paths: list[str], max_per_direction: int = 10) -> dict[str, dict]:
    """{path: {"outlinks": [...], "inlinks": [...]}}; items {path, meta, anchors}.

    Only real links count (the target is an indexed file); the index finds a
    file's inlinks through its link tables, so only the shown files and their neighbours are read.
    Neighbours keep first-seen order and are capped per direction.
    """

    def resolve(target: str) -> str | None:
        if snap.file_index(target) is not None:
            return target
        if not target.endswith(".md") and snap.file_index(target + ".md") is not None:
            return target + ".md"
        return None

    def group(pairs) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for npath, anchor in pairs:
            if npath is None:
                continue
            anchors = out.setdefault(npath, [])
            if anchor:
                anchors.append(anchor)
        return out

    def attach(grouped: dict[str, list[str]]) -> list[dict]:
        items = []
        for npath, anchors in list(grouped.items())[:max_per_direction]:
            fm = snap.record(snap.file_index(npath)).get("fm") or {}
            meta = {k: str(fm[k]) for k in ("name", "description") if fm.get(k)}
            items.append({"path": npath, "meta": meta, "anchors": anchors})
        return items

    result: dict[str, dict] = {}
    for p in paths:
        i = snap.file_index(p)
        if i is None:
            result[p] = {"outlinks": [], "inlinks": []}
            continue
        rec = snap.record(i, inlinks=True)
        result[p] = {
            "outlinks": attach(group((resolve(t), a) for t, a in rec.get("links", ()))),
            "inlinks": attach(group((src, a) for src, a in rec.get("in", ()))),
        }
    return result


def render(expansion: dict, indent: str = "  ") -> list[str]:
    """The indented neighbour block printed under a search result (ReMe's format)."""
    lines: list[str] = []
    for direction, arrow in (("outlinks", "→"), ("inlinks", "←")):
        items = expansion.get(direction) or []
        if not items:
            continue
        lines.append(f"{indent}{direction} ({len(items)}):")
        for item in items:
            meta = item["meta"]
            parts = [f'{k}="{meta[k]}"' for k in ("name", "description") if k in meta]
            lines.append(f"{indent}  {arrow} {item['path']}  {'  '.join(parts) if parts else '(no meta)'}")
            for anchor in item["anchors"]:
                lines.append(f"{indent}      via anchor=#{anchor}")
    return lines
