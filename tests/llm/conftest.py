"""The real-model tier: llama.cpp's server (xllamacpp) with Qwen2.5-Coder-0.5B-Instruct Q4_K_M.

`make llm-tier` installs both into `.venv/llm/` (tests/llm/real_model.py says what and how).
Without them the tier is skipped with the reason, unless MEM_REQUIRE_LLM=1 (CI sets it),
which makes a missing model a failure. The server runs once per session on 127.0.0.1
(a free port, one thread) and is stopped at the end.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import real_model as model_server

REQUIRED = os.environ.get("MEM_REQUIRE_LLM") == "1"  # read at import: the fixtures drop MEM_* variables


def pytest_configure(config):
    config.addinivalue_line("markers", "llm: runs mem against the real local model (make llm-tier)")


@pytest.fixture(scope="session")
def llm_server(tmp_path_factory):
    """The running model server (its `url`), or a skip (a failure with MEM_REQUIRE_LLM=1)."""
    why = model_server.why_missing()
    if why:
        if REQUIRED:
            pytest.fail(f"MEM_REQUIRE_LLM=1 but {why}")
        pytest.skip(why)
    srv = model_server.Server(log=tmp_path_factory.mktemp("llm") / "server.log")
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def llm_yaml(llm_server):
    """write(ws): the workspace's mem.yaml pointing mem at the model server."""

    def write(ws: Path) -> None:
        cfg = model_server.llm_config(llm_server.url)
        lines = ["llm_model_config:"] + [
            f"  {k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in cfg.items()
        ]
        (ws / "mem.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")

    return write
