"""Start-up fast path for `mem search`, `mem get` and `mem reindex`.

Importing typer costs ~0.1 s, most of a cold search's budget. These commands, the
ones agents, hooks and cron call in loops, are parsed here by a small table-driven
parser and run the same `execute` function as their typer commands. Anything unusual
(--help, an unknown option, a bad value) returns None and the typer app handles
it, with its usual messages.
"""

from __future__ import annotations

GLOBAL_VALUE = {"-w": "workspace", "--workspace": "workspace"}
GLOBAL_FLAG = {"-v": "verbose", "--verbose": "verbose"}


FAST = ("search", "get", "reindex")


def _commands():
    from memcli.cli import get, reindex, search

    return {"search": search, "get": get, "reindex": reindex}


def parse(argv: list[str]):
    """(command module, global options, command kwargs) or None to defer to typer."""
    glob: dict = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        # only long options take an attached "=value"; click reads "-w=x" as the value "=x"
        name, eq, val = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in GLOBAL_VALUE:
            if not eq:
                if i + 1 >= len(argv):
                    return None
                val = argv[i + 1]
                i += 1
            glob[GLOBAL_VALUE[name]] = val
        elif arg in GLOBAL_FLAG:
            glob[GLOBAL_FLAG[arg]] = True
        else:
            return None
        i += 1
    if i >= len(argv) or argv[i] not in FAST:
        return None
    module = _commands()[argv[i]]
    kwargs: dict = {}
    words: list[str] = []
    rest = argv[i + 1 :]
    j = 0
    only_words = False
    while j < len(rest):
        arg = rest[j]
        if only_words or not arg.startswith("-") or arg == "-":
            words.append(arg)
        elif arg == "--":
            only_words = True
        else:
            name, eq, val = arg.partition("=") if arg.startswith("--") else (arg, "", "")
            if name in ("-h", "--help") or name not in module.OPTIONS:
                return None
            key, kind = module.OPTIONS[name]
            if kind is bool:
                if eq:
                    return None
                kwargs[key] = True
            else:
                if not eq:
                    if j + 1 >= len(rest):
                        return None
                    val = rest[j + 1]
                    j += 1
                if isinstance(kind, tuple):  # a choice: typer words the error for a bad one
                    if val not in kind:
                        return None
                    kwargs[key] = val
                else:
                    try:
                        kwargs[key] = kind(val)
                    except ValueError:
                        return None
        j += 1
    positional = getattr(module, "POSITIONAL", None)
    if bool(words) != bool(positional):
        return None  # missing or unexpected arguments: typer says what is wrong
    if positional:
        kwargs[positional] = words
    return module, glob, kwargs


def run(argv: list[str]) -> int | None:
    parsed = parse(argv)
    if parsed is None:
        return None
    module, glob, kwargs = parsed
    from memcli.cli.context import Context
    from memcli.cli.errors import guarded

    ctx = Context(workspace=glob.get("workspace"), verbose=bool(glob.get("verbose")))
    with guarded(ctx.verbose):
        return module.execute(ctx, **kwargs)
