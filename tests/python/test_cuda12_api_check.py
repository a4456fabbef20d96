"""scripts/cuda12_api_check.py on a small build made here: one host CUDA source, compiled against
CUDA 12.0's and 12.9's headers in turn. A call CUDA 12.5 added fails against 12.0 only, and passes
behind the CUDART_VERSION guard the real code uses for it; the real build is checked by the test
command itself."""

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


def fake_build(tmp_path: Path, body: str) -> Path:
    """A build folder whose compile_commands.json holds one host CUDA source (as the release build
    compiles harness/cuda/*.cpp: g++ with the toolkit's include folder)."""
    source = tmp_path / "harness" / "cuda" / "entry.cpp"
    source.parent.mkdir(parents=True)
    source.write_text(SOURCE.format(body=body))
    build = tmp_path / "build"
    build.mkdir()
    (build / "compile_commands.json").write_text(json.dumps([{
        "directory": str(build), "file": str(source),
        "arguments": ["g++", "-std=c++17", "-O2", "-isystem", str(TOOLKIT_INCLUDE), "-c", str(source),
                      "-o", "entry.o"]}]))
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


def test_the_same_call_behind_the_version_guard_passes_both(tmp_path):
    r = run_script("cuda12_api_check.py", fake_build(tmp_path, GUARDED))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAIL" not in r.stdout
    assert "1 of 1 host CUDA sources compile against CUDA 12.0's headers" in r.stdout
    assert "1 of 1 host CUDA sources compile against CUDA 12.9's headers" in r.stdout
