"""Running the real CLI as a user who cannot read what root can.

Root reads a file of mode 000 (and one owned by another user, mode 600) as if it were open,
so a test of an unreadable file or folder means nothing as root. When the suite runs as
root (as in CI), `Sandbox.run` runs `python -m memcli` as uid/gid 65534 (nobody/nogroup:
the numbers are enough, no passwd entry is needed), its supplementary groups cleared, set
by subprocess between fork and exec. Dropping every uid of root clears all capabilities
before the exec, so the exec itself, and everything the child opens, is checked against
file modes. (setpriv is not used: it keeps root's capabilities up to its execve, so a
/root/.pyenv interpreter behind /root, mode 700, starts, then its loader, without them,
silently takes the system's libpython and stdlib: a different Python than the venv's.)
Run as any other user, the suite's user is unprivileged already and the CLI runs as it is.

The user must reach a Python that imports this checkout's memcli and its dependencies. The
venv's own interpreter comes first; where it lives where that user cannot enter (a pyenv
build under /root), a system interpreter of the same X.Y is tried with `-S` and the venv's
site-packages (the same ABI; nothing of the system's site-packages). Each is probed once
per session, the probe also checking the premise of every test here: the child's real and
effective uid are the user's, it has no capability and no group of root's, and it cannot
read a file as `forbid` makes one. When nothing passes, the test FAILS naming each try and
the folder in the way: as root, a campaign that silently did not run would pass in CI.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import memtest
import pytest

REPO = Path(__file__).resolve().parent.parent
UID = GID = 65534
# the top-level modules of pyproject's runtime dependencies, and the CLI that imports them
IMPORTS = "memcli.cli.main, typer, rich, numpy, zstandard, yaml, frontmatter, croniter, httpx"
PINNED = {**memtest.PINNED, "PYTHONDONTWRITEBYTECODE": "1"}
PROBE = f"""
import json, os, sys
facts = {{"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(), "egid": os.getegid(),
          "groups": os.getgroups(), "version": "%d.%d" % sys.version_info[:2], "full": sys.version.split()[0],
          "prefix": sys.prefix, "caps": {{}}}}
try:
    with open("/proc/self/status") as fh:
        facts["caps"] = {{k: v.strip() for k, v in (l.split(":", 1) for l in fh) if k in ("CapPrm", "CapEff")}}
except OSError:
    pass
try:
    with open(sys.argv[1], "rb") as fh:
        facts["forbidden"] = "read " + repr(fh.read(20))
except OSError as exc:
    facts["forbidden"] = exc.strerror
import memcli
facts["memcli"] = memcli.__file__
import {IMPORTS}
print(json.dumps(facts))
"""


def as_root() -> bool:
    return os.geteuid() == 0


def user() -> dict:
    """subprocess's arguments that make the child the unprivileged user ({}: already one)."""
    return {"user": UID, "group": GID, "extra_groups": []} if as_root() else {}


def blocked(path: str | Path) -> str | None:
    """The first folder on the way to `path` (itself included) that the user cannot enter."""
    if not as_root():
        return None
    for folder in [*reversed(Path(path).absolute().parents), Path(path).absolute()]:
        try:
            st = folder.stat()
        except OSError:
            return f"{folder} (cannot stat)"
        if stat.S_ISDIR(st.st_mode) and st.st_uid != UID and not st.st_mode & stat.S_IXOTH:
            return f"{folder} ({stat.filemode(st.st_mode)}, owner uid {st.st_uid})"
    return None


def _make_forbidden(path: Path) -> None:
    """A file as `Sandbox.forbid` makes one: root's, mode 600 as root; else mode 000."""
    path.write_bytes(b"kept from the unprivileged user\n")
    if as_root():
        os.lchown(path, 0, 0)
        os.chmod(path, 0o600)
    else:
        os.chmod(path, 0)


def _premise(facts: dict) -> str | None:
    """Why the probe's child is not a user without privileges, or None when it is one."""
    me = (UID, GID) if as_root() else (os.getuid(), os.getgid())
    ids = (facts["uid"], facts["gid"])
    if ids != me or (facts["euid"], facts["egid"]) != me:
        return f"ran as uid/gid {ids}, effective {facts['euid']}/{facts['egid']}, not {me}"
    if as_root() and facts["groups"]:
        return f"kept the groups {facts['groups']}"
    if any(int(v, 16) for v in facts["caps"].values()):
        return f"kept capabilities {facts['caps']}"
    if facts["forbidden"] != "Permission denied":
        return f"a file it must not read: {facts['forbidden']}"
    return None


