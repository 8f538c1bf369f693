"""A seeded generator of hostile inputs for every command (the bad-input campaign's cases).

Each generator takes a random.Random and returns a Case: files to plant in a fresh copy of the
sample vault (or beside it), the mem arguments, and optional stdin. Nothing here knows what mem
should answer; the campaign checks only what must hold for any input (see test_bad_input.py).
`{ws}`, `{in}`, `{out}` and `{backup}` in arguments are filled in per case.
"""

from __future__ import annotations

import io
import json
import math
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

DAY = "2026-06-29"
SECRET = "OUTSIDESECRET"  # planted outside the workspace; no output may ever show it
BAD_ARG = "not\udcffutf8"  # argv bytes that are not UTF-8 reach Python as lone surrogates
WINDOWS_NAMES = ["CON", "con", "PRN", "AUX", "NUL", "nul.txt", "COM1", "LPT9", "con.md", "aux.tar"]
CONTROL_NAMES = ["tab\there", "new\nline", "bell\x07", "esc\x1b[31m", "del\x7f", "cr\rname", "x\x01y"]


@dataclass
class Case:
    kind: str
    args: list[str]
    files: dict[str, bytes] = field(default_factory=dict)  # path (with {ws}/{in}) -> content
    links: dict[str, str] = field(default_factory=dict)  # path -> symlink target
    stdin: bytes | None = None
    env: dict[str, str] = field(default_factory=dict)
    setup: Callable | None = None  # setup(ws, folder): anything files cannot say

    def label(self) -> str:
        return f"{self.kind}: mem {' '.join(self.args)[:160]!r}"


def _conversation(r, n=None) -> list[dict]:
    n = n or r.randint(1, 8)
    return [
        {
            "role": r.choice(["user", "assistant"]),
            "content": f"We decided thing {i} about falcon.",
            "timestamp": f"{DAY}T10:{i % 60:02d}:00+00:00",
            "id": f"m{i}",
        }
        for i in range(n)
    ]


def _nested(r, depth: int) -> str:
    kind = r.choice(["list", "dict", "mixed"])
    if kind == "list":
        return "[" * depth + "]" * depth
    if kind == "dict":
        return '{"a":' * depth + "1" + "}" * depth
    return '[{"content":' * depth + '"x"' + "}]" * depth


def _mutate(r, data: bytes) -> bytes:
    data = bytearray(data)
    for _ in range(r.randint(1, 6)):
        op = r.choice(["flip", "cut", "insert", "dup"])
        if not data:
            break
        i = r.randrange(len(data))
        if op == "flip":
            data[i] = r.randrange(256)
        elif op == "cut":
            del data[i:]
        elif op == "insert":
            data[i:i] = bytes(r.choice([b"\x00", b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b'"', b"}", b"\\u", b"\n"]))
        else:
            data[i:i] = data[i : i + r.randint(1, 50)]
    return bytes(data)


# ingest: what an agent might pipe in ---------------------------------------------------------------


