# `make install` sets up .venv with torch, the real allennlp 2.10.1 and this package (editable);
# `make test` runs the test suite. Both are what CI runs (.ci/run). `make lint` checks the code with ruff
# (settings in pyproject.toml), the package's layers with import-linter (contracts in pyproject.toml) and builds the
# docs site (`make docs`: mkdocs.yml, docs/);
# `make format` applies ruff's fixes and formatting.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
# The CPU build of torch that lies on this machine's disk; an unpinned torch pulls GBs of CUDA.
TORCH ?= torch==2.13.0
STAMP := $(VENV)/.installed

.PHONY: install test test-all lint docs format bench demo clean wheelhouse wheelhouse-check

install: $(STAMP)

$(STAMP): setup.cfg setup.py pyproject.toml $(wildcard luke_allennlp_compat/*.py) luke_allennlp/cli/__init__.py Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q "$(TORCH)"
	$(PIP) install -q -e ".[dev,tracking,plot,tune,thai]"
	# allennlp pins torch<1.13 and transformers<4.21: install it alone; setup.cfg lists what it needs.
	$(PIP) install -q --no-deps allennlp==2.10.1
	# An editable install does not ship the start-up hook that repairs allennlp; write it (see luke_allennlp/cli/__init__.py).
	$(PY) -m luke_allennlp.cli
	$(VENV)/bin/allennlp --version
	touch $(STAMP)

# Two processes (pytest-xdist), each taking the next test module as it is free (a module's fixtures built once), each
# with one core's threads (tests/conftest.py): 17.6 minutes on a quiet 2-core machine (1,110 tests, 2026-11-29).
# TEST_WORKERS=0 runs the suite in this process.
TEST_WORKERS ?= 2
PYTEST := $(PY) -m pytest -q $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadscope)
test: install
	$(PYTEST)

test-all: install
	$(PYTEST) -m ""

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(MKDOCS)

# The documentation site (mkdocs.yml, docs/) into site/; --strict: a broken link or anchor is an error. `make lint`
# builds it too, so CI does. (NO_MKDOCS_2_WARNING: mkdocs-material's notice about MkDocs 2, printed on every build.)
MKDOCS := NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict
docs: install
	$(MKDOCS)

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: install
	$(PY) benchmarks/encoder_speed.py

# Offline, a few minutes: pretrain a tiny LUKE on the project's sample dump, then fine-tune it for NER (docs/index.md).
demo: install
	$(PY) demo/pretraining_demo.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache site

# Wheels for a GPU machine that has CUDA torch and transformers but no allennlp and no network (see docs/training.md,
# "On a GPU machine without internet"): copy $(WHEELHOUSE) there and run `python3 $(WHEELHOUSE)/install.py`.
WHEELHOUSE ?= wheelhouse
PYTHON_VERSION ?= 3.12
wheelhouse: install
	$(PY) tools/wheelhouse.py build --python-version $(PYTHON_VERSION) --out $(WHEELHOUSE)

# The route above, tried here: a fresh environment holding only what a CUDA PyTorch image has (this machine's
# Python and CPU torch standing in; transformers and huggingface_hub at the GPU machine's versions), the wheelhouse
# installed offline, then the real `allennlp train` with bf16, and the trainer, modeling and compat tests.
CHECK := .bench/wheelhouse-check
wheelhouse-check: install
	rm -rf $(CHECK) && $(PYTHON) -m venv $(CHECK)/venv
	$(CHECK)/venv/bin/python -m pip install -q "$(TORCH)" transformers==5.17.0 huggingface_hub==1.33.0 pytest \
		$$($(PY) -c "import sys; sys.path.insert(0, 'tools'); import wheelhouse; print(*wheelhouse.PROVIDED[3:])")
	$(PY) tools/wheelhouse.py build --out $(CHECK)/wheels \
		--python-version $$($(CHECK)/venv/bin/python -c "import sys; print('%d.%d' % sys.version_info[:2])")
	$(CHECK)/venv/bin/python $(CHECK)/wheels/install.py
	$(CHECK)/venv/bin/python -c "from luke_allennlp.testing import write_tiny_checkpoint; write_tiny_checkpoint('$(CHECK)/tiny-luke')"
	MODEL_DIR=$(CHECK)/tiny-luke DATA=tests/fixtures/data/sentiment.jsonl $(CHECK)/venv/bin/allennlp train \
		tests/fixtures/configs/luke_classifier.jsonnet -s $(CHECK)/run \
		-o '{"trainer.type": "luke_gradient_descent", "trainer.precision": "bf16", "trainer.num_epochs": 2}'
	$(CHECK)/venv/bin/python -m pytest -q -p no:cacheprovider tests/training tests/modeling tests/luke_allennlp_compat tests/cli