def _probe(cmd: list[str], pythonpath: list[str]) -> tuple[dict | None, str]:
    """(facts, "") when `cmd` run as the user imports this checkout's memcli; else (None, why)."""
    top = Path(tempfile.mkdtemp(prefix="mem-probe-"))
    try:
        os.chmod(top, 0o755)
        _make_forbidden(top / "forbidden")
        env = {
            **PINNED,
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(top),
            "PYTHONPATH": os.pathsep.join(pythonpath),
        }
        try:
            proc = subprocess.run(
                [*cmd, "-c", PROBE, str(top / "forbidden")],
                env=env,
                cwd=str(top),
                capture_output=True,
                text=True,
                timeout=60,
                **user(),
            )
        except OSError as exc:
            way = blocked(os.path.realpath(cmd[0]))
            return None, f"{cmd[0]}: {exc.strerror}" + (f" (the user cannot enter {way})" if way else "")
    finally:
        shutil.rmtree(top, ignore_errors=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [""])[-1]
        ways = [w for w in map(blocked, [REPO, *pythonpath]) if w]
        way = f" (the user cannot enter {ways[0]})" if ways else ""
        return None, f"{cmd[0]}: exit {proc.returncode}: {last}{way}"
    facts = json.loads(proc.stdout)
    if facts["version"] != f"{sys.version_info[0]}.{sys.version_info[1]}":
        return None, f"{cmd[0]}: Python {facts['version']}, not the venv's {sys.version_info[0]}.{sys.version_info[1]}"
    if not Path(facts["memcli"]).resolve().is_relative_to(REPO):
        return None, f"{cmd[0]}: imports memcli from {facts['memcli']}, not from {REPO}"
    return facts, ""


def _candidates() -> list[str]:
    """System interpreters of the venv's X.Y: /usr/bin, /usr/local/bin, then PATH's."""
    name = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    folders = ["/usr/bin", "/usr/local/bin", *os.environ.get("PATH", "").split(os.pathsep)]
    found = {}
    for folder in filter(None, folders):
        exe = os.path.join(folder, name)
        if os.path.isfile(exe) and os.path.realpath(exe) != os.path.realpath(sys.executable):
            found.setdefault(os.path.realpath(exe), exe)
    return list(found.values())


@functools.lru_cache(maxsize=1)
def _interpreter() -> tuple[list[str] | None, list[str], str, dict]:
    """(command, PYTHONPATH entries, how, the probe's facts) of the first interpreter that
    passes; else (None, [], why, {})."""
    tried = []
    # this checkout first, then whatever PYTHONPATH this run was given (a venv needs none)
    venv = list(dict.fromkeys([str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]))
    site = list(dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]))
    tries = [([sys.executable], venv, "the venv's interpreter")]
    tries += [
        ([exe, "-S"], [str(REPO), *site], f"and the venv's site-packages ({sys.executable} failed)")
        for exe in _candidates()
    ]
    for cmd, path, how in tries:
        facts, why = _probe(cmd, path)
        if facts is None:
            tried.append(why)
            continue
        wrong = _premise(facts)
        if wrong:  # the way privileges are dropped is broken: no other interpreter mends that
            return None, [], f"{cmd[0]} {wrong}; the permission tests would test nothing", {}
        return (
            cmd,
            path,
            (
                f"{' '.join(cmd)} {how}: Python {facts['full']} ({facts['prefix']}), "
                f"uid {facts['uid']}, no capabilities, a forbidden file {facts['forbidden']}"
            ),
            facts,
        )
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    hint = (
        f"Clone outside /root and make the venv from an interpreter that user can reach (e.g. "
        f"`make PYTHON=/usr/bin/python3`), or install python{version} in /usr/bin"
    )
    return None, [], f"{'; '.join(tried)}. {hint}", {}


