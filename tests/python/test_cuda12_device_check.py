"""scripts/cuda12_device_check.py on small builds made here: a PTX instruction newer than CUDA
12.0, a kernel header that CUDA 12.0's compiler cannot build, a kernel whose wgmma CUDA 12.0's
ptxas serialises and a header only CUDA 13's CCCL has are each refused, with the reason, and the
same builds without them pass. The real build is checked by the test command itself."""

from __future__ import annotations

import json
import shlex
import subprocess
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

#: setmaxnreg and mbarrier.try_wait need PTX ISA 8.0 (CUDA 12.0); st.async needs 8.1 (CUDA 12.1). The
#: thread bounds let ptxas know the registers at entry (without, 12.0's ignores setmaxnreg: C7508).
PTX = """.version 9.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
.maxntid 384, 1, 1
.minnctapersm 1
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


#: The kernel header of the fake family's launcher (families/f/k.cu): the kernel of PTX above.
KERNEL = 'extern "C" __global__ void k(unsigned long long* p) { *p = 1; }\n'

#: A wgmma kernel as the Hopper GEMM was: accumulators never initialised, the first step told not
#: to read them (scale-d 0). CUDA 12.0's ptxas serialises its wgmma (C7515); nvcc 13's does not.
WGMMA = """#include <cstdint>
#define ACC8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \\
                "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
