"""Exit status end to end: a wrong output is an error and exit status 1, never a number.

gpubench_faulty (tests/e2e/gpubench_faulty.cpp, a test executable built beside gpubench) runs
gpubench's real main flow on the real host workloads, except that bandwidth/write/kernel writes a
wrong value at the last element of its output. Run on a filter that also selects correct rows, it
must exit 1, say on stderr how many benchmarks failed, and still write the result file with the
faulty rows as errors ("verification failed: ...") and the other rows verified. The real gpubench
on the same filter exits 0 with every row verified.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from conftest import BIN, E2E_DIR, iterations, planted_run

FAULTY = E2E_DIR / "gpubench_faulty"
#: Two faulty rows (write) and two correct ones (copy), small and quick.
FILTER = "^bandwidth/(copy|write)/kernel/bytes:(4KiB|64KiB)$"
FAULTY_ROWS = {"bandwidth/write/kernel/bytes:4KiB": 4096, "bandwidth/write/kernel/bytes:64KiB": 65536}
CORRECT_ROWS = {"bandwidth/copy/kernel/bytes:4KiB", "bandwidth/copy/kernel/bytes:64KiB"}
REPETITIONS = 3  # gpubench's default


@pytest.fixture(scope="module")
def faulty(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    return planted_run(FAULTY, tmp_path_factory.mktemp("faulty"), FILTER,
                       "no result file after a failed verification")


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    return planted_run(BIN, tmp_path_factory.mktemp("real"), FILTER)


def test_a_failed_verification_exits_1(faulty):
    r, _ = faulty
    assert r.returncode == 1, r.stderr


def test_stderr_says_how_many_benchmarks_failed(faulty):
    r, doc = faulty
    m = re.search(r"^gpubench: (\d+) benchmarks? failed \((\d+) runs?; see error_message in the results\), "
                  r"first (\S+)$", r.stderr, re.MULTILINE)
    assert m, r.stderr
    errors = [e for rows in iterations(doc).values() for e in rows if e.get("error_occurred")]
    assert int(m.group(1)) == len(FAULTY_ROWS)
    assert int(m.group(2)) == len(errors) == len(FAULTY_ROWS) * REPETITIONS
    assert m.group(3) == "bandwidth/write/kernel/bytes:4KiB"  # the first to run


def test_the_result_file_holds_the_faulty_rows_as_errors_naming_the_element(faulty):
    _, doc = faulty
    rows = iterations(doc)
    for name, size in FAULTY_ROWS.items():
        assert len(rows.get(name, [])) == REPETITIONS, f"{name} missing from the result"
        last = size // 4 - 1  # the element the faulty kernel gets wrong
        for e in rows[name]:
            assert e.get("error_occurred") is True, e
            assert re.fullmatch(rf"verification failed: element {last}: expected 0x[0-9a-f]+, got 0x[0-9a-f]+",
                                e["error_message"]), e["error_message"]
            assert "verified" not in e and "GB/s" not in e, f"an error row carries a number: {e}"
    # No aggregate is computed from an errored benchmark.
    assert not [e for e in doc["benchmarks"]
                if e.get("run_type") == "aggregate" and e["run_name"].removesuffix("/manual_time") in FAULTY_ROWS]


def test_the_other_rows_verified(faulty):
    _, doc = faulty
    rows = iterations(doc)
    assert set(rows) == set(FAULTY_ROWS) | CORRECT_ROWS
    for name in CORRECT_ROWS:
        assert len(rows[name]) == REPETITIONS, name
        for e in rows[name]:
            assert not e.get("error_occurred"), e.get("error_message")
            assert e["verified"] == 1, e
            assert e["GB/s"] > 0, e


def test_the_real_gpubench_exits_0_on_the_same_filter(real, faulty):
    r, doc = real
    assert r.returncode == 0, r.stderr
    assert "failed" not in r.stderr, r.stderr
    rows = iterations(doc)
    assert set(rows) == set(iterations(faulty[1])), "the faulty build runs other rows than gpubench"
    for name, entries in rows.items():
        assert len(entries) == REPETITIONS, name
        for e in entries:
            assert not e.get("error_occurred"), f"{name}: {e.get('error_message')}"
            assert e["verified"] == 1, e


@pytest.mark.parametrize("closed", [0, 1, 2])
def test_a_run_with_a_standard_descriptor_closed_writes_its_result_whole(tmp_path, closed):
    """With stdout closed (`gpubench >&-`) the temporary result file was opened as descriptor 1
    and the console table written into it: the run was lost as "not written whole (is the disk
    full?)". Each standard descriptor closed, the run is kept and its result parses."""
    import json
    import os

    out = tmp_path / "r.json"
    r = subprocess.run([str(BIN), "--device=host", "--quick", "--benchmark_repetitions=1",
                        "--filter=^bandwidth/copy/kernel/bytes:4KiB$", f"--out={out}"],
                       capture_output=closed == 0, preexec_fn=lambda: os.close(closed), timeout=300)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert [e["run_name"] for e in doc["benchmarks"] if e.get("run_type") == "iteration"] == [
        "bandwidth/copy/kernel/bytes:4KiB/manual_time"]
