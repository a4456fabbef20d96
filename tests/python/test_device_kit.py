"""The device kit (scripts/device_kit.sh): the parts that run without a GPU - preparing what
travels, its size check, the packing - and a whole stage driven through stand-ins for
nvidia-smi, compute-sanitizer and ncu, so the stage logic (time limits, summaries, two files
back) is exercised here; the real tools run on the lent GPU machine."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from conftest import BIN, ROOT

KIT = ROOT / "scripts" / "device_kit.sh"
BUILD = BIN.resolve().parent  # the build tree gpubench came from (it sits at its top)


def kit(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run(["bash", str(KIT), *args], capture_output=True, text=True, env=full, timeout=timeout)


def cuda_build() -> bool:
    return (BUILD / "harness" / "gpubench_kernel_check").exists()


needs_cuda_build = pytest.mark.skipif(not shutil.which("nvcc") and not Path("/usr/local/cuda/bin/nvcc").exists(),
                                      reason="no CUDA toolkit: the kit carries CUDA binaries")


@needs_cuda_build
def test_prepare_fills_the_kit_and_checks_what_travels(tmp_path):
    assert cuda_build(), f"{BUILD} has no gpubench_kernel_check: the test build must include CUDA"
    kit_dir = tmp_path / "kit"
    r = kit("prepare", str(BUILD), env={"GPUBENCH_KIT_DIR": str(kit_dir)})
    assert r.returncode == 0, r.stderr
    assert (kit_dir / "bin" / "gpubench").stat().st_size > 0
    assert (kit_dir / "bin" / "gpubench_kernel_check").stat().st_size > 0
    libs = [p.name for p in (kit_dir / "lib").iterdir()]
    assert any(name.startswith("libbenchmark") for name in libs), libs
    # the build-there fallback: Google Benchmark's CMake package, found where benchmark_dir says
    bm_dir = kit_dir / (kit_dir / "benchmark_dir").read_text().strip()
    assert (bm_dir / "benchmarkConfig.cmake").exists()
    assert (kit_dir / "deps" / "re2" / "include" / "re2" / "re2.h").exists()  # RE2 for a build there
    assert (kit_dir / "deps" / "re2" / "lib" / "libre2.a").exists()
    assert "of 64 MiB" in r.stdout and "travelling in all" in r.stdout
    # the carried gpubench is the one just built: same version line
    carried = subprocess.run([str(kit_dir / "bin" / "gpubench"), "--version"], capture_output=True, text=True)
    built = subprocess.run([str(BIN), "--version"], capture_output=True, text=True)
    assert carried.returncode == 0 and carried.stdout == built.stdout
    # the sources' fingerprint: the files the binaries come from, and one hash of their contents
    listed = (kit_dir / "sources.list").read_text().split()
    assert "harness/runner.cpp" in listed and "kernels/chase_ring.h" in listed
    assert not any(n.startswith(("tests/", "results/")) for n in listed)
    assert re.fullmatch(r"[0-9a-f]{64}\n", (kit_dir / "sources.sha256").read_text())


@needs_cuda_build
def test_prepare_refuses_a_kit_over_the_limit(tmp_path):
    r = kit("prepare", str(BUILD), env={"GPUBENCH_KIT_DIR": str(tmp_path / "kit"), "GPUBENCH_KIT_LIMIT_MIB": "1"})
    assert r.returncode == 2
    assert "over the 1 MiB limit" in r.stderr


def test_pack_leaves_two_files_that_hold_the_stage(tmp_path):
    work = tmp_path / "w" / "bandwidth"
    (work / "results").mkdir(parents=True)
    (work / "summary.txt").write_text("stage summary\n")
    (work / "results" / "r.json").write_text('{"benchmarks": []}')
    out = tmp_path / "out"
    r = kit("pack", str(work), str(out))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["bandwidth.tar.gz", "bandwidth.txt"]
    assert (out / "bandwidth.txt").read_text() == "stage summary\n"
    with tarfile.open(out / "bandwidth.tar.gz") as t:
        assert "bandwidth/results/r.json" in t.getnames()


def test_pack_refuses_more_files_than_come_back(tmp_path):
    work = tmp_path / "w" / "ncu"
    work.mkdir(parents=True)
    (work / "summary.txt").write_text("s\n")
    out = tmp_path / "out"
    out.mkdir()
    for i in range(7):
        (out / f"earlier{i}.txt").write_text("x")
    r = kit("pack", str(work), str(out))
    assert r.returncode == 2
    assert "more than the 8 that come back" in r.stderr
    assert not (out / "ncu.tar.gz").exists()  # nothing written when it would not all come back


def test_a_stage_without_a_gpu_says_so(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    r = kit("smoke", str(tmp_path / "out"), env={"PATH": f"{empty}:/usr/bin:/bin"})
    assert r.returncode == 2
    assert "no GPU here" in r.stderr


def test_usage_errors_exit_2():
    assert kit("nonsense").returncode == 2
    assert kit("smoke").returncode == 2  # no output folder
    assert kit().returncode == 2


STAND_INS = {
    # nvidia-smi: one GPU; a steady stream of samples when asked to loop
    "nvidia-smi": """#!/bin/bash
