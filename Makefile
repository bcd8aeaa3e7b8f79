# corpus-hygiene: every target sets up what it needs. See README.md.
SHELL := /bin/bash
PYTHON ?= python3
UV_VERSION := 0.13.9
# Never let uv download an interpreter: use the machine's Python (>= 3.11).
export UV_PYTHON_DOWNLOADS := never
export UV_PYTHON := $(PYTHON)
UV := $(shell command -v uv 2>/dev/null || echo .tools/bin/uv)
VENV := .venv
INPUT ?= examples/corpus
DATASET ?= data/clean
REPORTS ?= reports
PYTEST_ARGS ?=
# pytest-xdist processes: the slow tests mostly wait on servers, clusters and schedules, so two share 2 cores.
TEST_WORKERS ?= 2

.PHONY: setup setup-dev run test test-fast fuzz bench bench-e2e bench-reference bench-naive bench-large bench-datatrove lint clean help

help:
	@echo "make run    set up and run the pipeline on $(INPUT) (dataset in $(DATASET), report in $(REPORTS))"
	@echo "make test   set up and run the test suite"
	@echo "make bench  run the benchmarks (needs ../shared)"
	@echo "make test-fast   the tests that start no server, cluster or browser (pytest -m 'not slow')"
	@echo "make bench-e2e ABSTRACTS=20000 WORKERS=1 [SERVER=1]   the real CLI end to end, with re-runs"
	@echo "make bench-large   1M-record dedup, a 500 MB streamed file, 100k and 1M end to end"
	@echo "make bench-datatrove RECORDS=100000   datatrove's MinHash dedup side by side (own venv)"
	@echo "make bench-reference   a 20k run against a 100k reference: recall, hard negatives, cost"
	@echo "make bench-naive   the afternoon chain of the same libraries vs hygiene run, 5k and 20k (CPU)"
	@echo "make fuzz FUZZ_EXAMPLES=5000   the fuzz tests with many generated paragraphs"
	@echo "make lint   ruff"

.tools/bin/uv:
	$(PYTHON) -m venv .tools
	.tools/bin/pip install --quiet "uv==$(UV_VERSION)"

# Bytecode is compiled at install: where PYTHONDONTWRITEBYTECODE is set (as on this machine) Python never
# writes .pyc files, and every process (the CLI, Prefect's server, each Dask worker) would compile
# thousands of modules from source on every start.
# `make run` installs the runtime dependencies only; tests, lint and benchmarks add the dev group.
# --inexact: a runtime sync after a full one leaves the test tools in place.
$(VENV)/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --locked --no-dev --inexact --compile-bytecode
	$(VENV)/bin/python -m compileall -q src flows checks >/dev/null
	@touch $@

$(VENV)/.synced-dev: pyproject.toml uv.lock | $(UV)
	$(UV) sync --locked --compile-bytecode
	$(VENV)/bin/python -m compileall -q src flows checks >/dev/null
	@touch $@ $(VENV)/.synced

setup: $(VENV)/.synced
setup-dev: $(VENV)/.synced-dev

run: setup
	$(VENV)/bin/hygiene run $(INPUT) --dataset-dir $(DATASET) --reports-dir $(REPORTS)
	@echo
	@echo "Dataset (Parquet + manifest): $(DATASET)/"
	@echo "Reports: $(REPORTS)/index.html (latest run first)"

# pytest exits 5 when it collected no tests: say so plainly rather than fail on a technicality.
test: setup-dev
	@$(VENV)/bin/python -m pytest -n $(TEST_WORKERS) --dist loadscope $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: ran no test"; exit 0; fi; exit $$rc

test-fast: setup-dev
	$(VENV)/bin/python -m pytest -m "not slow" -n $(TEST_WORKERS) --dist loadscope $(PYTEST_ARGS)

