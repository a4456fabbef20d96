"""Hostile input to the scripts: one line on stderr, exit 2, never a traceback."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from conftest import ROOT, cli
from fixtures import write_json


def _nan_result(host_doc, tmp_path, value):
    doc = json.loads(json.dumps(host_doc))
    entry = next(e for e in doc["benchmarks"] if e.get("run_type") == "iteration" and "GB/s" in e)
    entry["GB/s"] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))  # json writes NaN / Infinity as Python reads them back
    return path


@pytest.mark.parametrize("tool, args, message", [
    ("roofline.py", ["{r}", "--out", "/proc/x.png"], "--out /proc/x.png"),
    ("roofline.py", ["{r}", "--out", "{tmp}"], "is a directory"),
    ("roofline.py", ["{r}", "--out", "{tmp}/x.gif"], ".png, .svg or .pdf"),
    ("roofline.py", ["{deep}"], "nested too deeply"),
    ("roofline.py", ["{nan}", "--out", "{tmp}/n.png"], "not a measured number"),
    ("roofline.py", ["{inf}", "--out", "{tmp}/i.png"], "not a measured number"),
    ("plot.py", ["{r}", "--out-dir", "/proc/x"], "/proc/x"),
    ("plot.py", ["{r}", "--out-dir", "{r}"], "not a folder"),
    ("plot.py", ["{r}", "--out-dir", "{r}/sub"], "is not a folder"),
    ("compare.py", ["{deep}", "{r}"], "nested too deeply"),
    ("compare.py", ["{nan}", "{r}"], "not a measured number"),
    ("compare.py", ["{r}", "{r}", "--noise-k", "nan"], "finite"),
    ("compare.py", ["{r}", "{r}", "--markdown", "/proc/x.md"], "/proc/x.md"),
    ("compare.py", ["{r}", "{r}", "--json", "{tmp}"], "is a directory"),
    ("nightly.py", ["--timeout", "nan"], "--timeout"),
    ("nightly.py", ["--timeout", "-1"], "--timeout"),
    ("nightly.py", ["--timeout", "1e10"], "--timeout 1e+10"),
    ("run_cost.py", ["{deep}"], "nested too deeply"),
    # options that were silently ignored
    ("roofline.py", ["--list-cards", "{r}", "--out", "{tmp}/x.png"], "--list-cards takes no RESULT or --out"),
    ("roofline.py", ["--list-cards", "--card", "h100_sxm"], "--list-cards takes no --card"),
    ("compare.py", ["{r}", "{r}", "--last", "3"], "--last needs --history"),
    # a --history that is no folder was called an empty history
    ("compare.py", ["{r}", "--history", "{tmp}/nonexistent"], "--history {tmp}/nonexistent: no such folder"),
    ("compare.py", ["{r}", "--history", "{r}"], "--history {r}: not a folder"),
])
def test_one_line_exit_2_no_traceback(tool, args, message, host_result, host_doc, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    values = {"r": host_result, "tmp": tmp_path, "deep": deep,
              "nan": _nan_result(host_doc, tmp_path, float("nan")),
              "inf": _nan_result(host_doc, tmp_path / ".." / tmp_path.name, float("inf"))}
    code, out, err = cli(tool, *[a.format(**values) for a in args])
    assert code == 2, (out, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{tool}: error: ") and message.format(**values) in lines[0], err


def test_outputs_are_not_overwritten_without_force(host_result, tmp_path):
    png = tmp_path / "r.png"
    assert cli("roofline.py", host_result, "--out", png)[0] == 0
    before = png.read_bytes()
    code, _, err = cli("roofline.py", host_result, "--out", png)
    assert code == 2 and "not overwritten without --force" in err and png.read_bytes() == before
    assert cli("roofline.py", host_result, "--out", png, "--force")[0] == 0
    assert cli("plot.py", host_result, "--out-dir", tmp_path / "p")[0] == 0
    code, _, err = cli("plot.py", host_result, "--out-dir", tmp_path / "p")
    assert code == 2 and "not overwritten without --force" in err
    code, _, err = cli("plot.py", host_result, "--out-dir", tmp_path / "p", "--force")
    assert code == 0 and err == "", err
    # An earlier plot of the same name drew a sweep this result has not: kept, and said so.
    stale = tmp_path / "p" / f"{host_result.stem}_p2p.png"
    stale.write_bytes(b"an earlier result's sweep")
    code, _, err = cli("plot.py", host_result, "--out-dir", tmp_path / "p", "--force")
    assert code == 0 and stale.read_bytes() == b"an earlier result's sweep"
    assert err == (f"plot.py: note: 1 PNG(s) of this name in {tmp_path / 'p'} are from an earlier plot, not this "
                   f"result: {stale.name}\n"), err
    md = tmp_path / "c.md"
    md.write_text("an earlier report")
    earlier = json.loads(host_result.read_text())
    earlier["context"]["date"] = "2026-01-02T03:04:05+00:00"  # another run, not NEW itself
    base = tmp_path / "earlier.json"
    base.write_text(json.dumps(earlier))
    code, _, err = cli("compare.py", host_result, base, "--markdown", md, "--quiet")
    assert code == 2 and "not overwritten without --force" in err and md.read_text() == "an earlier report"
    code, _, err = cli("compare.py", host_result, base, "--markdown", md, "--quiet", "--force")
    assert code == 0 and md.read_text().startswith("# gpubench comparison"), err


def _with_counter(host_doc, path, counter, value):
    """A copy of the real host run with `counter` set to `value` in every entry that has it,
    written to `path`."""
    doc = json.loads(json.dumps(host_doc))
    hit = 0
    for e in doc["benchmarks"]:
        if counter in e:
            e[counter] = value
            hit += 1
    assert hit, counter
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def _one_line(tool, code, out, err, *says):
    assert code == 2, (code, out, err)
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{tool}: error: "), err
    for s in says:
        assert s in lines[0], lines[0]
    return lines[0]


def test_a_store_with_a_string_rate_is_bad_input_for_fleet(host_doc, tmp_path):
    # Three nodes, so every headline metric has enough GPUs for statistics; one file's GB/s
    # are strings (a forged or hand-edited file): one line naming it, never a traceback.
    store = tmp_path / "store"
    key = host_doc["context"]["device_key"]
    for i in range(3):
        doc = json.loads(json.dumps(host_doc))
        doc["context"]["host_name"] = f"n{i}"
        (store / key).mkdir(parents=True, exist_ok=True)
        (store / key / f"2026010{i + 1}T000000Z_a.json").write_text(json.dumps(doc))
    bad = _with_counter(json.loads((store / key / "20260101T000000Z_a.json").read_text()),
                        store / key / "20260101T000000Z_a.json", "GB/s", "fast")
    _one_line("fleet.py", *cli("fleet.py", store, "--quiet"), str(bad), "not a gpubench result",
              "GB/s", "not a number")


@pytest.mark.parametrize("value, says", [(1e308, "above"), (-5.0, "negative"), ("12", "not a number"),
                                         (True, "not a number"), (5e-324, "below 1e-9"),
                                         (1e-300, "below 1e-9")])
@pytest.mark.parametrize("tool", ["report.py", "roofline.py", "plot.py"])
def test_an_absurd_or_non_numeric_rate_is_not_a_gpubench_result(host_doc, tmp_path, tool, value, says):
    bad = _with_counter(host_doc, tmp_path / "bad.json", "GB/s", value)
    out = {"report.py": ["--out", tmp_path / "r.html"], "roofline.py": ["--out", tmp_path / "r.png"],
           "plot.py": ["--out-dir", tmp_path / "p"]}[tool]
    line = _one_line(tool, *cli(tool, bad, *out), str(bad), "not a gpubench result", "GB/s", says)
    assert "bandwidth/" in line  # names the benchmark
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "r.png").exists()
    assert not (tmp_path / "p").exists()


def test_an_absurd_time_is_not_a_gpubench_result(host_doc, tmp_path):
    bad = _with_counter(host_doc, tmp_path / "bad.json", "real_time", 1e300)
    _one_line("roofline.py", *cli("roofline.py", bad, "--out", tmp_path / "r.png"), "real_time", "above")


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "0", "1e400", "1e10", "10000001"])
def test_validate_refuses_a_timeout_that_is_not_a_finite_positive_number(value, tmp_path):
    _one_line("validate.py", *cli("validate.py", f"--timeout={value}", "--device=host", "--quick",
                                  "--results-dir", tmp_path / "store"), "--timeout")
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("key", ["../../../escaped", "{tmp}/abs", "..", "a/b", "", "x\ny"])
@pytest.mark.parametrize("tool", ["report.py", "roofline.py", "plot.py"])
def test_a_device_key_that_is_not_a_folder_name_is_refused(host_doc, tmp_path, monkeypatch, tool, key):
    # The default output folder is plots/<device key>, the key read from the (untrusted) file.
    key = key.format(tmp=tmp_path)  # an absolute key, inside the test's folder all the same
    doc = json.loads(json.dumps(host_doc))
    doc["context"]["device_key"] = key
    work = tmp_path / "a" / "b" / "c"
    work.mkdir(parents=True)
    bad = work / "bad.json"
    bad.write_text(json.dumps(doc))
    monkeypatch.chdir(work)
    before = sorted(tmp_path.rglob("*"))
    code, out, err = cli(tool, bad)
    if key == "":  # an empty key is not a gpubench result at all
        _one_line(tool, code, out, err, "lacks context keys: device_key")
    else:
        _one_line(tool, code, out, err, str(bad), "device key", "not usable as a folder name")
    assert sorted(tmp_path.rglob("*")) == before  # nothing written anywhere below
    assert not (tmp_path / "abs").exists() and not (tmp_path / "a" / "escaped").exists()


@pytest.mark.parametrize("backend", ["host", "cuda"])
def test_a_result_with_no_row_for_the_roofline_is_refused(host_result, host_doc, tmp_path, backend):
    # Only memory-management rows (they stay off the roofline), or no rows at all: nothing of
    # the result would be drawn (on a GPU, the card's roofs alone: --card says that).
    from fixtures import memory_result, write_json
    memory = write_json(memory_result(backend), tmp_path / "memory.json")
    empty = json.loads(json.dumps(host_doc))
    empty["benchmarks"] = []
    empty = write_json(empty, tmp_path / "empty.json")
    for args, says in (([memory], f"{memory}: no row to draw on a roofline"),
                       ([empty], f"{empty}: not a gpubench result: its benchmarks list is empty"),
                       ([host_result, memory], f"{memory}: no row to draw on a roofline")):
        png = tmp_path / "r.png"
        code, out, err = cli("roofline.py", *args, "--out", png)
        _one_line("roofline.py", code, out, err, says)
        assert not png.exists() and not list(tmp_path.glob(".*.tmp"))
    assert cli("roofline.py", host_result, "--out", tmp_path / "r.png")[0] == 0
    # Successful bandwidth rows that set no line (a 4 KiB copy: no cache level's plateau, no
    # DRAM-sized set) were called "no successful bandwidth row".
    small = json.loads(json.dumps(host_doc))
    small["benchmarks"] = [e for e in small["benchmarks"] if e["name"].startswith("bandwidth/copy/kernel/bytes:4KiB/")]
    assert small["benchmarks"]
    small = write_json(small, tmp_path / "small.json")
    code, out, err = cli("roofline.py", small, "--out", tmp_path / "s.png")
    _one_line("roofline.py", code, out, err, f"{small}: no row to draw on a roofline: none of its successful rows "
              "sets a measured ceiling or a point")


def _with_raw_number(host_doc, path, where, digits):
    """The real host run with a JSON integer of `digits` digits as the first GB/s counter
    (where="counter") or as the context's DRAM peak (where="peak"), written to `path`."""
    doc = json.loads(json.dumps(host_doc))
    if where == "counter":
        entry = next(e for e in doc["benchmarks"] if "GB/s" in e and not e.get("error_occurred"))
        entry["GB/s"] = "@HUGE@"
    else:
        doc["context"]["peak_dram_GBps"] = "@HUGE@"
    path.write_text(json.dumps(doc).replace('"@HUGE@"', "1" + "0" * (digits - 1)))
    return path


