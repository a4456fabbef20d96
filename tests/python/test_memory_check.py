"""Capacity and leaks end to end: the memory at the start and the end of a run in the context,
each benchmark's memory_used_bytes, and the leak check's exit status.

gpubench_leaky (tests/e2e/gpubench_leaky.cpp, a test executable built beside gpubench) runs
gpubench's real main flow on the real host workloads, except that bandwidth/copy/kernel leaves
96 MiB behind per benchmark. Its run must publish the result (valid JSON, the end-of-run entries
in its context), say `gpubench: memory leak: ...` in one line and exit 1; the real gpubench on
the host exits 0 with the same entries, saying "ok".
"""

from __future__ import annotations

import re
import subprocess

import pytest

from conftest import BIN, E2E_DIR, iterations, planted_run

LEAKY = E2E_DIR / "gpubench_leaky"
MiB = 1 << 20
LEAK_PER_BENCHMARK = 96 * MiB  # tests/e2e/gpubench_leaky.cpp
HOST_TOLERANCE_MIB = 64.0  # harness/memory_check.h
#: Two leaky benchmarks (copy/kernel) and two correct ones (copy/memcpy), small and quick.
LEAKY_FILTER = "^bandwidth/copy/(kernel|memcpy)/bytes:(4KiB|64KiB)$"
LEAKY_ROWS = {"bandwidth/copy/kernel/bytes:4KiB", "bandwidth/copy/kernel/bytes:64KiB"}
MEMORY_KEYS = ("memory_total_bytes", "memory_free_start_bytes", "memory_free_end_bytes")


@pytest.fixture(scope="module")
def normal(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    return planted_run(BIN, tmp_path_factory.mktemp("normal"), "bandwidth/copy")


@pytest.fixture(scope="module")
def leaky(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    return planted_run(LEAKY, tmp_path_factory.mktemp("leaky"), LEAKY_FILTER, "no result file after a leak")


def test_a_normal_run_exits_0_with_the_memory_in_its_context(normal):
    r, doc = normal
    assert r.returncode == 0, r.stderr
    assert "memory leak" not in r.stderr, r.stderr
    ctx = doc["context"]
    for k in MEMORY_KEYS:
        assert re.fullmatch(r"[1-9][0-9]*", ctx.get(k, "")), f"{k}: {ctx.get(k)!r}"
    total = int(ctx["memory_total_bytes"])
    assert int(ctx["memory_free_start_bytes"]) <= total
    assert int(ctx["memory_free_end_bytes"]) <= total
    assert abs(total - float(ctx["memory_bytes"])) <= 0.01 * total, "MemTotal against the device's memory"
    # The host follows this process's own memory (RssAnon; the sanitizer build: its heap count).
    assert ctx["memory_leak_check"].startswith("ok: "), ctx["memory_leak_check"]
    assert "this process" in ctx["memory_leak_check"], ctx["memory_leak_check"]
    assert "tolerance 64.0 MiB" in ctx["memory_leak_check"]


def test_every_verified_row_says_what_memory_it_used(normal):
    _, doc = normal
    rows = iterations(doc)
    measured = 0
    for name, entries in rows.items():
        for e in entries:
            if e.get("error_occurred"):
                assert "memory_used_bytes" not in e, e
                continue
            assert e["memory_used_bytes"] >= 0, e
            # Inputs filled and outputs poisoned: the whole working set is resident.
            if e["working_set_bytes"] >= 16 * MiB:
                assert e["memory_used_bytes"] >= 0.95 * e["working_set_bytes"], (name, e)
                measured += 1
        # One workload per benchmark, kept across its repetitions: its peak so far, which later
        # repetitions can only raise (by what the run itself keeps, a few pages).
        used = [e["memory_used_bytes"] for e in entries if "memory_used_bytes" in e]
        assert used == sorted(used) and (not used or used[-1] - used[0] < MiB), (name, used)
    assert measured > 0, "no row large enough to check memory_used_bytes against its working set"


def test_a_leak_exits_1_with_one_line_naming_start_end_and_tolerance(leaky):
    r, _ = leaky
    assert r.returncode == 1, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("gpubench: memory leak: ")]
    assert len(lines) == 1, r.stderr
    m = re.fullmatch(r"gpubench: memory leak: (.+) grew from ([\d.]+) MiB at the start of the run to ([\d.]+) MiB "
                     r"at its end \(\+([\d.]+) MiB\), more than the tolerance of ([\d.]+) MiB: .+", lines[0])
    assert m, lines[0]
    start, end, grew, tolerance = map(float, m.group(2, 3, 4, 5))
    assert tolerance == HOST_TOLERANCE_MIB
    assert abs(end - start - grew) <= 0.1
    assert grew >= len(LEAKY_ROWS) * LEAK_PER_BENCHMARK / MiB - 1, lines[0]
    assert "benchmarks failed" not in r.stderr and "benchmark failed" not in r.stderr, "a leak is no failed row"


def test_a_leaky_run_still_publishes_its_result_with_the_end_in_the_context(leaky):
    _, doc = leaky
    ctx = doc["context"]
    for k in MEMORY_KEYS:
        assert re.fullmatch(r"[1-9][0-9]*", ctx.get(k, "")), f"{k}: {ctx.get(k)!r}"
    assert ctx["memory_leak_check"].startswith("leak: "), ctx["memory_leak_check"]
    rows = iterations(doc)
    assert set(rows) == LEAKY_ROWS | {"bandwidth/copy/memcpy/bytes:4KiB", "bandwidth/copy/memcpy/bytes:64KiB"}
    for name, entries in rows.items():
        for e in entries:
            assert not e.get("error_occurred"), e.get("error_message")
            assert e["verified"] == 1
            if name in LEAKY_ROWS:  # the leaked buffer counts as the benchmark's own use
                assert e["memory_used_bytes"] >= LEAK_PER_BENCHMARK, e
