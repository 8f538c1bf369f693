"""Generated docs stay true to the CLI: man pages, completions, help text.

`make docs` regenerates man/ and completions/ from the live command tree; these
tests fail when someone changes a command without running it, when a command or
option has no help, or when a completion script does not parse or complete.
"""

from __future__ import annotations

import enum
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.cli import docgen

REPO = Path(__file__).resolve().parent.parent
BASH = REPO / "completions" / "mem.bash"


def live_nodes() -> list[docgen.Node]:
    import typer

    from memcli.cli.app import build

    cmd = typer.main.get_command(build())
    return docgen.flatten(docgen.walk(cmd, cmd.context_class(cmd, info_name="mem", **cmd.context_settings)))


def test_generated_docs_are_up_to_date():
    proc = subprocess.run(
        [sys.executable, "-m", "memcli.cli.docgen", "--check"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, f"man/ or completions/ drifted from the CLI; run `make docs`:\n{proc.stderr}"


@pytest.mark.parametrize("node", live_nodes(), ids=lambda n: n.name)
def test_every_command_and_option_has_help(node):
    assert docgen.paragraphs(node.cmd), f"`{node.name}` has no help text"
    for p in node.params("option") + node.params("argument"):
        assert (p.help or "").strip(), f"`{node.name}` {p.param_type_name} {p.opts[0]} has no help text"


def test_every_command_has_a_man_page():
    for node in live_nodes():
        page = REPO / "man" / f"{node.name.replace(' ', '-')}.1"
        assert page.is_file(), page


def test_bash_script_parses():
    subprocess.run(["bash", "-n", str(BASH)], check=True, timeout=30)


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_other_shell_scripts_parse(shell):
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    subprocess.run([shell, "-n", str(REPO / "completions" / f"mem.{shell}")], check=True, timeout=30)


def bash_complete(script: Path, line: str) -> list[str]:
    """What the bash completion function offers for `line` (cursor at its end)."""
    words = line.split(" ")
    driver = (
        f'source "{script}"\nCOMP_WORDS=({" ".join(repr(w) for w in words)})\n'
        f"COMP_CWORD={len(words) - 1}\n_mem\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n"
    )
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", driver], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return [w for w in proc.stdout.split("\n") if w]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("mem se", ["search"]),
        ("mem -w /tmp/ws se", ["search"]),  # the value of -w is skipped, not taken for a command
        ("mem search --no-", ["--no-links", "--no-sync"]),
        ("mem search --limit 3 --js", ["--json"]),
        ("mem get --li", ["--lines"]),
    ],
)
def test_bash_completion_completes(line, expected):
    assert bash_complete(BASH, line) == expected


class Module(str, enum.Enum):  # noqa: UP042 - the str-mixin choice type typer's docs show
    vault = "vault"
    sessions = "sessions"


def nested_app():
    """A tree shaped like later commands (`mem backup create --module ...`)."""
    import typer

    app = typer.Typer(name="mem", help="Top.")
    backup = typer.Typer(help="Back up and restore.")

    @app.callback()
    def main(workspace: str = typer.Option(None, "--workspace", "-w", metavar="PATH", help="Workspace.")) -> None:
        """Top."""

    @backup.command("create", help="Create a backup.")
    def create(
        module: Module = typer.Option(Module.vault, "--module", help="What to save."),
        full: bool = typer.Option(False, "--full", help="Everything."),
    ) -> None:
        pass

    @backup.command("list", help="List backups.")
    def list_() -> None:
        pass

    app.add_typer(backup, name="backup")
    return app


@pytest.fixture
def nested_scripts(tmp_path):
    import typer

    cmd = typer.main.get_command(nested_app())
    nodes = docgen.flatten(docgen.walk(cmd, cmd.context_class(cmd, info_name="mem", **cmd.context_settings)))
    assert [n.name for n in nodes] == ["mem", "mem backup", "mem backup create", "mem backup list"]
    paths = {}
    for shell, gen in (("bash", docgen.bash), ("zsh", docgen.zsh), ("fish", docgen.fish)):
        paths[shell] = tmp_path / f"mem.{shell}"
        paths[shell].write_text(gen(nodes), encoding="utf-8")
    assert '.SS "mem backup create"' in docgen.man_page(nodes[0], nodes, "0")
    return paths


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("mem ba", ["backup"]),
        ("mem backup ", ["create", "list"]),
        ("mem -w x backup cr", ["create"]),
        ("mem backup create --", ["--module", "--full", "--help"]),
        ("mem backup create --module ", ["vault", "sessions"]),
        ("mem backup create --module s", ["sessions"]),
    ],
)
def test_bash_completion_handles_nested_groups_and_choices(nested_scripts, line, expected):
    assert bash_complete(nested_scripts["bash"], line) == expected


def test_fish_completion_handles_nested_groups_and_choices(nested_scripts):
    if shutil.which("fish") is None:
        pytest.skip("fish is not installed")

    def complete(line: str) -> list[str]:
        proc = subprocess.run(
            ["fish", "--no-config", "-c", f"source {nested_scripts['fish']}; complete -C '{line}'"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert proc.returncode == 0, proc.stderr
        return [row.split("\t")[0] for row in proc.stdout.splitlines()]

    assert complete("mem backup cr") == ["create"]
    assert sorted(complete("mem backup create --module ")) == ["sessions", "vault"]


def test_zsh_completion_handles_nested_groups_and_choices(nested_scripts):
    if shutil.which("zsh") is None:
        pytest.skip("zsh is not installed")
    # the completion-system functions are stubbed: they print what they would offer
    stubs = (
        'compdef() { :; }\n_describe() { local -a d; d=("${(@P)${@[-1]}}"); print -l -- "${d[@]%%:*}"; }\n'
        'compadd() { print -l -- "${(@P)${@[-1]}}"; }\n_files() { print FILES; }\n_message() { print MSG; }\n'
    )

    def complete(*words: str) -> list[str]:
        script = (
            f"{stubs}source {nested_scripts['zsh']}\nwords=({' '.join(repr(w) for w in words)})\n"
            f"CURRENT={len(words)}\nPREFIX={words[-1]!r}\n_mem\n"
        )
        proc = subprocess.run(["zsh", "-f", "-c", script], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()

    assert complete("mem", "backup", "") == ["create", "list"]
    assert complete("mem", "backup", "create", "--module", "") == ["vault", "sessions"]
    assert complete("mem", "-w", "") == ["FILES"]
