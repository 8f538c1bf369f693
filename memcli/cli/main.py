"""Entry point of the `mem` console script."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    # numpy's OpenBLAS threads, set before numpy is imported: mem's matrix products are small
    # (a query's embedding, one cosine pass), and two BLAS threads spinning against a busy
    # second core made a query's embedding 30x slower (1 s instead of 27 ms)
    import os

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # the cyclic collector, run every 700 allocations, walked the whole heap again and again
    # while an update built its table of 100,000 file stats (20 of 60 ms); mem's data holds
    # no reference cycles worth chasing that often, and refcounting frees the rest
    import gc

    gc.set_threshold(50_000, 20, 20)
    from memcli.cli import fast

    code = fast.run(argv)
    if code is None:
        from memcli.cli.app import run

        code = run(argv)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        from memcli.cli.errors import silence_stdout

        silence_stdout()
    sys.exit(code)
