"""The fleet batch script under a REAL Slurm (slurm_cluster.py: munged, slurmctld and slurmd
started as root on this machine): a 3-task job array runs gpubench (host backend, --quick, a
small filter) into a results store, fleet.py reads what it wrote; then a task whose gpubench
fails leaves a failure record that fleet.py reports as FAILED. Without the Slurm packages the
test fails, saying what to install (scripts/test.sh installs them).

And, without Slurm, the script's failure record when gpubench writes hostile stderr.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, ROOT, run_script
from slurm_cluster import SlurmCluster, SlurmSetupError

SCRIPT = ROOT / "scripts" / "slurm" / "gpubench_fleet.sbatch"
#: A quick host run with a headline (the copy kernel's sizes: DRAM copy, cache plateau).
QUICK_ARGS = "--quick --filter=^bandwidth/copy/kernel/ --benchmark_repetitions=1"
TASKS = 3


@pytest.fixture
def cluster(request):
    """A one-node cluster, not started yet (start_cluster() in the test, so that a machine
    without Slurm FAILS the test rather than erroring in setup); whatever it started is stopped,
    and its folder removed, however the test ends."""
    c = SlurmCluster()

    def finish():
        c.stop()
        c.remove()

    request.addfinalizer(finish)
    return c


def start_cluster(c: SlurmCluster) -> None:
    """Starts the cluster, or fails the test saying what is missing."""
    try:
        c.start()
    except SlurmSetupError as e:
        pytest.fail(str(e), pytrace=False)


def job_env(store: Path, **more: str) -> dict:
    """The batch script's configuration for the host backend."""
    assert BIN.exists(), f"gpubench binary not found at {BIN} (build first, or set GPUBENCH_BIN)"
    return {"GPUBENCH_BIN": str(BIN.resolve()), "GPUBENCH_STORE": str(store),
            "GPUBENCH_DEVICE": "host", "GPUBENCH_ARGS": QUICK_ARGS, **more}


def test_a_job_array_fills_the_store_and_fleet_reads_it(cluster, tmp_path):
    start_cluster(cluster)
    store, logs = tmp_path / "store", tmp_path / "logs"
    logs.mkdir()
    job = cluster.submit(SCRIPT, f"--array=0-{TASKS - 1}", "--nodes=1",
                         f"--output={logs}/%A_%a.out", f"--chdir={tmp_path}",
                         env=job_env(store))
    states = cluster.wait(job, timeout=60)
    assert sorted(states) == [f"{job}_{i}" for i in range(TASKS)], states
    assert set(states.values()) == {("COMPLETED", "0:0")}, (states, cluster.logs())
    results = sorted(store.glob("*/*.json"))
    assert len(results) == TASKS, [p.name for p in store.rglob("*")]
    assert not (store / "_failed").exists()
    for out in sorted(logs.iterdir()):
        assert f"gpubench-fleet: node {cluster.node}," in out.read_text()

    report = tmp_path / "fleet.md"
    proc = run_script("fleet.py", store, "--nodes", cluster.node, "--markdown", report,
                      "--json", tmp_path / "fleet.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"- nodes: {cluster.node}" in proc.stdout and proc.stdout == report.read_text()
    assert "1 node, 1 GPU" in proc.stdout  # the three runs are one (node, GPU): the newest
    assert "too few GPUs for statistics" in proc.stdout
    doc = json.loads((tmp_path / "fleet.json").read_text())
    assert doc["files_read"] == TASKS and doc["gpus"] == [f"{cluster.node}:host"]

    # A task whose gpubench fails: a failure record, and the node FAILED.
    job = cluster.submit(SCRIPT, "--array=0", "--nodes=1", f"--output={logs}/%A_%a.out",
                         f"--chdir={tmp_path}",
                         env=job_env(store, GPUBENCH_ARGS="--quick --frobnicate"))
    states = cluster.wait(job, timeout=60)
    assert states == {f"{job}_0": ("FAILED", "2:0")}, (states, cluster.logs())
    (record,) = (store / "_failed").iterdir()
    assert record.name == f"{cluster.node}_{job}_0.json"
    failure = json.loads(record.read_text())
    assert failure["exit_status"] == 2 and failure["job_id"] == job
    # gpubench names the bad flag first, then prints its usage: the head keeps that line.
    assert "frobnicate" in failure["stderr_head"][0], failure
    assert len(failure["stderr_tail"]) == 20, failure  # GPUBENCH_STDERR_LINES, by default
    proc = run_script("fleet.py", store, "--expect", "1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"**FAILED** {cluster.node}: gpubench exited with status 2 (job {job}, task 0)" \
        in proc.stdout
    assert "frobnicate" in proc.stdout
    assert proc.stderr.startswith(f"fleet.py: FAILED: {cluster.node}: ")


def test_the_failure_record_survives_hostile_stderr(tmp_path):
    """Run outside Slurm: quotes, backslashes, tabs, control characters and bytes that are not
    UTF-8 in gpubench's stderr still make a record fleet.py reads."""
    fake = tmp_path / "fake-gpubench"
    fake.write_text("#!/bin/sh\n"
                    "printf 'say \"hi\" C:\\\\tmp\\ttab\\001\\377\\376 end\\n' >&2\n"
                    "printf 'last line, no newline' >&2\n"
                    "exit 3\n")
    fake.chmod(0o755)
    store = tmp_path / "store"
    proc = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=60,
                          errors="replace",
                          env={"PATH": "/usr/bin:/bin", "GPUBENCH_BIN": str(fake),
                               "GPUBENCH_STORE": str(store), "GPUBENCH_ARGS": "--quick"})
    assert proc.returncode == 3, proc.stderr
    (record,) = (store / "_failed").iterdir()
    assert record.name.endswith("_local_0.json")
    doc = json.loads(record.read_bytes().decode("utf-8", errors="replace"))
    assert doc["exit_status"] == 3 and doc["command"].endswith("--device=all "
                                                               f"--results-dir={store} --quick")
    assert doc["stderr_head"] == []  # two lines: all of them in the tail
    first, last = doc["stderr_tail"]
    assert first.startswith('say "hi" C:\\tmp\ttab') and first.endswith(" end")
    assert last == "last line, no newline"
    fleet = run_script("fleet.py", store)
    assert fleet.returncode == 1 and "gpubench exited with status 3" in fleet.stdout, fleet.stderr


def test_a_stderr_line_count_out_of_range_is_refused(tmp_path):
    """Twenty digits pass a digits-only check and then overflow bash's arithmetic into an empty
    stderr_tail, losing gpubench's error: refused in one line, before anything runs."""
    # 08: bash reads a bad octal number (a failure record that is not JSON); 010 is 8 to bash, 10 to tail.
    for bad in ("99999999999999999999", "1234567", "-1", "ten", "08", "010"):
        proc = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=60,
                              env={"PATH": "/usr/bin:/bin", "GPUBENCH_BIN": "/bin/false",
                                   "GPUBENCH_STORE": str(tmp_path / "store"), "GPUBENCH_STDERR_LINES": bad})
        assert proc.returncode == 2, (bad, proc.stderr)
        assert proc.stderr.strip().splitlines() == [
            f"gpubench-fleet: GPUBENCH_STDERR_LINES='{bad}' is not a whole number up to 999999"], proc.stderr
        assert not (tmp_path / "store").exists()
