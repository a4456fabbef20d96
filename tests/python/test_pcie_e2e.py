"""End to end for the PCIe family on the host backend: --filter=bandwidth/pcie selects it alone,
the pageable-to-pageable copy runs, verifies and records its timing method, and --numa-bind
says in one line why it binds nothing where there is no GPU (and the run goes on)."""
import json
import re

import pytest

from conftest import gpubench

NAME = re.compile(r"^bandwidth/pcie_(h2d|d2h|bidir_h2d|bidir_d2h)/[a-z0-9_]+/bytes:\d+(KiB|MiB|GiB)$")


@pytest.fixture(scope="module")
def pcie_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("pcie") / "pcie_host.json"
    proc = gpubench("--device=host", "--quick", "--numa-bind", "--filter=bandwidth/pcie",
                    "--benchmark_repetitions=1", f"--out={out}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(out.read_text()), proc


def test_filter_selects_only_pcie_rows_and_they_verify(pcie_run):
    doc, _ = pcie_run
    entries = [b for b in doc["benchmarks"] if b.get("run_type") == "iteration" and not b.get("error_occurred")]
    names = {b["run_name"].removesuffix("/manual_time") for b in entries}
    skipped = {b["run_name"]: b.get("error_message", "") for b in doc["benchmarks"]
               if b.get("error_occurred")}
    assert "bandwidth/pcie_h2d/pinned_ce/bytes:4KiB" in skipped  # in the file, as a skip with its reason
    # Every other row is such a skip (never a failure), and every row is a PCIe row.
    for name, message in skipped.items():
        assert NAME.match(name), name
        assert message.startswith("skipped: not on the host backend: "), (name, message)
    # The host backend implements the pageable memcpy rows: both directions, the 2 quick sizes.
    assert names == {f"bandwidth/pcie_{d}/pageable_memcpy/bytes:{s}"
                     for d in ("h2d", "d2h") for s in ("4KiB", "16MiB")}
    assert not names & set(skipped)
    assert len(entries) == len(names)  # --benchmark_repetitions=1: one entry per row
    for b in entries:
        assert b["verified"] == 1
        assert b["GB/s"] > 0
        assert b["host_clock_timed"] == 1 and b["spin_held"] == 0
        assert "pct_of_peak" not in b  # no link on the host: no invented percentage


def test_numa_bind_without_a_gpu_is_one_line_and_recorded(pcie_run):
    doc, proc = pcie_run
    # (Google Benchmark also echoes the context, numa_bind included, on stderr.)
    lines = [l for l in proc.stderr.splitlines() if l.startswith("gpubench:") and "--numa-bind" in l]
    assert lines == ["gpubench: --numa-bind: this backend has no GPU, nothing to bind"]
    assert doc["context"]["numa_bind"] == "--numa-bind: this backend has no GPU, nothing to bind"
    assert doc["context"]["peak_pcie_h2d_GBps"] == "unknown"


@pytest.mark.parametrize("flag, recorded", [(None, "auto: no GPU, not bound"),
                                             ("--no-numa-bind", "off (--no-numa-bind)")])
def test_without_numa_bind_the_run_says_nothing_of_numa_where_binding_cannot_matter(tmp_path, flag, recorded):
    """By default a run binds only where it can matter (a GPU on a machine of two NUMA nodes with
    CPUs or more): on the host backend it says nothing and records why it did not."""
    out = tmp_path / "r.json"
    proc = gpubench("--device=host", "--quick", *([flag] if flag else []),
                    "--filter=bandwidth/pcie_h2d/pageable_memcpy/bytes:4KiB$", "--benchmark_repetitions=1",
                    f"--out={out}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not [l for l in proc.stderr.splitlines() if l.startswith("gpubench:") and "NUMA" in l.upper()]
    assert json.loads(out.read_text())["context"]["numa_bind"] == recorded


def test_numa_bind_with_a_value_is_a_usage_error():
    proc = gpubench("--device=host", "--numa-bind=1", "--list")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == "gpubench: --numa-bind takes no value"
    assert "--numa-bind" in gpubench("--help").stdout
