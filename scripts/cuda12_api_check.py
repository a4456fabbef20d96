#!/usr/bin/env python3
"""The CUDA backend's host code against CUDA 12's API: every host source that includes a CUDA
header (harness/cuda/*.cpp, families/*/cuda*.cpp) is compiled again with the release build's own
flags, the toolkit's headers swapped for those of CUDA 12.0 (CUDART_VERSION 12000: the oldest
CUDA 12, what an R525 driver runs) and of CUDA 12.9 (12090: the newest), so the code paths a user
building with a CUDA 12 toolkit gets (the `#if CUDART_VERSION` branches) compile, and no call
newer than 12.0 or only in CUDA 13 slips in. CUDA 12 is what drivers before R580 run; the test
machines have CUDA 13.

Only the headers are needed: NVIDIA's PyPI wheels nvidia-cuda-runtime-cu12 and nvidia-cublas-cu12
carry them. The device code is scripts/cuda12_device_check.py's.

Usage: cuda12_api_check.py BUILD_DIR   (a configured build with compile_commands.json)
Exit status: 0 every source compiles, 1 one does not, 2 bad usage or the headers cannot be had.
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shlex
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
    for entry in json.loads(db_path.read_text()):
        source = entry["file"]
        if not SOURCES.search(source) or "/tests/" in source or source in out:
            continue
        argv = entry.get("arguments") or shlex.split(entry["command"])
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

    failed = 0
    for release in RELEASES:
        include = headers(build / "cuda12", release)
        version = cudart_version(include)
        if f"{version // 1000}.{version % 1000 // 10}" != release:
            die(f"the headers downloaded for CUDA {release} are CUDA {version}")
        jobs = commands(build, include)
        if not jobs:
            die(f"no host CUDA source in {build / 'compile_commands.json'}")
        failed_here = 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for source, r in pool.map(run, jobs):
                if r.returncode != 0:
                    failed_here += 1
                    print(f"FAIL {source} against CUDA {release}:\n{r.stderr}")
        failed += failed_here
        print(f"cuda12_api_check: {len(jobs) - failed_here} of {len(jobs)} host CUDA sources compile against CUDA "
              f"{release}'s headers (CUDART_VERSION {version})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
