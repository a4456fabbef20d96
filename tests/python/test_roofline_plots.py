"""Roofline and sweep plots: chart data checked against the JSON values, the figures' artists
checked against that data and the JSON (every ceiling, series and point drawn where and as it
must be), the PNGs (the pixels of those checked figures), bad input."""

import json
import statistics

import numpy as np
import pytest

from chart_artists import (assert_png, check_plot_figure, check_roofline_figure,
                           labelled_lines, labelled_scatters, legend_labels, same_points, xy)
from conftest import cli, run_script
from fixtures import H100_CONTEXT, PEAK_SMEM_GBPS, h100_result, write_json
from gpubench_tools.cards import find_card, load_cards
from gpubench_tools.plots import (ALL_PLOTS, DPI as PLOT_DPI, FIGSIZE as PLOT_FIGSIZE,
                                  bandwidth_data, gemm_data, pcie_data, strided_data)
from gpubench_tools.results import load_result
from gpubench_tools.roofline import DPI, FIGSIZE, MEMORY_COLUMN_X, roofline_data

CARDS = load_cards()
ROOFLINE_PX = (int(FIGSIZE[0] * DPI), int(FIGSIZE[1] * DPI))
PLOT_PX = (int(PLOT_FIGSIZE[0] * PLOT_DPI), int(PLOT_FIGSIZE[1] * PLOT_DPI))


def raw_median(doc, name, counter):
    """Median over repetitions of a counter, straight from the JSON entries."""
    vals = [e[counter] for e in doc["benchmarks"]
            if e.get("run_name", "").startswith(name + "/") and e.get("run_type") == "iteration"
            and not e.get("error_occurred") and counter in e]
    return statistics.median(vals) if vals else None


@pytest.fixture(params=["legacy", "labelled"])
def h100(tmp_path, request):
    """The synthetic H100 result in both forms: without labels (the legacy fallback) and with
    the labels gpubench writes now; every check below must hold for both."""
    doc = h100_result(labelled=request.param == "labelled")
    return doc, load_result(write_json(doc, tmp_path / "h100.json"))


def test_theoretical_ceilings_come_from_the_card_table(h100):
    doc, r = h100
    s = roofline_data([r], [], CARDS).series[0]
    card = find_card("h100_sxm", CARDS)
    assert s.ceiling("dram").value == card.dram_GBps == 3350
    assert s.ceiling("fp32").value == card.fp32_TFLOPS
    assert s.ceiling("fp16_tensor").value == card.fp16_tensor_TFLOPS
    # PCIe from the negotiated link in the result's context.
    assert s.ceiling("pcie").value == float(doc["context"]["peak_pcie_h2d_GBps"])
    assert s.ceiling("dram").diagonal and not s.ceiling("fp32").diagonal
    assert s.ridge("fp32") == pytest.approx(66.9e12 / 3350e9)  # 19.97 FLOP/byte
    assert s.ridge("fp16_tensor") == pytest.approx(989e12 / 3350e9)
    assert s.ridge("fp16_tensor", "pcie") == pytest.approx(989e12 / 63.0154e9, rel=1e-5)
    assert not s.notes


def test_empirical_ceilings_are_the_best_measured_values(h100):
    doc, r = h100
    s = roofline_data([r], [], CARDS).series[0]
    l2 = float(doc["context"]["l2_bytes"])
    streaming = [b.name for b in r.benchmarks.values() if b.ok and not b.verification_failed
                 and (b.family == "roofline" or (b.family == "bandwidth" and b.kernel not in
                                                 ("chase",) and not b.kernel.startswith("pcie")))
                 and raw_median(doc, b.name, "working_set_bytes") > 2 * l2]
    want_bw = max(raw_median(doc, n, "GB/s") for n in streaming)
    want_tf = max(raw_median(doc, b.name, "TFLOPS") or 0 for b in r.benchmarks.values())
    assert s.ceiling("empirical_bandwidth").value == pytest.approx(want_bw)
    assert s.ceiling("empirical_compute").value == pytest.approx(want_tf)
    assert s.ceiling("empirical_bandwidth").empirical
    # The 4 MiB copy (inside L2) is faster but must not set the DRAM-level ceiling.
    assert raw_median(doc, "bandwidth/copy/kernel/bytes:4MiB", "GB/s") > want_bw