def ingest_payload(r) -> Case:
    conv = _conversation(r)
    choice = r.choice(
        [
            "malformed",
            "nested",
            "nested-in-field",
            "huge-content",
            "many",
            "jsonl",
            "utf8",
            "nul",
            "surrogate",
            "long-line",
            "types",
            "timestamps",
            "empty",
            "object",
        ]
    )
    if choice == "malformed":
        body = _mutate(r, json.dumps(conv).encode())
    elif choice == "nested":
        body = _nested(r, r.choice([50, 1000, 5000, 100_000])).encode()
    elif choice == "nested-in-field":
        conv[0]["content"] = json.loads(_nested(r, 300)) if r.random() < 0.5 else None
        body = json.dumps(conv).encode()[:-1] + b"," + b'{"role":"user","content":' + _nested(r, 20000).encode() + b"}]"
    elif choice == "huge-content":
        conv[0]["content"] = "falcon " * r.choice([10_000, 200_000, 1_500_000])
        body = json.dumps(conv).encode()
    elif choice == "many":
        body = json.dumps(_conversation(r, r.choice([500, 5000, 30_000]))).encode()
    elif choice == "jsonl":
        lines = [json.dumps(m) for m in conv] + [r.choice(["{", "[]", "null", "1", '"x"', "{}", "\x00", "  "])]
        r.shuffle(lines)
        body = r.choice(["\n", "\r\n"]).join(lines).encode()
    elif choice == "utf8":
        raw = json.dumps(conv, ensure_ascii=False).encode()
        i = r.randrange(len(raw))
        body = raw[:i] + r.choice([b"\xff", b"\xc3\x28", b"\xe2\x82", b"\xf0\x28\x8c\xbc", b"\xed\xa0\x80"]) + raw[i:]
    elif choice == "nul":
        conv[0]["content"] = "before\x00after"
        body = json.dumps(conv).encode() if r.random() < 0.5 else json.dumps(conv).encode().replace(b"\\u0000", b"\x00")
    elif choice == "surrogate":
        body = (
            json.dumps(conv)
            .encode()
            .replace(b"We decided", r.choice([b"\\ud800 We decided", b"\\udfff", b"\\ud83d\\ude00 ok"]), 1)
        )
    elif choice == "long-line":
        body = (json.dumps({"role": "user", "content": "x" * r.choice([1 << 20, 6 << 20])}) + "\n").encode()
    elif choice == "types":
        m = dict(conv[0])
        key = r.choice(["role", "content", "id", "name", "timestamp", "metadata", "tool_calls"])
        m[key] = r.choice(
            [
                None,
                1,
                1.5,
                True,
                [],
                {},
                [1, 2],
                {"type": 5},
                [{"type": "text"}],
                [{"type": "text", "text": ["x"]}],
                [{"type": "image", "source": "x"}],
                "x" * 300,
                -1,
                [{"type": "tool_use", "input": {"a": float("nan")} if False else "x"}],
            ]
        )
        body = json.dumps([m, *conv[1:]]).encode()
    elif choice == "timestamps":
        conv[0]["timestamp"] = r.choice(
            [
                "9999-12-31T23:59:59",
                "0001-01-01",
                "2026-02-30T00:00:00",
                "yesterday",
                -1,
                1e20,
                2**70,
                "",
                "2026-06-29T25:00:00+00:00",
                1.7e12,
                "NaN",
                True,
            ]
        )
        body = json.dumps(conv).encode()
    elif choice == "empty":
        body = r.choice([b"", b" ", b"\n\n", b"[]", b"{}", b'{"messages": []}', b"null", b"\xef\xbb\xbf"])
    else:
        body = json.dumps(r.choice([{"messages": conv}, conv[0], {"messages": "x"}, {"messages": [1]}])).encode()
    args = [
        "-w",
        "{ws}",
        "ingest",
        "-s",
        _session_id(r) if r.random() < 0.25 else "fuzz",
        *(["--force"] if r.random() < 0.8 else []),
        *r.choice([[], ["--format", "jsonl"], ["--format", "openai"]]),
    ]
    if r.random() < 0.5:
        return Case("ingest", args, stdin=body)
    return Case("ingest", [*args, "{in}/conv.json"], files={"{in}/conv.json": body})


def _session_id(r) -> str:
    return r.choice(
        [
            *WINDOWS_NAMES,
            *CONTROL_NAMES,
            "..",
            ".",
            "a/b",
            "a\\b",
            " lead",
            "trail ",
            "x" * 300,
            BAD_ARG,
            "日本語-セッション",
            "emoji-😀",
            "-dash",
            "--force",
            "a:b",
            "q?",
            "*",
            "ok-id",
        ]
    )


# notes: whatever a user or a sync tool leaves in memory/ and digest/ --------------------------------


