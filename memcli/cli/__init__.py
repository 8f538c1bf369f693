"""The command-line layer: the only place that imports typer or rich."""
