#!/usr/bin/env python3
"""The device code against CUDA 12, as far as PyPI's CUDA 12 wheels reach: ptxas, NVRTC (the
CUDA C++ front end and NVVM of nvcc, as a library) and the headers of 12.0, the oldest CUDA 12,
and ptxas and CCCL of 12.9 (a CUDA 12 nvcc driver is not among them). Three checks on a
configured and built CUDA tree:

1. PTX: every kernel's PTX that the instruction-contract tests had nvcc write
   (BUILD/families/*/*/sm_*.ptx, BUILD/tests/emulation/*.ptx) is declared the PTX ISA version of
   the oldest CUDA 12 toolkit that knows its target (8.0, CUDA 12.0, for sm_80/sm_90/sm_90a; 8.6
   and 8.7, CUDA 12.8, for sm_100 and sm_120) and assembled with CUDA 12.9's ptxas, and with
   12.0's where 12.0 knows the target. ptxas refuses an instruction newer than the declared
   version ("Feature 'st.async' requires PTX ISA .version 8.1"), so a kernel that needs a CUDA 13
   (or later 12.x) instruction fails here.
2. Kernel sources: the kernels of every family launcher (BUILD/families/F/NAME/ -> SOURCES/
   families/F/NAME.cu, the kernel headers it includes) are compiled by CUDA 12.0's NVRTC for each
   target 12.0 knows, every kernel nvcc 13 built instantiated by name, and assembled by 12.0's
   ptxas: a kernel header that needs CUDA 13's compiler or headers, or that 12.0's compiler warns
   about (the build turns warnings into errors), fails here.
   Every CUDA 12 assembly (checks 1 and 2) is also judged against the tests' own (nvcc 13) build
   of that PTX (BUILD/.../sm_*.ptxas.txt and .cubin): a ptxas performance advisory (such as
   C7515, wgmma serialised), more spills, a new stack frame, other registers for a kernel that
   uses setmaxnreg, or SASS whose wgmma are fenced and waited on differently (nvdisasm) fail it
   (gpubench_tools/ptxas_report.py).
3. Thrust and CUB: every CUDA source that includes them is compiled to PTX against CUDA 12.9's
   CCCL (2.8, nvidia-cuda-cccl-cu12) instead of the toolkit's own, so a library call that CCCL 3
   added or changed fails here. (The C++ front end and the runtime headers stay CUDA 13's: nvcc
   pre-includes its own cuda_runtime.h.)

Usage: cuda12_device_check.py BUILD_DIR [SOURCE_DIR]   (SOURCE_DIR: the repository by default)
Exit status: 0 everything assembles and compiles, 1 something does not, 2 bad usage or the
wheels cannot be had.
"""
from __future__ import annotations

import concurrent.futures
import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from gpubench_tools import ptxas_report
from gpubench_tools.nvrtc import STD_SHIMS, Nvrtc, name_expression
from gpubench_tools.wheels import unpacked_once

#: The repository: the kernel sources (families/F/NAME.cu) unless SOURCE_DIR is given.
REPOSITORY = Path(__file__).resolve().parent.parent
#: CUDA 12.9's ptxas and CCCL, and the folder each wheel is unpacked from.
PTXAS_WHEEL = ("nvidia-cuda-nvcc-cu12==12.9.86", "nvidia/cuda_nvcc/bin/")
CCCL_WHEEL = ("nvidia-cuda-cccl-cu12==12.9.27", "nvidia/cuda_cccl/include/")
#: CUDA 12.0's ptxas and device headers (bin/, include/crt/), NVRTC and runtime headers.
NVCC_12_0_WHEEL = ("nvidia-cuda-nvcc-cu12==12.0.76", "nvidia/cuda_nvcc/")
NVRTC_12_0_WHEEL = ("nvidia-cuda-nvrtc-cu12==12.0.76", "nvidia/cuda_nvrtc/lib/")
RUNTIME_12_0_WHEEL = ("nvidia-cuda-runtime-cu12==12.0.107", "nvidia/cuda_runtime/include/")
#: The PTX ISA version of the first CUDA 12 release that targets each architecture (PTX ISA
#: release notes: 8.0 came with CUDA 12.0, 8.6 with 12.7/12.8 for sm_100, 8.7 with 12.8 for sm_120).
OLDEST_CUDA12_PTX = {
    "sm_80": ("8.0", "12.0"), "sm_86": ("8.0", "12.0"), "sm_89": ("8.0", "12.0"),
    "sm_90": ("8.0", "12.0"), "sm_90a": ("8.0", "12.0"),
    "sm_100": ("8.6", "12.8"), "sm_100a": ("8.6", "12.8"),
    "sm_120": ("8.7", "12.8"), "sm_120a": ("8.7", "12.8"),
}
#: nvdisasm, found once by main (find_nvdisasm).
NVDISASM = Path("nvdisasm")
LIBRARY_INCLUDE = re.compile(r"^\s*#\s*include\s*<(thrust|cub)/", re.M)
#: The kernel headers a launcher includes (not the launch helpers: host code).
KERNEL_INCLUDE = re.compile(r'^\s*#\s*include\s*"((?!kernels/launch)[^"]+\.cuh)"', re.M)
ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([A-Za-z_$][\w$]*)", re.M)


