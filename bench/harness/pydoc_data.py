"""The second, non-conversational corpus: Python's own docstrings as one vault.

Built from the docstrings of a fixed list of standard-library modules of the running
Python (PSF text that every Python install carries, so nothing is downloaded): one note
per module, `digest/wiki/<module>.md`, a `## <qualified name>` section per public
function, class and method holding its signature and its docstring *without the summary
paragraph*. The summary paragraph is the query; the relevant item is that section.
Categories: 1 function, 2 class, 3 method. The numbers depend a little on the Python
version (docstrings change); the JSON records it.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import platform
import re
import warnings
from pathlib import Path

from bench.harness.vaults import Question, Vault, write_if_changed

KINDS = {1: "function", 2: "class", 3: "method"}
ADDRESS = re.compile(r"( at 0x)([0-9a-fA-F]+)")
MAX_QUERIES = 800
MODULES = (
    "argparse",
    "ast",
    "base64",
    "bisect",
    "calendar",
    "collections",
    "configparser",
    "contextlib",
    "copy",
    "csv",
    "dataclasses",
    "datetime",
    "difflib",
    "email.utils",
    "enum",
    "filecmp",
    "fnmatch",
    "fractions",
    "functools",
    "getopt",
    "glob",
    "gzip",
    "heapq",
    "hmac",
    "html",
    "http.cookies",
    "inspect",
    "ipaddress",
    "json",
    "logging",
    "mimetypes",
    "netrc",
    "operator",
    "pathlib",
    "pickle",
    "pprint",
    "queue",
    "random",
    "re",
    "sched",
    "secrets",
    "shlex",
    "shutil",
    "statistics",
    "string",
    "subprocess",
    "tarfile",
    "tempfile",
    "textwrap",
    "threading",
    "timeit",
    "tokenize",
    "traceback",
    "urllib.parse",
    "uuid",
    "warnings",
    "zipfile",
    "cmd",
    "codecs",
    "doctest",
    "email.message",
    "ftplib",
    "gettext",
    "http.client",
    "imaplib",
    "locale",
    "mailbox",
    "optparse",
    "pdb",
    "posixpath",
    "smtplib",
    "socketserver",
    "typing",
    "unittest.case",
    "urllib.request",
    "xml.dom.minidom",
    "xml.etree.ElementTree",
)


def _doc(obj) -> str:
    d = obj.__doc__ if isinstance(getattr(obj, "__doc__", None), str) else ""
    return inspect.cleandoc(d) if d else ""


def _signature(name: str, obj) -> str:
    """`name(params)`; object addresses in default values (`<object object at 0x7f...>`,
    different in every process) zeroed, same length, so the notes are the same every run."""
    try:
        sig = f"{name}{inspect.signature(obj)}"
    except (TypeError, ValueError):
        return name
    return ADDRESS.sub(lambda m: m.group(1) + "0" * len(m.group(2)), sig)


def _split(doc: str) -> tuple[str, str]:
    """(summary paragraph as one line, the rest)."""
    paras = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)
    summary = " ".join(paras[0].split())
    return summary, paras[1].strip() if len(paras) > 1 else ""


def members(mod):
    """(kind, qualified name, object) of public functions, classes and their own methods."""
    name = mod.__name__
    for attr in sorted(dir(mod)):
        if attr.startswith("_"):
            continue
        obj = getattr(mod, attr, None)
        if getattr(obj, "__module__", None) != name:
            continue  # imported from elsewhere
        if inspect.isclass(obj):
            yield 2, f"{name}.{attr}", obj
            for meth in sorted(vars(obj)):
                fn = vars(obj)[meth]
                if meth.startswith("_") or not (inspect.isfunction(fn) or isinstance(fn, (classmethod, staticmethod))):
                    continue
                yield 3, f"{name}.{attr}.{meth}", getattr(fn, "__func__", fn)
        elif inspect.isfunction(obj):
            yield 1, f"{name}.{attr}", obj


def build(out: Path, max_queries: int = MAX_QUERIES) -> tuple[list[Vault], dict]:
    """The pydoc vault under out/vault and a fixed, spread sample of at most max_queries queries."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated modules (typing.io) still document fine
        vault = Vault("pydoc", out / "vault")
        stats = {"python": platform.python_version(), "modules": 0, "sections": 0, "candidates": 0}
        queries: list[Question] = []
        for modname in MODULES:
            try:
                mod = importlib.import_module(modname)
            except ImportError:
                continue
            rel = f"digest/wiki/{modname}.md"
            write_if_changed(vault.root / rel, _note(mod, modname, rel, stats, queries))
            stats["modules"] += 1
    stats["candidates"] = len(queries)
    # by hash of the qualified name, so the sample does not follow module order
    queries.sort(key=lambda q: hashlib.sha1(q.qid.encode()).hexdigest())
    vault.questions = queries[:max_queries]
    stats["questions"] = len(vault.questions)
    return [vault], stats


def _note(mod, modname: str, rel: str, stats: dict, queries: list[Question]) -> str:
    """The module's note; appends the queries it yields (a summary paragraph with a body)."""
    summary, _ = _split(_doc(mod))
    lines = [f"# {modname}", ""]
    if summary:
        lines += [summary, ""]
    for kind, qual, obj in members(mod):
        doc = _doc(obj)
        if not doc:
            continue
        short, body = _split(doc)
        is_query = 4 <= len(short.split()) <= 40 and len(body.split()) >= 6
        start = len(lines) + 1
        lines += [f"## {qual}", "", f"`{_signature(qual.rsplit('.', 1)[-1], obj)}`", ""]
        text = body if is_query else doc
        lines += [x.rstrip() for x in text.split("\n")]
        end = len(lines)
        lines.append("")
        stats["sections"] += 1
        if is_query:
            queries.append(Question(f"{qual}", short, kind, [(rel, start, end)]))
    return "\n".join(lines) + "\n"