def test_points_sit_at_their_intensity_and_throughput(h100):
    doc, r = h100
    s = roofline_data([r], [], CARDS).series[0]
    points = {p.name: p for p in s.points}
    flop_names = {b.name for b in r.benchmarks.values() if b.ok and raw_median(doc, b.name, "TFLOPS")}
    assert {n for n, p in points.items() if not p.memory} == flop_names
    for n in flop_names:
        assert points[n].x == pytest.approx(raw_median(doc, n, "flop_per_byte"))
        assert points[n].y == pytest.approx(raw_median(doc, n, "TFLOPS"))
    assert points["compute/sgemm/cublas/m:4096,n:4096,k:4096"].library
    assert not points["compute/sgemm/kernel/m:4096,n:4096,k:4096"].library
    assert not points["roofline/intensity/fp32/fma:16,bytes:1GiB"].library
    # Memory benchmarks: the largest size of each sweep, on its own diagonal at the column.
    mem = {n: p for n, p in points.items() if p.memory}
    assert "bandwidth/copy/kernel/bytes:1GiB" in mem and "bandwidth/copy/kernel/bytes:4MiB" not in mem
    assert "bandwidth/gather/kernel/bytes:1GiB" not in mem  # failed verification: not drawn
    for n, p in mem.items():
        assert p.x == MEMORY_COLUMN_X
        assert p.y == pytest.approx(raw_median(doc, n, "GB/s") * MEMORY_COLUMN_X / 1000)
    assert mem["bandwidth/pcie_h2d/memcpy_ce/bytes:256MiB"].pcie


def test_a_card_the_table_lacks_falls_back_to_the_context_peaks(tmp_path):
    doc = h100_result()
    doc["context"].update(device_name="NVIDIA Future GPU", peak_dram_GBps="5000",
                          peak_fp32_TFLOPS="90", peak_fp16_tensor_TFLOPS="unknown")
    r = load_result(write_json(doc, tmp_path / "future.json"))
    s = roofline_data([r], [], CARDS).series[0]
    assert s.ceiling("dram").value == 5000 and s.ceiling("fp32").value == 90
    assert s.ceiling("fp16_tensor") is None
    assert any("not in cards.csv" in n for n in s.notes)
    code, out, err = cli("roofline.py", r.path, "--out", tmp_path / "future.png")
    assert code == 0 and out.strip() == str(tmp_path / "future.png")
    assert err.count("\n") == 1 and "using the peaks in the result's context" in err


def test_cards_only_chart_has_each_cards_roofline():
    cards = [find_card("h100_sxm", CARDS), find_card("a100_80gb_sxm", CARDS)]
    d = roofline_data([], cards, CARDS)
    assert [s.ceiling("dram").value for s in d.series] == [3350, 2039]
    assert [s.ceiling("pcie").value for s in d.series] == pytest.approx([63.0154, 31.5077], abs=1e-3)
    assert all(not s.points for s in d.series)
    assert "H100 SXM" in d.title and "A100 80GB SXM" in d.title
    lo, hi = d.y_range
    assert lo < 2039 * MEMORY_COLUMN_X / 1000 and hi > 989


def test_real_host_run_has_no_theoretical_ceilings_and_its_measured_ones(host_result, host_doc):
    r = load_result(host_result)
    s = roofline_data([r], [], CARDS).series[0]
    assert sorted(c.kind for c in s.ceilings) == ["empirical_bandwidth", "empirical_compute"]
    assert any("no theoretical peaks" in n for n in s.notes)
    mem = [p for p in s.points if p.memory]
    assert mem
    for p in mem:
        assert p.GBps == pytest.approx(raw_median(host_doc, p.name, "GB/s"))
    # Best of the rows whose label targets DRAM (peak=dram, or the intensity sweep at
    # level=dram), the largest size of each sweep (a quick host run has nothing beyond 2 x LLC);
    # cache-resident rows (peak=l2) never set it.
    largest = {}
    for b in r.benchmarks.values():
        dram = b.peak_kind == "dram" or (b.family == "roofline" and b.level == "dram")
        if not (b.ok and dram):
            continue
        key = (b.kernel, b.variant, tuple(sorted((k, v) for k, v in b.params.items() if k != "bytes")))
        if key not in largest or b.size_bytes() > largest[key].size_bytes():
            largest[key] = b
    assert largest
    assert s.ceiling("empirical_bandwidth").value == pytest.approx(max(b.median("GB/s") for b in largest.values()))
    cached = [b for b in r.benchmarks.values() if b.ok and b.family == "bandwidth" and b.level == "l2"]
    assert cached and all(b.peak_kind == "l2" for b in cached)
    sweep = [p for p in s.points if p.sweep]
    assert sweep, "the host run has the FP32 intensity sweep"
    for p in sweep:
        assert p.x == pytest.approx(raw_median(host_doc, p.name, "flop_per_byte"))
        assert p.y == pytest.approx(raw_median(host_doc, p.name, "TFLOPS"))