def die(message: str) -> None:
    print(f"cuda12_device_check: {message}", file=sys.stderr)
    sys.exit(2)


def unpack(cache: Path, wheel: tuple[str, str], name: str) -> Path:
    """The wheel's folder `wheel[1]`, unpacked once into cache/name."""
    found = unpacked_once(cache, name, {wheel[0]: wheel[1]})
    if isinstance(found, str):
        die(found)
    return found


def ptx_target(ptx: str) -> str:
    """The architecture a PTX text's .target line names ("sm_90a"), or ""."""
    m = re.search(r"^\s*\.target\s+(sm_[0-9]+a?)", ptx, re.M)
    return m.group(1) if m else ""


def as_cuda12(ptx: str) -> tuple[str, str, str, str]:
    """(target, PTX ISA version, CUDA release) the PTX is declared as, and the declared text."""
    target = ptx_target(ptx)
    if not target:
        raise ValueError("no .target line")
    if target not in OLDEST_CUDA12_PTX:
        raise ValueError(f"target {target}: no CUDA 12 toolkit knows it")
    version, release = OLDEST_CUDA12_PTX[target]
    text, n = re.subn(r"^\s*\.version\s+[0-9.]+", f".version {version}", ptx, count=1, flags=re.M)
    if n != 1:
        raise ValueError("no .version line")
    return target, version, release, text


def register_bound_kernels(ptx: str) -> set[str]:
    """The entries whose body uses setmaxnreg (their targets assume the entry's register count)."""
    starts = [(m.start(), m.group(1)) for m in ENTRY.finditer(ptx)] + [(len(ptx), "")]
    return {name for (begin, name), (end, _) in zip(starts, starts[1:]) if "setmaxnreg" in ptx[begin:end]}


def reference_report(ptx_path: Path) -> ptxas_report.Report | None:
    """The tests' own ptxas -v of this PTX (written beside it), or None where there is none."""
    path = ptx_path.with_suffix(".ptxas.txt")
    return ptxas_report.parse(path.read_text(errors="replace")) if path.is_file() else None


def find_nvdisasm() -> Path:
    """nvdisasm: GPUBENCH_NVDISASM, on PATH, or the one pip put in this interpreter's environment
    (scripts/requirements-test.txt: the instruction-contract tests read SASS with it too)."""
    given = os.environ.get("GPUBENCH_NVDISASM") or shutil.which("nvdisasm")
    if given:
        return Path(given)
    found = sorted(Path(sys.prefix).glob("lib/python*/site-packages/nvidia/*/bin/nvdisasm"))
    if not found:
        die("no nvdisasm (pip install nvidia-cuda-nvdisasm into the environment, or set GPUBENCH_NVDISASM)")
    return found[-1]


@functools.lru_cache(maxsize=None)
def reference_sass(cubin: Path) -> dict | None:
    """The warpgroup synchronisation of the tests' own cubin (beside the PTX), or None."""
    return sass_of(cubin) if cubin.is_file() else None


def sass_of(cubin: Path) -> dict:
    r = subprocess.run([str(NVDISASM), "-c", str(cubin)], capture_output=True, text=True, check=True)
    return ptxas_report.sass_shape(r.stdout)


