"""Folder layouts: which folder names a backup's workspace used and which this one uses.

A plain workspace keeps its notes in memory/ and digest/; a QwenPaw agent may name them
otherwise in agent.json (`daily_dir: notes`), and mem.yaml may too. A backup records its
layout in meta.json (older backups: inferred from their slots, which list the folders in a
fixed order). A restore puts each folder where the workspace will look for it afterwards:
the layout of the config it restores, or, when the config is left as it is, this
workspace's own, renaming the backup's folders to match (notes/ -> memory/).
"""

from __future__ import annotations

import os
import posixpath
import tempfile
from pathlib import Path

from memcli.errors import BadInput, MemError
from memcli.jobs.backup.credentials import CONFIG_FILES

# the folder settings, in the order module_slots lists them per module
KEYS = ("daily_dir", "digest_dir", "resource_dir", "session_dir", "mem_session_dir", "metadata_dir")
DEFAULTS = {
    "daily_dir": "memory",
    "digest_dir": "digest",
    "resource_dir": "resource",
    "session_dir": "mem_session",
    "mem_session_dir": "mem_agent",
    "metadata_dir": "mem_metadata",
}
# which module's slot each folder is
MODULE_OF = {
    "daily_dir": "vault",
    "digest_dir": "vault",
    "resource_dir": "resources",
    "session_dir": "sessions",
    "mem_session_dir": "sessions",
    "metadata_dir": "metadata",
}


def rel_dir(value) -> str:
    return posixpath.normpath(str(value).replace(os.sep, "/")).strip("/")


def of_settings(settings) -> dict[str, str]:
    return {k: rel_dir(getattr(settings, k)) for k in KEYS}


def of_meta(meta: dict) -> dict[str, str]:
    """The backup's layout: recorded, else read from the order of its slots (keys it cannot tell
    are left out, and their folders are restored under their own names)."""
    rec = meta.get("layout")
    if isinstance(rec, dict):
        return {k: rec[k] for k in KEYS if isinstance(rec.get(k), str)}
    if meta.get("kind") != "backup":
        return {}  # a snapshot's slots are merged and sorted: their order says nothing
    slots, out = meta["slots"], {}
    vault = slots.get("vault") or []
    if len(vault) >= 3 and vault[0] == "MEMORY.md":
        out.update(daily_dir=vault[1], digest_dir=vault[2])
    if len(slots.get("resources") or []) == 1:
        out["resource_dir"] = slots["resources"][0]
    sessions = slots.get("sessions") or []
    if len(sessions) in (1, 2):
        out.update(session_dir=sessions[0], mem_session_dir=sessions[-1])
    meta_slots = slots.get("metadata") or []
    if meta_slots:
        out["metadata_dir"] = meta_slots[0].split("/")[0]
    return out


def after_config(current: Path, staged: dict[str, bytes | None]) -> dict[str, str]:
    """The layout the workspace will have once its config files are `staged` (name -> bytes,
    None = absent); the files not named stay as they are in `current`. Folder names come from
    agent.json and mem.yaml alone (no environment variable or OpenClaw setting names them)."""
    from memcli.config import layers, qwenpaw

    with tempfile.TemporaryDirectory(prefix="mem-layout-") as tmp:
        for name in CONFIG_FILES:
            data = staged[name] if name in staged else _read(current / name)
            if data is not None:
                (Path(tmp) / name).write_bytes(data)
        out = dict(DEFAULTS)
        try:
            agent = Path(tmp) / "agent.json"
            if agent.is_file():
                out.update({k: v for k, v in qwenpaw.load_agent_json(agent).items() if k in KEYS})
            native = Path(tmp) / "mem.yaml"
            if native.is_file():
                out.update({k: v for k, v in layers.load_yaml_file(native).items() if k in KEYS})
        except MemError as exc:
            raise BadInput(
                f"the config this restore would leave cannot be read ({exc.line()})",
                "restore without the config module, or fix that file first",
            ) from None
    for key, value in out.items():
        if (
            not isinstance(value, str)
            or not value.strip()
            or os.path.isabs(value)
            or ".." in value.replace("\\", "/").split("/")
        ):
            raise BadInput(
                f"the config this restore would leave sets {key} to {value!r}, not a folder inside the workspace",
                "restore without the config module, or fix that file first",
            )
    return {k: rel_dir(v) for k, v in out.items()}


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def moves(meta: dict, target: dict[str, str], modules) -> dict[str, str]:
    """Backup slot -> workspace slot for the folders named differently here (empty: the same
    layout). Only slots the backup really has are moved."""
    source, slots = of_meta(meta), meta["slots"]
    out: dict[str, str] = {}
    for key in KEYS:
        module = MODULE_OF[key]
        if module not in modules or key not in source or key not in target or source[key] == target[key]:
            continue
        if key == "metadata_dir":
            prefix = source[key] + "/"
            out.update({s: target[key] + "/" + s[len(prefix) :] for s in slots[module] if s.startswith(prefix)})
        elif source[key] in slots[module]:
            if out.get(source[key], target[key]) != target[key]:
                raise BadInput(
                    f"cannot map the backup's {source[key]}/ onto this workspace: it would go to both "
                    f"{out[source[key]]}/ and {target[key]}/",
                    "restore the config module too",
                )
            out[source[key]] = target[key]
    return out


def describe(mapped: dict[str, str]) -> str:
    return ", ".join(f"{a}/ -> {b}/" for a, b in sorted(mapped.items()))
