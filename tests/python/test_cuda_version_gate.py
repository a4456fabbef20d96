"""The configure's CUDA version gate (cmake/CudaToolkitVersion.cmake, which cmake/Cuda.cmake calls
with the detected nvcc's version): a toolkit older than CUDA 12.0 stops the configure with one
message saying what to do; 12.0 and newer pass."""

from __future__ import annotations

import subprocess

import pytest

from conftest import ROOT

GATE = ROOT / "cmake" / "CudaToolkitVersion.cmake"


def configure_check(version: str) -> subprocess.CompletedProcess:
    return subprocess.run(["cmake", f"-DVERSION={version}", "-P", str(GATE)], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("version", ["11.8.89", "11.0", "10.2.89"])
def test_a_toolkit_older_than_cuda_12_stops_the_configure(version):
    r = configure_check(version)
    assert r.returncode != 0
    text = " ".join(r.stderr.split())  # CMake wraps its messages
    assert f"gpubench needs CUDA 12.0 or newer; nvcc is CUDA {version}." in text
    assert "-DCMAKE_CUDA_COMPILER=<toolkit>/bin/nvcc" in text and "-DGPUBENCH_CUDA=OFF" in text


@pytest.mark.parametrize("version", ["12.0.76", "12.9.86", "13.0.48"])
def test_cuda_12_and_newer_pass(version):
    r = configure_check(version)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""


def test_the_cuda_configure_calls_the_gate_with_the_detected_version():
    text = (ROOT / "cmake" / "Cuda.cmake").read_text()
    enable = text.index("enable_language(CUDA)")
    call = text.index('gpubench_require_cuda_version("${CMAKE_CUDA_COMPILER_VERSION}"')
    assert enable < call < text.index("set(CMAKE_CUDA_STANDARD 17)")
