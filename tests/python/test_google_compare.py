"""Google Benchmark's own compare.py (Debian's libbenchmark-tools, the real tool users run) on
two gpubench runs: it reads the files, and the time it compares is the time of one operation,
the same time that GB/s is derived from, so two runs compare like with like whatever their
batch sizes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import gpubench

COMPARE = Path("/usr/share/benchmark/compare.py")
FILTER = "bandwidth/copy/kernel/bytes:(4KiB|64KiB)$"
USEFUL_BYTES = {"bandwidth/copy/kernel/bytes:4KiB": 2 * 4096, "bandwidth/copy/kernel/bytes:64KiB": 2 * 65536}

pytestmark = pytest.mark.skipif(not COMPARE.exists(),
                                reason="Google Benchmark's compare.py not installed (Debian: libbenchmark-tools)")


def repetitions(path: Path) -> list[dict]:
    return [b for b in json.loads(path.read_text())["benchmarks"] if b.get("run_type") == "iteration"]


def test_compare_py_times_are_per_operation(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    r = gpubench("--device=host", f"--filter={FILTER}", "--benchmark_repetitions=3", f"--out={a}")
    assert r.returncode == 0, r.stderr
    r = gpubench("--device=host", f"--filter={FILTER}", "--benchmark_repetitions=3", "--benchmark_min_time=0.01",
                 f"--out={b}")
    assert r.returncode == 0, r.stderr
    dump = tmp_path / "diff.json"
    cmp = subprocess.run([sys.executable, str(COMPARE), "--no-color", "-d", str(dump), "benchmarks", str(a), str(b)],
                         capture_output=True, text=True, timeout=300)
    assert cmp.returncode == 0, cmp.stderr
    report = {d["name"]: d for d in json.loads(dump.read_text()) if d.get("run_type") == "iteration"}
    assert set(report) == {name + "/manual_time" for name in USEFUL_BYTES}
    for run, key in ((a, "real_time"), (b, "real_time_other")):
        reps = [x for x in repetitions(run)]
        for name, useful in USEFUL_BYTES.items():
            mine = [x for x in reps if x["run_name"] == name + "/manual_time"]
            theirs = report[name + "/manual_time"]["measurements"]
            assert len(mine) == len(theirs) == 3
            assert report[name + "/manual_time"]["time_unit"] == "us"
            for rep, m in zip(mine, theirs):
                # compare.py's time of a repetition is one operation: the useful bytes at its GB/s
                per_op_us = useful / (rep["GB/s"] * 1e9) * 1e6
                assert m[key] == pytest.approx(per_op_us, rel=1e-6), (name, m[key], per_op_us)
                # while a timed sample holds many operations
                assert rep["ops_per_sample"] > 1
