"""Running mem as a user without privileges, for the permission faults of the campaigns.

Root reads everything, so a file "nobody can read" is only a fault for another user. As root
(CI), mem runs as uid/gid 65534 (nobody/nogroup: the numbers are enough, no passwd entry is
needed), its groups dropped, in a folder that user owns; what it must not read is owned by
root, mode 600 (a folder 700). As any other user, mem runs as that user and the faults are
mode 000 (an owner without privileges cannot read them either).

The user must reach a Python that imports memcli and its dependencies. The venv's own
interpreter comes first; where it links to a folder that user cannot enter (a pyenv build
under /root, mode 700), a system interpreter of the same version with the venv's
site-packages is tried, and `python()` fails, naming the folder in the way, when none
works. It never skips as root: a campaign that silently did not run would pass in CI.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UID = GID = 65534
PROBE = ("import sys, memcli, typer, yaml, zstandard; "
         "print('%d.%d' % sys.version_info[:2]); print(memcli.__file__)")
PINNED = {"NO_COLOR": "1", "COLUMNS": "100", "TZ": "UTC", "MEM_EMBEDDING_BACKEND": "none",
          "PYTHONIOENCODING": "utf-8", "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}


def as_root() -> bool:
    return os.geteuid() == 0


def _drop() -> None:
    os.setgroups([])
    os.setgid(GID)
    os.setuid(UID)


def preexec():
    """The preexec_fn that makes a child the unprivileged user (None: already one)."""
    return _drop if as_root() else None


def _blocked(path: str) -> str | None:
    """The first folder on the way to `path` that uid 65534 cannot enter, with its mode."""
    p = Path(path).absolute()
    for folder in [*reversed(p.parents)]:
        try:
            st = folder.stat()
        except OSError:
            return f"{folder} (cannot stat)"
        if not st.st_mode & stat.S_IXOTH and st.st_uid != UID:
            return f"{folder} ({stat.filemode(st.st_mode)}, owner uid {st.st_uid})"
    return None


def _probe(exe: str, pythonpath: list[str]) -> str | None:
    """None when `exe` run as the user imports this checkout's memcli; else why not."""
    env = {**PINNED, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": os.pathsep.join(pythonpath),
           "HOME": "/"}
    try:
        proc = subprocess.run([exe, "-c", PROBE], env=env, cwd="/", preexec_fn=preexec(), capture_output=True,
                              text=True, timeout=60)
    except OSError as exc:
        where = _blocked(os.path.realpath(exe))
        return f"{exe}: {exc.strerror}" + (f"; the user cannot enter {where}" if where else "")
    if proc.returncode != 0:
        return f"{exe}: exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1:] or ''}"
    version, origin = (proc.stdout.split() + ["", ""])[:2]
    if version != "%d.%d" % sys.version_info[:2]:
        return f"{exe}: Python {version}, not the venv's {sys.version_info[0]}.{sys.version_info[1]}"
    if not Path(origin).resolve().is_relative_to(REPO):
        return f"{exe}: imports memcli from {origin}, not from {REPO}"
    return None


@functools.lru_cache(maxsize=1)
def _interpreter() -> tuple[list[str] | None, str]:
    """([python, PYTHONPATH entries], how) or (None, why none works)."""
    tried = []
    # this checkout first, then whatever PYTHONPATH this run was given (a venv needs none)
    venv = list(dict.fromkeys([str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]))
    why = _probe(sys.executable, venv)
    if why is None:
        return [sys.executable, *venv], f"{sys.executable} (the venv's interpreter)"
    tried.append(why)
    # the same interpreter version from the system, reading the venv's packages: the same ABI
    site = list(dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]))
    name = "python%d.%d" % sys.version_info[:2]
    for exe in dict.fromkeys(filter(None, [f"/usr/bin/{name}", f"/usr/local/bin/{name}", shutil.which(name)])):
        if os.path.realpath(exe) == os.path.realpath(sys.executable):
            continue
        why = _probe(exe, [str(REPO), *site])
        if why is None:
            return [exe, str(REPO), *site], f"{exe} with the venv's site-packages ({sys.executable} is out of reach)"
        tried.append(why)
    return None, "; ".join(tried)


def python() -> list[str]:
    """[interpreter, PYTHONPATH entries...] the user can run; fails the test clearly when none."""
    found, how = _interpreter()
    if found is None:
        pytest.fail(f"no Python the unprivileged user (uid {UID if as_root() else os.geteuid()}) can run with "
                    f"memcli: {how}. Make the venv's interpreter reachable (e.g. a venv made from /usr/bin/python3) "
                    f"so the permission campaign can run", pytrace=False)
    return found


def describe() -> str:
    found, how = _interpreter()
    return how if found else f"no interpreter ({how})"


class Sandbox:
    """A folder the user owns (outside pytest's own temp folder, which root keeps at 0700)."""

    def __init__(self) -> None:
        self.forbidden: list[Path] = []
        self.root = Path(tempfile.mkdtemp(prefix="mem-perm-")).resolve()
        os.chmod(self.root, 0o755)
        blocked = _blocked(str(self.root / "x"))
        if blocked and as_root():
            pytest.fail(f"the unprivileged user cannot enter the temp folder: {blocked}; set TMPDIR", pytrace=False)
        self.home = self.root / "home"
        self.home.mkdir()

    def give(self, path: Path | None = None) -> None:
        """Hand `path` (default: the whole sandbox) to the user, recursively."""
        if not as_root():
            return
        target = path or self.root
        os.lchown(target, UID, GID)
        for dirpath, dirnames, filenames in os.walk(target):
            for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                os.lchown(name, UID, GID)

    def forbid(self, path: Path) -> None:
        """Make `path` unreadable to the user: root's and 0600/0700 as root, else mode 000."""
        mode = 0o700 if path.is_dir() else 0o600
        self.forbidden.append(path)
        if as_root():
            for dirpath, dirnames, filenames in os.walk(path) if path.is_dir() else []:
                for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                    os.lchown(name, 0, 0)
            os.lchown(path, 0, 0)
            os.chmod(path, mode)
        else:
            os.chmod(path, 0)

    def allow(self, path: Path) -> None:
        """Undo forbid(): the user owns `path` again."""
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
        """`mem ARGS` as the user -> (code, stdout, stderr)."""
        exe, *path = python()
        full = {**PINNED, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
                "PYTHONPATH": os.pathsep.join(path), **(env or {})}
        proc = subprocess.run([exe, "-m", "memcli", *map(str, args)], env=full, cwd=str(self.root),
                              preexec_fn=preexec(), capture_output=True, timeout=timeout)
        return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")

    def close(self) -> None:
        if not as_root():
            for dirpath, dirnames, _ in os.walk(self.root):
                for n in dirnames:
                    os.chmod(os.path.join(dirpath, n), 0o700)
        shutil.rmtree(self.root, ignore_errors=True)
