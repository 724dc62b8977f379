"""A smoke run of the benchmark harness, so that `make bench` cannot rot. It times nothing
worth reading and asserts only on the shape of what the harness reports."""

import json

from benchmarks import bench_attention


def test_smoke_run_reports_every_case_and_writes_json(tmp_path, capsys):
    out = tmp_path / "results.json"
    result = bench_attention.main(["--smoke", "--json", str(out)])
    printed = capsys.readouterr().out
    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    assert len(result["speed"]) == 2 * len(bench_attention.SMOKE_GRID)  # float32, float64
    for row in result["speed"]:
        assert row["lib_ms"] > 0 and row["gemm_ms"] > 0 and row["lib/gemm"] > 0
        assert ("torch_ms" in row) == (bench_attention.torch is not None)
    assert "worst lib/gemm" in printed
    (mem,) = result["memory"]
    assert mem["plain_MiB"] >= mem["score_matrix_MiB"]  # the plain path forms the n x n scores
    assert 0 < mem["memory_efficient_MiB"] < mem["score_matrix_MiB"]
    profile = result["profile"]
    assert set(profile) >= {"float32", "float64"}
    assert all(t > 0 for passes in profile.values() for t in passes.values())
    assert ("torch float32" in profile) == (bench_attention.torch is not None)
    assert "One fast-path task (16 queries x 64 keys" in printed
