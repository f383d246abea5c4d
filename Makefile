# Two commands: `make demo` (the main job) and `make test` (the whole suite).
# Each creates .venv when it is missing and installs the pinned stack into it;
# a second run only re-checks the install stamp.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench golden clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Reinstall whenever the declared or pinned dependencies change.
$(STAMP): $(PY) pyproject.toml constraints.txt
	$(PY) -m pip install --quiet -c constraints.txt -e ".[test,train,eval,bench,bot,serve]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m evaluate.demo

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy --strict matador_env/engine
	$(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

bench: $(STAMP)
	$(PY) -m benchmarks.engine

# Regenerate the golden playthroughs after an intended rules change.
golden: $(STAMP)
	$(PY) -m pytest -q tests/test_golden.py --regen-golden

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .hypothesis