def python() -> tuple[list[str], list[str]]:
    """(command, PYTHONPATH entries) the user can run; fails the test clearly when none."""
    cmd, path, how, _ = _interpreter()
    if cmd is None:
        pytest.fail(
            f"no Python the unprivileged user (uid {UID if as_root() else os.geteuid()}) can run with "
            f"this checkout's memcli: {how}",
            pytrace=False,
        )
    return cmd, path


def describe() -> str:
    cmd, _, how, _ = _interpreter()
    return how if cmd else f"no interpreter ({how})"


def facts() -> dict:
    """What the probe's child said of itself (uid, groups, caps, Python, the forbidden file)."""
    python()
    return _interpreter()[3]


class Sandbox:
    """A folder the user owns (outside pytest's own temp folder, which root keeps at 0700)."""

    def __init__(self) -> None:
        self.forbidden: list[Path] = []
        self.root = Path(tempfile.mkdtemp(prefix="mem-unpriv-")).resolve()
        os.chmod(self.root, 0o755)
        way = blocked(self.root)
        if way:
            pytest.fail(f"the unprivileged user cannot enter the temp folder: {way}; set TMPDIR", pytrace=False)
        self.home = self.root / "home"
        self.home.mkdir()
        self.ws = self.root / "ws"

    def give(self, path: Path | None = None) -> None:
        """Hand `path` (default: the whole sandbox) to the user, recursively (a no-op when not root)."""
        if not as_root():
            return
        target = path or self.root
        os.lchown(target, UID, GID)
        for dirpath, dirnames, filenames in os.walk(target):
            for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                os.lchown(name, UID, GID)

    def forbid(self, path: Path, how: str = "") -> None:
        """Make `path` unreadable to the user. "root": root's, mode 600 (a folder 700, everything
        in it root's too), as a file made with sudo; "mode000": the user's, mode 000. Default:
        "root" as root, else "mode000" (what an owner without privileges cannot read either)."""
        how = how or ("root" if as_root() else "mode000")
        if how == "root":
            if not as_root():
                pytest.skip("a file owned by root is made by root; this suite runs as another user")
            for dirpath, dirnames, filenames in os.walk(path) if path.is_dir() else []:
                for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                    os.lchown(name, 0, 0)
            os.lchown(path, 0, 0)
            os.chmod(path, 0o700 if path.is_dir() else 0o600)
        elif how == "mode000":
            os.chmod(path, 0)
        else:
            raise ValueError(how)
        self.forbidden.append(path)
        if not as_root() and os.access(path, os.R_OK):  # (as root, the probe checked the premise)
            pytest.fail(f"{path} stayed readable to uid {os.geteuid()}", pytrace=False)

    def allow(self, path: Path) -> None:
        """Undo forbid(): the user owns `path` again, readable."""
        os.chmod(path, 0o700 if path.is_dir() else 0o600)
        self.give(path)
        self.forbidden = [p for p in self.forbidden if p != path]

    @contextlib.contextmanager
    def lifted(self):
        """The test itself reading everything: a no-op as root; else the faults are lifted meanwhile."""
        if as_root():
            yield
            return
        for p in self.forbidden:
            os.chmod(p, 0o700 if p.is_dir() else 0o600)
        try:
            yield
        finally:
            for p in reversed(self.forbidden):
                os.chmod(p, 0)

    def run(self, *args, env: dict | None = None, timeout: float = 120) -> tuple[int, str, str]:
        """`mem ARGS` as the user -> (code, stdout, stderr); `env` adds to a pinned environment
        (a value None removes the variable)."""
        cmd, path = python()
        full = {
            **PINNED,
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "PYTHONPATH": os.pathsep.join(path),
        }
        for k, v in (env or {}).items():
            if v is None:
                full.pop(k, None)
            else:
                full[k] = str(v)
        proc = subprocess.run(
            [*cmd, "-m", "memcli", *map(str, args)],
            env=full,
            cwd=str(self.root),
            capture_output=True,
            timeout=timeout,
            **user(),
        )
        return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")

    def close(self) -> None:
        if not as_root():  # (root removes whatever the modes)
            for dirpath, dirnames, _ in os.walk(self.root):
                for n in dirnames:
                    os.chmod(os.path.join(dirpath, n), 0o700)
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def sandbox():
    """A Sandbox, removed afterwards."""
    sb = Sandbox()
    try:
        yield sb
    finally:
        sb.close()