def test_the_readme_command_form_writes_and_prints_the_png(tmp_path, host_result):
    r = load_result(host_result)
    out = tmp_path / "plots" / r.device_key / f"{host_result.stem}.png"
    proc = run_script("roofline.py", host_result, "--out", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out)
    # The file holds the chart of the result's data, whose artists are checked here.
    assert_png(out, ROOFLINE_PX, check_roofline_figure(roofline_data([r], [], CARDS)))


def test_several_results_and_cards_on_one_chart(tmp_path, host_result):
    fx = write_json(h100_result(), tmp_path / "h100.json")
    png = tmp_path / "several.png"
    code, out, err = cli("roofline.py", host_result, fx, "--card", "b200", "--card", "L40S",
                         "--out", png)
    assert code == 0, err
    assert out.strip() == str(png)
    d = roofline_data([load_result(host_result), load_result(fx)],
                      [find_card("b200", CARDS), find_card("l40s", CARDS)], CARDS)
    assert [s.label for s in d.series] == [
        load_result(host_result).label(), "H100 SXM 2026-11-22", "B200 (cards.csv)",
        "L40S (cards.csv)"]
    # Each series' ceilings and points drawn, named "<series>: <ceiling>" in the legend.
    fig = check_roofline_figure(d)
    legend = legend_labels(fig.axes[0])
    assert "B200 (cards.csv): DRAM 8000 GB/s" in legend
    assert "H100 SXM 2026-11-22: FP32 66.9 TFLOP/s" in legend
    assert_png(png, ROOFLINE_PX, fig)


def test_card_only_png_and_list(tmp_path):
    code, out, err = cli("roofline.py", "--card", "h100_sxm", "--out", tmp_path / "h.png")
    assert code == 0, err
    d = roofline_data([], [find_card("h100_sxm", CARDS)], CARDS)
    fig = check_roofline_figure(d)
    assert sorted(labelled_lines(fig.axes[0])) == sorted([
        "DRAM 3350 GB/s", "FP32 66.9 TFLOP/s", "FP16 tensor 989 TFLOP/s",
        "PCIe 63.0 GB/s per direction"])
    assert not labelled_scatters(fig.axes[0])  # a card has no points
    assert_png(tmp_path / "h.png", ROOFLINE_PX, fig)
    code, out, _ = cli("roofline.py", "--list-cards")
    assert code == 0 and len(out.splitlines()) == len(CARDS)


@pytest.mark.parametrize("case", ["missing", "not_gpubench", "truncated", "unknown_card",
                                  "nothing", "bad_flag"])
def test_roofline_bad_input_is_one_line_and_exit_2(tmp_path, case):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"context": {"date": "x"}, "benchmarks": []}))
    trunc = tmp_path / "trunc.json"
    trunc.write_text(json.dumps(h100_result())[:500])
    args, words = {
        "missing": ([tmp_path / "nope.json"], [str(tmp_path / "nope.json"), "no such file"]),
        "not_gpubench": ([other], [str(other), "not a gpubench result"]),
        "truncated": ([trunc], [str(trunc), "not valid JSON"]),
        "unknown_card": (["--card", "v9000"], ["unknown card 'v9000'", "h100_sxm", "rtx_4090"]),
        "nothing": ([], ["nothing to draw"]),
        "bad_flag": (["--colour", "red"], ["unrecognized arguments"]),
    }[case]
    proc = run_script("roofline.py", *args, "--out", tmp_path / "x.png")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for w in words:
        assert w in lines[0]
    assert not (tmp_path / "x.png").exists()


