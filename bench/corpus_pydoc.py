#!/usr/bin/env python3
"""A second, non-conversational retrieval set for `mem search`: Python's own docstrings.

    python bench/corpus_pydoc.py                     # keyword, default chunking
    python bench/corpus_pydoc.py --mode hybrid --set search.vector_weight=0.3
    python bench/corpus_pydoc.py --sweep headline

Built from the docstrings of a fixed list of standard-library modules of the running
Python (public domain-like PSF text that every Python install carries, so nothing is
downloaded): one note per module, `digest/wiki/<module>.md`, a `## <qualified name>`
section per public function, class and method holding its signature and its docstring
*without the summary paragraph*. The summary paragraph is the query; the relevant item
is that section. So a query has one relevant section, phrased differently from the text
that has to be found (the body, signature and name), as in a title-to-passage task.

Levels, as in bench/locomo.py: "note" (the module's file; keys session_*) and
"section" (keys turn_*: a hit finds the section when its lines intersect it and it
holds at most BUDGET estimated tokens). Categories: 1 function, 2 class, 3 method. The numbers
depend a little on the Python version (docstrings change); the JSON records it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import inspect
import platform
import re
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import locomo  # the runner, metrics, variants and sweeps (after the sys.path line above)

DEFAULT_OUT = HERE / "out" / "pydoc"
KINDS = {1: "function", 2: "class", 3: "method"}
BUDGET = locomo.TURN_BUDGET  # the same token budget per hit as on LoCoMo
MAX_QUERIES = 800
MODULES = (
    "argparse", "ast", "base64", "bisect", "calendar", "collections", "configparser", "contextlib", "copy",
    "csv", "dataclasses", "datetime", "difflib", "email.utils", "enum", "filecmp", "fnmatch", "fractions",
    "functools", "getopt", "glob", "gzip", "heapq", "hmac", "html", "http.cookies", "inspect", "ipaddress",
    "json", "logging", "mimetypes", "netrc", "operator", "pathlib", "pickle", "pprint", "queue", "random",
    "re", "sched", "secrets", "shlex", "shutil", "statistics", "string", "subprocess", "tarfile", "tempfile",
    "textwrap", "threading", "timeit", "tokenize", "traceback", "urllib.parse", "uuid", "warnings", "zipfile",
    "cmd", "codecs", "doctest", "email.message", "ftplib", "gettext", "http.client", "imaplib", "locale",
    "mailbox", "optparse", "pdb", "posixpath", "smtplib", "socketserver", "typing", "unittest.case",
    "urllib.request", "xml.dom.minidom", "xml.etree.ElementTree",
)


def _doc(obj) -> str:
    d = obj.__doc__ if isinstance(getattr(obj, "__doc__", None), str) else ""
    return inspect.cleandoc(d) if d else ""


def _signature(name: str, obj) -> str:
    try:
        return f"{name}{inspect.signature(obj)}"
    except (TypeError, ValueError):
        return name


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


def build(out: Path, max_queries: int = MAX_QUERIES) -> tuple[list[locomo.Vault], dict]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated modules (typing.io) still document fine
        return _build(out, max_queries)


def _build(out: Path, max_queries: int) -> tuple[list[locomo.Vault], dict]:
    vault = locomo.Vault("pydoc", out / "vault")
    stats = {"python": platform.python_version(), "modules": 0, "sections": 0, "candidates": 0}
    queries = []
    for modname in MODULES:
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            continue
        rel = f"digest/wiki/{modname}.md"
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
                queries.append(locomo.Question(f"{qual}", short, kind, [(rel, start, end)]))
        locomo.write_if_changed(vault.root / rel, "\n".join(lines) + "\n")
        stats["modules"] += 1
    stats["candidates"] = len(queries)
    # a fixed, spread sample: by hash of the qualified name, so it does not follow module order
    queries.sort(key=lambda q: hashlib.sha1(q.qid.encode()).hexdigest())
    vault.questions = queries[:max_queries]
    stats["questions"] = len(vault.questions)
    return [vault], stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--mode", choices=("keyword", "vector", "hybrid"), default="keyword")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--variant", default="")
    ap.add_argument("--budget", type=int, default=BUDGET)
    ap.add_argument("--sweep", help="a named sweep of bench/locomo.py")
    ap.add_argument("--max-queries", type=int, default=MAX_QUERIES)
    ap.add_argument("--markdown", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--details", action="store_true", help="per-query metrics and hits in the JSON "
                    "(for `bench/locomo.py --compare`)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    vaults, stats = build(args.out_dir, args.max_queries)
    print(f"pydoc: Python {stats['python']}, {stats['modules']} modules, {stats['sections']} sections, "
          f"{stats['questions']} of {stats['candidates']} queries", file=sys.stderr)
    kw = {"budget": args.budget, "categories": KINDS, "details": args.details}
    if args.sweep:
        docs = locomo.run_sweep(args.sweep, vaults, args, **kw)
        result: dict = {"sweep": args.sweep, "data": stats, "runs": docs}
        md = locomo.markdown(docs)
        print("\n" + md, file=sys.stderr)
        if args.markdown:
            args.markdown.write_text(md + "\n", encoding="utf-8")
    else:
        sets = locomo.parse_sets(args.set)
        result = locomo.evaluate(vaults, mode=args.mode, sets=sets, spec=locomo.parse_variant(args.variant), **kw)
        result["data"] = stats
        print(locomo.table(result, f"pydoc mode={args.mode} set={sets} variant={args.variant or '-'}"),
              file=sys.stderr)
    locomo.write_result(result, args.out, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
