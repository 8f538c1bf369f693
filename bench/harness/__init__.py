"""The evaluation harness of `mem search` (docs/evaluation.md): what every experiment shares.

    paths        where data, derived vaults and caches live; log()
    vaults       Question and Vault: a folder of notes plus the questions asked of it
    locomo_data  LoCoMo (locomo10.json) converted into vaults, one note per session
    pydoc_data   the second corpus: standard-library docstrings as one vault
    embeddings   the local model behind a text-hash cache (bench/out/embeddings)
    indexes      a workspace per chunking x index variant, its index built and current
    context      what the search being run is (prototypes read it)
    scoring      session- and turn-level Recall@k, MRR@10, nDCG@10, per category
    run          a query set through memcli.jobs.search.run (and `mem search`), sweeps
    report       the result JSON, the stderr table and the Markdown tables
    compare      paired bootstrap of two runs made with --details
    cli          the options and the run shared by bench/locomo.py and bench/corpus_pydoc.py

The variants measured with it (named sweeps, code-level prototypes) are in
bench/experiments/. Nothing here changes memcli: an experiment does, inside the
benchmark process only.
"""

import os

# as `mem` itself runs (memcli/cli/main.py): one OpenBLAS thread, set before numpy loads
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