def test_sweep_plot_data_matches_the_json(h100):
    doc, r = h100
    bw = bandwidth_data(r)
    copy = next(l for l in bw.lines if l.label.startswith("copy [kernel]"))
    assert copy.xs == [8 << 20, 128 << 20, 2 << 30]
    assert copy.ys == [raw_median(doc, f"bandwidth/copy/kernel/bytes:{t}", "GB/s")
                       for t in ("4MiB", "64MiB", "1GiB")]
    assert next(l for l in bw.lines if "memcpy_ce" in l.label).dashed
    assert bw.vlines == [(float(H100_CONTEXT["l2_bytes"]), "L2 50 MiB")]
    assert bw.hlines[0][0] == 3350
    st = strided_data(r)
    useful, sector = st.lines
    assert useful.xs == [1, 2, 8] and not useful.dashed and sector.dashed
    assert sector.ys[2] == pytest.approx(raw_median(
        doc, "bandwidth/strided/kernel/bytes:1GiB,stride:8", "sector_GB/s"))
    pc = pcie_data(r)
    assert pc.lines[0].xs == [64 << 10, 16 << 20, 256 << 20]
    assert [h[0] for h in pc.hlines] == pytest.approx([63.0154, 63.0154])
    gm = gemm_data(r)
    cublas = next(l for l in gm.lines if "cublas" in l.label)
    assert cublas.dashed and cublas.xs == [1024, 4096] and cublas.ys == pytest.approx([30, 50])
    assert gm.hlines == [(66.9, "FP32 peak 66.9 TFLOP/s")]


def kind_of(png, result_path) -> str:
    """The plot kind in a PNG name plot.py wrote: <result stem>_<kind>.png."""
    stem = f"{result_path.stem}_"
    assert png.name.startswith(stem) and png.suffix == ".png", png
    return png.name.removeprefix(stem).removesuffix(".png")


def test_plot_cli_draws_only_the_plots_whose_data_is_present(tmp_path, host_result, host_doc):
    code, out, err = cli("plot.py", host_result, "--out-dir", tmp_path / "p")
    assert code == 0, err
    written = [tmp_path / "p" / line.split("/")[-1] for line in out.split()]
    kinds = {kind_of(p, host_result) for p in written}
    names = {e["run_name"] for e in host_doc["benchmarks"]}
    assert ("pcie" in kinds) == any("/pcie_" in n for n in names)
    assert ("strided" in kinds) == any("/strided/" in n for n in names)
    assert ("gemm" in kinds) == any("gemm/" in n for n in names)
    assert "bandwidth" in kinds
    r = load_result(host_result)
    data = {d.kind: d for make in ALL_PLOTS if (d := make(r)) is not None}
    assert sorted(kinds) == sorted(data)
    for p in written:  # each file is the checked figure of its data
        assert_png(p, PLOT_PX, check_plot_figure(data[kind_of(p, host_result)]))
    fx = load_result(write_json(h100_result(), tmp_path / "h100.json"))
    assert [d.kind for make in ALL_PLOTS if (d := make(fx))] == ["bandwidth", "strided", "pcie",
                                                                  "gemm"]


def test_plot_cli_bad_input(tmp_path):
    proc = run_script("plot.py", tmp_path / "missing.json")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "missing.json: no such file" in proc.stderr


def test_aggregates_only_files_plot_their_median_aggregates(tmp_path, host_doc):
    doc = json.loads(json.dumps(host_doc))
    doc["benchmarks"] = [e for e in doc["benchmarks"] if e["run_type"] == "aggregate"]
    r = load_result(write_json(doc, tmp_path / "agg.json"))
    s = roofline_data([r], [], CARDS).series[0]
    assert s.points
    for p in s.points:
        agg = next(e for e in doc["benchmarks"] if e["run_name"].startswith(p.name + "/")
                   and e["aggregate_name"] == "median")
        assert p.GBps == pytest.approx(agg["GB/s"])
    code, _, err = cli("compare.py", r.path, r.path)
    assert code == 2 and "too little data" in err and "aggregates_only" in err


