# xskbench developer entry points.  `make lab` and `make test` are all a newcomer needs.
PYTHON ?= python3
VENV   ?= .venv
VPY    := $(VENV)/bin/python
STAMP  := $(VENV)/.xskbench-installed
# Jupyter refuses to start as root unless told it may.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: venv chromium lab test lint bench reproduce calibrate clean soak test-boundscheck

# Idempotent: the venv is (re)installed only when pyproject.toml changes.
venv: $(STAMP) chromium

$(STAMP): pyproject.toml
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -e '.[test,lab]'
	touch $@

# Debian's chromium is needed for kaleido figure export and the browser test.
# It comes from apt, never from a download at run time.
chromium:
	@if command -v chromium >/dev/null 2>&1; then \
	    :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "chromium missing: installing Debian's chromium with apt-get"; \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	else \
	    echo "note: chromium not found and not root (or no apt-get); skipping install." \
	         "Figure export and browser tests need it: apt-get install -y chromium"; \
	fi

# Compiles every device's kernels into numba's on-disk cache in the background (one tiny run
# of each device and mode; log in out/precompile.log) while JupyterLab starts: the first
# Explorer change on any device then loads the cache instead of compiling for 20+ s.
lab: venv
	@mkdir -p out
	@$(VPY) -c 'import xskbench; from xskbench.config import DEVICE_MODES; \
	    [xskbench.run(xskbench.RunConfig(device=d, mode=m).replace(**{"workload.duration_s": \
	    0.0005, "workload.warmup_s": 0.0})) for d, ms in DEVICE_MODES.items() for m in ms]; \
	    print("kernels of every device compiled")' >out/precompile.log 2>&1 &
	$(VENV)/bin/jupyter lab --ip=127.0.0.1 --notebook-dir=notebooks $(ALLOW_ROOT) \
	    --LabApp.default_url=/lab/tree/index.ipynb

# The whole suite, then the bounds-checked pass (CI's .ci/run calls this target).
test: venv
	$(VPY) -m pytest -n 2
	$(MAKE) --no-print-directory test-boundscheck

lint: venv
	$(VENV)/bin/ruff check .
	$(VPY) tools/strip_notebooks.py --check notebooks/*.ipynb

bench: venv
	$(VPY) benchmarks/bench.py

# Every published number beside its emulation (non-zero exit if a row leaves tolerance).
reproduce: venv
	$(VENV)/bin/xskbench reproduce --out out/reproduce

# Refit the op costs from data/published.csv and rewrite data/costs/*.json.
calibrate: venv
	$(VENV)/bin/xskbench calibrate

clean:
	rm -rf build dist *.egg-info .pytest_cache .ruff_cache .hypothesis out
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +
	find . -path ./$(VENV) -prune -o -name .ipynb_checkpoints -type d -exec rm -rf {} +

# The properties of tests/test_properties.py over 10,000 random valid configurations
# (short runs, each twice; about 12 min on one core). SOAK_ARGS="-n 500" for a shorter one.
soak: venv
	$(VPY) benchmarks/soak.py $(SOAK_ARGS)

# The core tests with numba's bounds checking on; that code is compiled into its own cache
# (the normal one's directory, keyed by the source hash, + "-boundscheck") so that it never
# replaces the normal (unchecked) cache. test_properties runs every device kernel in every
# mode with random faults; test_faults every fault on every device it applies to.
test-boundscheck: venv
	NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR="$$($(VPY) -c 'import xskbench.paths, os; \
	    print(os.environ["NUMBA_CACHE_DIR"])')-boundscheck" $(VPY) -m pytest -p no:cacheprovider \
	    -n 2 tests/test_core.py tests/test_xsk_ring.py tests/test_properties.py tests/test_faults.py \
	    tests/test_multiqueue.py
