"""Configuration: where mem's settings come from, merged once into typed settings.

layers.py merges the layers (defaults < QwenPaw's agent.json < OpenClaw's memory settings <
mem.yaml < MEM_* environment < flags), reads mem.yaml and masks secrets for `mem config`;
settings.py is the typed, validated result (`ws.settings`) and the one place that names every
key and its default; qwenpaw.py reads a QwenPaw agent's agent.json; openclaw.py finds and reads
an OpenClaw install's openclaw.json (JSON5, through json5.py, with `$include` and `${VAR}`),
and openclaw_map.py maps its memorySearch block onto mem's keys. Support for another config
file format is one more reader here and one more layer in layers.resolve. Bottom layer: imports
memcli.errors and memcli.secrets (to mask and to check the redaction settings) and nothing else
of memcli; memcli.vault opens a workspace with it.
"""
