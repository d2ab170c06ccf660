# `make install` sets up .venv with torch, the real allennlp 2.10.1 and this package (editable);
# `make test` runs the test suite. Both are what CI runs (.ci/run). `make lint` checks the code with ruff
# (settings in pyproject.toml); `make format` applies ruff's fixes and formatting.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
# The CPU build of torch that lies on this machine's disk; an unpinned torch pulls GBs of CUDA.
TORCH ?= torch==2.13.0
STAMP := $(VENV)/.installed

.PHONY: install test test-all lint format bench demo clean

install: $(STAMP)

$(STAMP): setup.cfg setup.py pyproject.toml luke_allennlp_compat.py Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q "$(TORCH)"
	$(PIP) install -q -e ".[dev]"
	# allennlp pins torch<1.13 and transformers<4.21: install it alone; setup.cfg lists what it needs.
	$(PIP) install -q --no-deps allennlp==2.10.1
	# An editable install does not ship the start-up hook that repairs allennlp; write it (see luke_allennlp_compat.py).
	$(PY) -m luke_allennlp_compat
	$(VENV)/bin/allennlp --version
	touch $(STAMP)

test: install
	$(PY) -m pytest -q

test-all: install
	$(PY) -m pytest -q -m ""

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: install
	$(PY) benchmarks/encoder_speed.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

demo: install
	$(PY) demo/pretraining_demo.py
