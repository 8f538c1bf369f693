"""Integrate each unit into the digest: recall existing nodes with our own search, then one action.

Nothing is written here: the plan holds every node's new text in memory, so a later
unit sees what an earlier one decided, every LLM reply is validated before the
first write, and a dry run is the same code without the final write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from memcli.extraction.dream import match as dream_match, write as dream_write
from memcli.extraction.dream.node import BUCKETS, Node, parse, statements
from memcli.extraction.dream.rules import terms
from memcli.extraction.dream.schema import Unit
from memcli.jobs import search
from memcli.vault.workspace import Workspace

RECALL_HITS = 60  # search hits looked at; daily notes outrank nodes for their own words, so look deep
RECALL_NODES = 8


@dataclass
class Result:
    unit: Unit
    action: str
    target_path: str
    note: str

    def to_json(self) -> dict:
        return {"unit": self.unit.name, "bucket": self.unit.bucket, "paths": self.unit.paths,
                "action": self.action, "target_path": self.target_path, "note": self.note}


@dataclass
class Plan:
    results: list[Result] = field(default_factory=list)
    skipped: list[tuple[Unit, str]] = field(default_factory=list)
    failed: list[tuple[Unit, str]] = field(default_factory=list)
    nodes: dict[str, Node] = field(default_factory=dict)  # path -> new node
    base: dict[str, str | None] = field(default_factory=dict)  # path -> text it was planned from (None: new)


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
        parts = rel[len(self.prefix):].split("/")
        return rel.startswith(self.prefix) and rel.endswith(".md") and not parts[-1].startswith(("_", "."))

    def read(self, rel: str) -> Node | None:
        if rel in self.plan.nodes:
            return self.plan.nodes[rel]
        if not (_safe(rel) and self.is_node(rel)):
            return None
        try:
            text = (self.ws.root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        self.plan.base.setdefault(rel, text)
        return parse(rel, text)

    def body(self, rel: str) -> str | None:
        node = self.read(rel)
        return node.body if node else None

    def free_path(self, bucket: str, name: str) -> str:
        path, n = f"{self.prefix}{bucket}/{name}.md", 1
        while self.exists(path):
            n += 1
            path = f"{self.prefix}{bucket}/{name}-{n}.md"
        return path


def recall(ws: Workspace, digest: Digest, unit: Unit) -> list[Node]:
    """Existing nodes closest to the unit: keyword search restricted to digest paths, the node
    of the same name in any bucket, and nodes planned earlier in this run that share its words."""
    query = " ".join([unit.name.replace("-", " "), unit.summary])[:600]
    hits = search.run(ws, query, limit=RECALL_HITS, links=False, mode="keyword").hits
    paths = [h.path for h in hits if digest.is_node(h.path)]
    paths += [f"{digest.prefix}{b}/{unit.name}.md" for b in BUCKETS]
    ours = set(terms(f"{unit.name.replace('-', ' ')} {unit.summary}"))
    for rel, node in digest.plan.nodes.items():
        if node.name == unit.name or len(ours & set(terms(" ".join([node.name, *statements(node.body)])))) >= 2:
            paths.append(rel)
    out: list[Node] = []
    for rel in dict.fromkeys(paths):
        node = digest.read(rel) if digest.exists(rel) else None
        if node is not None:
            out.append(node)
    return out[:RECALL_NODES + 3]


def _first_words(text: str, n: int = 16) -> str:
    w = text.split()
    return " ".join(w[:n]) + ("…" if len(w) > n else "")


def offline(ws: Workspace, digest: Digest, unit: Unit, recalled: list[Node]) -> tuple[Result, Node] | None:
    decision = dream_match.decide(unit, recalled)
    target = decision.node.path if decision.node else None
    related = dream_match.related(unit, recalled, target)
    if decision.node is None:
        if not decision.new_facts:
            return None  # every fact is stated by some node already
        path = digest.free_path(unit.bucket, unit.name)
        node = dream_write.create(unit, path, ws.date_of, related)
        return Result(unit, "CREATE", path, f"new {unit.bucket} node: {_first_words(unit.facts[0].line())}"), node
    node = dream_write.update(decision.node, unit, decision, ws.date_of, related)
    if node is None:
        return None
    if decision.action == "CORRECT":
        f, old = decision.contradictions[0]
        note = f"contradicted: {_first_words(old, 12)!r} -> {_first_words(f.line(), 12)!r}"
    elif decision.action == "CORROBORATE":
        note = f"stated again in {len(decision.uncited) or 1} more source(s)"
    else:
        note = f"added {len(decision.new_facts)} statement(s)" + \
               (f": {_first_words(decision.new_facts[0].line())}" if decision.new_facts else "")
    return Result(unit, decision.action, node.path, note), node


def with_llm(ws: Workspace, digest: Digest, unit: Unit, recalled: list[Node], chat, label: str,
             texts: dict[str, str]) -> tuple[Result, Node] | None:
    from memcli.extraction.dream import llm as dream_llm

    receipt = dream_llm.integrate(chat, unit, ws.settings.digest_dir, [(p, texts[p]) for p in unit.paths],
                                  [(n.path, n.text()) for n in recalled], digest.exists, digest.body, label)
    verb = dream_write.VERB[receipt.action]
    body = dream_write.ensure_sources(receipt.body, unit.paths, verb, ws.date_of)
    if receipt.action == "CREATE":
        name = receipt.target_path.rsplit("/", 1)[-1][:-3]
        node = Node(receipt.target_path, {"name": name, "description": receipt.description}, body, existed=False)
    else:
        old = digest.read(receipt.target_path)
        meta = {**old.meta, **({"description": receipt.description} if receipt.description else {})}
        node = Node(old.path, meta, body, old.existed)
        if node.text() == old.text():
            return None
    return Result(unit, receipt.action, node.path, receipt.note), node


def plan(ws: Workspace, units: list[Unit], chat=None, label: str = "rules",
         texts: dict[str, str] | None = None) -> Plan:
    from memcli.extraction.dream.llm import Rejected

    out = Plan()
    digest = Digest(ws, out)
    for unit in units:
        recalled = recall(ws, digest, unit)
        try:
            done = with_llm(ws, digest, unit, recalled, chat, label, texts or {}) if chat \
                else offline(ws, digest, unit, recalled)
        except Rejected as exc:
            # this unit only: its sources stay "changed" and are dreamed again next run
            out.failed.append((unit, exc.line()))
            continue
        if done is None:
            out.skipped.append((unit, "already in the digest"))
            continue
        result, node = done
        out.nodes[node.path] = node
        out.results.append(result)
    return out


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

