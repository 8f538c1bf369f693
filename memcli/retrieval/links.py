"""Link expansion: a result's real wikilink neighbours, with their name and description."""

from __future__ import annotations


def _resolve(target: str, indexed: dict) -> str | None:
    if target in indexed:
        return target
    if not target.endswith(".md") and target + ".md" in indexed:
        return target + ".md"
    return None


def expand(files: list[dict], paths: list[str], max_per_direction: int = 10) -> dict[str, dict]:
    """{path: {"outlinks": [...], "inlinks": [...]}}; items {path, meta, anchors}.

    Only real links count (target is an indexed file). Neighbours keep first-seen
    order and are capped per direction before their metadata is looked up.
    """
    if not paths:
        return {}
    indexed = {f["path"]: f for f in files}
    wanted = set(paths)
    out: dict[str, dict[str, list[str]]] = {p: {} for p in paths}
    inl: dict[str, dict[str, list[str]]] = {p: {} for p in paths}
    for f in files:
        src = f["path"]
        for target, anchor in f.get("links", ()):
            real = _resolve(target, indexed)
            if real is None:
                continue
            if src in wanted:
                out[src].setdefault(real, [])
                if anchor:
                    out[src][real].append(anchor)
            if real in wanted:
                inl[real].setdefault(src, [])
                if anchor:
                    inl[real][src].append(anchor)

    def attach(group: dict[str, list[str]]) -> list[dict]:
        items = []
        for npath, anchors in list(group.items())[:max_per_direction]:
            fm = indexed[npath].get("fm") or {}
            meta = {k: str(fm[k]) for k in ("name", "description") if fm.get(k)}
            items.append({"path": npath, "meta": meta, "anchors": anchors})
        return items

    return {p: {"outlinks": attach(out[p]), "inlinks": attach(inl[p])} for p in paths}


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