def _bad_note(r) -> tuple[str, bytes]:
    kind = r.choice(
        [
            "fm-list",
            "fm-scalar",
            "fm-bomb",
            "fm-deep",
            "fm-broken",
            "fm-huge",
            "links",
            "utf8",
            "nul",
            "long-line",
            "bom-crlf",
            "fm-types",
            "fm-unclosed",
            "links-bad",
        ]
    )
    body = "# Title\n\nSome falcon text.\n"
    if kind == "fm-list":
        return kind, f"---\n- a\n- b\n---\n{body}".encode()
    if kind == "fm-scalar":
        return (
            kind,
            f"---\n{r.choice(['just text', '42', 'null', '~', '[1, 2]', '!!binary aGk='])}\n---\n{body}".encode(),
        )
    if kind == "fm-bomb":
        lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
        for i, n in enumerate("bcdefghi"):
            lines.append(f"{n}: &{n} [" + ",".join([f"*{'abcdefgh'[i]}"] * 9) + "]")
        return kind, ("---\n" + "\n".join(lines) + f"\nname: bomb\n---\n{body}").encode()
    if kind == "fm-deep":
        depth = r.choice([100, 3000, 50_000])
        return kind, f"---\nname: deep\nx: {'[' * depth}{']' * depth}\n---\n{body}".encode()
    if kind == "fm-broken":
        return kind, f"---\nname: [unclosed\ndescription: {{: :}}\n\t- tab\n---\n{body}".encode()
    if kind == "fm-huge":
        return kind, (
            "---\nname: huge\ndescription: " + "y" * r.choice([70_000, 2_000_000]) + f"\n---\n{body}"
        ).encode()
    if kind == "links":
        n = r.choice([1000, 50_000, 300_000])
        return kind, (body + "".join(f"[[memory/{DAY}/n{i % 97}.md|alias]] " for i in range(n))).encode()
    if kind == "links-bad":
        return kind, (
            body + "[[" * 10_000 + "]]" * 3 + "[[../../etc/passwd]] [[/abs]] [[a#b#c|d|e]] [[]] [[\x00]]"
        ).encode()
    if kind == "utf8":
        return kind, b"---\nname: bad\n---\n# T\n" + bytes(r.randrange(256) for _ in range(200)) + b"\xff\xfe\n"
    if kind == "nul":
        return kind, b"---\nname: nul\n---\n# T\nbefore\x00after falcon\n"
    if kind == "long-line":
        return kind, ("# T\n" + "falcon " * r.choice([200_000, 1_500_000]) + "\n").encode()
    if kind == "bom-crlf":
        return kind, "\ufeff---\r\nname: bom\r\n---\r\n# T\r\nfalcon\r\n".encode()
    if kind == "fm-types":
        value = r.choice(["[1, {a: b}]", "{a: [1, 2]}", "2026-06-29", "1e999", ".nan", "!!timestamp x", "? complex"])
        return kind, f"---\nname: {value}\ndescription: {value}\nsession_id: {value}\n---\n{body}".encode()
    return kind, f"---\nname: unclosed\n{body}".encode()


NOTE_COMMANDS = [
    ["reindex"],
    ["reindex", "--full"],
    ["search", "falcon", "--json"],
    ["search", "falcon"],
    ["health", "--json"],
    ["dream", "--date", DAY],
    ["ingest", "{in}/conv.json", "-s", "fuzz", "--force"],
    ["resource", "scan"],
    ["backup", "create", "--out", "{out}"],
    ["remember", "a fuzz fact"],
    ["get", f"memory/{DAY}"],
    ["inbox"],
]


