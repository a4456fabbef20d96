"""scripts/run.sh, the README's main command, with the arguments a user adds: gpubench's own
answers (--version, --list) come straight from gpubench, --filter replaces the bandwidth default
instead of being given twice, and --out (which the store-and-plot pipeline cannot follow) is one
line and exit 2 before anything is built or run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

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


def test_a_repeated_or_empty_option_is_one_line_before_anything_runs(tmp_path):
    # gpubench refuses a flag given twice; run.sh took the last one silently, and an empty
    # --results-dir failed in mkdir with exit 1
    for args, says in ((["--filter=a", "--filter=b"], "--filter given twice"),
                       (["--filter=a", "--benchmark_filter=b"], "--filter given twice"),
                       (["--filter", "a", "--filter=b"], "--filter given twice"),
                       ([f"--results-dir={tmp_path}/x", f"--results-dir={tmp_path}/y"], "--results-dir given twice"),
                       (["--results-dir="], "--results-dir has an empty value"),
                       # a forgotten value: "--filter --quick" had become a filter matching every
                       # row, a full-size run of every family
                       (["--filter", "--quick"], "--filter needs a value (got the flag --quick)"),
                       (["--results-dir", "--list"], "--results-dir needs a value (got the flag --list)")):
        r = run_sh(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.strip().splitlines() == [f"error: run.sh: {says}"], (args, r.stderr)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("spaced", [False, True])
def test_a_relative_results_dir_is_the_callers(tmp_path, spaced):
    """As for gpubench itself, --results-dir=store means the caller's ./store, not the repository's;
    "--results-dir store" and "--filter X" are taken too, as the Python scripts take them (they
    reached gpubench as a bare flag, refused after the build)."""
    options = (["--results-dir", "store", "--filter", "bandwidth/copy/kernel/bytes:4KiB$"] if spaced
               else ["--results-dir=store", "--filter=bandwidth/copy/kernel/bytes:4KiB$"])
    r = subprocess.run(["bash", str(RUN), "--quick", "--device=host", *options],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    results = list((tmp_path / "store").glob("*/*.json"))
    assert r.returncode == 0, r.stderr
    assert len(results) == 1, r.stdout + r.stderr
    assert f"result JSON:  {results[0]}" in r.stdout
    assert not (ROOT / "store").exists()
    # the plots and the report go beside the store (its sibling plots/, as nightly.py's reports),
    # not into the checkout's plots/
    key, stem = results[0].parent.name, results[0].stem
    plots = tmp_path / "plots" / key
    assert f"HTML report:  {plots / stem}.html" in r.stdout
    assert (plots / f"{stem}.html").is_file() and (plots / f"{stem}_bandwidth.png").is_file()
    assert not list((ROOT / "plots" / key).glob(f"{stem}*"))


def test_a_signal_to_run_sh_stops_gpubench_beneath_it(tmp_path):
    """run.sh ran gpubench in the foreground: a TERM or HUP ended run.sh at once and left gpubench
    running on, to publish its result later into the store. Now gpubench is stopped (it removes
    its temporary result and says so) and run.sh exits 128 + the signal."""
    import signal
    import time

    store = tmp_path / "store"
    proc = subprocess.Popen(["bash", str(RUN), "--quick", "--device=host", f"--results-dir={store}",
                             "--filter=bandwidth/copy/kernel/bytes:4KiB$", "--benchmark_min_warmup_time=20"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    def gpubench_running() -> bool:  # a gpubench process writing into this store
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                argv = cmdline.read_bytes().split(b"\0")
            except OSError:
                continue
            if argv and argv[0].endswith(b"/gpubench") and f"--results-dir={store}".encode() in argv:
                return True
        return False

    try:
        deadline = time.monotonic() + 300  # run.sh checks the build and the environment first
        while not gpubench_running():
            assert time.monotonic() < deadline and proc.poll() is None, "gpubench never started"
            time.sleep(0.2)
        # gpubench's console header, through run.sh: printed once its stop handlers are in place
        # (a fixed sleep could end first on a loaded machine).
        for line in proc.stdout:
            if line.startswith("gpubench ") and "backend" in line:
                break
        else:
            pytest.fail("gpubench printed no header")
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "gpubench: interrupted (SIGTERM); no result written" in err
    time.sleep(2)  # had gpubench run on, its result would land meanwhile
    assert [p for p in store.rglob("*") if p.is_file()] == []


def test_a_results_dir_that_is_a_file_or_in_the_home_folder(tmp_path, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    r = run_sh(f"--results-dir={afile}", "--quick", "--device=host")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [f"error: run.sh: --results-dir {afile}: not a folder"]
    # "~/x" after "=" reaches run.sh unexpanded: it means the home folder, never a folder named "~"
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    r = subprocess.run(["bash", str(RUN), "--quick", "--device=host", "--results-dir=~/store",
                        "--filter=bandwidth/copy/kernel/bytes:4KiB$"],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    results = list((home / "store").glob("*/*.json"))
    assert r.returncode == 0, r.stderr
    assert len(results) == 1 and not (tmp_path / "~").exists()
    assert (home / "plots" / results[0].parent.name / f"{results[0].stem}.html").is_file()


def test_a_results_dir_that_cannot_be_made_is_one_line_before_the_build(tmp_path):
    """Under a file (or on a read-only folder) the store was found impossible only after the build,
    minutes on a fresh clone: the build's step line shows whether it came first."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    r = run_sh(f"--results-dir={afile}/sub", "--quick", "--device=host")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: run.sh: --results-dir {afile}/sub: cannot create it or write there"], r.stderr
    assert afile.read_text() == "x"


