"""How the scripts write their outputs: whole or not at all (a temporary file in the output's
folder, moved onto its name when complete), with the mode the user's umask gives, never over an
existing file without --force; an interrupted run leaves nothing behind and its rerun is not
refused."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap

import pytest
from matplotlib.figure import Figure

from conftest import SCRIPTS, cli
from gpubench_tools.errors import UsageError
from gpubench_tools.output import NewFile, commit_all


@pytest.fixture
def umask_027():
    """Runs the test under umask 027 (so the expected mode, 0640, differs from both 0600 and
    0644)."""
    old = os.umask(0o027)
    yield 0o640
    os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def leftovers(folder) -> list:
    """Every file under a folder (temporary ones included)."""
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


def interrupting_savefig(monkeypatch, after: int = 0):
    """Figure.savefig writes half a PNG, then the user presses Ctrl-C (on call `after`, counted
    from 0; earlier calls draw normally)."""
    real = Figure.savefig
    calls = []

    def savefig(self, fname, *args, **kwargs):
        calls.append(fname)
        if len(calls) - 1 < after:
            return real(self, fname, *args, **kwargs)
        with open(fname, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n half a picture")
        raise KeyboardInterrupt

    monkeypatch.setattr(Figure, "savefig", savefig)
    return calls


@pytest.mark.parametrize("after", [0, 1])
def test_an_interrupted_plot_leaves_no_png_and_the_rerun_is_not_refused(host_result, tmp_path,
                                                                        monkeypatch, after):
    # after=1: the first PNG was complete when the second was interrupted; all or none.
    out = tmp_path / "p"
    calls = interrupting_savefig(monkeypatch, after)
    code, _, err = cli("plot.py", host_result, "--out-dir", out)
    assert code == 130 and "interrupted" in err, err
    assert len(calls) == after + 1
    assert leftovers(out) == []
    monkeypatch.undo()
    code, stdout, err = cli("plot.py", host_result, "--out-dir", out)  # no --force needed
    assert code == 0, err
    assert leftovers(out) == sorted(p.split("/")[-1] for p in stdout.split())
    for png in out.iterdir():
        assert png.read_bytes().startswith(b"\x89PNG") and png.stat().st_size > 10000


def test_an_interrupted_roofline_leaves_no_png_and_the_rerun_is_not_refused(host_result, tmp_path,
                                                                            monkeypatch):
    png = tmp_path / "out" / "r.png"
    interrupting_savefig(monkeypatch)
    code, _, err = cli("roofline.py", host_result, "--out", png)
    assert code == 130, err
    assert leftovers(tmp_path / "out") == []
    monkeypatch.undo()
    code, _, err = cli("roofline.py", host_result, "--out", png)
    assert code == 0, err
    assert png.read_bytes().startswith(b"\x89PNG")


def test_a_failed_roofline_leaves_an_existing_png_as_it_was(host_result, tmp_path, monkeypatch):
    png = tmp_path / "r.png"
    png.write_bytes(b"an earlier chart")

    def fail(self, *a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", fail)
    code, _, err = cli("roofline.py", host_result, "--out", png, "--force")
    assert code == 2 and "No space left on device" in err, err
    assert png.read_bytes() == b"an earlier chart" and leftovers(tmp_path) == ["r.png"]


def test_an_interrupted_p2p_heatmap_leaves_nothing(tmp_path, monkeypatch):
    from test_p2p_matrix import write_node
    paths = write_node(tmp_path)
    png = tmp_path / "heat" / "m.png"
    png.parent.mkdir()
    interrupting_savefig(monkeypatch)
    code, _, err = cli("p2p_matrix.py", *paths, "--out", png)
    assert code == 130 and leftovers(png.parent) == [], err
    monkeypatch.undo()
    assert cli("p2p_matrix.py", *paths, "--out", png)[0] == 0
    assert png.read_bytes().startswith(b"\x89PNG")


def test_an_interrupted_trend_plot_leaves_nothing(host_doc, tmp_path, monkeypatch):
    from gpubench_tools.compare import Thresholds
    from gpubench_tools.results import parse_result
    from gpubench_tools.trends import draw_trend, trend_data
    runs = []
    for i in range(3):
        doc = json.loads(json.dumps(host_doc))
        doc["context"]["run_started_utc"] = f"2026-11-2{i}T03:00:00Z"
        runs.append(parse_result(doc, tmp_path / f"2026112{i}T030000Z_a.json"))
    name = next(iter(runs[0].benchmarks))
    d = trend_data(runs, name, 2, Thresholds())
    interrupting_savefig(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        draw_trend(d, tmp_path / "trends" / "t.png")
    assert leftovers(tmp_path / "trends") == []
    monkeypatch.undo()
    assert draw_trend(d, tmp_path / "trends" / "t.png").read_bytes().startswith(b"\x89PNG")


def test_outputs_get_the_mode_of_the_umask(host_result, tmp_path, umask_027):
    assert cli("roofline.py", host_result, "--out", tmp_path / "r.png")[0] == 0
    assert cli("plot.py", host_result, "--out-dir", tmp_path / "p")[0] == 0
    assert cli("report.py", host_result, "--out", tmp_path / "r.html")[0] == 0
    for f in [tmp_path / "r.png", tmp_path / "r.html", *(tmp_path / "p").iterdir()]:
        assert mode(f) == umask_027, (f, oct(mode(f)))


def test_new_file_never_replaces_a_file_that_appeared_meanwhile(tmp_path):
    target = tmp_path / "x.json"
    f = NewFile(target)
    f.tmp.write_text("mine")
    target.write_text("someone else's")
    with pytest.raises(UsageError, match="exists"):
        f.commit()
    assert target.read_text() == "someone else's" and leftovers(tmp_path) == ["x.json"]


def test_commit_all_is_all_or_nothing(tmp_path):
    a, b = NewFile(tmp_path / "a.md"), NewFile(tmp_path / "b.md")
    a.tmp.write_text("a")
    b.tmp.write_text("b")
    (tmp_path / "b.md").write_text("earlier")
    with pytest.raises(UsageError, match="b.md exists"):
        commit_all([a, b])
    assert leftovers(tmp_path) == ["b.md"] and (tmp_path / "b.md").read_text() == "earlier"


def test_an_unwritable_folder_is_named_by_the_users_path(tmp_path):
    with pytest.raises(UsageError) as e:
        NewFile("/proc/x.png", label="--png /proc/x.png")
    assert str(e.value).startswith("--png /proc/x.png: cannot write there")


def test_sigterm_is_an_interruption_that_cleans_up(tmp_path):
    """run_cli turns SIGTERM into an exception, so a half-written output's temporary file is
    removed (Python's default would end the process on the spot) and the exit is 143, with
    SIGTERM's handler put back afterwards. In a process of its own: a SIGTERM that is not
    handled ends the process."""
    code = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(SCRIPTS)!r})
        from gpubench_tools.errors import run_cli
        from gpubench_tools.output import NewFile

        def main(argv):
            with NewFile({str(tmp_path / "x.png")!r}) as f:
                f.tmp.write_bytes(b"half")
                os.kill(os.getpid(), signal.SIGTERM)
                raise AssertionError("not reached: SIGTERM raises")

        status = run_cli("tool.py", main, [])
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        sys.exit(status)
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert proc.stderr == "tool.py: interrupted (SIGTERM)\n"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("where", ["weakref callback", "__del__"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_handled_inside_a_finaliser_still_interrupts(tmp_path, where, signum):
    """A signal whose handler runs inside a weakref callback or a __del__ (as when matplotlib's
    caches free objects mid-drawing) raised there, where Python printed "Exception ignored in"
    with a traceback and went on: the tool finished and wrote its output as if never signalled.
    The interruption must reach the tool: one line, 128 + the signal, no output."""
    code = textwrap.dedent(f"""
        import gc, os, signal, sys, time, weakref
        sys.path.insert(0, {str(SCRIPTS)!r})
        from gpubench_tools.errors import run_cli

        class Held:
            def __del__(self):
                if {where!r} == "__del__":
                    os.kill(os.getpid(), {int(signum)})
                    sum(range(10))  # Python checks for the signal here, inside __del__

        def finalised(_ref):
            if {where!r} == "weakref callback":
                os.kill(os.getpid(), {int(signum)})
                sum(range(10))

        def main(argv):
            held = Held()
            ref = weakref.ref(held, finalised)
            del held  # the finaliser runs (and the signal is handled) here
            gc.collect()
            for _ in range(500):  # 5 s for the interruption to arrive
                time.sleep(0.01)
            open({str(tmp_path / "out.txt")!r}, "w").write("finished")
            return 0

        sys.exit(run_cli("tool.py", main, []))
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 128 + signum, proc.stderr
    assert proc.stderr == f"tool.py: interrupted ({signal.Signals(signum).name})\n"
    assert leftovers(tmp_path) == []


def test_out_of_space_names_the_output_and_leaves_no_new_folder(host_result, tmp_path, monkeypatch):
    import errno

    import matplotlib.figure
    from pathlib import Path

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full)
    monkeypatch.setattr(Path, "write_text", full)
    monkeypatch.setattr(Path, "write_bytes", full)
    out = tmp_path / "new" / "deeper"
    for tool, args, named in (
            ("plot.py", [host_result, "--out-dir", out], str(out)),
            ("roofline.py", [host_result, "--out", out / "r.png"], str(out / "r.png")),
            ("validate.py", ["--result", host_result, "--json", tmp_path / "v.json"],
             str(tmp_path / "v.json"))):
        code, stdout, err = cli(tool, *args)
        lines = [line for line in err.strip().splitlines() if ": note: " not in line]
        assert code == 2 and "Traceback" not in err, err
        assert len(lines) == 1 and named in lines[0] and "No space left" in lines[0], err
        assert ".tmp" not in lines[0], err
        assert not (tmp_path / "new").exists(), tool
        assert sorted(p.name for p in tmp_path.iterdir()) == [], list(tmp_path.iterdir())


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
                                    signal.SIGALRM, signal.SIGVTALRM, signal.SIGXCPU])
