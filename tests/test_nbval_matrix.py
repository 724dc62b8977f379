"""scripts/nbval_matrix.py, which make test runs: each variant must really change the
arithmetic (or the check would pass by testing the default twice), and a kernel the CPU
cannot run is skipped rather than crashing the notebook's kernel."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("nbval_matrix", ROOT / "scripts" / "nbval_matrix.py")
matrix = importlib.util.module_from_spec(spec)
sys.modules["nbval_matrix"] = matrix
spec.loader.exec_module(matrix)


def test_numpy_baseline_variant_disables_every_dispatch_target():
    env = matrix.environment(matrix.BASELINE)
    assert matrix.took_effect(matrix.BASELINE, env) is None


def test_numpy_1_x_feature_names_would_test_nothing():
    # NumPy 2.4 no longer dispatches on these names: it warns and disables nothing, which
    # the probe must notice (on a CPU where NumPy dispatches to anything at all).
    default = matrix.environment("Haswell")
    default.pop("OPENBLAS_CORETYPE")
    if matrix.took_effect(matrix.BASELINE, default) is None:
        pytest.skip("NumPy dispatches to nothing above its baseline on this CPU")
    old = dict(default, NPY_DISABLE_CPU_FEATURES="AVX2 FMA3 AVX512F AVX512CD AVX512_SKX")
    assert "still dispatches" in matrix.took_effect(matrix.BASELINE, old)


@pytest.mark.parametrize("kernel", ["Prescott", "Sandybridge", "Haswell"])
def test_openblas_runs_the_kernel_asked_for(kernel):
    if matrix.cannot_run(kernel):
        pytest.skip(matrix.cannot_run(kernel))
    assert matrix.took_effect(kernel, matrix.environment(kernel)) is None


def test_a_kernel_the_cpu_lacks_is_skipped_not_run(monkeypatch):
    monkeypatch.setattr(matrix, "cpu_flags", lambda: {"sse2"})
    variant, code, output, _ = matrix.run("SkylakeX", ["notebooks/no-such-file.ipynb"])
    assert code is None and "avx512f" in output


def test_one_core_variant_pins_blas_and_the_fast_path_to_one_thread():
    env = matrix.environment(matrix.ONE_CORE)
    assert matrix.took_effect(matrix.ONE_CORE, env) is None


def test_every_variant_is_run_by_default():
    assert set(matrix.VARIANTS) == {*matrix.KERNELS, matrix.BASELINE, matrix.ONE_CORE}
    assert {"Prescott", "Haswell", "Zen", "SkylakeX"} <= set(matrix.KERNELS)
