"""Running the real CLI as a user who cannot read what root can.

Root reads a folder of mode 000 (and one owned by another user, mode 700) as if it were
open, so a test of an unreadable file or folder means nothing as root. When the suite runs
as root, `run_mem` runs `python -m memcli` as `nobody` through setpriv (no capabilities, no
supplementary groups), on a workspace made under a fresh temporary folder that `nobody`
can reach (pytest's own temporary folders are root's, mode 700). Run as any other user,
the suite's user is unprivileged already and the CLI runs as it is.

A broken setup (no setpriv, no such user, this checkout or the interpreter out of that
user's reach) fails the test with the reason: it never passes without having tested.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
USER = "nobody"


def as_root() -> bool:
    return os.geteuid() == 0


def _ids() -> tuple[int, int]:
    try:
        entry = pwd.getpwnam(USER)
    except KeyError:
        pytest.fail(f"running as root, the unreadable-file tests need the user {USER!r}, which does not exist",
                    pytrace=False)
    return entry.pw_uid, entry.pw_gid


def prefix() -> list[str]:
    """The command prefix that drops root's privileges ([] when not root)."""
    if not as_root():
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("running as root, the unreadable-file tests need setpriv (util-linux) to run mem as "
                    f"{USER!r}", pytrace=False)
    uid, gid = _ids()
    return [setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--inh-caps=-all"]


def check() -> None:
    """Fail (never skip) unless the unprivileged user can run this checkout's mem."""
    if not as_root():
        return
    probe = subprocess.run([*prefix(), sys.executable, "-c", "import memcli, yaml, zstandard; print(memcli.__file__)"],
                           env=_env(Path(tempfile.gettempdir())), capture_output=True, timeout=60)
    where = str(REPO / "memcli" / "__init__.py")
    if probe.returncode != 0 or probe.stdout.decode().strip() != where:
        pytest.fail(f"running as root, {USER!r} cannot run this checkout's mem with {sys.executable} "
                    f"(exit {probe.returncode}: {probe.stderr.decode(errors='replace').strip()[-300:]}); "
                    f"the unreadable-file tests need {REPO} and the interpreter readable by that user",
                    pytrace=False)


def own(path: Path) -> None:
    """Give `path` and everything below it to the unprivileged user (a no-op when not root)."""
    if not as_root():
        return
    uid, gid = _ids()
    for p in [path, *path.rglob("*")]:
        os.lchown(p, uid, gid)


def lock_away(path: Path, how: str = "mode000") -> None:
    """Make a file or folder unreadable to the unprivileged user: mode 000, or ("root700")
    owned by root, mode 700 (a folder made with sudo)."""
    if how == "mode000":
        os.chmod(path, 0)
    elif how == "root700":
        if not as_root():
            pytest.skip("a folder owned by root is made by root; this suite runs as another user")
        os.lchown(path, 0, 0)
        os.chmod(path, 0o700 if path.is_dir() else 0o600)
    else:
        raise ValueError(how)
    if not as_root() and os.access(path, os.R_OK):
        pytest.fail(f"{path} stayed readable to {pwd.getpwuid(os.geteuid()).pw_name}", pytrace=False)


@pytest.fixture
def place():
    """A folder the unprivileged user can reach and write: place() -> Path (removed afterwards)."""
    made: list[Path] = []

    def make() -> Path:
        top = Path(tempfile.mkdtemp(prefix="mem-unpriv-"))
        os.chmod(top, 0o755)
        made.append(top)
        home = top / "home"
        home.mkdir()
        own(home)
        return top

    yield make
    for top in made:
        for folder, subs, _ in os.walk(top):  # (top down: each folder opened before it is listed)
            for sub in subs:
                path = os.path.join(folder, sub)
                if not os.path.islink(path):
                    os.chmod(path, 0o700)
        shutil.rmtree(top, ignore_errors=True)


def _env(top: Path, extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEM_", "OPENCLAW_", "CLAWDBOT_"))}
    env.update({"HOME": str(top / "home"), "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "100",
                "TZ": "UTC", "PYTHONIOENCODING": "utf-8", "LC_ALL": "C.UTF-8", "MEM_EMBEDDING_BACKEND": "none",
                "PYTHONDONTWRITEBYTECODE": "1"})
    for k, v in (extra or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def run_mem(top: Path, *args, env: dict | None = None, timeout: float = 120) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `mem ARGS` run as the unprivileged user; `top` is a
    folder from the `place` fixture (its home/ is that user's HOME)."""
    check()
    proc = subprocess.run([*prefix(), sys.executable, "-m", "memcli", *map(str, args)], cwd=str(top),
                          env=_env(top, env), capture_output=True, timeout=timeout)
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
