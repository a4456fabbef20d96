#!/usr/bin/env python3
"""The CUDA backend's host code against CUDA 12's API, compiled again with the headers of CUDA 12.0
(CUDART_VERSION 12000: the oldest CUDA 12, what an R525 driver runs) and of CUDA 12.9 (12090: the
newest), so the code paths a user building with a CUDA 12 toolkit gets (the `#if CUDART_VERSION`
branches) compile, and no call newer than 12.0 or only in CUDA 13 slips in. CUDA 12 is what
drivers before R580 run; the test machines have CUDA 13. Two kinds of source:

1. Host sources that include a CUDA header (harness/cuda/*.cpp, families/*/cuda*.cpp): their
   release compile command (g++), the toolkit's include folder swapped for CUDA 12's.
2. The host half of the family launchers (families/*/*.cu: kernels/launch.cuh's runtime calls,
   the tensor-map encoder of kernels/tma.cuh, the launchers' own code). No CUDA 12 nvcc can be had
   here (the PyPI wheels hold no nvcc driver), so clang's CUDA mode does it: `clang++-16 -x cuda
   --cuda-host-only` splits a .cu as nvcc does and compiles its host side (kernels are parsed,
   not code-generated) against CUDA 12's runtime headers and nvcc's crt headers of the same
   release. families/global_memory/library.cu is left out: its host half is Thrust and CUB,
   which scripts/cuda12_device_check.py compiles against CUDA 12.9's CCCL, and clang 16 does not
   build CCCL 2.8 with CUDA 12.0's crt headers.

Only headers are needed: NVIDIA's PyPI wheels nvidia-cuda-runtime-cu12, nvidia-cublas-cu12 and
nvidia-cuda-nvcc-cu12 (its include/crt) carry them. The device code is scripts/cuda12_device_check.py's.

Usage: cuda12_api_check.py BUILD_DIR   (a configured build with compile_commands.json)
Exit status: 0 every source compiles, 1 one does not, 2 bad usage, no clang++-16, or the headers
cannot be had.
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from gpubench_tools.wheels import unpacked_once

#: Per CUDA release checked: the folder its headers are merged into (under the cache), and the
#: wheels with the header folders taken from them.
RELEASES = {
    "12.0": ("include-12.0", {
        "nvidia-cuda-runtime-cu12==12.0.107": "nvidia/cuda_runtime/include/",
        "nvidia-cublas-cu12==12.0.2.224": "nvidia/cublas/include/",
    }),
    "12.9": ("include", {
        "nvidia-cuda-runtime-cu12==12.9.79": "nvidia/cuda_runtime/include/",
        "nvidia-cublas-cu12==12.9.1.4": "nvidia/cublas/include/",
    }),
}
#: Host sources of the CUDA backend and the families' CUDA workloads.
SOURCES = re.compile(r"/(harness/cuda/[a-z_0-9]+\.cpp|families/[a-z_0-9]+/cuda[a-z_0-9]*\.cpp)$")
#: The family launchers, whose host half clang compiles; and those left out, with why.
LAUNCHERS = re.compile(r"/families/[a-z_0-9]+/[a-z_0-9]+\.cu$")
LAUNCHERS_LEFT_OUT = {"families/global_memory/library.cu": "Thrust/CUB: cuda12_device_check.py's CCCL check"}
#: Per CUDA release: the nvcc wheel whose include folder (crt/host_defines.h and the rest that
#: cuda_runtime.h includes) goes beside the runtime headers. Kept: cuda12_device_check.py uses it.
CRT = {"12.0": "nvidia-cuda-nvcc-cu12==12.0.76", "12.9": "nvidia-cuda-nvcc-cu12==12.9.86"}
#: The compiler of the launchers' host half: clang 16 knows CUDA 12's headers (clang 14, Debian's
#: default, still includes the texture references CUDA 12 removed).
CLANG = "clang++-16"
#: clang's CUDA mode flags. It warns that it only knows CUDA up to 11.8, and does not know
#: __grid_constant__'s attribute (a device-side one); every other warning fails, as under nvcc.
#: clang_cuda_shims.h declares the cache-hint loads (__ldcg) that clang 16's CUDA headers lack.
CLANG_FLAGS = ["-x", "cuda", "--cuda-host-only", "-nocudalib", "--cuda-gpu-arch=sm_90", "-Wall", "-Wextra",
               "-Werror", "-Wno-unknown-cuda-version", "-Wno-unknown-attributes", "-fsyntax-only",
               "-include", str(Path(__file__).resolve().parent / "gpubench_tools" / "clang_cuda_shims.h")]


def die(message: str) -> None:
    print(f"cuda12_api_check: {message}", file=sys.stderr)
    sys.exit(2)


def headers(cache: Path, release: str) -> Path:
    """CUDA `release`'s headers, merged in one folder of `cache` (downloaded and unpacked once;
    each wheel removed once unpacked)."""
    folder, wheels = RELEASES[release]
    found = unpacked_once(cache, folder, wheels, keep_wheels=False)
    if isinstance(found, str):
        die(found)
    return found


def cudart_version(include: Path) -> int:
    text = (include / "cuda_runtime_api.h").read_text(errors="replace")
    m = re.search(r"#define\s+CUDART_VERSION\s+(\d+)", text)
    if not m:
        die(f"no CUDART_VERSION in {include / 'cuda_runtime_api.h'}")
    return int(m.group(1))


def commands(build: Path, include: Path) -> list[tuple[str, list[str], str]]:
    """(source, argv, directory) per host CUDA source: its release compile command with the
    toolkit's include folder replaced by `include`, and -fsyntax-only instead of an object."""
    db_path = build / "compile_commands.json"
    if not db_path.is_file():
        die(f"{db_path} not found (configure the build first)")
    out: dict[str, tuple[str, list[str], str]] = {}
    test_only: set[str] = set()
    for entry in json.loads(db_path.read_text()):
        source = entry["file"]
        if not SOURCES.search(source) or "/tests/" in source or source in out:
            continue
        argv = entry.get("arguments") or shlex.split(entry["command"])
        if any("cmake_pch" in a for a in argv):
            test_only.add(source)  # the same file built into a fake-runtime test, with the tests' precompiled header
            continue
        new: list[str] = []
        skip = False
        swapped = False
        for i, a in enumerate(argv):
            if skip:
                skip = False
                continue
            if a in ("-o", "-c"):
                skip = a == "-o"
                continue
            if a in ("-isystem", "-I") and i + 1 < len(argv) and (Path(argv[i + 1]) / "cuda_runtime_api.h").exists():
                new += ["-isystem", str(include)]
                swapped = True
                skip = True
                continue
            if a.startswith("-I") and (Path(a[2:]) / "cuda_runtime_api.h").exists():
                new += ["-isystem", str(include)]
                swapped = True
                continue
            new.append(a)
        if not swapped:
            die(f"{source}: its compile command names no CUDA include folder to replace")
        new.remove(source)
        out[source] = (source, new + ["-fsyntax-only", source], entry["directory"])
    for source in sorted(test_only - out.keys()):
        die(f"{source}: compiled only into a test target, with its precompiled header; no release command to check")
    return list(out.values())


