"""Benchmarks of lib (run with `make bench`); never part of the timed tests."""