def test_the_other_stop_signals_are_interruptions_that_clean_up(tmp_path, signum):
    """SIGHUP (the terminal closed), SIGQUIT, SIGUSR1, SIGUSR2 and SIGALRM end a process on the
    spot by default, as SIGTERM does: while a tool runs they are raised as SIGTERM is (the
    temporary file and the new folder removed), exit 128 + the signal with one line, and their
    disposition is put back afterwards. One that is ignored (nohup ignores SIGHUP) stays so."""
    code = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(SCRIPTS)!r})
        from gpubench_tools.errors import run_cli
        from gpubench_tools.output import NewFile

        def main(argv):
            with NewFile({str(tmp_path / "new" / "x.png")!r}) as f:
                f.tmp.write_bytes(b"half")
                os.kill(os.getpid(), {int(signum)})
                if argv:
                    return 0  # ignored: not interrupted
                raise AssertionError("not reached: the signal raises")

        status = run_cli("tool.py", main, sys.argv[1:])
        assert signal.getsignal({int(signum)}) == (signal.SIG_IGN if sys.argv[1:] else signal.SIG_DFL)
        sys.exit(status)
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 128 + signum, proc.stderr
    assert proc.stderr == f"tool.py: interrupted ({signal.Signals(signum).name})\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    ignored = subprocess.run([sys.executable, "-c", code, "ignored"], capture_output=True, text=True,
                             timeout=60, preexec_fn=lambda: signal.signal(signum, signal.SIG_IGN))
    assert ignored.returncode == 0 and ignored.stderr == "", ignored.stderr
    assert (tmp_path / "new" / "x.png").read_bytes() == b"half"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_a_script_starts_is_one_line(signum):
    """Ctrl-C while a script imports its modules (matplotlib takes a while) printed a
    KeyboardInterrupt traceback of the import: exit_on_signals(), called first thing, makes it
    one line and exit 128 + the signal (nothing is written yet); run_cli takes over from it."""
    code = textwrap.dedent(f"""
        import os, signal, sys, time
        sys.path.insert(0, {str(SCRIPTS)!r})
        from gpubench_tools.errors import exit_on_signals
        exit_on_signals("tool.py", "__main__")
        os.kill(os.getpid(), {int(signum)})
        time.sleep(30)  # a module loading
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 128 + signum, proc.stderr
    assert proc.stderr == f"tool.py: interrupted ({signal.Signals(signum).name})\n"


def test_run_cli_takes_over_from_the_start_up_handlers():
    code = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(SCRIPTS)!r})
        from gpubench_tools.errors import exit_on_signals, run_cli
        exit_on_signals("tool.py", "__main__")

        def main(argv):
            try:
                os.kill(os.getpid(), signal.SIGINT)
                sum(range(10))
            except KeyboardInterrupt:
                print("KeyboardInterrupt in main")
            return 0

        sys.exit(run_cli("tool.py", main, []))
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "KeyboardInterrupt in main\n", proc.stderr


def test_every_script_sets_its_start_up_handlers_before_loading_its_modules():
    import re
    for script in sorted(SCRIPTS.glob("*.py")):
        text = script.read_text()
        if "run_cli(" not in text:
            continue
        first = re.search(r"^from gpubench_tools\.\S+ import .*$", text, re.M).group(0)
        assert first.startswith("from gpubench_tools.errors import exit_on_signals"), script.name
        assert f'exit_on_signals("{script.name}", __name__)' in text, script.name
        assert text.index("exit_on_signals(") < text.index("from gpubench_tools", text.index(first) + 1)


def test_an_output_under_a_file_says_which_is_not_a_folder(tmp_path):
    (tmp_path / "od").mkdir()
    (tmp_path / "od" / "file").write_text("x")
    with pytest.raises(UsageError, match=f"{tmp_path / 'od' / 'file'} is not a folder"):
        NewFile(tmp_path / "od" / "file" / "deeper" / "x.png")
    assert sorted(p.name for p in (tmp_path / "od").iterdir()) == ["file"]


def test_new_file_refuses_to_replace_a_link_or_a_special_file_even_with_overwrite(tmp_path):
    target = tmp_path / "target"
    target.write_text("precious")
    (tmp_path / "link").symlink_to(target)
    os.mkfifo(tmp_path / "fifo")
    for name, says in (("link", "symbolic link"), ("fifo", "not a regular file")):
        with pytest.raises(UsageError, match=says):
            NewFile(tmp_path / name, overwrite=True)
    f = NewFile(tmp_path / "later", overwrite=True)  # a link made while it was written
    (tmp_path / "later").symlink_to(target)
    with pytest.raises(UsageError, match="symbolic link"):
        f.commit()
    assert target.read_text() == "precious" and (tmp_path / "later").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "later", "link", "target"]
