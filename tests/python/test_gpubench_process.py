"""validate.py and nightly.py stop a gpubench run the way it can clean up: SIGTERM, a grace
period, a second SIGTERM, then SIGKILL (gpubench_tools/gpubench_process.py), and forward the
script's own Ctrl-C or SIGTERM the same way; no temporary result file (`*.json.tmp.<pid>`) is
left in the results store."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import E2E_DIR, SCRIPTS, cli
from gpubench_tools import gpubench_process


def temporaries(store: Path) -> list[str]:
    return sorted(p.name for p in store.rglob("*.tmp.*"))


def fake_gpubench(tmp_path: Path, on_signal: str) -> Path:
    """A stand-in for gpubench: writes a temporary result as gpubench does
    (<store>/<key>/<name>.json.tmp.<its pid>), then runs until stopped. on_signal="ignore":
    it ignores SIGTERM and SIGINT (a process stuck in the driver), so only SIGKILL ends it;
    "clean": on either it records the signal in <store>/signals, removes its file and exits."""
    exe = tmp_path / f"fake_gpubench_{on_signal}"
    traps = {
        "ignore": "trap '' TERM INT",
        "clean": "trap 'echo INT >> \"$R/signals\"; rm -f \"$tmp\"; exit 130' INT\n"
                 "trap 'echo TERM >> \"$R/signals\"; rm -f \"$tmp\"; exit 143' TERM",
    }[on_signal]
    exe.write_text(f"""#!/bin/sh
for a in "$@"; do case "$a" in --results-dir=*) R="${{a#--results-dir=}}";; esac; done
mkdir -p "$R/key"
tmp="$R/key/20260101T000000Z_fake.json.tmp.$$"
: > "$tmp"
{traps}
: > "$R/started"
while :; do sleep 0.1; done
""")
    exe.chmod(0o755)
    return exe


@pytest.fixture
def short_grace(monkeypatch):
    monkeypatch.setattr(gpubench_process, "GRACE_S", 0.5)
    monkeypatch.setattr(gpubench_process, "SECOND_GRACE_S", 0.5)


def test_a_gpubench_that_ignores_sigterm_is_killed_and_its_temporary_removed(tmp_path, short_grace):
    store = tmp_path / "store"
    (store / "key").mkdir(parents=True)
    # Files that are not this run's temporaries stay: another process's, and a result.
    (store / "key" / "20251231T000000Z_x.json.tmp.1").write_text("another run's")
    (store / "key" / "20251231T000000Z_x.json").write_text("{}")
    exe = fake_gpubench(tmp_path, "ignore")
    start = time.monotonic()
    code, out, err = cli("validate.py", "--gpubench", exe, "--device=host", "--results-dir", store,
                         "--timeout", "1")
    assert code == 1 and "did not finish within 1 s" in err, err
    assert time.monotonic() - start < 10
    assert temporaries(store) == ["20251231T000000Z_x.json.tmp.1"]
    assert (store / "key" / "20251231T000000Z_x.json").read_text() == "{}"


def test_nightly_stops_a_hung_gpubench_and_leaves_no_temporary(tmp_path, short_grace):
    # The real gpubench with a sample that never ends (tests/e2e/gpubench_stuck.cpp): the first
    # SIGTERM waits for that sample, the second ends it, and it removes its own file.
    stuck = E2E_DIR / "gpubench_stuck"
    assert stuck.exists(), f"{stuck} not found: build the gpubench_stuck target beside gpubench"
    store = tmp_path / "results"
    code, _, err = cli("nightly.py", "--gpubench", stuck, "--device", "host", "--quick",
                       "--filter", "bandwidth/write/kernel/bytes:4KiB$", "--results-dir", store,
                       "--report-dir", tmp_path / "report", "--timeout", "3")
    assert code == 2 and "did not finish within 3 s" in err, err
    assert list(store.rglob("*.json*")) == [] and temporaries(store) == []
    assert not (tmp_path / "report").exists()


@pytest.mark.parametrize("sig, name, status", [(signal.SIGINT, "INT", 130), (signal.SIGTERM, "TERM", 143)])
def test_the_scripts_signal_is_forwarded_once(tmp_path, sig, name, status):
    """Ctrl-C (SIGINT) or SIGTERM to nightly.py reaches gpubench once (it runs in a process
    group of its own, so a terminal's Ctrl-C is not delivered twice), gpubench stops and
    cleans up, and the script exits 128 + the signal with one line."""
    store = tmp_path / "results"
    exe = fake_gpubench(tmp_path, "clean")
    proc = subprocess.Popen([sys.executable, str(SCRIPTS / "nightly.py"), "--gpubench", str(exe),
                             "--results-dir", str(store), "--report-dir", str(tmp_path / "report")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not (store / "started").exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    assert temporaries(store)  # the run's temporary, as gpubench has one while it runs
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == status, err
    assert err.strip().splitlines()[-1] == f"nightly.py: interrupted (SIG{name})", err
    assert (store / "signals").read_text() == f"{name}\n"
    assert temporaries(store) == []


def test_leftovers_of_other_processes_and_other_names_are_kept(tmp_path):
    d = tmp_path / "key"
    d.mkdir()
    for name in ("a.json.tmp.42", "a.json.tmp.420", "a.json.tmp.4", "a.csv.tmp.42", "a.json"):
        (d / name).write_text("x")
    removed = gpubench_process.remove_leftover_temporaries({42}, [tmp_path])
    assert [p.name for p in removed] == ["a.json.tmp.42"]
    assert sorted(p.name for p in d.iterdir()) == ["a.csv.tmp.42", "a.json", "a.json.tmp.4",
                                                   "a.json.tmp.420"]


def test_default_gpubench_is_the_one_beside_an_installed_script(tmp_path, monkeypatch):
    monkeypatch.delenv("GPUBENCH_BIN", raising=False)
    (tmp_path / "bin").mkdir()
    assert gpubench_process.default_gpubench(tmp_path / "bin") == tmp_path / "build" / "gpubench"
    (tmp_path / "bin" / "gpubench").write_text("")
    assert gpubench_process.default_gpubench(tmp_path / "bin") == tmp_path / "bin" / "gpubench"
    monkeypatch.setenv("GPUBENCH_BIN", "/x/gpubench")
    assert gpubench_process.default_gpubench(tmp_path / "bin") == Path("/x/gpubench")
