"""Start llama.cpp's OpenAI-compatible server (xllamacpp) on 127.0.0.1 and keep it up.

Run with the Python of `.venv/llm` (`make llm-tier`):

    .venv/llm/bin/python tests/llm/serve.py MODEL.gguf [--port 0] [--ctx 8192] [--threads 1]

Prints the base URL (`http://127.0.0.1:PORT`) on the first line of stdout once the model
is loaded, then serves until stdin closes or SIGTERM/SIGINT arrives, so a parent that
dies takes the server with it. One thread: on two cores, two threads collapse under load.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--port", type=int, default=0, help="0 = a free port")
    ap.add_argument("--ctx", type=int, default=8192, help="context window in tokens")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    import xllamacpp as xlc

    p = xlc.CommonParams()
    p.model.path = args.model
    p.hostnames = ["127.0.0.1"]
    p.port = args.port
    p.n_ctx = args.ctx
    p.n_parallel = 1
    p.cpuparams.n_threads = args.threads
    p.cpuparams_batch.n_threads = args.threads
    server = xlc.Server(p)  # loads the model and starts the HTTP server
    print(server.listening_address, flush=True)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    done.wait()
    del server


if __name__ == "__main__":
    main()
