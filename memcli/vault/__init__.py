"""The vault: a workspace's folders and the Markdown notes in them, written so none is ever lost.

workspace.py finds a workspace and says which files are indexed and under which name (extra
paths: extras.py); notes.py, frontmatter.py, wikilinks.py and dates.py read and write notes and
their metadata; session.py keeps the dialog logs; atomic.py writes every file whole or not at
all; lock.py serialises writers. Bottom layer, above its three neighbours: imports memcli.errors,
memcli.config (a workspace opens its settings) and memcli.watch (the walk that lists its
files), never anything above (index, jobs, ...).
"""
