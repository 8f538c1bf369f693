"""Change detection: which indexed files changed, found as cheaply as the platform allows.

walk.py lists the Markdown files below a folder with their (mtime_ns, size), on two cores for a
large vault: what every full freshness check compares with the index. stamps.py stamps a set of
folders and files and tells whether they are still as they were (a large vault's quick check).
inotify.py is Linux inotify through libc and the filesystems it can be trusted on; feed.py is
the consumer `mem watch` and `mem mcp` run, which writes the change journal of journal.py (what
changed since an index's mark, read by every command beside a watcher); polling.py is the
fallback where inotify cannot be trusted. Policy stays with the caller: memcli.index.quick and
memcli.index.journaled decide what the index checks, memcli.mcp.watch serves the last walk
while no event came, memcli.vault.workspace decides which files are indexed. Bottom layer:
imports nothing of memcli (a workspace is passed in, never imported), so memcli.vault can
build on it.
"""