def bad_notes(r) -> Case:
    files = {"{in}/conv.json": json.dumps(_conversation(r)).encode()}
    kinds = []
    for _ in range(r.randint(1, 4)):
        kind, data = _bad_note(r)
        kinds.append(kind)
        folder = r.choice([f"memory/{DAY}", "memory/2026-06-28", "digest/wiki", f"memory/{DAY}/sub"])
        files[f"{{ws}}/{folder}/{kind}-{r.randrange(1000)}.md"] = data
    if r.random() < 0.3:
        files["{ws}/MEMORY.md"] = _bad_note(r)[1]
    cmd = r.choice(NOTE_COMMANDS)
    if cmd[0] == "get":
        cmd = ["get", next(iter(k for k in files if k.startswith("{ws}")))[len("{ws}/") :]]
    return Case("notes:" + ",".join(kinds), ["-w", "{ws}", *cmd], files=files)


def odd_names(r) -> Case:
    """Note and resource files with control characters, Windows device names, odd day folders."""
    files = {"{in}/conv.json": json.dumps(_conversation(r)).encode()}
    for _ in range(r.randint(1, 3)):
        name = r.choice([*WINDOWS_NAMES, *CONTROL_NAMES, "-rf", " space ", ".hidden", "x" * 250, "日本", "a.b.c"])
        where = r.choice(
            [
                f"memory/{DAY}/{name}.md",
                f"resource/{name}.txt",
                f"resource/{DAY}/{name}.md",
                f"memory/{name}/n.md",
                f"memory/2026-13-45/{name}.md",
                f"digest/{name}.md",
                f"memory/{DAY} copy/{name}.md",
            ]
        )
        files["{ws}/" + where] = f"# {name!r}\n\nfalcon text\n".encode("utf-8", "surrogateescape")
    cmd = r.choice(NOTE_COMMANDS)
    if cmd[0] == "get":
        cmd = ["get", next(iter(k for k in files if k.startswith("{ws}")))[len("{ws}/") :]]
    return Case("names", ["-w", "{ws}", *cmd], files=files)


def symlinks_out(r) -> Case:
    """Symlinks that lead out of the workspace: never followed, never shown."""
    files = {
        "{outside}/secret.md": f"# Secret\n\n{SECRET} falcon\n".encode(),
        "{outside}/dir/secret.md": f"# Secret\n\n{SECRET}\n".encode(),
        "{in}/conv.json": json.dumps(_conversation(r)).encode(),
    }
    links = {}
    for _ in range(r.randint(1, 3)):
        where = r.choice(
            [
                f"{{ws}}/memory/{DAY}/link.md",
                "{ws}/memory/2026-07-01",
                "{ws}/digest/wiki/link.md",
                "{ws}/MEMORY.md.lnk",
                "{ws}/resource/link.md",
                "{ws}/resource/dir",
                "{ws}/digest/personal",
            ]
        )
        target = "{outside}/dir" if not where.endswith(".md") else "{outside}/secret.md"
        links[where] = target
    cmd = r.choice(
        [*NOTE_COMMANDS, ["get", f"memory/{DAY}/link.md"], ["search", SECRET, "--json"], ["get", "resource/link.md"]]
    )
    return Case("symlink", ["-w", "{ws}", *cmd], files=files, links=links)


def bad_resources(r) -> Case:
    files = {}
    for i in range(r.randint(1, 4)):
        suffix = r.choice(["json", "jsonl", "yaml", "csv", "html", "txt", "md"])
        kind = r.choice(["binary", "utf8", "deep", "bomb", "huge-field", "huge", "empty", "utf16", "garbage"])
        if kind == "binary":
            data = bytes(r.randrange(256) for _ in range(3000))
        elif kind == "utf8":
            data = b"ok text \xff\xfe more\n"
        elif kind == "deep":
            depth = r.choice([500, 20_000, 200_000])
            data = (_nested(r, depth) if suffix != "yaml" else "a: " + "[" * depth + "]" * depth).encode()
            if suffix == "jsonl":
                data = data + b"\n" + data
        elif kind == "bomb":
            data = (
                _bad_note(r)[1]
                if suffix != "yaml"
                else (
                    'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
                    + "\n".join(f"{n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]" for p, n in zip("abcdefgh", "bcdefghi"))
                ).encode()
            )
        elif kind == "huge-field":
            data = ('a,b\n"' + "x" * r.choice([200_000, 2_000_000]) + '",2\n').encode()
        elif kind == "huge":
            data = b"falcon " * r.choice([10, 1_600_000])
        elif kind == "empty":
            data = r.choice([b"", b"\n", b"   ", b"\xef\xbb\xbf"])
        elif kind == "utf16":
            data = "hello falcon".encode("utf-16")
        else:
            data = _mutate(r, b'{"a": [1, 2, {"b": "c"}], "d": "<html><script>x</script>"}\n' * 3)
        files[f"{{ws}}/resource/{r.choice([DAY, 'misc'])}/{kind}-{i}.{suffix}"] = data
    return Case("resources", ["-w", "{ws}", "resource", "scan", *(["--json"] if r.random() < 0.5 else [])], files=files)