def test_host_sweep_marks_its_last_level_cache_not_an_l2(host_result, host_doc):
    r = load_result(host_result)
    bw = bandwidth_data(r)
    assert len(bw.vlines) == 1
    assert bw.vlines[0][0] == float(host_doc["context"]["l2_bytes"])
    assert bw.vlines[0][1].startswith("last-level cache ")


# --- what the charts draw: their artists, against the data and the JSON ---------------------


def line_slope(lines, label):
    """GB/s of a diagonal: y x 1000 / x where it enters the chart (the memory column)."""
    x, y = xy(lines[label])
    return y[0] * 1000.0 / x[0]


def roof_value_and_start(lines, label):
    """(TFLOP/s, first intensity) of a roof: its drawn part."""
    x, y = xy(lines[label])
    fin = np.isfinite(y)
    assert fin.any(), label
    assert np.ptp(y[fin]) == 0, f"{label} is not flat"
    return y[fin][0], x[fin][0]


def test_roofline_figure_draws_every_ceiling_and_point_of_its_data(h100):
    _, r = h100
    data = roofline_data([r], [], CARDS)
    s = data.series[0]
    kinds = {c.kind for c in s.ceilings}
    assert kinds >= {"dram", "fp32", "fp16_tensor", "pcie", "empirical_bandwidth",
                     "empirical_compute"}
    assert ("smem" in kinds) == (r.ctx("peak_smem_GBps") != "")
    fig = check_roofline_figure(data)
    # the legend: the ceilings, the sweep and the point groups, nothing else
    assert len(legend_labels(fig.axes[0])) == len(s.ceilings) + 1 + len(
        labelled_scatters(fig.axes[0]))


def test_roofline_figure_shows_the_json_values(h100):
    """Read from the figure alone: each ceiling's line at the card's / context's / measured value
    it names, each benchmark's marker at its JSON coordinates in its group."""
    doc, r = h100
    ax = check_roofline_figure(roofline_data([r], [], CARDS)).axes[0]
    lines, scatters = labelled_lines(ax), labelled_scatters(ax)
    # theoretical: the card table (H100 SXM), the negotiated link, the context's smem figure
    assert line_slope(lines, "DRAM 3350 GB/s") == pytest.approx(3350)
    assert line_slope(lines, "PCIe 63.0 GB/s per direction") == pytest.approx(63.0154)
    value, start = roof_value_and_start(lines, "FP32 66.9 TFLOP/s")
    assert value == pytest.approx(66.9) and start == pytest.approx(66.9e3 / 3350, rel=0.02)
    value, start = roof_value_and_start(lines, "FP16 tensor 989 TFLOP/s")
    assert value == pytest.approx(989) and start == pytest.approx(989e3 / 3350, rel=0.02)
    if r.ctx("peak_smem_GBps"):
        assert line_slope(lines, "shared memory 33.4 TB/s") == pytest.approx(float(PEAK_SMEM_GBPS))
    else:
        assert not any(k.startswith("shared memory") for k in lines)
    # measured: the best DRAM-level GB/s beyond 2 x L2 and the best TFLOP/s in the JSON
    l2 = float(doc["context"]["l2_bytes"])
    dram_rows = [b.name for b in r.benchmarks.values() if b.ok and b.peak_kind == "dram"
                 and raw_median(doc, b.name, "working_set_bytes") > 2 * l2]
    best_bw = max(raw_median(doc, n, "GB/s") for n in dram_rows)
    best_tf = max(raw_median(doc, b.name, "TFLOPS") or 0 for b in r.benchmarks.values()
                  if b.ok)
    (bw_label,) = [k for k in lines if k.startswith(f"measured {best_bw:.4g} GB/s (")]
    assert line_slope(lines, bw_label) == pytest.approx(best_bw)
    assert lines[bw_label].get_linestyle() == "--"
    (tf_label,) = [k for k in lines if k.startswith(f"measured {best_tf:.4g} TFLOP/s (")]
    assert roof_value_and_start(lines, tf_label)[0] == pytest.approx(best_tf)
    # points: GEMM kernels filled, cuBLAS hollow, at (flop_per_byte, TFLOPS)
    at = lambda n: (raw_median(doc, n, "flop_per_byte"), raw_median(doc, n, "TFLOPS"))
    gemm = "compute/sgemm/{}/m:{n},n:{n},k:{n}"
    same_points(scatters["gpubench kernels"], [at(gemm.format("kernel", n=n)) for n in (1024, 4096)],
                "gpubench kernels")
    same_points(scatters["library references"], [at(gemm.format("cublas", n=n)) for n in (1024, 4096)],
                "library references")
    # the intensity sweep: one curve through its three points, in intensity order
    x, y = xy(lines["intensity [fp32] sweep (labels: its parameter)"])
    sweep = [at(f"roofline/intensity/fp32/fma:{k},bytes:1GiB") for k in (1, 16, 256)]
    assert list(x) == pytest.approx([p[0] for p in sweep])
    assert list(y) == pytest.approx([p[1] for p in sweep])
    # memory rows in the column, on their own diagonal: y = GB/s / 32 / 1000
    col = lambda n: (MEMORY_COLUMN_X, raw_median(doc, n, "GB/s") * MEMORY_COLUMN_X / 1000)
    mem = ["bandwidth/copy/kernel/bytes:1GiB"] + [
        f"bandwidth/strided/kernel/bytes:1GiB,stride:{k}" for k in (1, 2, 8)]
    if r.ctx("peak_smem_GBps"):
        mem.append("bandwidth/smem/kernel/bytes:32KiB")
    same_points(scatters["memory kernels (memory column)"], [col(n) for n in mem], "memory kernels")
    same_points(scatters["memory library references (memory column)"],
                [col("bandwidth/copy/memcpy_ce/bytes:1GiB")], "memory library references")
    same_points(scatters["PCIe library references (memory column)"],
                [col("bandwidth/pcie_h2d/memcpy_ce/bytes:256MiB")], "PCIe")
    # the failed gather is drawn nowhere
    assert not any("gather" in t.get_text() for t in ax.texts)


