"""What the search being run is: set by the harness, read by the prototypes (bench/experiments)."""


class Ctx:
    """Per-search context the patched functions read (query, vault date, snapshot)."""

    query = ""
    now = ""
    limit = 5
    target = 400  # chunking target tokens of the running workspace
    root = ""  # the vault being searched
