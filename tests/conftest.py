"""pytest configuration shared by the unit tests, the doctests of lib and nbval."""

import os

import matplotlib

matplotlib.use("Agg")  # the tests draw figures without a screen

from hypothesis import settings  # noqa: E402

# CI gets more examples than a quick local run; both are deterministic (derandomize).
settings.register_profile("ci", max_examples=200, deadline=None, derandomize=True, database=None)
settings.register_profile("dev", max_examples=50, deadline=None, derandomize=True, database=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# This file holds no doctests: --doctest-modules must not import it as a module (it would
# clash, as `conftest`, with tests/site/conftest.py, which pytest has already imported).
collect_ignore = ["conftest.py"]