# configuration --------------------------------------------------------------------------------------

WRONG = [
    None,
    1,
    -1,
    0,
    1.5,
    float("inf"),
    True,
    "text",
    "",
    [],
    ["a"],
    [1],
    {},
    {"a": 1},
    "2026-06-29",
    10**30,
    "../outside",
    "/abs",
    "~",
    "nan",
    "-5",
    "１２",
]
CONFIG_KEYS = [
    "metadata_dir",
    "session_dir",
    "resource_dir",
    "daily_dir",
    "digest_dir",
    "summarize_when_compact",
    "inbox_push_enabled",
    "auto_memory_interval",
    "dream_cron_enabled",
    "dream_cron",
    "timezone",
    "extra_paths",
    "backup_dir",
    "inbox_webhook_url",
    "search.limit",
    "search.vector_weight",
    "search.candidate_multiplier",
    "search.rrf_k",
    "search.max_links_per_direction",
    "search.sync_before_search_max_files",
    "chunking.target_tokens",
    "chunking.overlap_tokens",
    "embedding_model_config.backend",
    "embedding_model_config.dimensions",
    "embedding_model_config.max_batch_size",
    "embedding_model_config.timeout",
    "embedding_model_config",
    "llm_model_config.backend",
    "llm_model_config.timeout",
    "llm_model_config.headers",
    "auto_memory_search_config.max_results",
    "search",
    "unknown_key",
]
CONFIG_COMMANDS = [
    ["config"],
    ["search", "falcon"],
    ["health", "--json"],
    ["reindex"],
    ["dream", "--date", DAY],
    ["ingest", "{in}/conv.json", "-s", "fuzz", "--force"],
    ["resource", "scan"],
    ["remember", "fact"],
    ["dream", "--if-due", "--no-jitter"],
    ["schedule"],
    ["get", "MEMORY.md"],
    ["inbox"],
    ["backup", "create", "--out", "{out}"],
    ["backup", "list"],
]


def _yaml_value(v) -> str:
    return ".inf" if isinstance(v, float) and not math.isfinite(v) else json.dumps(v)