def crt(cache: Path, release: str) -> Path:
    """nvcc's own include folder of CUDA `release` (crt/), unpacked once; the wheel kept."""
    found = unpacked_once(cache, f"crt-{release}", {CRT[release]: "nvidia/cuda_nvcc/include/"})
    if isinstance(found, str):
        die(found)
    return found


def clang_cuda_root(cache: Path, release: str, include: Path) -> Path:
    """A folder clang takes for a CUDA installation (--cuda-path): include/ (CUDA `release`'s
    headers), and the bin/ and lib64/ it looks for, empty: a host-only compile runs no ptxas and
    links nothing."""
    root = cache / f"clang-cuda-{release}"
    for sub in ("bin", "lib64"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    link = root / "include"
    if not link.is_symlink() or link.resolve() != include.resolve():
        if link.is_symlink():
            link.unlink()
        link.symlink_to(include.resolve())
    return root


def launcher_commands(build: Path, clang: str, root: Path, crt_include: Path) -> list[tuple[str, list[str], str]]:
    """(source, argv, directory) per family launcher: clang's host-only compile with the -I, -D
    and -std of its nvcc command, the toolkit's headers those of `root`."""
    out: dict[str, tuple[str, list[str], str]] = {}
    for entry in json.loads((build / "compile_commands.json").read_text()):
        source = entry["file"]
        if not LAUNCHERS.search(source) or "/tests/" in source or source in out:
            continue
        if any(source.endswith("/" + left_out) for left_out in LAUNCHERS_LEFT_OUT):
            continue
        argv = entry.get("arguments") or shlex.split(entry["command"])
        kept: list[str] = []
        for i, a in enumerate(argv):
            value = argv[i + 1] if a in ("-I", "-D") and i + 1 < len(argv) else None
            if value is not None:
                kept += [a, value]
            elif (a.startswith("-I") and len(a) > 2) or a.startswith("-D") or a.startswith("-std="):
                if not (a.startswith("-I") and (Path(a[2:]) / "cuda_runtime_api.h").exists()):
                    kept.append(a)
        out[source] = (source, [clang, *CLANG_FLAGS, f"--cuda-path={root}", "-isystem", str(root / "include"),
                                "-isystem", str(crt_include), *kept, source], entry["directory"])
    return list(out.values())


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        die("usage: cuda12_api_check.py BUILD_DIR")
    build = Path(sys.argv[1]).resolve()
    if not (build / "compile_commands.json").is_file():
        die(f"{build / 'compile_commands.json'} not found (configure the build first)")

    def run(job: tuple[str, list[str], str]) -> tuple[str, subprocess.CompletedProcess]:
        source, argv, directory = job
        return source, subprocess.run(argv, cwd=directory, capture_output=True, text=True)

    clang = shutil.which(CLANG)
    if clang is None:
        die(f"{CLANG} not found: it compiles the launchers' host half (Debian: apt-get install clang-16)")

    def compile_all(jobs: list[tuple[str, list[str], str]], what: str, release: str, version: int) -> int:
        failed_here = 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for source, r in pool.map(run, jobs):
                if r.returncode != 0:
                    failed_here += 1
                    print(f"FAIL {source} against CUDA {release}:\n{r.stderr}")
        print(f"cuda12_api_check: {len(jobs) - failed_here} of {len(jobs)} {what} compile against CUDA "
              f"{release}'s headers (CUDART_VERSION {version})")
        return failed_here

    failed = 0
    for release in RELEASES:
        cache = build / "cuda12"
        include = headers(cache, release)
        version = cudart_version(include)
        if f"{version // 1000}.{version % 1000 // 10}" != release:
            die(f"the headers downloaded for CUDA {release} are CUDA {version}")
        jobs = commands(build, include)
        launchers = launcher_commands(build, clang, clang_cuda_root(cache, release, include), crt(cache, release))
        if not jobs or not launchers:
            die(f"no {'host CUDA source' if not jobs else 'family launcher (.cu)'} in "
                f"{build / 'compile_commands.json'}")
        failed += compile_all(jobs, "host CUDA sources", release, version)
        failed += compile_all(launchers, "family launchers (host half, clang)", release, version)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