__device__ __forceinline__ void mma(float (&d)[32], std::uint64_t a, std::uint64_t b, int scale_d) {
  asm volatile("{\\n.reg .pred p;\\nsetp.ne.b32 p, %34, 0;\\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, "
               "%10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, "
               "%28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 1;\\n}\\n"
               : ACC8(0), ACC8(8), ACC8(16), ACC8(24) : "l"(a), "l"(b), "r"(scale_d) : "memory");
}
extern "C" __global__ void k(float* out, std::uint64_t a, std::uint64_t b, int steps) {
  float d[32];
  {init}
#pragma unroll 1
  for (int s = 0; s < steps; ++s) {  // two wgmma per group: pipelined, one fence and one wait
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    mma(d, a + s, b + s, {scale_d});
    mma(d, a + s + 2, b + s + 2, 1);
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  }
  for (int i = 0; i < 32; ++i) out[threadIdx.x * 32 + i] = d[i];
}
"""
SERIALISED = {"init": "", "scale_d": "s > 0 ? 1 : 0"}
ZEROED = {"init": "for (int i = 0; i < 32; ++i) d[i] = 0.0f;", "scale_d": "1"}


def fake_build(tmp_path: Path, ptx_extra: str, library_extra: str, kernel: str = KERNEL,
               launcher: str = '#include "families/f/k.cuh"\n', ptx_from_kernel: bool = False) -> Path:
    """A build folder as the check reads it: one kernel PTX where the contract tests write theirs
    (PTX above, or `kernel` compiled by the real build's nvcc, with its ptxas -v and cubin beside
    it), and
    one Thrust source in compile_commands.json, compiled with the real build's nvcc command; and
    its sources (tmp_path/src: the launcher families/f/k.cu and its kernel header)."""
    build = tmp_path / "build"
    (build / "families" / "f" / "k").mkdir(parents=True)
    src = tmp_path / "src" / "families" / "f"
    src.mkdir(parents=True)
    (src / "k.cuh").write_text(kernel)
    (src / "k.cu").write_text(launcher)
    ptx = build / "families" / "f" / "k" / "sm_90.ptx"
    if ptx_from_kernel:
        subprocess.run([real_nvcc(), "-std=c++17", "-O3", "--ptx", "-gencode=arch=compute_90a,code=sm_90a",
                        f"-I{tmp_path / 'src'}", str(src / "k.cu"), "-o", str(ptx)], check=True)
        ptxas = Path(real_nvcc()).with_name("ptxas")
        r = subprocess.run([str(ptxas), "-arch=sm_90a", "-O3", "-v", str(ptx), "-o", str(ptx.with_suffix(".cubin"))],
                           capture_output=True, text=True, check=True)
        ptx.with_suffix(".ptxas.txt").write_text(r.stdout + r.stderr)
    else:
        ptx.write_text(PTX.format(extra=ptx_extra))
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


def check(tmp_path: Path, build: Path) -> subprocess.CompletedProcess:
    return run_script("cuda12_device_check.py", build, tmp_path / "src")


def test_kernels_and_library_calls_of_cuda_12_pass(tmp_path):
    r = check(tmp_path, fake_build(tmp_path, "", ""))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAIL" not in r.stdout
    assert r.stdout.strip().endswith("all passed")
    assert "1 kernel PTX files (sm_90a)" in r.stdout
    assert "1 launcher and target pair(s) compiled by CUDA 12.0's NVRTC and ptxas" in r.stdout
    assert "1 Thrust/CUB source(s) compiled against CCCL 2." in r.stdout


def test_an_instruction_newer_than_cuda_12_0_fails(tmp_path):
    r = check(tmp_path, fake_build(tmp_path, ST_ASYNC, ""))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL " in r.stdout and "sm_90a, PTX ISA 8.0: CUDA 12.0" in r.stdout
    assert "'st.async' requires PTX ISA .version 8.1" in r.stdout
    assert r.stdout.strip().endswith("1 failed")


def test_a_header_only_cuda_13_cccl_has_fails(tmp_path):
    # <cuda/bit> came with CCCL 3 (CUDA 13): found in the toolkit's own CCCL, it is refused.
    r = check(tmp_path, fake_build(tmp_path, "", "#include <cuda/bit>"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"FAIL {tmp_path / 'lib.cu'} against CCCL 2." in r.stdout
    assert "a header CUDA 12.9's CCCL does not have came from the toolkit's own (include/cccl/)" in r.stdout
    assert r.stdout.strip().endswith("1 failed")


def test_a_build_without_kernel_ptx_is_a_usage_error(tmp_path):
    r = run_script("cuda12_device_check.py", tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith("cuda12_device_check: no kernel PTX under ")
    assert r.stdout == ""


def test_a_kernel_header_that_needs_a_newer_cuda_fails(tmp_path):
    # cuda_fp4.h came with CUDA 12.8: CUDA 12.0's compiler cannot build a kernel that includes it.
    r = check(tmp_path, fake_build(tmp_path, "", "", kernel="#include <cuda_fp4.h>\n" + KERNEL))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL families/f/k.cu (sm_90a, CUDA 12.0's NVRTC and ptxas):" in r.stdout
    assert 'cannot open source file "cuda_fp4.h"' in r.stdout
    assert r.stdout.strip().endswith("1 failed")


def test_a_kernel_header_that_cuda_12_0_warns_about_fails(tmp_path):
    kernel = 'extern "C" __global__ void k(unsigned long long* p) { int unused = 3; *p = 1; }\n'
    r = check(tmp_path, fake_build(tmp_path, "", "", kernel=kernel))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL families/f/k.cu (sm_90a, CUDA 12.0's NVRTC and ptxas):\nwarnings (the build makes every one an error" \
        in r.stdout
    assert 'variable "unused" was declared but never referenced' in r.stdout
    assert r.stdout.strip().endswith("1 failed")


def test_a_kernel_the_launcher_defines_itself_fails(tmp_path):
    r = check(tmp_path, fake_build(tmp_path, "", "", launcher=KERNEL))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "the launcher defines a kernel itself: kernels belong in the .cuh it includes" in r.stdout
    assert r.stdout.strip().endswith("1 failed")


def test_wgmma_that_cuda_12_0_serialises_fails_and_zeroed_accumulators_pass(tmp_path):
    serialised = fake_build(tmp_path / "a", "", "", kernel=WGMMA.replace("{init}", SERIALISED["init"])
                            .replace("{scale_d}", SERIALISED["scale_d"]), ptx_from_kernel=True)
    r = check(tmp_path / "a", serialised)
    assert r.returncode == 1, r.stdout + r.stderr
    # Both nvcc 13's PTX assembled by 12.0's ptxas and the kernel built by 12.0's NVRTC.
    assert "by CUDA 12.0's ptxas:\nptxas advisory: (C7515) Potential Performance Loss" in r.stdout
    assert "FAIL families/f/k.cu (sm_90a, CUDA 12.0's NVRTC and ptxas):\nptxas advisory: (C7515)" in r.stdout
    # The SASS says so too: a fence and a wait around each of the two wgmma where nvcc 13 has one.
    assert ("k: SASS WARPGROUP.ARRIVE 2 (reference 1), WARPGROUP.DEPBAR 2 (reference 1), "
            "HGMMA closing a group (gsb0) 2 (reference 1)") in r.stdout
    assert r.stdout.strip().endswith("2 failed")
    zeroed = fake_build(tmp_path / "b", "", "", kernel=WGMMA.replace("{init}", ZEROED["init"])
                        .replace("{scale_d}", ZEROED["scale_d"]), ptx_from_kernel=True)
    r = check(tmp_path / "b", zeroed)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("all passed")


def test_a_source_folder_that_is_not_one_is_a_usage_error(tmp_path):
    r = run_script("cuda12_device_check.py", fake_build(tmp_path, "", ""), tmp_path / "nowhere")
    assert r.returncode == 2
    assert r.stderr == f"cuda12_device_check: {tmp_path / 'nowhere'} is not a source folder\n"
