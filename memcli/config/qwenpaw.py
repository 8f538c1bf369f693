"""QwenPaw's agent.json: the `running.reme_light_memory_config` section an agent keeps its
memory settings in. mem's config keys are named after that section's, so a QwenPaw agent
workspace works as it is; this reads the section, and memcli.config.layers merges it below
mem.yaml (keys mem does not use are reported, never an error).
"""

from __future__ import annotations

import json
from pathlib import Path

from memcli.errors import ConfigError


def load_agent_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read agent.json: {exc}") from None
    except RecursionError:
        raise ConfigError("cannot read agent.json: nested too deeply") from None
    running = data.get("running", {}) if isinstance(data, dict) else {}
    section = running.get("reme_light_memory_config", {}) if isinstance(running, dict) else None
    if not isinstance(section, dict):
        raise ConfigError("agent.json: running.reme_light_memory_config must be an object (and running too)")
    return section
