# The question files are otter's test cells, run inside a student's notebook by otter: pytest
# (whose --doctest-modules imports every module) must not import them.
collect_ignore_glob = ["*.py"]