case "$*" in
  -L) echo "GPU 0: Stand-in";;
  *--help-query-gpu*) echo clocks_event_reasons.active;;
  *-lms*) echo "timestamp, clocks.current.sm [MHz], power.draw [W]";
          while true; do echo "2026/11/23 07:00:00.000, 1980 MHz, 300.5 W"; sleep 0.2; done;;
  *) echo "stand-in $*";;
esac
""",
    # compute-sanitizer: runs the program after its own options, then reports like the real one
    "compute-sanitizer": """#!/bin/bash
[[ "$1" == --version ]] && { echo; echo "stand-in sanitizer"; exit 0; }
while [[ "$1" == --* ]]; do case "$1" in --tool|--leak-check|--error-exitcode) shift 2;; *) shift;; esac; done
"$@"; echo "========= ERROR SUMMARY: 0 errors"
""",
    # ncu: one profiled kernel in --csv --page raw form
    "ncu": """#!/bin/bash
echo "args: $*" >&2
echo '"ID","Kernel Name","gpu__time_duration.sum","dram__bytes_read.sum"'
echo '"","","ns","byte"'
echo '"0","copy_kernel","100","1073741824"'
""",
}


@pytest.fixture
def stand_in_path(tmp_path):
    d = tmp_path / "stand-ins"
    d.mkdir()
    for name, text in STAND_INS.items():
        (d / name).write_text(text)
        (d / name).chmod(0o755)
    return f"{d}:{os.environ['PATH']}"


def run_stage(tmp_path: Path, stand_in_path: str, stage: str, checker: str | None = None,
              gpubench: str | None = None, **env: str) -> tuple[subprocess.CompletedProcess, Path]:
    """Runs STAGE with a kit of the real gpubench (or `gpubench`, a script's text) and `checker`
    (a script's text) or the real gpubench_kernel_check (without a GPU it exits 2), behind the
    stand-ins; returns the run and its OUTDIR."""
    kit_dir = tmp_path / "kit"
    (kit_dir / "bin").mkdir(parents=True)
    if gpubench is None:
        os.symlink(BIN, kit_dir / "bin" / "gpubench")
    else:
        (kit_dir / "bin" / "gpubench").write_text(gpubench)
        (kit_dir / "bin" / "gpubench").chmod(0o755)
    check = kit_dir / "bin" / "gpubench_kernel_check"
    if checker is None:
        real = BIN.parent / "gpubench_kernel_check"
        os.symlink(real if real.exists() else "/bin/false", check)
    else:
        check.write_text(checker)
        check.chmod(0o755)
    out = tmp_path / "out"
    return kit(stage, str(out), env={"PATH": stand_in_path, "GPUBENCH_KIT_DIR": str(kit_dir), **env}), out


def test_smoke_stage_runs_every_step_and_packs_its_logs(tmp_path, stand_in_path):
    r, out = run_stage(tmp_path, stand_in_path, "smoke")
    assert r.returncode == 0, r.stderr
    summary = (out / "smoke.txt").read_text()
    for step in ("kernel_check", "wgmma_probe", "kernel_check_wgmma", "sanitizer_memcheck", "sanitizer_racecheck",
                 "sanitizer_synccheck", "sanitizer_initcheck", "quick_all", "quick_bandwidth_memcheck"):
        assert any(line.startswith(step + " ") and " exit " in line for line in summary.splitlines()), step
    # no GPU behind the stand-ins: the real gpubench refuses --device=0, and the summary shows it
    assert "quick_all                    exit 2" in summary
    assert "telemetry" in summary and "1980.0" in summary
    with tarfile.open(out / "smoke.tar.gz") as t:
        names = t.getnames()
    assert "smoke/quick_all.log" in names and "smoke/telemetry.csv" in names


def _kit_pattern(name: str) -> str:
    m = re.search(rf"^{name}='([^']+)'$", KIT.read_text(), re.MULTILINE)
    assert m, f"{name} not found in {KIT}"
    return m.group(1)


def test_the_compute_stage_runs_every_compute_row_once():
    """The wgmma rows run on their own, the others after them: together every compute row of a
    CUDA run, none twice (a row added later that neither pattern takes would go unmeasured)."""
    names = subprocess.run([str(BIN), "--list", "--device=0", "--filter=compute"], capture_output=True,
                           text=True).stdout.split()
    assert len(names) > 50, names
    wgmma, other = re.compile(_kit_pattern("KIT_WGMMA_ROWS")), re.compile(_kit_pattern("KIT_OTHER_COMPUTE_ROWS"))
    for n in names:
        assert bool(wgmma.search(n)) != bool(other.search(n)), n
    # hgemm, bf16gemm, hgemm unclustered: 9 sizes each; hgemm with direct stores: 4096^3 and 8192^3
    assert sum(1 for n in names if wgmma.search(n)) == 29
    # The wgmma rows' two runs (one block per tile, then clusters) take each of them once.
    single = re.compile(_kit_pattern("KIT_WGMMA_UNCLUSTERED_ROWS"))
    pair = re.compile(_kit_pattern("KIT_WGMMA_CLUSTERED_ROWS"))
    for n in names:
        if wgmma.search(n):
            assert bool(single.search(n)) != bool(pair.search(n)), n
    assert any(pair.search(n) and "wgmma_direct_store" in n for n in names), names


def test_a_hung_wgmma_check_is_left_out_of_the_rest_of_the_smoke_stage(tmp_path, stand_in_path):
    """A kernel check that never ends (the cluster kernel had never run on a GPU) costs its own
    limit only: the sanitizers and the quick run leave the wgmma kernels out, and say so."""
    r, out = run_stage(tmp_path, stand_in_path, "smoke",
                       checker='#!/bin/bash\necho "args: $*" >&2\n[[ "$1" == hgemm_wgmma ]] && exec sleep 600\nexit 0\n',
                       GPUBENCH_KIT_WGMMA_CHECK_SECONDS="2")
    assert r.returncode == 0, r.stderr
    summary = (out / "smoke.txt").read_text()
    hung = next(line for line in summary.splitlines() if line.startswith("kernel_check_wgmma "))
    assert "stopped at the" in hung, hung
    assert "wgmma: its kernel check did not finish" in summary
    with tarfile.open(out / "smoke.tar.gz") as t:
        racecheck = t.extractfile("smoke/sanitizer_racecheck.log").read().decode()
        quick = t.extractfile("smoke/quick_all.log").read().decode()
    assert "args: -wgmma" in racecheck
    assert "gpubench" in quick  # it ran, with the wgmma rows filtered out (no GPU: it refuses --device=0)


def test_a_stage_stops_starting_work_when_its_time_is_spent(tmp_path, stand_in_path):
    r, out = run_stage(tmp_path, stand_in_path, "ncu", GPUBENCH_KIT_STAGE_SECONDS="20")
    assert r.returncode == 0, r.stderr
    summary = (out / "ncu.txt").read_text()
    profiles = [line for line in summary.splitlines() if line.startswith("ncu_")]
    # copy, strided x2, gather, block_set_read, hgemm x2, wgmma x2, wgmma_unclustered x2,
    # wgmma_direct_store, cuBLAS's x2, sgemm x2
    assert len(profiles) == 16
    assert all(line.endswith("skipped: the stage ran out of time") for line in profiles), profiles


def test_a_failed_wgmma_check_is_left_out_too(tmp_path, stand_in_path):
    """A wgmma check that fails (an illegal address is sticky: every later row of the quick run
    would be skipped as device lost) is left out of the rest of the stage like a hung one."""
    r, out = run_stage(tmp_path, stand_in_path, "smoke",
                       checker='#!/bin/bash\necho "args: $*" >&2\n[[ "$1" == hgemm_wgmma ]] && exit 1\nexit 0\n')
    assert r.returncode == 0, r.stderr
    summary = (out / "smoke.txt").read_text()
    assert "wgmma: its kernel check failed (exit 1)" in summary
    with tarfile.open(out / "smoke.tar.gz") as t:
        assert "args: -wgmma" in t.extractfile("smoke/sanitizer_memcheck.log").read().decode()


def test_the_hopper_probe_runs_alone_and_its_diagnosis_reaches_the_summary(tmp_path, stand_in_path):
    """The probe of the wgmma GEMM's building blocks runs in a process of its own before the GEMM's
    checks; a failed probe brings its diagnosis into the summary and the GEMM's checks still run
    (their own result decides what the rest of the stage leaves out)."""
    checker = ('#!/bin/bash\necho "args: $*" >&2\n'
               'if [[ "$1" == wgmma_probe ]]; then\n'
               '  echo "ok   wgmma_probe tma A box"\n'
               '  echo "info wgmma_probe mma fp16: descriptors A lbo 16 sbo 1024 step 32, B lbo 1024: right"\n'
               '  echo "FAIL wgmma_probe mma fp16: 16384 of 16384 accumulator elements wrong"\n'
               '  echo "1 of 2 kernel checks passed"\n  exit 1\nfi\nexit 0\n')
    r, out = run_stage(tmp_path, stand_in_path, "smoke", checker=checker)
    assert r.returncode == 0, r.stderr
    summary = (out / "smoke.txt").read_text()
    probe = next(line for line in summary.splitlines() if line.startswith("wgmma_probe "))
    assert "exit 1" in probe, probe
    section = summary.split("== Hopper probe (the wgmma GEMM's building blocks)\n", 1)[1]
    section = section.split("\n== ", 1)[0]
    assert section.splitlines() == [
        "ok   wgmma_probe tma A box",
        "info wgmma_probe mma fp16: descriptors A lbo 16 sbo 1024 step 32, B lbo 1024: right",
        "FAIL wgmma_probe mma fp16: 16384 of 16384 accumulator elements wrong",
        "1 of 2 kernel checks passed"], section
    gemm = next(line for line in summary.splitlines() if line.startswith("kernel_check_wgmma "))
    assert "exit 0" in gemm, gemm
    assert "wgmma: its kernel check" not in summary  # the GEMM's checks passed: nothing left out
    with tarfile.open(out / "smoke.tar.gz") as t:
        assert "args: wgmma_probe" in t.extractfile("smoke/wgmma_probe.log").read().decode()
        assert "args: hgemm_wgmma" in t.extractfile("smoke/kernel_check_wgmma.log").read().decode()


def test_smoke_runs_the_quick_run_before_the_sanitizers_and_keeps_the_probe_from_them(tmp_path, stand_in_path):
    """With the wgmma checks passing: the quick run of every family (the stage's measurement)
    comes before the sanitizers, which may be slow over kernels they have not seen; the sanitizers
    check every kernel but the probe, whose bounded waits are meant for the bare GPU."""
    checker = '#!/bin/bash\necho "args: $*" >&2\necho "ok   $1 check"\necho "1 of 1 kernel checks passed"\nexit 0\n'
    r, out = run_stage(tmp_path, stand_in_path, "smoke", checker=checker)
    assert r.returncode == 0, r.stderr
    summary = (out / "smoke.txt").read_text()
    steps = [line.split()[0] for line in summary.splitlines() if " exit " in line]
    assert steps == ["kernel_check", "wgmma_probe", "kernel_check_wgmma", "quick_all", "sanitizer_memcheck",
                     "sanitizer_racecheck", "sanitizer_synccheck", "sanitizer_initcheck",
                     "quick_bandwidth_memcheck"], summary
    assert "wgmma: its kernel check" not in summary  # it passed: nothing left out
    with tarfile.open(out / "smoke.tar.gz") as t:
        for tool in ("memcheck", "racecheck", "synccheck", "initcheck"):
            log = t.extractfile(f"smoke/sanitizer_{tool}.log").read().decode()
            assert "args: -wgmma_probe" in log, (tool, log)


def test_smoke_says_where_the_quick_runs_time_went_before_the_sanitizers(tmp_path, stand_in_path):
    """The quick run's result goes through run_cost.py at once (the 10-second goal for --quick is
    read there), before the sanitizers that may take the rest of the stage. A stand-in gpubench
    stores a real result (a committed host run with the cost counters) as the quick run."""
    stored = sorted((ROOT / "results" / "host_amd-epyc_2cpu_24GiB").glob("20261124T124242Z_*.json"))
    assert stored, "the committed host result this test stores is gone"
    real = shlex.quote(str(stored[0]))
    gpubench = f"""#!/bin/bash
for a in "$@"; do
  case "$a" in
    --results-dir=*) d="${{a#--results-dir=}}/stand-in"; mkdir -p "$d"; cp {real} "$d/quick.json"
                     echo "result: $d/quick.json";;
  esac
done
exit 0
"""
    r, out = run_stage(tmp_path, stand_in_path, "smoke", gpubench=gpubench)
    assert r.returncode == 0, r.stderr
    summary = (out / "smoke.txt").read_text()
    steps = [line.split()[0] for line in summary.splitlines() if " exit " in line]
    assert steps.index("quick_all") + 1 == steps.index("run_cost_quick") < steps.index("sanitizer_memcheck"), summary
    assert "run_cost_quick               exit 0" in summary, summary
    section = summary.split("== scripts/run_cost.py (gpubench --quick)\n", 1)[1]
    # run_cost.py's own totals line and its table, from the stored result
    assert re.match(r"\S+quick\.json: \d+ benchmarks, [0-9.]+ s in benchmarks", section), section[:300]
    assert "| bandwidth/copy |" in section


def test_the_wgmma_stage_checks_then_measures_and_profiles_the_hopper_gemm(tmp_path, stand_in_path):
    """The fix loop for the Hopper GEMM: the probe and the GEMM's checks, then (they passed) its
    rows with and without clusters and a profile of each, and nothing of the other families."""
    checker = '#!/bin/bash\necho "args: $*" >&2\necho "ok   $1 check"\necho "1 of 1 kernel checks passed"\nexit 0\n'
    r, out = run_stage(tmp_path, stand_in_path, "wgmma", checker=checker)
    assert r.returncode == 0, r.stderr
    summary = (out / "wgmma.txt").read_text()
    steps = [line.split()[0] for line in summary.splitlines() if " exit " in line]
    assert steps == ["wgmma_probe", "kernel_check_wgmma", "compute_wgmma_unclustered", "compute_wgmma",
                     "ncu_wgmma_unclustered_4096", "ncu_wgmma_4096", "ncu_wgmma_direct_store_4096",
                     "ncu_cublas_hgemm_4096"], summary
    assert "ok   wgmma_probe check" in summary and "ok   hgemm_wgmma check" in summary
    assert "== ncu_wgmma_4096" in summary  # the profiles' figures section
    # cuBLAS's own kernel at 4096, picked by the names of cuBLAS's sm_90 kernels (none of ours).
    with tarfile.open(out / "wgmma.tar.gz") as tar:
        log = tar.extractfile("wgmma/ncu_cublas_hgemm_4096.log").read().decode()
    assert "-k regex:^(nvjet|sm90_xmma|cutlass) " in log, log
    assert "--filter=compute/hgemm/cublas/m:4096,n:4096,k:4096$ " in log, log


def test_the_compute_stage_runs_the_wgmma_rows_first_and_summarises_every_run(tmp_path, stand_in_path):
    r, out = run_stage(tmp_path, stand_in_path, "compute")
    assert r.returncode == 0, r.stderr
    summary = (out / "compute.txt").read_text()
    steps = [line.split()[0] for line in summary.splitlines() if " exit " in line]
    assert steps == ["compute_wgmma_unclustered", "compute_wgmma", "compute", "roofline"], summary
    sections = [line for line in summary.splitlines() if line.startswith("== gpubench --filter=")]
    assert sections == ["== gpubench --filter=" + s for s in steps], sections
    r, out = run_stage(tmp_path / "skip", stand_in_path, "compute", GPUBENCH_KIT_SKIP_WGMMA="1")
    summary = (out / "compute.txt").read_text()
    assert [line.split()[0] for line in summary.splitlines() if " exit " in line] == ["compute", "roofline"]
    assert "wgmma: left out (GPUBENCH_KIT_SKIP_WGMMA=1)" in summary


def test_the_wgmma_stage_stops_at_a_failed_check(tmp_path, stand_in_path):
    checker = ('#!/bin/bash\nif [[ "$1" == hgemm_wgmma ]]; then\n'
               '  echo "info hgemm_wgmma 300x520x136: 38400 of 156000 elements of C wrong, 38400 of them never written (NaN)"\n'
               '  echo "FAIL hgemm_wgmma fp16 300x520x136: C[0][192] = nan"\n  exit 1\nfi\nexit 0\n')
    r, out = run_stage(tmp_path, stand_in_path, "wgmma", checker=checker)
    assert r.returncode == 0, r.stderr
    summary = (out / "wgmma.txt").read_text()
    assert "wgmma: its kernel check did not pass (exit 1); no rows or profiles" in summary
    assert "info hgemm_wgmma 300x520x136: 38400 of 156000 elements of C wrong" in summary
    assert not any(line.startswith(("compute_wgmma", "ncu_")) for line in summary.splitlines()), summary


def test_skip_wgmma_leaves_the_wgmma_rows_and_profiles_out(tmp_path, stand_in_path):
    r, out = run_stage(tmp_path, stand_in_path, "ncu", GPUBENCH_KIT_STAGE_SECONDS="20", GPUBENCH_KIT_SKIP_WGMMA="1")
    assert r.returncode == 0, r.stderr
    summary = (out / "ncu.txt").read_text()
    profiles = [line.split()[0] for line in summary.splitlines() if line.startswith("ncu_")]
    assert len(profiles) == 11 and not any("wgmma" in p for p in profiles), profiles
    assert "ncu_cublas_hgemm_4096" in profiles  # cuBLAS's kernel is profiled all the same
    assert "wgmma: profiles left out (GPUBENCH_KIT_SKIP_WGMMA=1)" in summary


def test_a_shared_deadline_ends_a_stage_before_its_own_time(tmp_path, stand_in_path):
    """Two stages chained in one command: the deadline, not each stage's 480 s, bounds them."""
    import time
    r, out = run_stage(tmp_path, stand_in_path, "ncu", GPUBENCH_KIT_DEADLINE=str(int(time.time()) + 20))
    assert r.returncode == 0, r.stderr
    profiles = [line for line in (out / "ncu.txt").read_text().splitlines() if line.startswith("ncu_")]
    assert profiles and all(line.endswith("skipped: the stage ran out of time") for line in profiles), profiles
    r = kit("ncu", str(tmp_path / "o2"), env={"GPUBENCH_KIT_DEADLINE": "soon"})
    assert r.returncode == 2 and "GPUBENCH_KIT_DEADLINE=soon" in r.stderr


def test_a_stage_stopped_midway_still_brings_back_what_it_had(tmp_path, stand_in_path):
    """The device tool ends a command past its limit: the summary so far and the packed logs are in
    OUTDIR all the same."""
    import signal
    import time
    kit_dir = tmp_path / "kit"
    (kit_dir / "bin").mkdir(parents=True)
    os.symlink(BIN, kit_dir / "bin" / "gpubench")
    check = kit_dir / "bin" / "gpubench_kernel_check"
    check.write_text('#!/bin/bash\n[[ "$1" == hgemm_wgmma ]] && exec sleep 600\nexit 0\n')
    check.chmod(0o755)
    out = tmp_path / "out"
    env = dict(os.environ, PATH=stand_in_path, GPUBENCH_KIT_DIR=str(kit_dir), GPUBENCH_KIT_WGMMA_CHECK_SECONDS="300")
    p = subprocess.Popen(["bash", str(KIT), "smoke", str(out)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and "kernel_check " not in ((out / "smoke.txt").read_text()
                                                             if (out / "smoke.txt").exists() else ""):
        time.sleep(0.2)
    time.sleep(1.0)  # in the hanging wgmma check now
    os.killpg(p.pid, signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode != 0
    assert "stage ended early" in err
    summary = (out / "smoke.txt").read_text()
    assert any(line.startswith("kernel_check ") and "exit 0" in line for line in summary.splitlines()), summary
    with tarfile.open(out / "smoke.tar.gz") as t:
        assert "smoke/kernel_check.log" in t.getnames()


def test_a_kit_built_from_other_sources_is_refused(tmp_path, stand_in_path):
    kit_dir = tmp_path / "kit"
    (kit_dir / "bin").mkdir(parents=True)
    os.symlink(BIN, kit_dir / "bin" / "gpubench")
    os.symlink("/bin/true", kit_dir / "bin" / "gpubench_kernel_check")
    (kit_dir / "sources.list").write_text("CMakeLists.txt\n")
    (kit_dir / "sources.sha256").write_text("0" * 64 + "\n")
    out = tmp_path / "out"
    r = kit("smoke", str(out), env={"PATH": stand_in_path, "GPUBENCH_KIT_DIR": str(kit_dir)})
    assert r.returncode == 2
    assert "built from other sources than this tree's" in r.stderr
    assert "built from other sources" in (out / "smoke.txt").read_text()
    # the fingerprint prepare writes for these sources is accepted
    good = subprocess.run("sha256sum CMakeLists.txt | sha256sum | cut -d' ' -f1", shell=True, cwd=ROOT,
                          capture_output=True, text=True).stdout
    (kit_dir / "sources.sha256").write_text(good)
    r = kit("ncu", str(tmp_path / "o2"), env={"PATH": stand_in_path, "GPUBENCH_KIT_DIR": str(kit_dir),
                                              "GPUBENCH_KIT_STAGE_SECONDS": "20"})
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("var, value, says", [
    ("GPUBENCH_KIT_STAGE_SECONDS", "08", "GPUBENCH_KIT_STAGE_SECONDS=08 is not a whole number from 1 to 86400"),
    ("GPUBENCH_KIT_STAGE_SECONDS", "0", "GPUBENCH_KIT_STAGE_SECONDS=0 is not a whole number from 1 to 86400"),
    ("GPUBENCH_KIT_STAGE_SECONDS", "99999999999999999999", "is not a whole number from 1 to 86400"),
    ("GPUBENCH_KIT_STAGE_SECONDS", "", "GPUBENCH_KIT_STAGE_SECONDS is set but empty"),
    ("GPUBENCH_KIT_WGMMA_CHECK_SECONDS", "abc", "GPUBENCH_KIT_WGMMA_CHECK_SECONDS=abc is not a whole number"),
    ("GPUBENCH_KIT_WGMMA_CHECK_SECONDS", "-5", "GPUBENCH_KIT_WGMMA_CHECK_SECONDS=-5 is not a whole number"),
    ("GPUBENCH_KIT_WGMMA_CHECK_SECONDS", "0", "GPUBENCH_KIT_WGMMA_CHECK_SECONDS=0 is not a whole number"),
    ("GPUBENCH_KIT_LIMIT_MIB", "abc", "GPUBENCH_KIT_LIMIT_MIB=abc is not a whole number"),
    ("GPUBENCH_KIT_DEADLINE", "0999999999999", "GPUBENCH_KIT_DEADLINE=0999999999999 is not a whole number"),
    ("GPUBENCH_KIT_DEADLINE", "1", "GPUBENCH_KIT_DEADLINE=1 is "),
    ("GPUBENCH_KIT_SKIP_WGMMA", "yes", "GPUBENCH_KIT_SKIP_WGMMA=yes is not 0 or 1"),
    ("GPUBENCH_KIT_DIR", "", "GPUBENCH_KIT_DIR is set but empty"),
])
def test_a_bad_setting_is_one_line_before_any_work(tmp_path, stand_in_path, var, value, says):
    """Each went on with a default or failed mid-stage with a bash error (08 as a bad octal
    number), after the telemetry had started; a deadline in the past packed an empty stage, exit 0."""
    kit_dir = tmp_path / "kit"
    (kit_dir / "bin").mkdir(parents=True)
    os.symlink(BIN, kit_dir / "bin" / "gpubench")
    out = tmp_path / "out"
    r = kit("memory", str(out), env={"PATH": stand_in_path, "GPUBENCH_KIT_DIR": str(kit_dir), var: value})
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith("device_kit: ") and says in lines[0], r.stderr
    assert not out.exists() or not any(out.iterdir())
    if var == "GPUBENCH_KIT_DEADLINE" and value == "1":
        assert lines[0].endswith(" s in the past"), lines[0]


def test_a_stage_without_a_kit_says_so_before_any_work(tmp_path, stand_in_path):
    """It started a CMake build on the GPU machine (device time), its failure written only into the
    summary; nothing on stderr."""
    (tmp_path / "stand-ins" / "cmake").write_text(f"#!/bin/bash\necho called >>{tmp_path}/cmake.log\nexit 1\n")
    (tmp_path / "stand-ins" / "cmake").chmod(0o755)
    empty = tmp_path / "nokit"
    empty.mkdir()
    out = tmp_path / "out"
    r = kit("smoke", str(out), env={"PATH": stand_in_path, "GPUBENCH_KIT_DIR": str(empty)})
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"device_kit: no kit in {empty}: run scripts/device_kit.sh prepare on the build machine, then carry .kit"]
    assert not (tmp_path / "cmake.log").exists() and not out.exists()


def test_a_stage_refuses_an_output_folder_that_cannot_take_its_files_before_any_work(tmp_path, stand_in_path):
    """An earlier run's files were replaced; a folder already too full, or a file, was found only
    when packing, after the whole stage had run."""
    def stage(out: Path) -> subprocess.CompletedProcess:
        kit_dir = tmp_path / "kit"
        if not kit_dir.exists():
            (kit_dir / "bin").mkdir(parents=True)
            os.symlink(BIN, kit_dir / "bin" / "gpubench")
        return kit("memory", str(out), env={"PATH": stand_in_path, "GPUBENCH_KIT_DIR": str(kit_dir)})

    earlier = tmp_path / "earlier"
    earlier.mkdir()
    (earlier / "memory.txt").write_text("an earlier run")
    full = tmp_path / "full"
    full.mkdir()
    for i in range(7):
        (full / f"f{i}.txt").write_text("x")
    afile = tmp_path / "afile"
    afile.write_text("keep")
    for out, says in ((earlier, "already holds a memory stage's files; results are never overwritten"),
                      (full, "holds 7 files: with this stage's 2, more than the 8 that come back"),
                      (afile, f"cannot create '{afile}'")):
        r = stage(out)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and says in lines[0], r.stderr
    assert (earlier / "memory.txt").read_text() == "an earlier run" and len(list(full.iterdir())) == 7
    assert afile.read_text() == "keep"


def test_pack_refuses_the_root_its_own_folder_and_an_earlier_pack(tmp_path):
    work = tmp_path / "w" / "bandwidth"
    work.mkdir(parents=True)
    (work / "summary.txt").write_text("s\n")
    out = tmp_path / "out"
    for args, says in ((["/", str(out)], "is the root folder"), ([str(work), str(work / "o")], "inside the stage's folder")):
        r = kit("pack", *args)
        assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert kit("pack", str(work), str(out)).returncode == 0
    before = (out / "bandwidth.tar.gz").read_bytes()
    r = kit("pack", str(work), str(out))
    assert r.returncode == 2 and "results are never overwritten" in r.stderr, r.stderr
    assert (out / "bandwidth.tar.gz").read_bytes() == before


@needs_cuda_build
def test_prepare_never_replaces_a_folder_that_is_not_a_kit(tmp_path):
    """prepare removed whatever GPUBENCH_KIT_DIR named, a folder of notes or a file, before
    writing the kit there."""
    notes = tmp_path / "precious"
    notes.mkdir()
    (notes / "notes.txt").write_text("mine")
    afile = tmp_path / "afile"
    afile.write_text("keep")
    for target, says in ((notes, "holds files but no kit"), (afile, "is not a folder")):
        r = kit("prepare", str(BUILD), env={"GPUBENCH_KIT_DIR": str(target)})
        assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert (notes / "notes.txt").read_text() == "mine" and afile.read_text() == "keep"


def test_a_packed_stage_leaves_no_working_folder_behind(tmp_path, stand_in_path):
    """Each stage left its mktemp folder (every log, result and profile) in /tmp once packed."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    r, out = run_stage(tmp_path, stand_in_path, "ncu", GPUBENCH_KIT_STAGE_SECONDS="20", TMPDIR=str(tmp))
    assert r.returncode == 0, r.stderr
    assert (out / "ncu.tar.gz").is_file() and (out / "ncu.txt").is_file()
    assert list(tmp.iterdir()) == []
