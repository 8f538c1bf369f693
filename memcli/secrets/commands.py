"""A password given to a command-line tool by its own flag (memcli.secrets.rules lists this
finder among its context rules).

docker/podman login -p, mysql -pX (attached), redis-cli -a, sqlcmd -P, ldapsearch -w, plink -pw,
smbclient -U user%X, keytool -storepass X, sshpass -p, mongo -p, htpasswd -b FILE USER X. At a
command's start (a line, a prompt, `, |, &&, sudo, VAR=...) the value is config and any literal
counts; in a sentence it must look like a credential. The tool is looked for from the flag's line
start, and no tool or flag already read is read again, so the scan stays linear.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memcli.secrets.shapes import KEYCH, Spans, credential_like, literal

__all__ = ["command_flags"]

# group: the tool's password flag (-p, -a, -P, -w, -pw, -U user%X, keytool -*pass X), attached -pX, htpasswd -b
_TOOLS = re.compile(
    r"(?:(?P<p>(?:docker|podman|nerdctl|buildah|skopeo|oras|helm[ \t]registry|oc|cf|az)[ \t]+login|sshpass"
    r"|mongo(?:sh|dump|restore|export|import)?)|(?P<attached>mysql(?:dump|admin|import|sh|pump)?|mariadb"
    r"(?:-dump|-admin)?|7za?)|(?P<a>redis-cli)|(?P<P>sqlcmd|bcp|zip|unzip)|(?P<w>ldap(?:search|add|modify"
    r"|delete|whoami))|(?P<pw>plink|pscp)|(?P<U>smbclient|rpcclient)|(?P<keytool>keytool)|(?P<htpasswd>htpasswd))"
    r"(?=[ \t])"
)
_DASH = re.compile(
    r" -(?:[apPwU][ \t]|pw[ \t]|p[^\s-]|[A-Za-z]{0,3}b[A-Za-z]{0,3}[ \t]|[a-z]{0,12}pass[ \t])"
)  # a password flag
_ARG = re.compile(r"(?:[ \t]|\\\r?\n){1,16}((?:\"[^\"\n]{0,256}\"|'[^'\n]{0,256}'|[^\s\"'`|;&<>()\\]){1,512})")
_CMD_HEAD = re.compile(
    r"(?:.*(?:[`;|(>$#:]|&&)|[ \t]*(?:[-*+]|\d+[.)]))?[ \t]*(?:(?:sudo|exec|time|env|\w+=\S*)[ \t]+)*"
)


def _unquote(at: int, word: str) -> tuple[int, str]:
    return (at + 1, word[1:-1]) if len(word) > 1 and word[0] in "\"'" and word[-1] == word[0] else (at, word)


def _command_values(tool: str, args: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """Where the password is among a tool's (unquoted) arguments: (offset, value)."""
    if tool == "htpasswd":  # htpasswd -b[c…] FILE USER PASS, -nb USER PASS; -C and -r take a number
        flags = "".join(w for _, w in args if w.startswith("-"))
        rest = [(at, w) for at, w in args if not w.startswith("-")][flags.count("C") + flags.count("r") :]
        if "b" in flags and len(rest) >= (need := 2 if "n" in flags else 3):
            yield rest[need - 1]
        return
    for i, (at, word) in enumerate(args):
        if tool == "attached" and word.startswith("-p") and len(word) > 2:
            yield _unquote(at + 2, word[2:])
        elif i + 1 < len(args) and (
            word == "-" + tool or (tool == "keytool" and word[:1] == "-" and word.endswith("pass"))
        ):
            at, value = args[i + 1]
            yield (at + value.find("%") + 1, value.partition("%")[2]) if tool == "U" else (at, value)


def command_flags(text: str, low: str) -> Spans:
    """At a command's start (line, prompt, `, |, &&, sudo, VAR=…) a flag's value is config, in a sentence prose."""
    covered = 0  # the end of what was read: no tool or flag in it is read again
    for flag in _DASH.finditer(text):  # its tool is looked for from the line's start (a \ continues a line)
        if flag.start() < covered:
            continue
        lo = max(covered, flag.start() - 300)
        lo = nl + 1 if (nl := text.rfind("\n", lo, flag.start())) >= 0 and text[nl - 1] != "\\" else lo
        for m in _TOOLS.finditer(text, lo, flag.start() + 1):
            if m.start() < covered or (m.start() and text[m.start() - 1] in KEYCH + "."):
                continue
            args, covered = [], m.end()
            while len(args) < 32 and (arg := _ARG.match(text, covered)):
                args.append(_unquote(arg.start(1), arg[1]))
                covered = arg.end()
            judge = (
                literal
                if _CMD_HEAD.fullmatch(text[max(0, m.start() - 120) : m.start()].rpartition("\n")[2])
                else credential_like
            )
            yield from (
                (at, at + len(v)) for at, v in _command_values(m.lastgroup or "", args) if v[:1] != "-" and judge(v)
            )
        covered = max(covered, flag.start())
