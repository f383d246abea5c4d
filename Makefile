# Two commands: `make demo` (the main job) and `make test` (the whole suite).
# Each creates .venv when it is missing and installs the pinned stack into it;
# a second run only re-checks the install stamp.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The browser test drives Debian's chromium (Playwright's own download needs the internet).
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo train test lint bench golden clean

$(PY):
	@echo "Setting up .venv with the pinned stack from constraints.txt (a few minutes, once)..."
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Reinstall whenever the declared or pinned dependencies change. torch goes first, from
# the pin, so that nothing that depends on it (ray, tianshou) resolves an open range.
$(STAMP): $(PY) pyproject.toml constraints.txt
	@echo "Installing the pinned packages into .venv (torch 2.13.0, SB3, Ray, Tianshou; a few minutes)..."
	$(PY) -m pip install --quiet -c constraints.txt torch
	$(PY) -m pip install --quiet -c constraints.txt -e ".[test,train,eval,bench,bot,serve,batch,compat,browser]"
	touch $(STAMP)

$(CHROMIUM):
	@echo "Installing Debian's chromium for the browser test (apt-get, once)..."
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium

demo: $(STAMP)
	@echo "The demo: a hand, an arena and a learning curve (one to two minutes; a rerun reuses its training runs)..."
	$(PY) -m evaluate.demo

# The default recipe on the standard preset: a behaviour-cloning warm start from the
# search agent, then 100,000 steps of PPO, into runs/default. Run it again to resume an
# interrupted run. python -m train.bots rebuilds every shipped bot.
train: $(STAMP)
	@echo "Training the default recipe into runs/default (at most 20 minutes on two cores; interrupt and rerun make train to resume)..."
	@if [ -f runs/default/args.json ]; then $(PY) -m train --resume runs/default; \
	else $(PY) -m train --exp-name default --out runs/default; fi

# The suite runs in one pytest-xdist worker per core: about half the time on two cores.
# Each worker takes the next test as it finishes one (worksteal), so the few long
# training tests do not hold the others back. pytest -q alone runs it in one process.
test: $(STAMP) $(CHROMIUM)
	$(PY) -m ruff check .
	$(PY) -m mypy --strict matador_env/engine
	$(PY) -m mypy matador_env agents evaluate train benchmarks tests
	$(PY) -m pytest -q -n auto --dist worksteal

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

bench: $(STAMP)
	$(PY) -m benchmarks.engine

# Regenerate the golden playthroughs and the perft counts after an intended rules change.
golden: $(STAMP)
	$(PY) -m pytest -q tests/test_golden.py tests/test_perft.py --regen-golden

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .hypothesis
