# One place for every command the README names. Run `make help` for the list.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV    := .venv
PY      := $(VENV)/bin/python
JB      := $(VENV)/bin/jupyter-book
STAMP   := $(VENV)/.installed-stamp
NOTEBOOKS_MD := $(wildcard notebooks/*.md)
NB_MD    = $(or $(NB),$(NOTEBOOKS_MD))
NB_IPYNB = $(patsubst %.md,%.ipynb,$(NB_MD))

# Reproducible hashing in every kernel that nbval, jupytext or the book starts.
export PYTHONHASHSEED := 0

.PHONY: help venv book book-strict test notebooks bench clean

help:  ## list the commands
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -r requirements.txt
	touch $@

venv: $(STAMP)  ## create .venv from requirements.txt (only when missing or out of date)

# The execution cache keys only on cell code, so a change to lib/ would not re-run the
# notebooks: when the hash of lib/ changes, drop the cache and the doctrees.
_build/.lib-hash: FORCE
	@mkdir -p _build
	@h=$$(cat lib/*.py | sha256sum | cut -c1-16); \
	if [ "$$(cat $@ 2>/dev/null)" != "$$h" ]; then \
	  rm -rf _build/.jupyter_cache _build/.doctrees _build/html _build/jupyter_execute; \
	  echo "$$h" > $@; \
	fi
FORCE:

book: $(STAMP) _build/.lib-hash  ## build the HTML book and print the path of index.html
	$(JB) build . --keep-going
	@echo "The book: $(CURDIR)/_build/html/index.html"

book-strict: $(STAMP) _build/.lib-hash  ## build with warnings as errors (-W -n), as make test does
	$(JB) build . -W -n --keep-going

test: $(STAMP)  ## unit, property and doc tests, nbval over notebooks/, pairing checks, strict build
	$(PY) -m pytest
	$(MAKE) book-strict

# Two steps: jupytext syncs the inputs into the .ipynb (--update keeps its cell ids), then
# nbconvert executes it in place top to bottom. (`jupytext --update --execute` would copy
# the old outputs back over the new ones.) The per-cell execution timestamps nbconvert
# records are dropped so that a regeneration changes only what changed.
notebooks: $(STAMP)  ## regenerate the executed .ipynb references (all, or NB=notebooks/x.md)
	$(VENV)/bin/jupytext --to ipynb --update $(NB_MD)
	$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace \
	  --ExecutePreprocessor.timeout=600 $(NB_IPYNB)
	$(PY) tools/strip_timings.py $(NB_IPYNB)

bench: $(STAMP)  ## time lib against torch SDPA and two NumPy GEMMs; write benchmarks/results.json
	$(PY) -m benchmarks.bench_attention

clean:  ## remove the built book (keeps .venv)
	rm -rf _build
