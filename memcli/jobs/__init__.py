"""One module per job; each exposes run(...) returning a typed report."""
