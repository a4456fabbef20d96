#!/usr/bin/env python3
"""The device code against CUDA 12, as far as PyPI's CUDA 12 wheels reach (a CUDA 12 nvcc driver
is not among them: nvidia-cuda-nvcc-cu12 12.0-12.9 holds ptxas and libNVVM only). Two checks on a
configured and built CUDA tree:

1. PTX: every kernel's PTX that the instruction-contract tests had nvcc write
   (BUILD/families/*/*/sm_*.ptx, BUILD/tests/emulation/*.ptx) is declared the PTX ISA version of
   the oldest CUDA 12 toolkit that knows its target (8.0, CUDA 12.0, for sm_80/sm_90/sm_90a; 8.6
   and 8.7, CUDA 12.8, for sm_100 and sm_120) and assembled with CUDA 12.9's ptxas. ptxas refuses
   an instruction newer than the declared version ("Feature 'st.async' requires PTX ISA .version
   8.1"), so a kernel that needs a CUDA 13 (or later 12.x) instruction fails here.
2. Thrust and CUB: every CUDA source that includes them is compiled to PTX against CUDA 12.9's
   CCCL (2.8, nvidia-cuda-cccl-cu12) instead of the toolkit's own, so a library call that CCCL 3
   added or changed fails here. (The C++ front end and the runtime headers stay CUDA 13's: nvcc
   pre-includes its own cuda_runtime.h.)

Usage: cuda12_device_check.py BUILD_DIR
Exit status: 0 everything assembles and compiles, 1 something does not, 2 bad usage or the
wheels cannot be had.
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from gpubench_tools.wheels import wheel_folder

#: CUDA 12.9's ptxas and CCCL, and the folder each wheel is unpacked from.
PTXAS_WHEEL = ("nvidia-cuda-nvcc-cu12==12.9.86", "nvidia/cuda_nvcc/bin/")
CCCL_WHEEL = ("nvidia-cuda-cccl-cu12==12.9.27", "nvidia/cuda_cccl/include/")
#: The PTX ISA version of the first CUDA 12 release that targets each architecture (PTX ISA
#: release notes: 8.0 came with CUDA 12.0, 8.6 with 12.7/12.8 for sm_100, 8.7 with 12.8 for sm_120).
OLDEST_CUDA12_PTX = {
    "sm_80": ("8.0", "12.0"), "sm_86": ("8.0", "12.0"), "sm_89": ("8.0", "12.0"),
    "sm_90": ("8.0", "12.0"), "sm_90a": ("8.0", "12.0"),
    "sm_100": ("8.6", "12.8"), "sm_100a": ("8.6", "12.8"),
    "sm_120": ("8.7", "12.8"), "sm_120a": ("8.7", "12.8"),
}
LIBRARY_INCLUDE = re.compile(r"^\s*#\s*include\s*<(thrust|cub)/", re.M)


def die(message: str) -> None:
    print(f"cuda12_device_check: {message}", file=sys.stderr)
    sys.exit(2)


def unpack(cache: Path, wheel: tuple[str, str], name: str) -> Path:
    """The wheel's folder `wheel[1]`, unpacked once into cache/name."""
    target = cache / name
    done = cache / f"{name}.ok"
    if not done.exists():
        why = wheel_folder(cache, wheel[0], wheel[1], target)
        if why:
            die(why)
        done.write_text("ok\n")
    return target


def as_cuda12(ptx: str) -> tuple[str, str, str, str]:
    """(target, PTX ISA version, CUDA release) the PTX is declared as, and the declared text."""
    m = re.search(r"^\s*\.target\s+(sm_[0-9]+a?)", ptx, re.M)
    if not m:
        raise ValueError("no .target line")
    target = m.group(1)
    if target not in OLDEST_CUDA12_PTX:
        raise ValueError(f"target {target}: no CUDA 12 toolkit knows it")
    version, release = OLDEST_CUDA12_PTX[target]
    text, n = re.subn(r"^\s*\.version\s+[0-9.]+", f".version {version}", ptx, count=1, flags=re.M)
    if n != 1:
        raise ValueError("no .version line")
    return target, version, release, text


def check_ptx(ptxas: Path, path: Path, declared: Path) -> tuple[str, str, str | None]:
    """(target, summary, None) when the PTX at `path` assembles as CUDA 12 PTX (written to
    `declared` first), else (target, summary, the reason)."""
    try:
        target, version, release, text = as_cuda12(path.read_text(errors="replace"))
    except ValueError as e:
        return "?", str(path), str(e)
    declared.write_text(text)
    r = subprocess.run([str(ptxas), f"-arch={target}", "-O3", str(declared), "-o", os.devnull],
                       capture_output=True, text=True)
    summary = f"{path} ({target}, PTX ISA {version}: CUDA {release})"
    return target, summary, None if r.returncode == 0 else (r.stderr or r.stdout).strip()


