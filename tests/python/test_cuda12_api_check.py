"""scripts/cuda12_api_check.py on a small build made here: one host CUDA source (g++) and one family
launcher with a kernel and a <<<>>> launch (clang's host-only CUDA compile), each compiled against
CUDA 12.0's and 12.9's headers in turn. A call CUDA 12.5 added fails against 12.0 only, in both,
and passes behind the CUDART_VERSION guard the real code uses for it; the real build is checked by
the test command itself."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from conftest import BIN, run_script

REAL_BUILD = BIN.resolve().parent


def toolkit_include() -> Path | None:
    """The CUDA include folder the real build compiles its host CUDA sources with, or None."""
    db = REAL_BUILD / "compile_commands.json"
    if not db.is_file():
        return None
    for entry in json.loads(db.read_text()):
        if "/harness/cuda/" not in entry["file"]:
            continue
        argv = entry.get("arguments") or shlex.split(entry["command"])
        for i, a in enumerate(argv):
            folder = argv[i + 1] if a in ("-isystem", "-I") and i + 1 < len(argv) else a[2:] if a.startswith("-I") else ""
            if folder and (Path(folder) / "cuda_runtime_api.h").is_file():
                return Path(folder)
    return None


TOOLKIT_INCLUDE = toolkit_include()
pytestmark = pytest.mark.skipif(TOOLKIT_INCLUDE is None,
                                reason="the build that GPUBENCH_BIN belongs to has no host CUDA sources")

# cudaGetDriverEntryPointByVersion came with CUDA 12.5 (kernels/tma.cuh guards it the same way).
SOURCE = """#include <cuda_runtime_api.h>
int entry_point(void** fn) {{
  cudaDriverEntryPointQueryResult found;
{body}
}}
"""
UNGUARDED = "  return cudaGetDriverEntryPointByVersion(\"cuInit\", fn, 12000, cudaEnableDefault, &found);"
GUARDED = """#if CUDART_VERSION >= 12050
  return cudaGetDriverEntryPointByVersion("cuInit", fn, 12000, cudaEnableDefault, &found);
#else
  return cudaGetDriverEntryPoint("cuInit", fn, cudaEnableDefault, &found);
#endif"""


# A family launcher: a kernel, its launch, and the same runtime call in the host half.
LAUNCHER = """#include <cuda_runtime.h>
__global__ void touch(int* p) {{ *p = threadIdx.x; }}
int launch(int* p, void** fn) {{
  touch<<<1, 32>>>(p);
  cudaDriverEntryPointQueryResult found;
{body}
}}
"""


def fake_build(tmp_path: Path, body: str, launcher: bool = True) -> Path:
    """A build folder whose compile_commands.json holds one host CUDA source (as the release build
    compiles harness/cuda/*.cpp: g++ with the toolkit's include folder) and, unless
    launcher=False, one family launcher (as it compiles families/*/*.cu: nvcc)."""
    source = tmp_path / "harness" / "cuda" / "entry.cpp"
    source.parent.mkdir(parents=True)
    source.write_text(SOURCE.format(body=body))
    build = tmp_path / "build"
    build.mkdir()
    entries = [{"directory": str(build), "file": str(source),
                "arguments": ["g++", "-std=c++17", "-O2", "-isystem", str(TOOLKIT_INCLUDE), "-c", str(source),
                              "-o", "entry.o"]}]
    if launcher:
        cu = tmp_path / "families" / "probe" / "probe.cu"
        cu.parent.mkdir(parents=True)
        cu.write_text(LAUNCHER.format(body=body))
        entries.append({"directory": str(build), "file": str(cu),
                        "command": f"nvcc -I{tmp_path} -isystem={TOOLKIT_INCLUDE} -O3 -DNDEBUG "
                                   f"--generate-code=arch=compute_90a,code=[sm_90a] -std=c++17 -x cu -c {cu} -o probe.o"})
    (build / "compile_commands.json").write_text(json.dumps(entries))
    # The headers the test command's own check unpacked, instead of downloading them again.
    if (REAL_BUILD / "cuda12").is_dir():
        (build / "cuda12").symlink_to(REAL_BUILD / "cuda12")
    return build


def test_a_call_newer_than_cuda_12_0_fails_against_its_headers_only(tmp_path):
    r = run_script("cuda12_api_check.py", fake_build(tmp_path, UNGUARDED))
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"FAIL {tmp_path / 'harness/cuda/entry.cpp'} against CUDA 12.0:" in r.stdout
    assert "cudaGetDriverEntryPointByVersion" in r.stdout
    assert "0 of 1 host CUDA sources compile against CUDA 12.0's headers (CUDART_VERSION 12000)" in r.stdout
    assert "1 of 1 host CUDA sources compile against CUDA 12.9's headers (CUDART_VERSION 12090)" in r.stdout
    # The launcher's host half too, with the line of the call.
    assert f"FAIL {tmp_path / 'families/probe/probe.cu'} against CUDA 12.0:" in r.stdout
    assert "probe.cu:6:10: error: use of undeclared identifier 'cudaGetDriverEntryPointByVersion'" in r.stdout
    assert "0 of 1 family launchers (host half, clang) compile against CUDA 12.0's headers" in r.stdout
    assert "1 of 1 family launchers (host half, clang) compile against CUDA 12.9's headers" in r.stdout


def test_the_same_call_behind_the_version_guard_passes_both(tmp_path):
    r = run_script("cuda12_api_check.py", fake_build(tmp_path, GUARDED))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAIL" not in r.stdout
    assert "1 of 1 host CUDA sources compile against CUDA 12.0's headers" in r.stdout
    assert "1 of 1 host CUDA sources compile against CUDA 12.9's headers" in r.stdout
    assert "1 of 1 family launchers (host half, clang) compile against CUDA 12.0's headers" in r.stdout
    assert "1 of 1 family launchers (host half, clang) compile against CUDA 12.9's headers" in r.stdout


def test_a_launcher_warning_fails_as_under_nvcc(tmp_path):
    """The build compiles with -Wall -Wextra -Werror; the launchers' CUDA 12 compile does too."""
    r = run_script("cuda12_api_check.py", fake_build(tmp_path, "  int unused = 0;\n" + GUARDED))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "unused variable 'unused'" in r.stdout
    assert "0 of 1 family launchers (host half, clang) compile against CUDA 12.0's headers" in r.stdout
    assert "0 of 1 family launchers (host half, clang) compile against CUDA 12.9's headers" in r.stdout


def test_a_build_without_launchers_is_refused(tmp_path):
    r = run_script("cuda12_api_check.py", fake_build(tmp_path, GUARDED, launcher=False))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "no family launcher (.cu) in" in r.stderr


def test_without_clang_16_it_stops_with_one_line_saying_what_to_install(tmp_path):
    r = run_script("cuda12_api_check.py", fake_build(tmp_path, GUARDED), env={"PATH": str(tmp_path)})
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.strip().splitlines() == [
        "cuda12_api_check: clang++-16 not found: it compiles the launchers' host half (Debian: apt-get install clang-16)"]
