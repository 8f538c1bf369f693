"""`mem mcp`: the memory tools over the Model Context Protocol (stdio), standard library only.

A front end beside memcli/cli: it calls the same jobs and never imports typer or rich.
"""
