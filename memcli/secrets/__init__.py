"""Secrets kept out of memory: secret-shaped values found and replaced before anything is written.

redact.py is the Redactor: its format rules (a provider's own shape, such as sk-ant-… or AKIA…,
found anywhere) and the user's patterns, then the context rules of rules.py (a secret-named key
and its value, a config file's layout; a tool's flag in commands.py), links.py (credentials in connection
strings and URLs) and prose.py (a password named in a sentence), all built on shapes.py (what a
secret value and a secret-named key look like). A new kind of secret is one more rule in one of
these; KINDS follows from the rules. scrub.py is what every writer of memory calls (a Scrubber
that keeps a tally for the job's report); dsn.py masks the passwords of a PostgreSQL connection
string. Bottom layer: this package imports only the standard library and memcli.errors, and
reads no file (text and the redaction settings are handed in; memcli.config imports it, to
mask `mem config` and to check those settings).
"""
