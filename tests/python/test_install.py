"""`cmake --install` as a user runs it: gpubench lands in bin/ with the Python tools and the card
table beside it, and the installed copy runs, finds its card table and plots without the source
tree. The build is the one GPUBENCH_BIN comes from (gpubench sits at the top of its build tree)."""

import os
import subprocess
import sys

import pytest

from conftest import BIN


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    build = BIN.resolve().parent
    assert (build / "CMakeCache.txt").is_file(), f"gpubench at {BIN} is not at the top of a CMake build tree"
    prefix = tmp_path_factory.mktemp("prefix")
    proc = subprocess.run(["cmake", "--install", str(build), "--prefix", str(prefix)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return prefix / "bin"


def test_gpubench_the_tools_and_the_card_table_are_side_by_side(installed):
    for name in ("gpubench", "plot.py", "roofline.py", "compare.py", "nightly.py", "report.py", "run_cost.py",
                 "validate.py", "fleet.py", "p2p_matrix.py", "slurm/gpubench_fleet.sbatch", "cards.csv", "bands.csv",
                 "gpubench_tools/results.py", "gpubench_tools/acceptance.py"):
        assert (installed / name).is_file(), name
    version = subprocess.run([str(installed / "gpubench"), "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("gpubench ")


def test_the_installed_tools_read_the_installed_card_table(installed, tmp_path):
    # A copy of the install elsewhere, with its card table edited: the tools must read that one.
    copy = tmp_path / "bin"
    subprocess.run(["cp", "-r", str(installed), str(copy)], check=True)
    with open(copy / "cards.csv", "a") as f:
        first = (installed / "cards.csv").read_text().splitlines()[1].split(",")
        first[0] = "installed_only_card"
        f.write(",".join(first) + "\n")
    proc = subprocess.run([sys.executable, str(copy / "roofline.py"), "--list-cards"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "installed_only_card" in proc.stdout


def test_the_installed_gpubench_runs_and_its_tools_plot_the_result(installed, tmp_path):
    out = tmp_path / "r.json"
    run = subprocess.run([str(installed / "gpubench"), "--device=host", "--quick", "--filter=^bandwidth/copy/kernel/",
                          f"--out={out}"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    plot = subprocess.run([sys.executable, str(installed / "plot.py"), str(out), "--out-dir", str(tmp_path / "plots")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert plot.returncode == 0, plot.stderr
    assert list((tmp_path / "plots").glob("*_bandwidth.png"))


def test_the_installed_nightly_runs_the_gpubench_beside_it(installed, tmp_path):
    # No GPUBENCH_BIN, no --gpubench, run from elsewhere: the gpubench in PREFIX/bin, not a
    # build tree's build/gpubench (which an installed tree has none of).
    env = {k: v for k, v in os.environ.items() if k != "GPUBENCH_BIN"}
    proc = subprocess.run([sys.executable, str(installed / "nightly.py"), "--device", "host", "--quick",
                           "--filter", "^bandwidth/copy/kernel/bytes:4KiB$", "--repetitions", "2",
                           "--results-dir", str(tmp_path / "results"), "--allow-empty-history"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "no baseline yet" in proc.stdout and len(list((tmp_path / "results").rglob("*.json"))) == 1