def bad_config(r) -> Case:
    kind = r.choice(["wrong-type", "wrong-type", "not-mapping", "invalid", "utf8", "bomb", "deep", "agent-json", "env"])
    files = {"{in}/conv.json": json.dumps(_conversation(r)).encode()}
    env = {}
    if kind == "wrong-type":
        lines = []
        for _ in range(r.randint(1, 3)):
            key = r.choice(CONFIG_KEYS)
            value = _yaml_value(r.choice(WRONG))
            if "." in key:
                a, b = key.split(".")
                lines.append(f"{a}:\n  {b}: {value}")
            else:
                lines.append(f"{key}: {value}")
        text = "\n".join(lines)  # a repeated section: YAML keeps the last one
        files["{ws}/mem.yaml"] = text.encode()
    elif kind == "not-mapping":
        files["{ws}/mem.yaml"] = r.choice([b"- a\n- b\n", b"just text\n", b"42\n", b"[1, 2]\n", b"---\n---\n"])
    elif kind == "invalid":
        files["{ws}/mem.yaml"] = r.choice(
            [
                b"a: [\n",
                b"search: {limit: }}\n",
                b"\tkey: value\n",
                b"a: b: c\n",
                b"%YAML 9.9\n---\na: 1\n",
                b"!!python/object:os.system x\n",
            ]
        )
    elif kind == "utf8":
        files["{ws}/mem.yaml"] = b"timezone: \xff\xfe\n"
    elif kind == "bomb":
        key = r.choice(["timezone", "search", "chunking", "extra_paths", "unknown", "embedding_model_config"])
        lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
        for i, n in enumerate("bcdefghi"):
            lines.append(f"{n}: &{n} [" + ",".join([f"*{'abcdefgh'[i]}"] * 9) + "]")
        files["{ws}/mem.yaml"] = (f"{key}:\n" + "\n".join("  " + x for x in lines) + "\n").encode()
    elif kind == "deep":
        depth = r.choice([100, 5000, 100_000])
        files["{ws}/mem.yaml"] = f"search: {'[' * depth}{']' * depth}\n".encode()
    elif kind == "agent-json":
        files["{ws}/agent.json"] = r.choice(
            [
                b"{",
                b"[]",
                b'{"running": 5}',
                b'{"running": {"reme_light_memory_config": []}}',
                b'{"running": {"reme_light_memory_config": {"daily_dir": 5, "search": "x"}}}',
                ('{"running": {"reme_light_memory_config": ' + _nested(r, 50_000) + "}}").encode(),
                b"\xff\xfe{}",
                b'{"running": {"reme_light_memory_config": {"dream_cron": "every day"}}}',
            ]
        )
    else:
        var = r.choice(
            [
                "MEM_EMBEDDING_DIMENSIONS",
                "MEM_TIMEZONE",
                "MEM_EMBEDDING_BACKEND",
                "MEM_LLM_BACKEND",
                "MEM_BACKUP_DIR",
                "MEM_INBOX_WEBHOOK_URL",
                "MEM_WORKSPACE",
                "MEM_LLM_BASE_URL",
            ]
        )
        env[var] = r.choice(
            [
                "abc",
                "-1",
                "Mars/Olympus",
                "nonsense",
                "/dev/null",
                "http://",
                "x" * 500,
                "0",
                "file:///etc/passwd",
                "\u00e9",
            ]
        )
    return Case(f"config:{kind}", ["-w", "{ws}", *r.choice(CONFIG_COMMANDS)], files=files, env=env)


def cron_strings(r) -> Case:
    cron = r.choice(
        [
            "every day",
            "* * * *",
            "* * * * * *",
            "61 * * * *",
            "0 24 * * *",
            "@reboot",
            "@daily",
            "",
            "0 23 * * 8",
            "*/0 * * * *",
            "0 23 31 2 *",
            "☃ * * * *",
            "0 23 * * *" * 50,
            "-1 * * * *",
            "0 0 1-40 * *",
            "0 0 L * *",
            "0 23 * * MON-XYZ",
            "\x00",
            "1,2,,3 * * * *",
            "0 0 0 0 0",
        ]
    )
    cmd = r.choice(
        [["health", "--json"], ["dream", "--if-due", "--no-jitter"], ["schedule"], ["config"], ["dream", "--date", DAY]]
    )
    return Case("cron", ["-w", "{ws}", *cmd], files={"{ws}/mem.yaml": f"dream_cron: {json.dumps(cron)}\n".encode()})


# backups ----------------------------------------------------------------------------------------------