def test_plots_beside_a_store_that_cannot_take_them_is_one_line_before_the_run(tmp_path):
    """The plots go to the store's sibling plots/: where that is a file, run.sh says so and stops
    before gpubench runs (a result without its plots would be half a job). "store/." is the store
    itself, so its sibling is sub/plots, not store/plots (a device-key folder to the tools)."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "plots").write_text("a file of the user's")
    r = subprocess.run(["bash", str(RUN), "--quick", "--device=host", "--results-dir=sub/store/.",
                        "--filter=bandwidth/copy/kernel/bytes:4KiB$"],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    store = tmp_path / "sub" / "store"
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"error: run.sh: {tmp_path}/sub/plots: not a folder (the plots go beside --results-dir {store})"]
    assert (tmp_path / "sub" / "plots").read_text() == "a file of the user's"
    assert not list(store.rglob("*.json"))


def test_every_result_of_a_run_is_drawn_and_reported(host_result, tmp_path):
    """--device=all publishes one or two results per GPU ("result: PATH" lines): run.sh drew only
    the last. Its drawing step (scripts/lib/draw_results.sh) draws each, once, in order."""
    import os
    import sys

    store = tmp_path / "store"
    results = []
    for key, stem in (("gpu_a", "20261124T000000Z_aaa"), ("gpu_b", "20261124T000000Z_aaa.links")):
        (store / key).mkdir(parents=True)
        results.append(store / key / f"{stem}.json")
        results[-1].write_bytes(host_result.read_bytes())
    log = tmp_path / "gpubench.log"
    log.write_text("".join(f"gpubench: a line\nresult: {r}\n" for r in results) + f"result: {results[0]}\n")
    venv = Path(sys.executable).parent.parent
    script = f'source "{ROOT}/scripts/lib/draw_results.sh"; set -euo pipefail; draw_results "$1" "$2"'
    r = subprocess.run(["bash", "-c", script, "draw", str(log), str(tmp_path / "plots")], capture_output=True,
                       text=True, timeout=600, cwd=ROOT, env=dict(os.environ, GPUBENCH_VENV=str(venv)))
    assert r.returncode == 0, r.stderr
    assert [line.split(None, 2)[2] for line in r.stdout.splitlines() if line.startswith("result JSON:")] == [
        str(p) for p in results]
    for p in results:
        html = tmp_path / "plots" / p.parent.name / f"{p.stem}.html"
        assert f"HTML report:  {html}" in r.stdout and html.is_file()
        assert (tmp_path / "plots" / p.parent.name / f"{p.stem}.png").is_file()


@pytest.mark.parametrize("var, value, says", [
    ("GPUBENCH_JOBS", "abc", "GPUBENCH_JOBS=abc is not a whole number of jobs from 1 to 9999"),
    ("GPUBENCH_JOBS", "0", "GPUBENCH_JOBS=0 is not a whole number of jobs from 1 to 9999"),
    ("GPUBENCH_JOBS", "", "GPUBENCH_JOBS is set but empty (unset it for the default)"),
    ("GPUBENCH_VENV", "{file}", "GPUBENCH_VENV={file} is not a folder"),
    ("GPUBENCH_VENV", "", "GPUBENCH_VENV is set but empty (unset it for the default)"),
])
@pytest.mark.parametrize("script", ["run.sh", "test.sh"])
def test_a_bad_setting_is_one_line_before_any_work(tmp_path, script, var, value, says):
    """A bad GPUBENCH_JOBS failed only after a configure, with cmake's usage; a GPUBENCH_VENV that
    names a file was blamed on a missing python3-venv; an empty one silently meant the default."""
    afile = tmp_path / "afile"
    afile.write_text("keep")
    env = dict(os.environ, **{var: value.format(file=afile)})
    proc = subprocess.run(["bash", str(ROOT / "scripts" / script)], capture_output=True, text=True, timeout=60,
                          env=env, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: {says.format(file=afile)}"], proc.stderr
    assert afile.read_text() == "keep"
