"""scripts/cuda12_device_check.py on small builds made here: a PTX instruction newer than CUDA
12.0 and a header only CUDA 13's CCCL has are each refused, with the reason, and the same builds
without them pass. The real build is checked by the test command itself."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from conftest import BIN, run_script

REAL_BUILD = BIN.resolve().parent
REAL_DB = REAL_BUILD / "compile_commands.json"


def real_nvcc() -> str | None:
    """The nvcc of the real build's Thrust/CUB source, or None in a build without CUDA."""
    if not REAL_DB.is_file():
        return None
    for e in json.loads(REAL_DB.read_text()):
        if e["file"].endswith("/library.cu"):
            return (e.get("arguments") or shlex.split(e["command"]))[0]
    return None


pytestmark = pytest.mark.skipif(real_nvcc() is None,
                                reason="the build that GPUBENCH_BIN belongs to has no CUDA sources")

#: setmaxnreg and mbarrier.try_wait need PTX ISA 8.0 (CUDA 12.0); st.async needs 8.1 (CUDA 12.1).
PTX = """.version 9.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{{
  .reg .pred q;
  .reg .b32 r<2>;
  .reg .b64 rd<3>;
  ld.param.u64 rd1, [p];
  mov.b32 r1, 1;
  setmaxnreg.inc.sync.aligned.u32 232;
  mbarrier.try_wait.parity.shared::cta.b64 q, [rd1], r1;
  {extra}
  ret;
}}
"""
ST_ASYNC = "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [rd1], r1, [rd1];"

LIBRARY = """#include <thrust/copy.h>
#include <thrust/execution_policy.h>
{extra}
void copy(const float* in, float* out, long n) {{ thrust::copy(thrust::device, in, in + n, out); }}
"""


def fake_build(tmp_path: Path, ptx_extra: str, library_extra: str) -> Path:
    """A build folder as the check reads it: one kernel PTX where the contract tests write theirs,
    and one Thrust source in compile_commands.json, compiled with the real build's nvcc command."""
    build = tmp_path / "build"
    (build / "families" / "f" / "k").mkdir(parents=True)
    (build / "families" / "f" / "k" / "sm_90.ptx").write_text(PTX.format(extra=ptx_extra))
    source = tmp_path / "lib.cu"
    source.write_text(LIBRARY.format(extra=library_extra))
    (build / "compile_commands.json").write_text(json.dumps([{
        "directory": str(tmp_path), "file": str(source),
        "arguments": [real_nvcc(), "-std=c++17", "-O3", "--generate-code=arch=compute_90,code=[compute_90,sm_90]",
                      "-c", str(source), "-o", str(tmp_path / "lib.o")]}]))
    # The wheels the test command's own check unpacked, instead of downloading them again.
    if (REAL_BUILD / "cuda12").is_dir():
        (build / "cuda12").symlink_to(REAL_BUILD / "cuda12")
    return build


def test_kernels_and_library_calls_of_cuda_12_pass(tmp_path):
    r = run_script("cuda12_device_check.py", fake_build(tmp_path, "", ""))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAIL" not in r.stdout
    assert r.stdout.strip().endswith("all passed")
    assert "1 kernel PTX files (sm_90a)" in r.stdout
    assert "1 Thrust/CUB source(s) compiled against CCCL 2." in r.stdout


def test_an_instruction_newer_than_cuda_12_0_fails(tmp_path):
    r = run_script("cuda12_device_check.py", fake_build(tmp_path, ST_ASYNC, ""))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL " in r.stdout and "sm_90a, PTX ISA 8.0: CUDA 12.0" in r.stdout
    assert "'st.async' requires PTX ISA .version 8.1" in r.stdout
    assert r.stdout.strip().endswith("1 failed")


def test_a_header_only_cuda_13_cccl_has_fails(tmp_path):
    # <cuda/bit> came with CCCL 3 (CUDA 13): found in the toolkit's own CCCL, it is refused.
    r = run_script("cuda12_device_check.py", fake_build(tmp_path, "", "#include <cuda/bit>"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"FAIL {tmp_path / 'lib.cu'} against CCCL 2." in r.stdout
    assert "a header CUDA 12.9's CCCL does not have came from the toolkit's own (include/cccl/)" in r.stdout
    assert r.stdout.strip().endswith("1 failed")


def test_a_build_without_kernel_ptx_is_a_usage_error(tmp_path):
    r = run_script("cuda12_device_check.py", tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith("cuda12_device_check: no kernel PTX under ")
    assert r.stdout == ""