def _zip(entries: dict[str, bytes], symlink: str | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = 0o120777 << 16
            zf.writestr(info, "/etc")
    return buf.getvalue()


def bad_backup(r) -> Case:
    kind = r.choice(
        [
            "random",
            "empty",
            "text",
            "truncated",
            "flipped",
            "no-meta",
            "bad-meta",
            "slip",
            "symlink",
            "deep-meta",
            "dup",
            "huge-meta-claim",
        ]
    )
    meta_ok = {
        "format": "mem-backup",
        "format_version": 1,
        "modules": ["vault"],
        "slots": {"vault": ["memory"]},
        "files": [{"path": "memory/x.md", "module": "vault", "size": 2, "sha256": "0" * 64}],
    }
    setup = None
    if kind == "random":
        data = bytes(r.randrange(256) for _ in range(r.choice([10, 5000])))
    elif kind == "empty":
        data = b""
    elif kind == "text":
        data = b"PK\x03\x04 this is not really a zip\n"
    elif kind in ("truncated", "flipped"):
        data = b""
        damage_seed = r.random()

        def setup(ws, folder, kind=kind, seed=damage_seed):
            import random as _random

            raw = bytearray(Path(folder["backup"]).read_bytes())
            rr = _random.Random(seed)
            if kind == "truncated":
                del raw[rr.randrange(1, len(raw)) :]
            else:
                for _ in range(rr.randint(1, 5)):
                    raw[rr.randrange(len(raw))] ^= 1 << rr.randrange(8)
            (folder["in"] / "backup.zip").write_bytes(bytes(raw))
    elif kind == "no-meta":
        data = _zip({"memory/x.md": b"hi"})
    elif kind == "bad-meta":
        meta = dict(meta_ok)
        key = r.choice(list(meta))
        meta[key] = r.choice(WRONG)
        data = _zip({"meta.json": json.dumps(meta).encode(), "memory/x.md": b"hi"})
    elif kind == "slip":
        name = r.choice(
            [
                "../evil.md",
                "/abs/evil.md",
                "memory/../../evil.md",
                "..\\evil.md",
                "memory/\x00.md",
                "C:/evil.md",
                "mem_metadata/locks/workspace.lock",
            ]
        )
        meta = dict(meta_ok, files=[{"path": name, "module": "vault", "size": 4, "sha256": "0" * 64}])
        data = _zip({"meta.json": json.dumps(meta).encode(), name: b"evil"})
    elif kind == "symlink":
        data = _zip({"meta.json": json.dumps(meta_ok).encode()}, symlink="memory/link")
    elif kind == "deep-meta":
        data = _zip({"meta.json": _nested(r, r.choice([1000, 100_000])).encode()})
    elif kind == "dup":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("meta.json", json.dumps(meta_ok))
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                zf.writestr("meta.json", json.dumps(meta_ok))
        data = buf.getvalue()
    else:
        meta = dict(meta_ok, files=[{"path": "memory/x.md", "module": "vault", "size": 10**15, "sha256": "0" * 64}])
        data = _zip({"meta.json": json.dumps(meta).encode(), "memory/x.md": b"hi"})
    cmd = r.choice(
        [
            ["backup", "verify", "{in}/backup.zip"],
            ["backup", "restore", "{in}/backup.zip", "--yes"],
            ["backup", "list"],
            ["backup", "restore", "{in}/backup.zip", "--yes", "--modules", "vault"],
            ["backup", "verify", "{in}/backup.zip", "--json"],
            ["backup", "prune", "--keep", "1"],
        ]
    )
    files = {} if setup else {"{in}/backup.zip": data}
    if cmd[1] in ("list", "prune"):
        files = {"{bk}/ws-20260101T000000Z.zip": data or b"junk"}
    return Case(f"backup:{kind}", ["-w", "{ws}", *cmd], files=files, setup=setup, env={"MEM_BACKUP_DIR": "{bk}"})


# option values --------------------------------------------------------------------------------------


def odd_options(r) -> Case:
    cmd = r.choice(
        [
            ["search", "falcon", "--limit", r.choice(["-5", "0", "1000000000", "x", "1e3"])],
            ["search", "falcon", "--since", r.choice(["2026-02-30", "yesterday", "", "9999-99-99"])],
            ["search", "falcon", "--min-score", r.choice(["nan", "inf", "-inf", "1e308"])],
            ["search", r.choice(["", " ", "\x01", "[[", "*" * 10000, "falcon " * 3000, "日本語", "-"])],
            ["search", "falcon", "--max-chars", r.choice(["0", "-1", "1"])],
            ["ingest", "{in}/conv.json", "-s", "x", "--wait", r.choice(["-1", "nan", "inf", "1e308", "abc"])],
            ["ingest", "{in}/conv.json", "-s", "x", "--date", r.choice(["2026-02-30", "26-06-29", "0000-00-00", "x"])],
            ["dream", "--scan-days", r.choice(["0", "-1", "100000", "x"])],
            ["dream", "--max-units", r.choice(["0", "-1", "100000"])],
            ["dream", "--date", r.choice(["2026-02-30", "9999-12-31", "0001-01-01", "x"])],
            ["health", "--timeout", r.choice(["0", "-1", "nan", "inf", "1e-9"])],
            [
                "get",
                r.choice(
                    [
                        "../../etc/passwd",
                        "/etc/passwd",
                        "memory/../../x",
                        "",
                        "\x01",
                        "MEMORY.md:0",
                        "MEMORY.md",
                        "nope.md",
                        "resource",
                        "mem_metadata/locks/workspace.lock",
                    ]
                ),
                *r.choice([[], ["--lines", "0"], ["--lines", "-1"], ["--from", "100000"]]),
            ],
            [
                "remember",
                r.choice(["", " ", "x" * 5000, "\x01", "fact", BAD_ARG]),
                *r.choice([[], ["--tag", "#bad tag"], ["--tag", BAD_ARG]]),
            ],
            [r.choice(["search", "get"]), BAD_ARG],
            ["ingest", "{in}/conv.json", "-s", BAD_ARG, "--force"],
            ["dream", "--date", BAD_ARG],
            ["reindex", "--wait", r.choice(["-1", "nan", "inf"])],
            ["backup", "create", "--modules", r.choice(["", "nope", "secrets", ",,", "vault,vault"]), "--out", "{out}"],
            ["backup", "prune", "--keep", r.choice(["0", "-1", "x"])],
            ["init", "{ws}/mem.yaml"],
        ]
    )
    return Case("options", ["-w", "{ws}", *cmd], files={"{in}/conv.json": json.dumps(_conversation(r)).encode()})


GENERATORS = [
    ingest_payload,
    ingest_payload,
    bad_notes,
    bad_notes,
    odd_names,
    symlinks_out,
    bad_resources,
    bad_config,
    bad_config,
    cron_strings,
    bad_backup,
    bad_backup,
    odd_options,
]


def cases(r, n: int) -> list[Case]:
    """n cases; every generator appears at least once when n allows."""
    out = [g(r) for g in GENERATORS[:n]]
    out += [r.choice(GENERATORS)(r) for _ in range(n - len(out))]
    return out


def fill(arg: str, where: dict) -> str:
    for key, value in where.items():
        arg = arg.replace("{" + key + "}", str(value))
    return arg.replace("\x00", "\x01")  # argv and the environment cannot carry a NUL byte


def env_fill(env: dict, where: dict) -> dict:
    return {k: fill(v, where) for k, v in env.items()}


def place(case: Case, where: dict) -> None:
    """Write the case's files and links into the case folder."""
    for raw, data in case.files.items():
        p = fill(raw, where)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as fh:
            fh.write(data)
    for raw, target in case.links.items():
        p = fill(raw, where)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if os.path.lexists(p):
            if os.path.isdir(p) and not os.path.islink(p):
                import shutil

                shutil.rmtree(p)
            else:
                os.unlink(p)
        os.symlink(fill(target, where), p)