# The fuzz tests (generated LaTeX, markdown, mojibake, scripts through the per-paragraph function) with many
# examples; hypothesis prints how many ran and what failed.
FUZZ_EXAMPLES ?= 5000
fuzz: setup-dev
	HYPOTHESIS_PROFILE=fuzz FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(VENV)/bin/python -m pytest tests/test_fuzz.py \
		-p no:xdist --hypothesis-show-statistics -q

# Benchmarks read ../shared at run time; figures go to benchmarks/results/*.json. BENCH_MB sets corpus size.
BENCH_MB ?= 50
bench: setup-dev
	$(VENV)/bin/python -m benchmarks.bench_ingest --mb $(BENCH_MB)
	$(VENV)/bin/python -m benchmarks.bench_clean --mb $(BENCH_MB)
	$(VENV)/bin/python -m benchmarks.bench_text_quality
	$(VENV)/bin/python -m benchmarks.bench_language
	$(VENV)/bin/python -m benchmarks.bench_bombs
	$(VENV)/bin/python -m benchmarks.bench_dedup --bases 300
	$(VENV)/bin/python -m benchmarks.bench_checks --rows 1000000
	$(VENV)/bin/python -m benchmarks.bench_report --records 100000
	$(VENV)/bin/python -m benchmarks.bench_dedup_scale --records 20000
	$(VENV)/bin/python -m benchmarks.bench_fresh_memory --mb 512
	$(VENV)/bin/python -m benchmarks.bench_fixed

# The real CLI end to end: full run, unchanged re-run, 1% new files (20k abstracts: ~5 min).
ABSTRACTS ?= 20000
WORKERS ?= 1
bench-naive: setup-dev
	$(VENV)/bin/python -m benchmarks.bench_naive --sizes 5000 20000

bench-e2e: setup-dev
	$(VENV)/bin/python -m benchmarks.bench_e2e --abstracts $(ABSTRACTS) --workers $(WORKERS) $(if $(SERVER),--server)

# A 20k run against a 100k reference: recall of planted copies, hard negatives, cost with the index cached (~10 min).
bench-reference: setup-dev
	$(VENV)/bin/python -m benchmarks.bench_reference

# Scale: LSH + verification + clusters over 1M records; one 500 MB file streamed; a 1 GB paragraph; 100k abstracts end to
# end, ad hoc and against a long-lived Prefect server, on one worker and on two; 1M on two. ~2 hours.
bench-large: setup-dev
	$(VENV)/bin/python -m benchmarks.bench_dedup_scale --records 1000000
	$(VENV)/bin/python -m benchmarks.bench_stream --mb 500
	$(VENV)/bin/python -m benchmarks.bench_stream --mb 1024 --one-paragraph
	$(VENV)/bin/python -m benchmarks.bench_e2e --abstracts 100000 --workers 2
	$(VENV)/bin/python -m benchmarks.bench_e2e --abstracts 100000 --workers 1 --server
	$(VENV)/bin/python -m benchmarks.bench_e2e --abstracts 100000 --workers 2 --server
	$(VENV)/bin/python -m benchmarks.bench_e2e --abstracts 1000000 --workers 2 --server

# datatrove runs from a venv of its own (never in the product's): datatrove, spacy for its tokenizer.
RECORDS ?= 100000
DATATROVE_VENV := .venv-datatrove
$(DATATROVE_VENV)/bin/python: setup-dev
	$(UV) venv -q --python $(PYTHON) $(DATATROVE_VENV)
	VIRTUAL_ENV=$(DATATROVE_VENV) $(UV) pip install -q "datatrove[processing]==0.10.1" spacy==3.8.18 orjson==3.13.0

bench-datatrove: $(DATATROVE_VENV)/bin/python
	$(VENV)/bin/python -m benchmarks.bench_datatrove --records $(RECORDS)

lint: setup-dev
	$(VENV)/bin/ruff check src flows checks tests benchmarks examples
	$(VENV)/bin/ruff format --check src flows checks tests benchmarks examples

clean:
	rm -rf $(VENV) $(DATATROVE_VENV) .tools .pytest_cache .hypothesis