def assemble(ptxas: Path, release: str, target: str, declared: Path, reference_ptx: Path,
             bound: set[str]) -> str | None:
    """None when `ptxas` (CUDA `release`'s) assembles the PTX file `declared` for `target` no worse
    than the tests' own build of `reference_ptx` (its ptxas -v and cubin beside it), else why
    (ptxas's error, or the judges' lines)."""
    cubin = declared.with_name(f"{declared.stem}.{release}.cubin")
    # As the build assembles (cmake/Cuda.cmake: -Xptxas=-warn-spills,-warn-lmem-usage,-Werror).
    r = subprocess.run([str(ptxas), f"-arch={target}", "-O3", "-v", "-warn-spills", "-warn-lmem-usage", "-Werror",
                        str(declared), "-o", str(cubin)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return (r.stderr or r.stdout).strip()
    findings = ptxas_report.judge(ptxas_report.parse(r.stdout + r.stderr), reference_report(reference_ptx), bound)
    # The SASS where it can differ in this way: kernels that use wgmma (nvdisasm takes seconds).
    reference = reference_sass(reference_ptx.with_suffix(".cubin")) if "wgmma." in declared.read_text() else None
    if reference is not None:
        findings += ptxas_report.judge_sass(sass_of(cubin), reference)
    return "\n".join(findings) if findings else None


def check_ptx(assemblers: dict[str, Path], path: Path, declared: Path) -> tuple[str, str, str | None]:
    """(target, summary, None) when the PTX at `path` assembles as CUDA 12 PTX (written to
    `declared` first) with each ptxas of `assemblers` (release -> ptxas) that knows its target,
    else (target, summary, the reason)."""
    try:
        ptx = path.read_text(errors="replace")
        target, version, release, text = as_cuda12(ptx)
    except ValueError as e:
        return "?", str(path), str(e)
    declared.write_text(text)
    bound = register_bound_kernels(ptx)
    summary = f"{path} ({target}, PTX ISA {version}: CUDA {release})"
    for toolkit, ptxas in assemblers.items():
        if version_tuple(toolkit) < version_tuple(release):
            continue
        error = assemble(ptxas, toolkit, target, declared, path, bound)
        if error:
            return target, f"{summary} by CUDA {toolkit}'s ptxas", error
    return target, summary, None


def version_tuple(release: str) -> tuple[int, ...]:
    return tuple(int(x) for x in release.split("."))


def demangle(names: list[str]) -> list[str]:
    r = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
    return r.stdout.splitlines()


def check_sources(nvrtc: Nvrtc, ptxas: Path, include: list[Path], sources: Path, path: Path,
                  scratch: Path) -> tuple[str, str | None]:
    """(summary, None) when CUDA 12.0's NVRTC compiles the kernels of the launcher that the PTX at
    `path` (BUILD/families/F/NAME/sm_X.ptx) came from - every kernel of that PTX, instantiated
    by name - and 12.0's ptxas assembles them no worse than the reference build; else why."""
    ptx = path.read_text(errors="replace")
    target, _, _, _ = as_cuda12(ptx)
    launcher = sources / "families" / path.parent.parent.name / f"{path.parent.name}.cu"
    summary = f"{launcher.relative_to(sources)} ({target}, CUDA 12.0's NVRTC and ptxas)"
    if not launcher.is_file():
        return summary, f"{launcher} not found"
    text = launcher.read_text(errors="replace")
    if "__global__" in text:
        return summary, "the launcher defines a kernel itself: kernels belong in the .cuh it includes"
    entries = ENTRY.findall(ptx)
    names = [name_expression(d) for d in demangle(entries)]
    source = "".join(f'#include "{h}"\n' for h in KERNEL_INCLUDE.findall(text))
    options = [f"--gpu-architecture=compute_{target[3:]}", "-std=c++17", "-default-device", "-DNDEBUG",
               f"-I{STD_SHIMS}", f"-I{sources}", *[f"-I{d}" for d in include]]
    compiled = nvrtc.compile(source, options, names)
    if not compiled.ok:
        return summary, compiled.log
    if re.search(r"\bwarning\b", compiled.log):
        return summary, "warnings (the build makes every one an error: --Werror=all-warnings):\n" + compiled.log
    missing = sorted(set(entries) - set(compiled.lowered.values()))
    if missing:
        return summary, "kernels nvcc 13 built that NVRTC did not: " + ", ".join(demangle(missing))
    out = scratch / f"{path.parent.parent.name}_{path.parent.name}_{target}.ptx"
    out.write_text(compiled.ptx)
    error = assemble(ptxas, "12.0", target, out, path, register_bound_kernels(compiled.ptx))
    return summary, error


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
    args = sys.argv[1:]
    if len(args) not in (1, 2) or any(a.startswith("-") for a in args):
        die("usage: cuda12_device_check.py BUILD_DIR [SOURCE_DIR]")
    build = Path(args[0]).resolve()
    if not build.is_dir():
        die(f"{build} is not a build folder")
    sources = Path(args[1]).resolve() if len(args) == 2 else REPOSITORY
    if not sources.is_dir():
        die(f"{sources} is not a source folder")
    ptx_files = sorted(build.glob("families/*/*/sm_*.ptx")) + sorted(build.glob("tests/emulation/*.ptx"))
    if not ptx_files:
        die(f"no kernel PTX under {build} (a CUDA build with GPUBENCH_TESTS=ON writes it)")
    global NVDISASM
    NVDISASM = find_nvdisasm()
    cache = build / "cuda12"
    nvcc_12_0 = unpack(cache, NVCC_12_0_WHEEL, "nvcc-12.0")
    # 12.9's first: it names the PTX ISA version an instruction needs, where 12.0's does not know it.
    assemblers = {"12.9": unpack(cache, PTXAS_WHEEL, "ptxas") / "ptxas", "12.0": nvcc_12_0 / "bin" / "ptxas"}
    nvrtc = Nvrtc(unpack(cache, NVRTC_12_0_WHEEL, "nvrtc-12.0") / "libnvrtc.so.12")
    include_12_0 = [unpack(cache, RUNTIME_12_0_WHEEL, "runtime-12.0"), nvcc_12_0 / "include"]
    cccl = unpack(cache, CCCL_WHEEL, "cccl")
    m = re.search(r"#define\s+CCCL_VERSION\s+(\d+)", (cccl / "cuda/std/__cccl/version.h").read_text())
    if not m:
        die(f"no CCCL_VERSION in {cccl}")
    cccl_version = int(m.group(1))
    # Launchers whose kernels CUDA 12.0 can build: one compile per launcher and target.
    launcher_ptx = [p for p in sorted(build.glob("families/*/*/sm_*.ptx"))
                    if OLDEST_CUDA12_PTX.get(ptx_target(p.read_text(errors="replace")), ("", ""))[1] == "12.0"]

    failed = 0
    with tempfile.TemporaryDirectory(prefix="cuda12_device_") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        scratch = Path(tmp)
        guard = scratch / "cccl12_guard.h"
        guard.write_text("#include <cuda/std/version>\n"
                         f"static_assert(CCCL_VERSION == {cccl_version}, \"CUDA 12.9's CCCL is not the one included\");\n")
        libs = library_jobs(build, cccl, guard, scratch)
        targets = set()
        for target, summary, error in pool.map(lambda i: check_ptx(assemblers, ptx_files[i], scratch / f"{i}.ptx"),
                                               range(len(ptx_files))):
            targets.add(target)
            if error:
                failed += 1
                print(f"FAIL {summary}:\n{error}")
        for summary, error in pool.map(
                lambda p: check_sources(nvrtc, assemblers["12.0"], include_12_0, sources, p, scratch), launcher_ptx):
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
          f"CUDA 12 PTX of their target by CUDA 12.9's ptxas (and 12.0's where it knows the target), "
          f"{len(launcher_ptx)} launcher and target pair(s) compiled by CUDA {nvrtc.version}'s NVRTC and ptxas, "
          f"{len(libs)} Thrust/CUB source(s) compiled against "
          f"CCCL {cccl_version // 1000000}.{cccl_version // 1000 % 1000}.{cccl_version % 1000}: "
          f"{'all passed' if failed == 0 else f'{failed} failed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
