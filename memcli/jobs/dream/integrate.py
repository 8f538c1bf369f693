"""Integrate each unit into the digest: the digest as a run sees it, and the LLM's integration.

With an LLM, each unit recalls the existing nodes closest to it with our own search and the
model chooses one action; offline, jobs/dream/offline.py places facts into nodes itself.
Nothing is written here: the plan holds every node's new text in memory, so a later
unit sees what an earlier one decided, every LLM reply is validated before the
first write, and a dry run is the same code without the final write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from memcli.extraction.dream import write as dream_write
from memcli.extraction.dream.node import BUCKETS, Node, parse, statements
from memcli.extraction.dream.rules import terms
from memcli.extraction.dream.schema import Unit
from memcli.jobs import search
from memcli.vault import frontmatter
from memcli.vault.workspace import Workspace

RECALL_HITS = 60  # search hits looked at; daily notes outrank nodes for their own words, so look deep
RECALL_NODES = 8


@dataclass
class Result:
    unit: Unit
    action: str
    target_path: str
    note: str
    decided_by: str = ""  # LLM dream one statement at a time: "model", "rules" or "model+rules"
    decisions: list[dict] = field(default_factory=list)  # per statement: action, decided_by, reason

    def to_json(self) -> dict:
        out = {"unit": self.unit.name, "bucket": self.unit.bucket, "paths": self.unit.paths,
               "action": self.action, "target_path": self.target_path, "note": self.note}
        if self.decided_by:
            out["decided_by"], out["decisions"] = self.decided_by, self.decisions
        if self.unit.facts:  # offline: the statements the unit carried into the node
            out["facts"] = [f.line() for f in self.unit.facts]
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
        parts = rel[len(self.prefix):].split("/")
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


def first_words(text: str, n: int = 16) -> str:
    w = text.split()
    return " ".join(w[:n]) + ("…" if len(w) > n else "")


def with_llm(ws: Workspace, digest: Digest, unit: Unit, recalled: list[Node], chat, label: str,
             texts: dict[str, str]) -> tuple[Result, Node] | None:
    from memcli.extraction.dream import llm as dream_llm
    from memcli.extraction.dream.llm import Rejected

    receipt = dream_llm.integrate(chat, unit, ws.settings.digest_dir, [(p, texts[p]) for p in unit.paths],
                                  [(n.path, n.text()) for n in recalled], digest.exists, digest.body, label)
    verb = dream_write.VERB[receipt.action]
    body = dream_write.ensure_sources(receipt.body, unit.paths, verb, ws.date_of)
    if receipt.action == "CREATE":
        name = receipt.target_path.rsplit("/", 1)[-1][:-3]
        node = Node(receipt.target_path, {"name": name, "description": receipt.description}, body, existed=False)
    else:
        old = digest.read(receipt.target_path)
        if old is None:  # (the model named a node this run cannot read; it was shown none such)
            raise Rejected(f"{receipt.target_path} cannot be read, so it is not updated")
        meta = {**old.meta, **({"description": receipt.description} if receipt.description else {})}
        node = Node(old.path, meta, body, old.existed)
        if node.text() == old.text():
            return None
    return Result(unit, receipt.action, node.path, receipt.note), node


def plan(ws: Workspace, units: list[Unit], chat, label: str, texts: dict[str, str]) -> Plan:
    """The LLM's integration of each unit (offline dream plans in jobs/dream/offline.py)."""
    from memcli.extraction.dream.llm import Rejected

    out = Plan()
    digest = Digest(ws, out)
    for unit in units:
        recalled = recall(ws, digest, unit)
        try:
            done = with_llm(ws, digest, unit, recalled, chat, label, texts)
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

