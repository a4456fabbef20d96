"""End to end: what the family-folder layout promises a user of the real gpubench binary.

Every result entry carries its meaning in its label; rows the backend does not run land in the
file as skips with their reason; `--list --device=N` lists the CUDA rows where no GPU is usable."""
import json
import re

import pytest

from conftest import gpubench

LABEL = re.compile(r"^peak=(none|dram|l2|smem|pcie_h2d|pcie_d2h|fp32|fp16_tensor|bf16_tensor|fp8_tensor) "
                   r"metric=(GBps|TFLOPS|latency_ns) level=(dram|l2|smem|pcie|none) sweep=[a-z_]+$")


def gpu_usable() -> bool:
    return "running on the host" not in gpubench("--list", "--filter=bandwidth/copy/kernel").stderr


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory):
    """A host run of rows the host runs and rows it does not (CUB, cuBLAS, shared memory)."""
    out = tmp_path_factory.mktemp("meaning") / "mixed.json"
    proc = gpubench("--device=host", "--quick", f"--out={out}",
                    "--filter=bandwidth/(read|chase|smem)/.*/bytes:(4|16|32)KiB$|compute/sgemm/cublas/m:256,")
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def test_every_entry_says_its_peak_metric_level_and_sweep(mixed_run):
    entries = mixed_run["benchmarks"]
    assert entries
    for b in entries:
        assert LABEL.match(b.get("label", "")), (b["name"], b.get("label"))
    labels = {b["run_name"].removesuffix("/manual_time"): b["label"] for b in entries}
    assert labels["bandwidth/chase/kernel/bytes:16KiB"].startswith("peak=none metric=latency_ns ")
    assert labels["bandwidth/smem/kernel/bytes:32KiB"] == "peak=smem metric=GBps level=smem sweep=bytes"
    assert labels["compute/sgemm/cublas/m:256,n:256,k:256"] == "peak=fp32 metric=TFLOPS level=none sweep=m"


def test_rows_the_host_does_not_run_are_skips_with_their_reason(mixed_run):
    errors = {b["run_name"]: b.get("error_message") for b in mixed_run["benchmarks"] if b.get("error_occurred")}
    assert errors["bandwidth/read/cub/bytes:4KiB"] == "skipped: not on the host backend: CUB needs a GPU"
    assert errors["compute/sgemm/cublas/m:256,n:256,k:256"] == \
        "skipped: not on the host backend: cuBLAS needs a GPU"
    assert errors["bandwidth/smem/kernel/bytes:32KiB"].startswith("skipped: not on the host backend: ")
    ran = [b for b in mixed_run["benchmarks"] if not b.get("error_occurred")]
    assert {b["run_name"].removesuffix("/manual_time") for b in ran} >= {"bandwidth/read/kernel/bytes:4KiB"}
    assert all(b.get("verified") == 1 for b in ran if b.get("run_type") == "iteration")


def test_a_filter_of_only_unavailable_rows_is_a_usage_error_naming_why():
    proc = gpubench("--device=host", "--filter=compute/sgemm/cublas")
    assert proc.returncode == 2
    first = proc.stderr.splitlines()[0]
    assert "matches no benchmark the host backend runs" in first
    assert "cuBLAS needs a GPU" in first


def test_list_keeps_its_meaning_rows_that_run_here():
    proc = gpubench("--device=host", "--list", "--filter=bandwidth/read/")
    assert proc.returncode == 0, proc.stderr
    names = [n.removesuffix("/manual_time") for n in proc.stdout.split()]
    assert "bandwidth/read/kernel/bytes:4KiB" in names
    assert not any("/cub/" in n for n in names)


def test_list_of_a_gpu_lists_the_cuda_rows_anywhere():
    proc = gpubench("--list", "--device=0", "--filter=compute/sgemm/cublas|bandwidth/smem")
    assert proc.returncode == 0, proc.stderr
    names = proc.stdout.split()
    assert "compute/sgemm/cublas/m:4096,n:4096,k:4096" in names
    assert "bandwidth/smem/kernel/bytes:32KiB" in names
    if gpu_usable():  # a GPU machine: the real device's rows, and no excuse on stderr
        assert "cannot run here" not in proc.stderr
    else:
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert lines[0].startswith("gpubench: --device=0: ") and "cannot run here" in lines[0]


def test_list_of_a_gpu_leaves_out_the_rows_a_gpu_never_runs():
    """The host's stand-ins (memcpy for the copy engine, pageable memcpy for PCIe) are declared
    unavailable by the CUDA backend: on a GPU they would be skips, so they are not listed."""
    proc = gpubench("--list", "--device=0", "--filter=bandwidth/copy/|bandwidth/pcie_h2d/")
    assert proc.returncode == 0, proc.stderr
    names = [n.removesuffix("/manual_time") for n in proc.stdout.split()]
    assert "bandwidth/copy/memcpy_ce/bytes:4KiB" in names and "bandwidth/copy/kernel/bytes:4KiB" in names
    if "built without CUDA" not in proc.stderr:  # a CUDA build knows what its backend runs
        assert not any(n.startswith(("bandwidth/copy/memcpy/", "bandwidth/pcie_h2d/pageable_memcpy/"))
                       for n in names), names


def test_list_of_a_gpu_with_a_filter_matching_nothing_is_a_usage_error():
    proc = gpubench("--list", "--device=0", "--filter=no_such_family")
    assert proc.returncode == 2
    assert "matches no benchmark" in proc.stderr.splitlines()[0]