def library_jobs(build: Path, cccl: Path, guard: Path, scratch: Path) -> list[tuple[str, list[str], str]]:
    """(source, argv, directory): each CUDA source that includes Thrust or CUB, compiled to PTX for
    compute_90 with CUDA 12.9's CCCL first on the include path and a guard that it is the one used."""
    db = build / "compile_commands.json"
    if not db.is_file():
        die(f"{db} not found (configure the build first)")
    jobs = []
    seen = set()
    for entry in json.loads(db.read_text()):
        source = entry["file"]
        if not source.endswith(".cu") or source in seen or "/tests/" in source:
            continue
        seen.add(source)
        if not LIBRARY_INCLUDE.search(Path(source).read_text(errors="replace")):
            continue
        argv = entry.get("arguments") or shlex.split(entry["command"])
        kept: list[str] = []
        skip = False
        for a in argv[1:]:
            if skip:
                skip = False
                continue
            if a in ("-o", "-c", "-x"):
                skip = a != "-c"
                continue
            if a.startswith("--generate-code") or a.startswith("-gencode") or a == source:
                continue
            kept.append(a)
        out = scratch / Path(source).stem
        jobs.append((source, [argv[0], "-isystem", str(cccl), "--pre-include", str(guard), *kept, "-arch=compute_90",
                              "--ptx", "-MD", "-MF", f"{out}.d", "-x", "cu", source, "-o", f"{out}.ptx"],
                     entry["directory"]))
    return jobs


def toolkit_cccl_headers(depfile: Path) -> list[str]:
    """Headers the compile read from the toolkit's own CCCL (include/cccl/): ones CUDA 12.9's CCCL
    lacks, which nvcc's include path found there instead."""
    text = depfile.read_text(errors="replace").replace("\\\n", " ")
    return sorted({h for h in text.split() if "/include/cccl/" in h})


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        die("usage: cuda12_device_check.py BUILD_DIR")
    build = Path(sys.argv[1]).resolve()
    if not build.is_dir():
        die(f"{build} is not a build folder")
    ptx_files = sorted(build.glob("families/*/*/sm_*.ptx")) + sorted(build.glob("tests/emulation/*.ptx"))
    if not ptx_files:
        die(f"no kernel PTX under {build} (a CUDA build with GPUBENCH_TESTS=ON writes it)")
    cache = build / "cuda12"
    ptxas = unpack(cache, PTXAS_WHEEL, "ptxas") / "ptxas"
    cccl = unpack(cache, CCCL_WHEEL, "cccl")
    m = re.search(r"#define\s+CCCL_VERSION\s+(\d+)", (cccl / "cuda/std/__cccl/version.h").read_text())
    if not m:
        die(f"no CCCL_VERSION in {cccl}")
    cccl_version = int(m.group(1))

    failed = 0
    with tempfile.TemporaryDirectory(prefix="cuda12_device_") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        scratch = Path(tmp)
        guard = scratch / "cccl12_guard.h"
        guard.write_text("#include <cuda/std/version>\n"
                         f"static_assert(CCCL_VERSION == {cccl_version}, \"CUDA 12.9's CCCL is not the one included\");\n")
        libs = library_jobs(build, cccl, guard, scratch)
        targets = set()
        for target, summary, error in pool.map(lambda i: check_ptx(ptxas, ptx_files[i], scratch / f"{i}.ptx"),
                                               range(len(ptx_files))):
            targets.add(target)
            if error:
                failed += 1
                print(f"FAIL {summary}:\n{error}")

        def compile_one(job: tuple[str, list[str], str]) -> tuple[str, str | None]:
            r = subprocess.run(job[1], cwd=job[2], capture_output=True, text=True)
            if r.returncode != 0:
                error = (r.stderr or r.stdout).strip()
                if "/include/cccl/" in error:
                    error = "a header CUDA 12.9's CCCL does not have came from the toolkit's own (include/cccl/):\n" + error
                return job[0], error
            foreign = toolkit_cccl_headers(Path(job[1][job[1].index("-MF") + 1]))
            return job[0], ("it includes headers CUDA 12.9's CCCL does not have: " + ", ".join(foreign)
                            if foreign else None)

        for source, error in pool.map(compile_one, libs):
            if error:
                failed += 1
                print(f"FAIL {source} against CCCL {cccl_version // 1000000}.{cccl_version // 1000 % 1000}:\n{error}")
    print(f"cuda12_device_check: {len(ptx_files)} kernel PTX files ({', '.join(sorted(targets))}) assembled as the oldest "
          f"CUDA 12 PTX of their target by CUDA 12.9's ptxas, {len(libs)} Thrust/CUB source(s) compiled against "
          f"CCCL {cccl_version // 1000000}.{cccl_version // 1000 % 1000}.{cccl_version % 1000}: "
          f"{'all passed' if failed == 0 else f'{failed} failed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