def test_roofline_figure_of_a_real_host_run(host_result, host_doc):
    r = load_result(host_result)
    data = roofline_data([r], [], CARDS)
    ax = check_roofline_figure(data).axes[0]
    lines = labelled_lines(ax)
    s = data.series[0]
    # no theoretical ceiling on the host: the two measured ones and the sweep(s) only
    assert sorted(lines) == sorted([c.label for c in s.ceilings] + [
        f"{p} sweep (labels: its parameter)" for p in {p.sweep for p in s.points if p.sweep}])
    assert line_slope(lines, s.ceiling("empirical_bandwidth").label) == pytest.approx(
        s.ceiling("empirical_bandwidth").value)
    best_tf = max(raw_median(host_doc, b.name, "TFLOPS") or 0 for b in r.benchmarks.values()
                  if b.ok)
    assert roof_value_and_start(lines, s.ceiling("empirical_compute").label)[0] == \
        pytest.approx(best_tf)


SWEEP_FIGURES = {
    # kind: (the labels the legend must hold exactly, per labelled line: (x values, JSON row
    # names or None, counter, dashed), per peak label: y, per mark label: x)
    "bandwidth": {
        "lines": {
            "copy [kernel]": ([8 << 20, 128 << 20, 2 << 30], "bandwidth/copy/kernel/bytes:{}",
                              ("4MiB", "64MiB", "1GiB"), "GB/s", False),
            "copy [memcpy_ce]": ([8 << 20, 128 << 20, 2 << 30], "bandwidth/copy/memcpy_ce/bytes:{}",
                                 ("4MiB", "64MiB", "1GiB"), "GB/s", True),
        },
        "hlines": {"DRAM peak 3350 GB/s": 3350.0},
        "vlines": {"L2 50 MiB": float(H100_CONTEXT["l2_bytes"])},
    },
    "strided": {
        "lines": {
            "kernel useful (1 GiB span)": ([1, 2, 8], "bandwidth/strided/kernel/bytes:1GiB,stride:{}",
                                           (1, 2, 8), "GB/s", False),
            "kernel sector (DRAM traffic) (1 GiB span)": (
                [1, 2, 8], "bandwidth/strided/kernel/bytes:1GiB,stride:{}", (1, 2, 8),
                "sector_GB/s", True),
        },
        "hlines": {"DRAM peak 3350 GB/s": 3350.0},
        "vlines": {},
    },
    "pcie": {
        "lines": {
            "pcie_h2d [memcpy_ce]": ([64 << 10, 16 << 20, 256 << 20],
                                     "bandwidth/pcie_h2d/memcpy_ce/bytes:{}",
                                     ("64KiB", "16MiB", "256MiB"), "GB/s", True),
        },
        "hlines": {"PCIe H2D peak 63.0 GB/s": 63.0154, "PCIe D2H peak 63.0 GB/s": 63.0154},
        "vlines": {},
    },
    "gemm": {
        "lines": {
            "sgemm [kernel]": ([1024, 4096], "compute/sgemm/kernel/m:{0},n:{0},k:{0}", (1024, 4096),
                               "TFLOPS", False),
            "sgemm [cublas]": ([1024, 4096], "compute/sgemm/cublas/m:{0},n:{0},k:{0}", (1024, 4096),
                               "TFLOPS", True),
        },
        "hlines": {"FP32 peak 66.9 TFLOP/s": 66.9},
        "vlines": {},
    },
}


