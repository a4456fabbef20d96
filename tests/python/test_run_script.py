"""scripts/run.sh, the README's main command, with the arguments a user adds: gpubench's own
answers (--version, --list) come straight from gpubench, --filter replaces the bandwidth default
instead of being given twice, and --out (which the store-and-plot pipeline cannot follow) is one
line and exit 2 before anything is built or run."""

from __future__ import annotations

import subprocess

from conftest import BIN, ROOT

RUN = ROOT / "scripts" / "run.sh"


def run_sh(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(RUN), *args], capture_output=True, text=True, timeout=600, cwd=ROOT)


def test_gpubench_answers_pass_through():
    version = run_sh("--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout == subprocess.run([str(BIN), "--version"], capture_output=True, text=True).stdout
    assert "wrote no result" not in version.stderr
    listed = run_sh("--list", "--quick", "--device=host", "--filter=bandwidth/chase")
    assert listed.returncode == 0, listed.stderr
    names = listed.stdout.split()
    assert names and all(n.startswith("bandwidth/chase/") for n in names), names  # the user's filter, once


def test_out_is_refused_before_anything_runs(tmp_path):
    r = run_sh(f"--out={tmp_path / 'r.json'}")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "error: run.sh keeps every result in its store (--results-dir=DIR, default results/); --out is gpubench's own flag"]
    assert list(tmp_path.iterdir()) == []
