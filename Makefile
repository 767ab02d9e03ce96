# ireval: the two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PORT   ?= 8501
# Loopback only by default; ADDRESS=0.0.0.0 serves a team, with sign-in configured
# (README, "Sign-in") or IREVAL_ALLOW_ANONYMOUS=1 (refused otherwise).
ADDRESS ?= 127.0.0.1
# make test spreads the suite over this many pytest-xdist workers (the browser tests run in
# two groups, one module at a time in each: tests/conftest.py); TEST_WORKERS=0 runs it in one
# process. IREVAL_FULL_GRID=1 runs the full parameter grids and fuzz searches (README.md,
# "Development").
TEST_WORKERS ?= 2

.PHONY: run test lint bench sample browser tex postgres clean

# Runtime environment: re-installed whenever requirements.txt changes.
$(VENV)/.runtime: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

# Test environment: runtime + pytest, the oracles, playwright, ruff, mypy, and Dask
# (requirements-scale.txt: the distributed engine is tested on a real LocalCluster).
$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt requirements-scale.txt
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt -r requirements-scale.txt
	touch $@

## run: start the app on the bundled sample data (http://127.0.0.1:$(PORT)); DATA=folder opens
## a folder of files instead (its qrels* file and every other file as a run)
run: $(VENV)/.runtime
	$(BIN)/python -m ireval_app.signin --address "$(ADDRESS)"
	IREVAL_DATA_DIR="$(DATA)" $(BIN)/streamlit run app.py --server.port $(PORT) \
	  --server.address $(ADDRESS)

## test: lint and type-check, then the whole suite (unit, oracle, AppTest, real browser)
test: $(VENV)/.dev browser tex postgres
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

## browser: Debian's chromium and a CJK font (Chinese labels) for the browser test (apt-get when root)
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium missing: run 'sudo apt-get install chromium' for the browser test"; fi; }
	@fc-list :lang=zh 2>/dev/null | grep -q . || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk >/dev/null; \
	  else echo "no CJK font: run 'sudo apt-get install fonts-noto-cjk' (Chinese labels render as boxes)"; fi; }

## tex: Debian's pdflatex (texlive-latex-base: 39 MB download, 121 MB installed, about a
## minute) for the test that compiles report --format latex (apt-get when root)
tex:
	@command -v pdflatex >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends texlive-latex-base >/dev/null; \
	  else echo "pdflatex missing: run 'sudo apt-get install texlive-latex-base' for the LaTeX test"; fi; }

## postgres: Debian's PostgreSQL server for the workspace tests (installed with apt-get when root)
postgres:
	@bash .ci/postgres.sh

## lint: ruff, mypy and the import contracts of pyproject.toml ([tool.importlinter])
lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

## bench: speed and memory against pytrec_eval and ranx (not part of the tests);
## the id shapes (MS MARCO, prefixed, UUID, mixed) at 500k lines, at 7M with IDS=7M
bench: $(VENV)/.dev
	$(BIN)/python -m pip install --quiet -r requirements-bench.txt
	$(BIN)/python benchmarks/run_all.py $(if $(IDS),--id-size $(IDS))

## sample: regenerate sample_data/ and sample_data/labels/ (deterministic)
sample: $(VENV)/.runtime
	$(BIN)/python sample_data/make_sample.py
	$(BIN)/python sample_data/labels/make_labels.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache benchmarks/data test-artifacts