@pytest.mark.parametrize("where, digits", [("counter", 401), ("counter", 5000), ("peak", 401),
                                           ("peak", 5000)])
@pytest.mark.parametrize("tool", ["report.py", "roofline.py", "plot.py", "run_cost.py"])
def test_a_huge_integer_is_not_a_gpubench_result(host_doc, tmp_path, tool, where, digits):
    bad = _with_raw_number(host_doc, tmp_path / "bad.json", where, digits)
    out = {"report.py": ["--out", tmp_path / "r.html"], "roofline.py": ["--out", tmp_path / "r.png"],
           "plot.py": ["--out-dir", tmp_path / "p"], "run_cost.py": []}[tool]
    _one_line(tool, *cli(tool, bad, *out), str(bad), "not a gpubench result", "not a number")
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "r.png").exists()
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize("key, value, says", [
    ("peak_dram_GBps", "-3350", "not positive"), ("peak_dram_GBps", -3350, "not positive"),
    ("peak_fp16_tensor_TFLOPS", "0", "not positive"), ("l2_bytes", 0, "not positive"),
    ("peak_dram_GBps", "fast", "neither a number nor 'unknown'"),
    ("peak_dram_GBps", "nan", "neither a number nor 'unknown'"),
    # in range for a float, beyond any device: the tools' arithmetic overflowed or divided by 0
    ("peak_dram_GBps", "1e20", "beyond any device"), ("peak_dram_GBps", 1e308, "beyond any device"),
    ("peak_dram_GBps", "1e-320", "beyond any device"), ("peak_fp32_TFLOPS", 1e-4, "beyond any device"),
    ("l2_bytes", 1e16, "beyond any device"), ("l2_bytes", "0.5", "beyond any device"),
])
@pytest.mark.parametrize("tool", ["report.py", "roofline.py", "compare.py"])
def test_a_context_peak_that_is_not_positive_is_not_a_gpubench_result(host_doc, host_result, tmp_path,
                                                                      tool, key, value, says):
    """gpubench writes 'unknown' for a peak it does not know; a peak of 0 or less (a hand-edited
    file) drew the roof below the axis and made every pct_of_peak negative."""
    doc = json.loads(json.dumps(host_doc))
    doc["context"][key] = value
    doc["context"]["backend"] = "cuda"  # (the peaks of a GPU run are drawn)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    out = {"report.py": ["--out", tmp_path / "r.html"], "roofline.py": ["--out", tmp_path / "r.png"],
           "compare.py": [host_result]}[tool]
    _one_line(tool, *cli(tool, bad, *out), str(bad), "not a gpubench result", key, says)
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "r.png").exists()