@pytest.mark.parametrize("kind", sorted(SWEEP_FIGURES))
def test_sweep_figures_draw_every_series_and_peak_at_the_json_values(h100, kind):
    """Each sweep plot's figure, read alone: exactly its series and peaks in the legend, each
    series through the JSON medians at its x values (library references dashed), each peak at
    its value, the L2 mark at the L2 size."""
    doc, r = h100
    d = next(d for make in ALL_PLOTS if (d := make(r)) is not None and d.kind == kind)
    fig = check_plot_figure(d)  # every line of the data drawn as the data says
    ax = fig.axes[0]
    spec = SWEEP_FIGURES[kind]
    lines = labelled_lines(ax)
    want = {**spec["lines"], **spec["hlines"], **spec["vlines"]}
    assert sorted(legend_labels(ax)) == sorted(want)
    for label, (xs, pattern, tokens, counter, dashed) in spec["lines"].items():
        x, y = xy(lines[label])
        assert list(x) == pytest.approx(xs), label
        assert list(y) == pytest.approx([raw_median(doc, pattern.format(t), counter)
                                         for t in tokens]), label
        assert (lines[label].get_linestyle() == "--") == dashed, label
    for label, value in spec["hlines"].items():
        assert list(xy(lines[label])[1]) == pytest.approx([value, value]), label
    for label, value in spec["vlines"].items():
        assert list(xy(lines[label])[0]) == pytest.approx([value, value]), label


def test_sweep_figures_of_a_real_host_run(host_result, host_doc):
    """The host run's plots: every series through the JSON medians of its rows."""
    r = load_result(host_result)
    bw = bandwidth_data(r)
    ax = check_plot_figure(bw).axes[0]
    lines = labelled_lines(ax)
    copy = [b for b in r.benchmarks.values() if b.ok and b.kernel == "copy" and b.variant == "kernel"]
    copy.sort(key=lambda b: b.size_bytes())
    x, y = xy(lines["copy [kernel]"])
    assert list(x) == pytest.approx([raw_median(host_doc, b.name, "working_set_bytes") for b in copy])
    assert list(y) == pytest.approx([raw_median(host_doc, b.name, "GB/s") for b in copy])
    assert not any(k.startswith("DRAM peak") for k in lines)  # no peak known on the host
    llc = float(host_doc["context"]["l2_bytes"])
    (mark,) = [k for k in lines if k.startswith("last-level cache ")]
    assert list(xy(lines[mark])[0]) == pytest.approx([llc, llc])
    st = strided_data(r)
    ax = check_plot_figure(st).axes[0]
    strided = {int(b.params["stride"]): b.name for b in r.benchmarks.values()
               if b.ok and b.kernel == "strided"}
    (useful,) = [ln for k, ln in labelled_lines(ax).items() if " useful " in k]
    x, y = xy(useful)
    assert list(x) == sorted(strided)
    assert list(y) == pytest.approx([raw_median(host_doc, strided[k], "GB/s") for k in sorted(strided)])
