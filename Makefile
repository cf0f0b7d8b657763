# packproof: two commands do all set-up on a fresh machine: `make eval` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: eval eval-locomo eval-sessions test check bench golden gate baseline installed clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## eval: the main job: every strategy on every golden scenario suite (evals/default.yaml)
eval: $(STAMP)
	$(VENV)/bin/packproof eval --config evals/default.yaml

## eval-locomo: import LoCoMo (../shared/data/locomo, never committed) and run evals/locomo.yaml,
## then import it as replays and run evals/locomo-replay.yaml (the prompt-cache economics)
LOCOMO ?= ../shared/data/locomo/locomo_dev.json
eval-locomo: $(STAMP)
	$(VENV)/bin/packproof import locomo $(LOCOMO) -o reports/imports/locomo_dev.jsonl
	$(VENV)/bin/packproof eval --config evals/locomo.yaml
	$(VENV)/bin/packproof import locomo $(LOCOMO) --replay -o reports/imports/locomo_dev_replay.jsonl
	$(VENV)/bin/packproof eval --config evals/locomo-replay.yaml

## eval-sessions: import the Claude Code sessions (../shared/data/claude-code/sessions, never
## committed) into reports/imports/, run evals/sessions.yaml (every strategy at several budgets),
## price each chain as the sessions were billed beside their bill, and write the report into the
## run and reports/proofs/sessions/ (docs/sessions.md); skips, exit 0, without the sessions
SESSIONS ?= ../shared/data/claude-code/sessions
eval-sessions: $(STAMP)
	$(PY) -m packproof.evals.bench.sessions_eval --sessions $(SESSIONS) --proof reports/proofs/sessions

## gate: compare the latest main eval (reports/default/latest/) with the committed baseline;
## exit 1 on a regression
gate: $(STAMP)
	$(VENV)/bin/packproof gate --baseline reports/baseline/summary.json --current reports/default/latest/summary.json

## baseline: the one command that updates the committed baseline (packproof baseline): run the
## main eval and record its summary, and its cells (gzipped, no timestamp) for
## `packproof gate --significance`, in reports/baseline/; review the diff, then commit it
baseline: $(STAMP)
	$(VENV)/bin/packproof baseline --config evals/default.yaml

## test: the whole test suite
test: $(STAMP)
	$(PY) -m pytest -q

## check: lint and type-check
check: $(STAMP)
	$(PY) -m ruff check packproof packer evals tests
	rm -rf build/typecheck && mkdir -p build/typecheck/packproof
	for f in packproof/* packer evals docs; do ln -s "$(CURDIR)/$$f" build/typecheck/packproof/; done
	$(PY) -m mypy

## golden: rewrite the golden packs (tests/golden/) and the compiled scenario mirrors; review the diff
golden: $(STAMP)
	$(VENV)/bin/packproof scenarios compile
	$(PY) -m pytest -q tests/evals/scenarios/test_golden.py --update-goldens

## bench: the packer, eval-grid, prompt-cache and replay benchmarks; write reports/bench/pack.json,
## pack.png, eval.json, cache.json, replay.json, then every target with its floor and their ratio
## into reports/bench/speed.md and the README's speed section
bench: $(STAMP)
	$(PY) -m packproof.evals.bench.pack
	$(PY) -m packproof.evals.bench.eval
	$(PY) -m packproof.evals.bench.cache
	$(PY) -m packproof.evals.bench.replay
	$(PY) -m packproof.evals.bench.speed

## installed: build the wheel, install it in a fresh venv, and in an empty folder outside the
## repository run packproof init, scenarios compile, baseline, eval and gate (its default
## baseline), read a guide and a schema, and run the pytest plugin on the example suite (CI runs it)
INSTALLED := build/installed
installed: $(STAMP)
	rm -rf $(INSTALLED) && mkdir -p $(INSTALLED)
	$(PY) -m pip wheel --quiet --no-deps -w $(INSTALLED)/dist .
	$(PYTHON) -m venv $(INSTALLED)/venv
	$(INSTALLED)/venv/bin/python -m pip install --quiet "$$(ls $(INSTALLED)/dist/packproof-*.whl)[eval,pytest]"
	cd "$$(mktemp -d)" && pwd && bin=$(CURDIR)/$(INSTALLED)/venv/bin && \
	  $$bin/packproof init && \
	  $$bin/packproof scenarios compile && \
	  $$bin/packproof baseline --jobs 1 --quiet && \
	  $$bin/packproof eval --jobs 1 --quiet && \
	  $$bin/packproof gate && \
	  $$bin/packproof docs gate | grep -q '^# The gate' && \
	  $$bin/packproof schema config | grep -q '"title": "packproof.eval.v1"' && \
	  printf 'from packproof import pack\n\ndef mine(request):\n    return pack(request).to_dict()\n' > mine.py && \
	  $$bin/python -m pytest -q -p no:cacheprovider --packproof-suite scenarios/compiled/example.jsonl --packproof-packer mine:mine

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache .hypothesis
