"""Workspace, configuration, atomic writes, locks and note files: the bottom layer."""