def test_an_unknown_peak_is_still_a_result(host_doc, tmp_path):
    doc = json.loads(json.dumps(host_doc))
    doc["context"]["peak_fp16_tensor_TFLOPS"] = "unknown"
    good = tmp_path / "good.json"
    good.write_text(json.dumps(doc))
    code, _, err = cli("roofline.py", good, "--out", tmp_path / "r.png")
    assert code == 0 and (tmp_path / "r.png").exists(), err


@pytest.mark.parametrize("tool, args, option", [
    ("nightly.py", ["--report-dir", ""], "--report-dir"),
    ("nightly.py", ["--results-dir="], "--results-dir"),
    ("plot.py", ["{r}", "--out-dir", ""], "--out-dir"),
    ("roofline.py", ["{r}", "--out", " "], "--out"),
    ("report.py", ["{r}", "--out", ""], "--out"),
    ("run_cost.py", ["{r}", "--baseline", ""], "--baseline"),
    ("validate.py", ["--result", "{r}", "--json", ""], "--json"),
    ("host_vs_likwid.py", ["--gpubench", ""], "--gpubench"),
])
def test_an_empty_option_value_is_refused(tool, args, option, host_result, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    code, out, err = cli(tool, *[a.format(r=host_result) for a in args])
    _one_line(tool, code, out, err, f"{option} has an empty value")
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("tool, args, option", [
    ("fleet.py", ["{tmp}", "--json", "{tmp}/a.json", "--json", "{tmp}/b.json"], "--json"),
    ("validate.py", ["--result", "{r}", "--json", "{tmp}/x", "--json={tmp}/y"], "--json"),
    ("plot.py", ["{r}", "--out-dir", "{tmp}/a", "--out-dir", "{tmp}/b"], "--out-dir"),
    ("roofline.py", ["{r}", "--out", "{tmp}/a.png", "--out", "{tmp}/b.png"], "--out"),
    ("report.py", ["{r}", "--out", "{tmp}/a.html", "--out", "{tmp}/b.html"], "--out"),
    ("nightly.py", ["--results-dir", "{tmp}/a", "--results", "{tmp}/b"], "--results-dir"),
    ("host_vs_likwid.py", ["--rounds", "1", "--rounds", "1", "--gpubench", "{tmp}/none"], "--rounds"),
])
def test_an_option_given_twice_is_refused(tool, args, option, host_result, tmp_path):
    before = sorted(tmp_path.rglob("*"))
    code, out, err = cli(tool, *[a.format(r=host_result, tmp=tmp_path) for a in args])
    _one_line(tool, code, out, err, f"{option} given twice")
    assert sorted(tmp_path.rglob("*")) == before


def test_validate_accepts_the_current_folder_as_results_dir(tmp_path, monkeypatch):
    # "." is a folder, not an empty value (a run that cannot find gpubench fails later, not here)
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("validate.py", "--results-dir", ".", "--gpubench", tmp_path / "nope")
    assert "empty value" not in err and "nope" in err, err


@pytest.mark.parametrize("key, value", [("gpubench_version", None), ("device_key", 12),
                                        ("device_key", None), ("device_name", [1, 2]),
                                        ("host_name", ["a"]), ("host_name", 5),
                                        ("device_ordinal", [0]), ("device_ordinal", 0)])
@pytest.mark.parametrize("tool", ["report.py", "plot.py", "compare.py"])
def test_a_context_field_of_the_wrong_type_is_refused(host_doc, host_result, tmp_path, key, value,
                                                       tool, monkeypatch):
    doc = json.loads(json.dumps(host_doc))
    doc["context"][key] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    monkeypatch.chdir(tmp_path)
    extra = {"report.py": ["--out", tmp_path / "r.html"], "plot.py": ["--out-dir", tmp_path / "p"],
             "compare.py": [host_result]}[tool]
    _one_line(tool, *cli(tool, bad, *extra), str(bad), "not a gpubench result", f"context {key}",
              "not a string")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


class _FifoFeeder:
    """Keeps a FIFO from blocking a test for good: whenever a reader waits on it, a writer opens
    it, writes a line that is no JSON and closes it (a tool that reads the FIFO then fails on its
    content, rather than on what it is). Stopped when the test ends."""

    def __init__(self, fifo):
        import os
        import threading

        self.fifo, self.stop = fifo, threading.Event()
        os.mkfifo(fifo)
        self.thread = threading.Thread(target=self._feed, daemon=True)
        self.thread.start()

    def _feed(self):
        import os

        while not self.stop.wait(0.05):
            try:
                fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO: no reader
            except OSError:
                continue
            try:
                os.write(fd, b"fed through the FIFO\n")
            finally:
                os.close(fd)

    def close(self):
        self.stop.set()
        self.thread.join()


@pytest.mark.parametrize("special", ["fifo", "/dev/null"])
@pytest.mark.parametrize("tool, args", [
    ("plot.py", ["{x}", "--out-dir", "{tmp}/p"]),
    ("roofline.py", ["{x}", "--out", "{tmp}/r.png"]),
    ("roofline.py", ["--card", "h100_sxm", "--cards-csv", "{x}", "--out", "{tmp}/r.png"]),
    ("report.py", ["{x}", "--out", "{tmp}/r.html"]),
    ("run_cost.py", ["{x}"]),
    ("run_cost.py", ["{r}", "--baseline", "{x}"]),
    ("validate.py", ["--result", "{x}"]),
    ("p2p_matrix.py", ["{x}"]),
    ("compare.py", ["{x}", "{r}"]),
])
def test_an_input_that_is_not_a_regular_file_is_refused_unread(tool, args, special, host_result, tmp_path):
    """A FIFO blocked the read forever (/dev/zero: read until memory ran out): refused, naming
    it, before it is read. (The FIFO here is fed when read, so that the old behaviour fails the
    test rather than hanging it; /dev/null read as an empty result.)"""
    x = tmp_path / "in.json" if special == "fifo" else special
    feeder = _FifoFeeder(x) if special == "fifo" else None
    try:
        code, out, err = cli(tool, *[a.format(x=x, r=host_result, tmp=tmp_path) for a in args])
    finally:
        if feeder:
            feeder.close()
    _one_line(tool, code, out, err, f"{x}: not a regular file")
    assert sorted(p.name for p in tmp_path.iterdir()) == (["in.json"] if feeder else [])


def test_a_fifo_in_a_fleet_store_is_refused_unread(host_doc, tmp_path):
    key = host_doc["context"]["device_key"]
    (tmp_path / "store" / key).mkdir(parents=True)
    for i in range(3):
        doc = json.loads(json.dumps(host_doc))
        doc["context"].update(host_name=f"n{i}", device_ordinal="0")
        (tmp_path / "store" / key / f"2026010{i + 1}T000000Z_a.json").write_text(json.dumps(doc))
    fifo = tmp_path / "store" / key / "20260104T000000Z_a.json"
    feeder = _FifoFeeder(fifo)
    try:
        _one_line("fleet.py", *cli("fleet.py", tmp_path / "store", "--quiet"), f"{fifo}: not a regular file")
    finally:
        feeder.close()


def test_dollar_signs_in_a_result_are_drawn_as_written(host_doc, tmp_path):
    """matplotlib reads text between two "$" as mathtext: a device name, a date or a host name of
    a (hand-edited or hostile) result such as "$\\frac{$" made every figure fail to draw."""
    doc = json.loads(json.dumps(host_doc))
    doc["context"].update(device_name="GPU $\\frac{$", run_started_utc="$\\x$ 2026",
                          host_name="n$\\y{$", device_ordinal="0")
    bad = tmp_path / "dollar.json"
    bad.write_text(json.dumps(doc))
    for tool, args in (("plot.py", ["--out-dir", tmp_path / "p"]), ("roofline.py", ["--out", tmp_path / "r.png"]),
                       ("report.py", ["--out", tmp_path / "r.html"])):
        code, out, err = cli(tool, bad, *args)
        assert code == 0 and "Traceback" not in err, err
    assert len(list((tmp_path / "p").glob("*.png"))) >= 2 and (tmp_path / "r.png").exists()
    assert "GPU $\\frac{$" in (tmp_path / "r.html").read_text()
    # the fleet's strip plot: the card's name in its title, the nodes' names by the outliers
    key = doc["context"]["device_key"]
    (tmp_path / "store" / key).mkdir(parents=True)
    for i in range(4):
        node = json.loads(json.dumps(doc))
        node["context"]["host_name"] = f"n$\\y{{${i}"
        (tmp_path / "store" / key / f"2026010{i + 1}T000000Z_a.json").write_text(json.dumps(node))
    code, out, err = cli("fleet.py", tmp_path / "store", "--png", tmp_path / "f.png", "--quiet")
    assert code in (0, 1) and "Traceback" not in err and (tmp_path / "f.png").exists(), err


def test_tick_labels_of_log_axes_keep_their_powers(host_result):
    """Text from the results is drawn as written; the log axes' tick labels still read as powers
    ("2^4" as mathtext), not as their markup."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from gpubench_tools.cards import load_cards
    from gpubench_tools.results import load_result
    from gpubench_tools.roofline import roofline_data, roofline_figure
    fig = roofline_figure(roofline_data([load_result(host_result)], [], load_cards()))
    FigureCanvasAgg(fig).draw()
    ticks = [t for t in fig.axes[0].get_xticklabels() if t.get_text()]
    assert ticks and all(t.get_parse_math() for t in ticks)
    assert not fig.axes[0].title.get_parse_math()


@pytest.mark.parametrize("kind", ["symlink", "dangling symlink", "fifo"])
@pytest.mark.parametrize("tool", ["roofline.py", "report.py", "plot.py"])
def test_force_never_replaces_a_link_or_a_special_file(host_result, tmp_path, tool, kind):
    """--force replaces an earlier output, never a symbolic link (nor what it points at) or a
    device node, FIFO or socket at the output's name."""
    import os
    name = {"roofline.py": "r.png", "report.py": "r.html",
            "plot.py": f"{host_result.stem}_bandwidth.png"}[tool]
    target, out = tmp_path / "target", tmp_path / "out" / name
    out.parent.mkdir()
    target.write_text("precious")
    if kind == "fifo":
        os.mkfifo(out)
    else:
        out.symlink_to(target if kind == "symlink" else tmp_path / "nowhere")
    args = {"roofline.py": ["--out", out], "report.py": ["--out", out], "plot.py": ["--out-dir", out.parent]}[tool]
    code, stdout, err = cli(tool, host_result, *args, "--force")
    line = _one_line(tool, code, stdout, err, str(out))
    assert ("symbolic link" if "symlink" in kind else "not a regular file") in line
    assert target.read_text() == "precious"
    assert out.is_symlink() if "symlink" in kind else out.is_fifo()
    assert sorted(p.name for p in out.parent.iterdir()) == [name]


def test_a_zero_rate_and_the_longest_timeout_are_still_accepted(host_doc, tmp_path):
    """The bounds refuse what no device gives; 0 (a counter gpubench may write as nothing
    measured) and a timeout of 1e7 s are still taken."""
    from gpubench_tools.gpubench_process import check_timeout
    from gpubench_tools.results import parse_result
    zero = json.loads(_with_counter(host_doc, tmp_path / "zero.json", "GB/s", 0).read_text())
    assert parse_result(zero, tmp_path / "zero.json").benchmarks
    assert check_timeout(1e7) == 1e7 and check_timeout(0.5) == 0.5


def test_the_longest_timeout_waits_for_gpubench_without_a_traceback(tmp_path, monkeypatch):
    """--timeout 1e7 (what validate.py and nightly.py accept) raised OverflowError in the wait
    (its poll takes a C int of milliseconds); the wait now runs in slices, each short enough,
    and still gives up at the timeout."""
    from gpubench_tools import gpubench_process as gp
    sleeper = [sys.executable, "-c", "import time; time.sleep(0.3); print('done')"]
    finished = gp.run(sleeper, 1e7, [tmp_path])
    assert finished.returncode == 0 and finished.stdout.strip() == "done" and not finished.timed_out
    monkeypatch.setattr(gp, "_LONGEST_WAIT_S", 0.05)  # many slices in a short run
    finished = gp.run(sleeper, 5.0, [tmp_path])
    assert finished.returncode == 0 and finished.stdout.strip() == "done" and not finished.timed_out
    finished = gp.run(sleeper, 0.12, [tmp_path], grace_s=1.0)
    assert finished.timed_out and finished.stdout == ""


@pytest.mark.parametrize("whole", [True, False])
@pytest.mark.parametrize("script, flag", [("compare.py", "--json"), ("compare.py", "--markdown"),
                                          ("report.py", "--out")])
def test_no_output_replaces_a_gpubench_result_even_with_force(host_result, tmp_path, script, flag, whole):
    """A slip of the finger (--json results/<key>/<run>.json --force) replaced a stored
    measurement with a report; a file that holds a gpubench result is refused as an output, also
    one cut short (a full disk, an interrupted copy: not whole JSON, and it was replaced)."""
    stored = tmp_path / ("stored.html" if script == "report.py" else "stored.json")
    data = host_result.read_bytes()
    stored.write_bytes(data if whole else data[:-3])  # a result under any name
    other = tmp_path / "baseline.json"  # an earlier run of the same benchmarks
    doc = json.loads(host_result.read_text())
    doc["context"]["date"] = "2026-01-01T00:00:00+00:00"
    doc["context"]["run_started_utc"] = "2026-01-01T00:00:00Z"
    other.write_text(json.dumps(doc))
    before = stored.read_bytes()
    args = [host_result, other] if script == "compare.py" else [host_result]
    code, out, err = cli(script, *args, flag, stored, "--force")
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and "is a gpubench result (or what is left of one); results are never " \
        "overwritten" in err, err
    assert stored.read_bytes() == before
    # A file that is not a result (an earlier report) is still replaced with --force.
    report = tmp_path / ("r.html" if script == "report.py" else "r.json")
    report.write_text("{}" if script != "report.py" else "<html></html>")
    if script == "compare.py" and flag == "--markdown":
        report = tmp_path / "r.md"
        report.write_text("old")
    code, out, err = cli(script, *args, flag, report, "--force")
    assert code in (0, 1), err
    assert report.read_text() not in ("{}", "<html></html>", "old")


@pytest.mark.parametrize("length", [244, 255])
def test_an_output_name_of_up_to_255_bytes_is_written(host_result, tmp_path, length):
    """A legal output name of 242-255 bytes was refused as "File name too long": the temporary
    beside it (".NAME.XXXXXXXX.tmp") is 14 bytes longer."""
    out = tmp_path / ("o" * (length - 4) + ".png")
    code, _, err = cli("roofline.py", host_result, "--out", out)
    assert code == 0, err
    assert out.is_file() and out.read_bytes().startswith(b"\x89PNG")
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary left


def test_an_input_over_a_gib_is_refused_before_it_is_read(host_result, tmp_path):
    # a sparse file of a terabyte: read whole, it raised MemoryError (a traceback)
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as f:
        f.truncate(1 << 40)
    code, out, err = cli("compare.py", huge, host_result)
    assert code == 2 and err.count("\n") == 1 and "too large" in err and str(huge) in err, err


@pytest.mark.parametrize("key", ["device_name", "driver_version", "pcie_timing"])
def test_a_context_text_of_200000_characters_is_not_a_gpubench_result(host_doc, tmp_path, key):
    doc = json.loads(json.dumps(host_doc))
    doc["context"][key] = "x" * 200_000
    path = tmp_path / "long.json"
    path.write_text(json.dumps(doc))
    code, out, err = cli("roofline.py", path, "--out", tmp_path / "r.png")
    assert code == 2 and err.count("\n") == 1 and "not a gpubench result" in err, err[:300]
    assert key in err and len(err) < 400 and not (tmp_path / "r.png").exists()


@pytest.mark.parametrize("tool, args", [("roofline.py", ["--list-cards"]),
                                        ("compare.py", ["{r2}", "{r}"])])
def test_a_reader_that_goes_away_ends_the_tool_as_sigpipe_quietly(tool, args, host_result,
                                                                  host_doc, tmp_path):
    # `tool | head -c 10`: "error: Broken pipe" and exit 2 hid the real status before
    import subprocess
    import sys

    from conftest import SCRIPTS, another_run

    (tmp_path / "r2.json").write_text(json.dumps(another_run(host_doc)))
    argv = [a.replace("{r2}", str(tmp_path / "r2.json")).replace("{r}", str(host_result))
            for a in args]
    proc = subprocess.Popen([sys.executable, str(SCRIPTS / tool), *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()  # before the tool has written anything (its imports take a while)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "Broken pipe" not in err and "Exception ignored" not in err and "Traceback" not in err


@pytest.mark.parametrize("fp32", ["1e308", "inf", "nan", "-1"])
def test_a_card_table_with_an_absurd_peak_is_one_line(tmp_path, fp32):
    """--cards-csv with FP32 1e308 or inf: an OverflowError traceback; nan drew "FP32 nan TFLOP/s";
    -1 dropped the roof silently."""
    header = (ROOT / "harness" / "model" / "cards.csv").read_text().splitlines()[0]
    table = tmp_path / "c.csv"
    table.write_text(f"{header}\nx,X,X,9.0,132,{fp32},990,990,1979,3350,50,5,16,s\n")
    _one_line("roofline.py", *cli("roofline.py", "--cards-csv", table, "--card", "x", "--out", tmp_path / "o.png"),
              f"{table}:2: column fp32_TFLOPS = ")
    assert not (tmp_path / "o.png").exists()


# ------------------------------------------------------------------ defects of a hostile run

def _store_of(host_doc, tmp_path, *docs_or_texts):
    """A results store of the host run's device key: the run itself first (an older night),
    then each document (or raw text) as a later stored file."""
    key = host_doc["context"]["device_key"]
    folder = tmp_path / "store" / key
    folder.mkdir(parents=True)
    first = json.loads(json.dumps(host_doc))
    first["context"]["date"] = "2026-01-01T00:00:00+00:00"  # another run than NEW
    (folder / "20260101T000000Z_a.json").write_text(json.dumps(first))
    paths = []
    for i, d in enumerate(docs_or_texts):
        p = folder / f"2026010{i + 2}T000000Z_a.json"
        p.write_text(d if isinstance(d, str) else json.dumps(d))
        paths.append(p)
    return tmp_path / "store", paths


DEEP_TEXT = "[" * 50000 + "]" * 50000


@pytest.mark.parametrize("tool, args", [
    ("report.py", ["{f}", "--out", "{tmp}/r.html"]), ("plot.py", ["{f}", "--out-dir", "{tmp}/p"]),
    ("run_cost.py", ["{f}"]), ("roofline.py", ["{f}", "--out", "{tmp}/r.png"]),
    ("validate.py", ["--result", "{f}"]), ("compare.py", ["{f}", "{r}"]), ("compare.py", ["{r}", "{f}"]),
    ("p2p_matrix.py", ["{f}"]),
])
@pytest.mark.parametrize("depth", [50000, 900])  # beyond the parser's stack, and within it
def test_a_deeply_nested_file_is_named_in_the_one_line(tool, args, depth, host_result, tmp_path):
    # It was "error: an input is nested too deeply to be a gpubench result", naming no file.
    f = tmp_path / "deep.json"
    f.write_text("[" * depth + "]" * depth)
    code, out, err = cli(tool, *[a.format(f=f, r=host_result, tmp=tmp_path) for a in args])
    _one_line(tool, code, out, err)
    assert err == (f"{tool}: error: {f}: not a gpubench result: nested too deeply (more than 64 "
                   f"levels of lists and objects)\n")


def test_a_deeply_nested_stored_file_is_left_out_of_the_history_with_a_note(host_result, host_doc, tmp_path):
    store, (deep,) = _store_of(host_doc, tmp_path, DEEP_TEXT)
    code, out, err = cli("compare.py", host_result, "--history", store, "--quiet")
    assert code == 0, err
    assert err == (f"compare.py: note: skipped baseline candidate: {deep}: not a gpubench result: nested too "
                   f"deeply (more than 64 levels of lists and objects)\n")


def _doubled(host_doc):
    """The host run with its benchmarks list concatenated twice."""
    doc = json.loads(json.dumps(host_doc))
    doc["benchmarks"] = doc["benchmarks"] * 2
    return doc


def _first_iteration(doc) -> tuple[int, str]:
    i, e = next((i, e) for i, e in enumerate(doc["benchmarks"]) if e.get("run_type") == "iteration")
    return i, e["run_name"].removesuffix("/manual_time")


@pytest.mark.parametrize("tool, args", [
    ("compare.py", ["{f}", "{r}"]), ("compare.py", ["{r}", "{f}"]), ("report.py", ["{f}", "--out", "{tmp}/r.html"]),
    ("validate.py", ["--result", "{f}"]), ("run_cost.py", ["{f}"]),
])
def test_a_file_with_its_entries_twice_is_refused_naming_the_repetition(tool, args, host_result, host_doc,
                                                                        tmp_path):
    # Pooled twice by compare, the repeated samples inflated the Mann-Whitney evidence.
    doc = _doubled(host_doc)
    f = tmp_path / "doubled.json"
    f.write_text(json.dumps(doc))
    i, name = _first_iteration(doc)
    again = i + len(host_doc["benchmarks"])
    code, out, err = cli(tool, *[a.format(f=f, r=host_result, tmp=tmp_path) for a in args])
    _one_line(tool, code, out, err)
    assert err == (f"{tool}: error: {f}: not a gpubench result: {name} has repetition 0 twice "
                   f"(benchmarks[{i}] and [{again}]): one run's entries repeated\n")


def test_a_stored_file_with_its_entries_twice_is_left_out_of_the_history(host_result, host_doc, tmp_path):
    doc = _doubled(host_doc)
    store, (f,) = _store_of(host_doc, tmp_path, doc)
    i, name = _first_iteration(doc)
    code, out, err = cli("compare.py", host_result, "--history", store, "--quiet")
    assert code == 0, err
    assert err == (f"compare.py: note: skipped baseline candidate: {f}: not a gpubench result: {name} has "
                   f"repetition 0 twice (benchmarks[{i}] and [{i + len(host_doc['benchmarks'])}]): one run's "
                   f"entries repeated\n")


@pytest.mark.parametrize("run_type, shown", [(None, "no run_type"), ("weird", 'run_type "weird"'),
                                             (3, "run_type 3")])
@pytest.mark.parametrize("tool, args", [
    ("compare.py", ["{f}", "{r}"]), ("report.py", ["{f}", "--out", "{tmp}/r.html"]),
    ("validate.py", ["--result", "{f}"]),
])
def test_an_entry_without_a_known_run_type_is_not_a_gpubench_result(tool, args, run_type, shown, host_result,
                                                                   host_doc, tmp_path):
    # compare called it "FAILED VERIFICATION: ...: not verified" (exit 1); report and validate took it (exit 0).
    doc = json.loads(json.dumps(host_doc))
    i, name = _first_iteration(doc)
    if run_type is None:
        del doc["benchmarks"][i]["run_type"]
    else:
        doc["benchmarks"][i]["run_type"] = run_type
    f = tmp_path / "odd.json"
    f.write_text(json.dumps(doc))
    code, out, err = cli(tool, *[a.format(f=f, r=host_result, tmp=tmp_path) for a in args])
    _one_line(tool, code, out, err)
    assert err == (f"{tool}: error: {f}: not a gpubench result: benchmarks[{i}] ({name}) has {shown}, not "
                   f"'iteration' or 'aggregate'\n")


def test_control_characters_of_a_path_and_of_a_baseline_message_are_escaped(host_result, host_doc, tmp_path):
    code, out, err = cli("compare.py", "/tmp/no\x1b[31msuch", host_result)
    assert (code, err) == (2, "compare.py: error: /tmp/no\\x1b[31msuch: no such file\n")
    doc = json.loads(json.dumps(host_doc))
    i, name = _first_iteration(doc)
    e = doc["benchmarks"][i]
    e.update(error_occurred=True, error_message="verification failed: out[1] = 0\nexpected 2")
    for k in ("GB/s", "sector_GB/s", "TFLOPS", "pct_of_peak", "flop_per_byte"):
        e.pop(k, None)
    base = tmp_path / "base.json"
    base.write_text(json.dumps(doc))
    code, out, err = cli("compare.py", host_result, base)
    line = _one_line("compare.py", code, out, err, "out[1] = 0\\nexpected 2")
    assert "\x1b" not in line


def test_the_cache_plateau_comes_only_from_sets_of_1_64_of_the_cache_up(host_doc, tmp_path):
    # With only 4 KiB and 64 KiB sets of a 32 MiB cache, the report quoted the 64 KiB copy and the
    # roofline the median of 4KiB-64KiB as the last-level cache: both sets sit in a core's L1.
    from gpubench_tools.report import headlines
    from gpubench_tools.results import parse_result
    from gpubench_tools.cards import load_cards
    from gpubench_tools.roofline import result_series

    doc = json.loads(json.dumps(host_doc))
    l2 = float(doc["context"]["l2_bytes"])
    small = [e for e in doc["benchmarks"] if "bytes:" in (e.get("run_name") or e["name"])
             and e.get("working_set_bytes", l2) < l2 / 64]
    assert small
    doc["benchmarks"] = small
    r = parse_result(doc, tmp_path / "small.json")
    assert [h.what for h in headlines(r) if "plateau" in h.what] == []
    assert [c.label for c in result_series(r, load_cards()).ceilings if c.kind == "l2"] == []
    # The full run's plateau is read from 1/64 of the cache up, by the report and the roofline alike.
    full = parse_result(host_doc)
    (plateau,) = [h for h in headlines(full) if "plateau" in h.what]
    assert full.benchmarks[plateau.row].median("working_set_bytes") >= l2 / 64
    (line,) = [c for c in result_series(full, load_cards()).ceilings if c.kind == "l2" and c.empirical]
    assert all(full.benchmarks[n].median("working_set_bytes") >= l2 / 64
               for n in line.source.split(": ", 1)[1].split(", "))


def _with_lone_surrogate(host_doc, tmp_path, where: str) -> Path:
    """The result with an unpaired surrogate escape (valid JSON syntax, never written by a UTF-8
    writer) in its device name or in an entry's error message."""
    doc = json.loads(json.dumps(host_doc))
    if where == "device_name":
        doc["context"]["device_name"] = "CPU \ud800 forged"
    else:
        i, _ = _first_iteration(doc)
        doc["benchmarks"][i].update(error_occurred=True, error_message="failed \udfff here")
    path = tmp_path / f"surrogate_{where}.json"
    path.write_text(json.dumps(doc))  # ensure_ascii: written as the escape \ud800
    assert "\\ud800" in path.read_text() or "\\udfff" in path.read_text()
    return path


@pytest.mark.parametrize("where", ["device_name", "error_message"])
@pytest.mark.parametrize("tool, args", [("run_cost.py", []), ("report.py", ["--out", "{tmp}/r.html"]),
                                        ("plot.py", ["--out-dir", "{tmp}/plots"]),
                                        ("roofline.py", ["--out", "{tmp}/r.png"]), ("compare.py", ["{r}"])])
def test_a_lone_surrogate_in_a_result_is_one_line_not_a_traceback(tool, args, where, host_doc, host_result,
                                                                   tmp_path):
    """printing or writing it as UTF-8 raised UnicodeEncodeError: tracebacks in run_cost, the
    report and both plots."""
    bad = _with_lone_surrogate(host_doc, tmp_path, where)
    code, out, err = cli(tool, bad, *[a.format(tmp=tmp_path, r=host_result) for a in args])
    _one_line(tool, code, out, err, str(bad), "unpaired UTF-16 surrogate")
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "r.png").exists()
    assert not (tmp_path / "plots").exists() or not any((tmp_path / "plots").iterdir())


def test_a_surrogate_pair_is_one_character_and_accepted(host_doc, tmp_path):
    doc = json.loads(json.dumps(host_doc))
    doc["context"]["device_name"] = "CPU \U0001F600"  # written as \ud83d\ude00
    path = tmp_path / "pair.json"
    path.write_text(json.dumps(doc))
    assert "\\ud83d\\ude00" in path.read_text()
    code, out, err = cli("run_cost.py", path)
    assert code == 0, err
    assert "CPU \U0001F600" in out


def test_a_report_of_a_file_whose_name_is_not_utf8_is_written(host_result, tmp_path):
    """The name reached the page as a surrogate-escaped str, and writing the page as UTF-8
    raised."""
    name = os.fsdecode(b"r\xff.json")
    (tmp_path / name).write_bytes(host_result.read_bytes())
    out = tmp_path / "r.html"
    code, stdout, err = cli("report.py", tmp_path / name, "--out", out)
    assert code == 0, err
    assert "r\\udcff.json" in out.read_text(encoding="utf-8")


def test_output_in_a_locale_that_is_not_utf8_is_escaped_not_a_traceback(host_doc, tmp_path):
    """LC_ALL=C without Python's UTF-8 mode: stdout is ASCII, and a non-ASCII device name ended
    run_cost.py in a UnicodeEncodeError (after validate.py and fleet.py had written their files)."""
    import subprocess

    doc = json.loads(json.dumps(host_doc))
    doc["context"]["device_name"] = "Ryzen\u2122 \u7bc0\u70b9"
    path = tmp_path / "unicode.json"
    path.write_text(json.dumps(doc))
    env = {k: v for k, v in os.environ.items() if not k.startswith("LC_") and k not in ("LANG", "PYTHONUTF8")}
    env.update(LC_ALL="C", PYTHONUTF8="0", PYTHONIOENCODING="")
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "run_cost.py"), str(path)], capture_output=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert b"Traceback" not in r.stderr
    assert b"Ryzen\\u2122 \\u7bc0\\u70b9" in r.stdout


