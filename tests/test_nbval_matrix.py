"""scripts/nbval_matrix.py, which make test runs: each machine's settings must really
change the arithmetic (or the check would pass by testing the default twice), a machine
that computes as this one does is not run twice, and a kernel the CPU cannot run is
skipped rather than crashing the notebook's kernel."""

import dataclasses
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("nbval_matrix", ROOT / "scripts" / "nbval_matrix.py")
matrix = importlib.util.module_from_spec(spec)
sys.modules["nbval_matrix"] = matrix
spec.loader.exec_module(matrix)


@pytest.mark.parametrize("name", ["Prescott", "Sandybridge", "Haswell", "Zen", "SkylakeX"])
def test_each_machine_computes_as_it_says(name):
    machine = matrix.MACHINES[name]
    if matrix.cannot_run(machine):
        pytest.skip(matrix.cannot_run(machine))
    assert matrix.not_in_force(machine, matrix.probe(machine)) is None


def test_the_old_cpu_machines_run_numpy_at_its_baseline_on_one_core():
    for name in ("Prescott", "Sandybridge"):
        seen = matrix.probe(matrix.MACHINES[name])
        assert seen["dispatched"] == [] and seen["cores"] == 1 and seen["threads"] == [1]


def test_make_test_runs_every_machine_but_the_one_left_to_its_name(monkeypatch, capsys):
    # What main() plans with no names: the one-core baseline, AVX2 and AVX-512 (or a skip
    # saying why), never Sandybridge, which differs from Prescott only in OpenBLAS's kernel.
    planned = []
    monkeypatch.setattr(matrix, "plan", lambda name, *a: planned.append(name) or ("skipped", ""))
    monkeypatch.setattr(sys, "argv", ["nbval_matrix.py"])
    assert matrix.main() == 1   # nothing ran: every machine was "skipped" here
    assert planned == ["Prescott", "Haswell", "Zen", "SkylakeX"]
    monkeypatch.setattr(sys, "argv", ["nbval_matrix.py", "Sandybridge"])
    planned.clear()
    matrix.main()
    assert planned == ["Sandybridge"]


def test_numpy_1_x_feature_names_would_test_nothing():
    # NumPy 2.4 no longer dispatches on these names: it warns and disables nothing. (Hence
    # ABOVE_BASELINE, NumPy 2.4's own names, in the matrix.)
    if not matrix.probe(None)["dispatched"]:
        pytest.skip("NumPy dispatches to nothing above its baseline on this CPU")
    old_names = ("AVX2", "FMA3", "AVX512F", "AVX512CD", "AVX512_SKX")
    machine = dataclasses.replace(matrix.MACHINES["Haswell"], numpy_off=old_names)
    assert matrix.probe(machine)["dispatched"], "NumPy now honours the old names"
    assert matrix.probe(matrix.MACHINES["Prescott"])["dispatched"] == []


def test_a_machine_computing_as_this_one_is_not_run_twice(monkeypatch):
    name = "Haswell"
    if matrix.cannot_run(matrix.MACHINES[name]):
        pytest.skip(matrix.cannot_run(matrix.MACHINES[name]))
    default = matrix.probe(matrix.MACHINES[name])   # pretend this machine is a Haswell
    status, output = matrix.plan(name, default, {})
    assert status == "skipped" and "pytest's nbval pass" in output


def test_two_machines_computing_alike_run_once():
    # Zen runs Haswell's OpenBLAS kernels with the same NumPy code: one run checks both.
    # A machine the probe tells apart from the others is still run.
    if matrix.cannot_run(matrix.MACHINES["Haswell"]):
        pytest.skip(matrix.cannot_run(matrix.MACHINES["Haswell"]))
    seen_before = {}
    assert matrix.plan("Haswell", {}, seen_before) == ("run", "")
    status, output = matrix.plan("Zen", {}, seen_before)
    assert status == "skipped" and "computes as Haswell does" in output
    assert matrix.plan("Sandybridge", {}, seen_before) == ("run", "")
    assert len(seen_before) == 2


def test_a_kernel_the_cpu_lacks_is_skipped_not_run(monkeypatch):
    monkeypatch.setattr(matrix, "cpu_flags", lambda: {"sse2"})
    status, output = matrix.plan("SkylakeX", {}, {})
    assert status == "skipped" and "avx512f" in output


def test_the_issue_s_kernels_are_all_in_the_matrix():
    assert {"Prescott", "Sandybridge", "Haswell", "Zen", "SkylakeX"} <= set(matrix.MACHINES)
    assert any(m.numpy_off == matrix.ABOVE_BASELINE for m in matrix.MACHINES.values())
    assert any(m.one_core for m in matrix.MACHINES.values())


DIED = "ERROR notebooks/02_qk_av.ipynb::Cell {} - RuntimeError: Kernel died before rep..."


def test_a_kernel_that_died_as_it_started_is_run_again_and_nothing_else_is():
    died = "\n".join(DIED.format(i) for i in range(3)) + "\n3 errors in 1.0s"
    assert matrix.died_at_start(died) == ["notebooks/02_qk_av.ipynb"]
    # a cell that printed another digit, beside it: a real failure, not run again
    other = died + "\nFAILED notebooks/04_scaling.ipynb::Cell 8"
    assert matrix.died_at_start(other) == []
    # the same notebook with a cell that failed otherwise
    mixed = died + "\nERROR notebooks/02_qk_av.ipynb::Cell 9 - RuntimeError: Kernel didn't respond"
    assert matrix.died_at_start(mixed) == []
    assert matrix.died_at_start("509 passed in 98.24s") == []
