"""Shared fixtures of the Python tests: the scripts on sys.path, real host runs of gpubench (and
of its planted-workload twins), helpers to run the CLIs and to derive modified result files from
real ones."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))

BIN = Path(os.environ.get("GPUBENCH_BIN", ROOT / "build" / "gpubench"))
#: GPUBENCH_BIN is <build>/gpubench; the planted-workload test executables are in <build>/tests/e2e/.
E2E_DIR = BIN.resolve().parent / "tests" / "e2e"
#: What the shared real host run measures.
HOST_FILTER = "^(bandwidth/(copy|write|strided|pcie_h2d)/|roofline/intensity(_fp32/|/fp32/))"
#: Throughput counters scaled together when a test derives a slower/faster result.
THROUGHPUT_COUNTERS = ("GB/s", "sector_GB/s", "TFLOPS", "pct_of_peak", "pct_of_cublas")


def stale_build_reason(binary: Path, root: Path) -> str:
    """Why `binary`, a build of `root`, is not a build of root's checked-out commit ("" when it is,
    or is no build of `root`). The tests of scripts/run.sh bring build/gpubench up to date: after a
    commit, that relink (the revision is compiled in) ran while other workers executed the binary,
    and they failed with EACCES."""
    header = binary.parent / "generated" / "version.h"
    cache = binary.parent / "CMakeCache.txt"
    if not binary.exists() or not header.exists() or not cache.exists():
        return ""
    if f"CMAKE_HOME_DIRECTORY:INTERNAL={root}\n" not in cache.read_text(errors="replace"):
        return ""
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                          text=True, timeout=60)
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, timeout=60)
    built = re.search(r'GPUBENCH_GIT_REVISION "([0-9a-f]+(-dirty)?)"', header.read_text(errors="replace"))
    if head.returncode != 0 or dirty.returncode != 0 or not built:
        return ""
    # As cmake/WriteVersion.cmake writes it: the commit, "-dirty" for tracked changes.
    now = head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    if built.group(1) == now:
        return ""
    return (f"{binary} was built at git {built.group(1)}, the checkout is at {now}: build it "
            f"first (cmake --build {binary.parent}); the run.sh tests would relink it while other tests run it")


def pytest_sessionstart(session):
    if reason := stale_build_reason(BIN, ROOT):
        pytest.exit(reason, returncode=2)


def gpubench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Runs the real gpubench binary."""
    assert BIN.exists(), f"gpubench binary not found at {BIN} (build first, or set GPUBENCH_BIN)"
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=timeout)


def planted_run(binary: Path, out_dir: Path, flt: str,
                missing: str = "") -> tuple[subprocess.CompletedProcess, dict]:
    """A quick host run on `flt` of gpubench or of a planted-workload twin in E2E_DIR
    (gpubench_faulty, gpubench_leaky: tests/e2e): the run and the result file it must have
    written to out_dir/result.json, parsed (`missing`: what a missing file means)."""
    # A build without the twin is a failure, never a skip: what it plants would go untested.
    assert binary.exists(), (f"{binary} not found: build the gpubench, gpubench_faulty and gpubench_leaky "
                             f"targets of the build that GPUBENCH_BIN ({BIN}) belongs to")
    out = out_dir / "result.json"
    r = subprocess.run([str(binary), "--device=host", "--quick", f"--filter={flt}", f"--out={out}"],
                       capture_output=True, text=True, timeout=300)
    assert out.exists(), f"{missing}\n{r.stderr}" if missing else r.stderr
    return r, json.loads(out.read_text())  # valid JSON, after the end-of-run insertion too


def iterations(doc: dict) -> dict[str, list[dict]]:
    """The per-repetition entries of a result document, by benchmark name (without /manual_time)."""
    rows: dict[str, list[dict]] = {}
    for e in doc["benchmarks"]:
        if e.get("run_type") == "iteration":
            rows.setdefault(e["run_name"].removesuffix("/manual_time"), []).append(e)
    return rows


def run_script(name: str, *args: str, cwd: Path | None = None,
               env: dict | None = None) -> subprocess.CompletedProcess:
    """Runs scripts/<name> with this interpreter, as a user would."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, str(SCRIPTS / name), *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=full_env, timeout=300)


def cli(name: str, *args) -> tuple[int, str, str]:
    """Runs a CLI's main() in this process (no interpreter start, matplotlib imported once):
    (exit status, stdout, stderr), with errors mapped exactly as the script does."""
    import contextlib
    import importlib
    import io

    from gpubench_tools.errors import run_cli

    module = importlib.import_module(name.removesuffix(".py"))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = run_cli(name, module.main, [str(a) for a in args])
        except SystemExit as e:  # argparse errors exit from inside main()
            code = e.code
    return code, out.getvalue(), err.getvalue()


def scaled(doc: dict, bench: str, factor: float) -> dict:
    """A copy of a result document with one benchmark's throughput multiplied by `factor`
    (every repetition and the mean/median/stddev aggregates; cv is scale-free)."""
    out = json.loads(json.dumps(doc))
    hit = 0
    for e in out["benchmarks"]:
        if (e.get("run_name") or e["name"]).startswith(bench + "/") \
                and e.get("aggregate_name") != "cv":
            for k in THROUGHPUT_COUNTERS:
                if isinstance(e.get(k), (int, float)):
                    e[k] *= factor
                    hit += 1
    assert hit, f"{bench} not in the document"
    return out


def another_run(doc: dict, tag: str = "2") -> dict:
    """The document as another run of the same benchmarks would write it (another date)."""
    other = json.loads(json.dumps(doc))
    other["context"]["date"] = f"{other['context'].get('date', '')} (run {tag})"
    return other


def errored(doc: dict, bench: str, message: str) -> dict:
    """A copy of a result document in which one benchmark ended with `message` as gpubench
    writes it (SkipWithError): one entry per repetition with error_occurred and the message, no
    counters, no aggregates. "verification failed: ..." is a wrong output, "skipped: ..." a row
    the harness did not run."""
    out = json.loads(json.dumps(doc))
    keep = ("name", "family_index", "per_family_instance_index", "run_name", "run_type",
            "repetitions", "repetition_index", "threads", "label")
    entries, hit = [], 0
    for e in out["benchmarks"]:
        if (e.get("run_name") or e["name"]).startswith(bench + "/"):
            if e.get("run_type") == "aggregate":
                continue
            e = {k: e[k] for k in keep if k in e}
            e.update(iterations=0, real_time=0, cpu_time=0, time_unit="ms", error_occurred=True,
                     error_message=message)
            hit += 1
        entries.append(e)
    assert hit, f"{bench} not in the document"
    out["benchmarks"] = entries
    return out


@pytest.fixture(scope="session")
def host_result(tmp_path_factory) -> Path:
    """A real quick host run with 5 repetitions of the benchmarks every plot and comparison
    test needs (the filter keeps it to seconds as the tables grow)."""
    out = tmp_path_factory.mktemp("host") / "host_quick.json"
    proc = gpubench("--device=host", "--quick", "--benchmark_repetitions=5", f"--out={out}",
                    f"--filter={HOST_FILTER}")
    assert proc.returncode == 0 and out.exists(), proc.stderr[-2000:]
    return out


@pytest.fixture(scope="session")
def host_doc(host_result) -> dict:
    """The real host run as parsed JSON."""
    return json.loads(host_result.read_text())