@pytest.mark.parametrize("tool", ["report.py", "plot.py", "roofline.py", "validate.py", "run_cost.py", "compare.py"])
def test_a_result_with_no_benchmarks_is_bad_input_for_every_tool(host_doc, host_result, tmp_path, tool):
    # gpubench refuses a filter that selects nothing and writes skipped rows: an empty list is no
    # run of it. report.py wrote an empty page and plot.py and validate.py exited 0.
    doc = json.loads(json.dumps(host_doc))
    doc["benchmarks"] = []
    empty = write_json(doc, tmp_path / "empty.json")
    args = {"report.py": [empty, "--out", tmp_path / "r.html"], "plot.py": [empty, "--out-dir", tmp_path / "p"],
            "roofline.py": [empty, "--out", tmp_path / "r.png"], "validate.py": ["--result", empty],
            "run_cost.py": [empty], "compare.py": [empty, host_result]}[tool]
    _one_line(tool, *cli(tool, *args), f"{empty}: not a gpubench result: its benchmarks list is empty")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.json"]


@pytest.fixture(scope="module")
def peak_fma_doc(tmp_path_factory) -> dict:
    """A real quick host run of the FP32 peak-FMA rows (with a copy row beside them)."""
    from conftest import gpubench
    out = tmp_path_factory.mktemp("fma") / "fma.json"
    proc = gpubench("--device=host", "--quick", "--filter=^(compute/peak_fp32_fma/|bandwidth/copy/kernel/bytes:4KiB)",
                    f"--out={out}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize("how", ["no TFLOPS", "error_occurred 0", "error_occurred null"])
def test_compute_rows_without_their_rate_leave_the_report_and_fleet_without_that_headline(peak_fma_doc, tmp_path,
                                                                                           how):
    # report.py and fleet.py raised AttributeError (a traceback) quoting a peak-FMA headline for a
    # kernel none of whose rows has a TFLOPS number.
    doc = json.loads(json.dumps(peak_fma_doc))
    compute = [e for e in doc["benchmarks"] if e["name"].startswith("compute/peak_")]
    assert compute
    for e in compute:
        if how == "no TFLOPS":
            e.pop("TFLOPS", None)
        else:  # a skipped row whose error flag is falsy: it "ran", with no numbers
            e["error_occurred"] = 0 if how == "error_occurred 0" else None
            e["error_message"] = "skipped: planted"
            e.pop("TFLOPS", None)
    bad = write_json(doc, tmp_path / "bad.json")
    code, out, err = cli("report.py", bad, "--out", tmp_path / "r.html")
    assert code == 0 and "Traceback" not in err, err
    assert "peak FMA (peak_fp32_fma)" not in (tmp_path / "r.html").read_text()
    good = write_json(peak_fma_doc, tmp_path / "good.json")
    assert cli("report.py", good, "--out", tmp_path / "g.html")[0] == 0
    assert "peak FMA (peak_fp32_fma)" in (tmp_path / "g.html").read_text()  # the headline the bad file lacks
    store = tmp_path / "store" / doc["context"]["device_key"]
    for i in range(3):
        d = json.loads(json.dumps(doc))
        d["context"]["host_name"] = f"n{i}"
        write_json(d, store / f"2026010{i + 1}T000000Z_a.json")
    code, out, err = cli("fleet.py", tmp_path / "store", "--quiet")
    assert code in (0, 1) and "Traceback" not in err, err


@pytest.mark.parametrize("counter, value, says", [("overlap_efficiency", 1e308, "above 1000"),
                                                  ("kernel_slowdown", float("inf"), "not a measured number"),
                                                  ("bidir_copy_speedup", -2.0, "negative")])
def test_an_absurd_overlap_ratio_is_not_a_gpubench_result(tmp_path, counter, value, says):
    # Plotted unchecked: matplotlib's overflow warning reached stderr and the plot was drawn.
    from fixtures import memory_result
    doc = memory_result("cuda")
    for e in doc["benchmarks"]:
        if counter in e:
            e[counter] = value
    bad = write_json(doc, tmp_path / "bad.json")
    _one_line("plot.py", *cli("plot.py", bad, "--out-dir", tmp_path / "p"), str(bad), "not a gpubench result",
              counter, says)


def test_overlap_rows_without_their_ratios_plot_without_a_warning(tmp_path):
    # The upper panel had nothing labelled and matplotlib warned "No artists with labels" on stderr.
    from fixtures import memory_result
    doc = memory_result("cuda")
    for e in doc["benchmarks"]:
        for k in ("overlap_efficiency", "kernel_slowdown", "bidir_copy_speedup"):
            e.pop(k, None)
    f = write_json(doc, tmp_path / "r.json")
    code, out, err = cli("plot.py", f, "--out-dir", tmp_path / "p")
    assert code == 0 and "Warning" not in err, err


@pytest.mark.parametrize("tool, before", [("run_cost.py", []), ("report.py", []), ("plot.py", []),
                                          ("roofline.py", []), ("compare.py", []), ("compare.py", ["{result}"]),
                                          ("p2p_matrix.py", [])])
def test_an_empty_path_is_called_empty(tool, before, host_result):
    """'' as a result file (an unset shell variable) was read as Path('') - the current folder -
    and refused as ".: is a directory", naming a folder the user never typed."""
    args = [a.format(result=host_result) for a in before] + [""]
    code, out, err = cli(tool, *args)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1, err
    assert lines[0].startswith(f"{tool}: error: argument ") and ": an empty path" in lines[0], err
    assert " .:" not in lines[0], err


@pytest.mark.parametrize("output, says", [("dangling", "is a symbolic link"), (".", "is a directory"),
                                          ("a\nb.json", "control characters")])
@pytest.mark.parametrize("flag", ["--json", "--markdown", "--junit"])
def test_validate_refuses_an_output_before_reading_or_running_anything(host_result, tmp_path, monkeypatch,
                                                                       output, says, flag):
    """Refused before the verdicts: a dangling link (exists() does not see one: the verdicts
    were printed, or a whole acceptance run made, before the refusal), the current folder (called
    "an empty value"), a name with a newline (written as given)."""
    monkeypatch.chdir(tmp_path)
    if output == "dangling":
        output = "out.link"
        (tmp_path / output).symlink_to(tmp_path / "nowhere.json")
    code, out, err = cli("validate.py", "--result", host_result, flag, output)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1, (out, err)
    assert lines[0].startswith("validate.py: error: ") and says in lines[0] and "\n" not in lines[0][:-1], err
    assert sorted(p.name for p in tmp_path.iterdir()) == (["out.link"] if output == "out.link" else [])


def test_run_cost_writes_the_control_characters_of_a_result_as_escapes(host_doc, tmp_path):
    doc = json.loads(json.dumps(host_doc))
    doc["context"]["device_name"] = "EVIL\u001b[31mRED\u001b]0;title\u0007\nNEXT\u2028"
    f = write_json(doc, tmp_path / "evil.json")
    code, out, err = cli("run_cost.py", f)
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\u2028" not in out
    assert out.splitlines()[0].endswith("(EVIL\\x1b[31mRED\\x1b]0;title\\x07\\nNEXT\\u2028)"), out.splitlines()[0]


def test_roofline_refuses_a_copy_of_a_run_under_another_name(host_result, tmp_path):
    """Only the same path was refused: a copy drew the same run twice as two series."""
    copy = tmp_path / "copy.json"
    copy.write_bytes(host_result.read_bytes())
    png = tmp_path / "r.png"
    code, out, err = cli("roofline.py", host_result, copy, "--out", png)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0] == f"roofline.py: error: {copy}: the same run as {host_result} (a copy); each result is drawn once"
    assert not png.exists()


@pytest.mark.parametrize("tool", ["nightly.py", "validate.py"])
def test_an_empty_gpubench_bin_is_refused_not_taken_for_the_default(tool, tmp_path, monkeypatch):
    """GPUBENCH_BIN= (a variable left empty by a job's template) ran the build tree's gpubench."""
    monkeypatch.setenv("GPUBENCH_BIN", "")
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(tool, "--results-dir", tmp_path / "store", "--device", "host")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0] == f"{tool}: error: GPUBENCH_BIN is set but empty (unset it for the default)", err
    assert not (tmp_path / "store").exists()
