"""The digest as a dream run sees it, and the plan of what the run will write.

offline.py (rules) and assisted.py (a model deciding one statement at a time) place facts
into nodes. Nothing is written here: the plan holds every node's new text in memory, so a
later unit sees what an earlier one decided, every model reply is validated before the
first write, and a dry run is the same code without the final write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from memcli.extraction.dream.node import Node, parse
from memcli.extraction.dream.schema import Unit
from memcli.vault import frontmatter
from memcli.vault.workspace import Workspace


@dataclass
class Result:
    unit: Unit
    action: str
    target_path: str
    note: str
    reason: str = ""  # why this unit went here and did this (offline: the rule that decided)
    decided_by: str = ""  # with a model: "model", "rules" or "model+rules" (assisted.py)
    decisions: list[dict] = field(default_factory=list)  # with a model, per statement: action, who decided, why

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "unit": self.unit.name,
            "bucket": self.unit.bucket,
            "paths": self.unit.paths,
            "action": self.action,
            "target_path": self.target_path,
            "note": self.note,
        }
        if self.reason:  # the rule (or the model) that placed the unit and what each statement did
            out["reason"] = self.reason
        if self.decided_by:
            out["decided_by"], out["decisions"] = self.decided_by, self.decisions
        if self.unit.facts:  # the statements the unit carried into the node
            out["facts"] = [f.source() for f in self.unit.facts]  # as the notes wrote them
            out["statements"] = [f.line() for f in self.unit.facts]  # as the node states them
        return out


@dataclass
class Plan:
    results: list[Result] = field(default_factory=list)
    skipped: list[tuple[Unit, str]] = field(default_factory=list)
    failed: list[tuple[Unit, str]] = field(default_factory=list)
    nodes: dict[str, Node] = field(default_factory=dict)  # path -> new node
    base: dict[str, str | None] = field(default_factory=dict)  # path -> text it was planned from (None: new)
    unusable: dict[str, str] = field(default_factory=dict)  # node path -> why it is neither read nor written


def _safe(rel: str) -> bool:
    p = PurePosixPath(rel)
    return bool(rel) and not p.is_absolute() and ".." not in p.parts and "\\" not in rel


class Digest:
    """The digest as this run sees it: the files, overlaid with the nodes planned so far."""

    def __init__(self, ws: Workspace, plan: Plan):
        self.ws, self.plan = ws, plan
        self.prefix = ws.settings.digest_dir.strip("/") + "/"

    def exists(self, rel: str) -> bool:
        return _safe(rel) and (rel in self.plan.nodes or (self.ws.root / rel).is_file())

    def is_node(self, rel: str) -> bool:
        parts = rel[len(self.prefix) :].split("/")
        return rel.startswith(self.prefix) and rel.endswith(".md") and not parts[-1].startswith(("_", "."))

    def read(self, rel: str) -> Node | None:
        if rel in self.plan.nodes:
            return self.plan.nodes[rel]
        if not (_safe(rel) and self.is_node(rel)):
            return None
        if rel in self.plan.unusable:
            return None
        why = None
        try:
            text = (self.ws.root / rel).read_text(encoding="utf-8")
            # a node whose frontmatter does not parse would be rewritten with none: the text lost
            why = frontmatter.parse(frontmatter.split(text.lstrip("\ufeff").replace("\r\n", "\n"))[0])[1]
        except FileNotFoundError:
            return None
        except OSError as exc:
            why = f"cannot be read ({exc.strerror})"
        except UnicodeDecodeError:
            why = "not valid UTF-8"
        if why is not None:
            self.plan.unusable[rel] = why
            return None
        self.plan.base.setdefault(rel, text)
        return parse(rel, text)

    def body(self, rel: str) -> str | None:
        node = self.read(rel)
        return node.body if node else None

    def nodes(self) -> list[Node]:
        """Every digest node on disk (file order), as this run sees it."""
        root = self.ws.root / self.prefix
        if not root.is_dir():
            return []
        out = []
        for path in sorted(root.rglob("*.md")):
            if path.is_symlink() or not path.is_file():
                continue
            node = self.read(self.ws.rel(path))
            if node is not None:
                out.append(node)
        return out

    def free_path(self, bucket: str, name: str) -> str:
        path, n = f"{self.prefix}{bucket}/{name}.md", 1
        while self.exists(path):
            n += 1
            path = f"{self.prefix}{bucket}/{name}-{n}.md"
        return path


def first_words(text: str, n: int = 16) -> str:
    w = text.split()
    return " ".join(w[:n]) + ("…" if len(w) > n else "")


def moved(ws: Workspace, p: Plan) -> list[str]:
    """Planned nodes whose file changed since they were read (another writer): not safe to write."""
    bad = []
    for rel in p.nodes:
        try:
            now = (ws.root / rel).read_text(encoding="utf-8")
        except FileNotFoundError:
            now = None
        except (OSError, UnicodeDecodeError):
            now = ""
        if now != p.base.get(rel):
            bad.append(rel)
    return bad
