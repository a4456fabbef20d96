"""Roofline and sweep plots: chart data checked against the JSON values, the PNGs, bad input."""

import json
import re
import statistics

import numpy as np
import pytest
from matplotlib.image import imread

from conftest import cli, run_script
from fixtures import H100_CONTEXT, h100_result, write_json
from gpubench_tools.cards import find_card, load_cards
from gpubench_tools.plots import ALL_PLOTS, bandwidth_data, gemm_data, pcie_data, strided_data
from gpubench_tools.results import load_result
from gpubench_tools.roofline import (DPI, FIGSIZE, MEMORY_COLUMN_X, roofline_data)

CARDS = load_cards()


def raw_median(doc, name, counter):
    """Median over repetitions of a counter, straight from the JSON entries."""
    vals = [e[counter] for e in doc["benchmarks"]
            if e.get("run_name", "").startswith(name + "/") and e.get("run_type") == "iteration"
            and not e.get("error_occurred") and counter in e]
    return statistics.median(vals) if vals else None


def assert_png(path, size):
    """The PNG exists, has the expected pixel size and is not blank."""
    assert path.exists(), path
    img = imread(path)
    assert (img.shape[1], img.shape[0]) == size
    rgb = img[..., :3]
    non_white = np.any(rgb < 0.95, axis=-1).mean()
    assert non_white > 0.02, f"{path}: only {non_white:.1%} of the pixels are drawn"
    assert len(np.unique(rgb.reshape(-1, 3), axis=0)) > 20  # lines, text, markers: many colours


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
    assert {c.kind for c in s.ceilings} <= {"empirical_bandwidth", "empirical_compute"}
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
    assert all(b.peak_kind == "l2" for b in r.benchmarks.values()
               if b.ok and b.family == "bandwidth" and b.level == "l2")
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
    assert_png(out, (int(FIGSIZE[0] * DPI), int(FIGSIZE[1] * DPI)))


def test_several_results_and_cards_on_one_chart(tmp_path, host_result):
    fx = write_json(h100_result(), tmp_path / "h100.json")
    png = tmp_path / "several.png"
    code, out, err = cli("roofline.py", host_result, fx, "--card", "b200", "--card", "L40S",
                         "--out", png)
    assert code == 0, err
    assert out.strip() == str(png)
    assert_png(png, (int(FIGSIZE[0] * DPI), int(FIGSIZE[1] * DPI)))
    d = roofline_data([load_result(host_result), load_result(fx)],
                      [find_card("b200", CARDS), find_card("l40s", CARDS)], CARDS)
    assert len(d.series) == 4


def test_card_only_png_and_list(tmp_path):
    code, out, err = cli("roofline.py", "--card", "h100_sxm", "--out", tmp_path / "h.png")
    assert code == 0, err
    assert_png(tmp_path / "h.png", (int(FIGSIZE[0] * DPI), int(FIGSIZE[1] * DPI)))
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


def test_plot_cli_draws_only_the_plots_whose_data_is_present(tmp_path, host_result, host_doc):
    code, out, err = cli("plot.py", host_result, "--out-dir", tmp_path / "p")
    assert code == 0, err
    written = [tmp_path / "p" / line.split("/")[-1] for line in out.split()]
    kinds = {re.sub(r".*_(\w+)\.png$", r"\1", p.name) for p in written}
    names = {e["run_name"] for e in host_doc["benchmarks"]}
    assert ("pcie" in kinds) == any("/pcie_" in n for n in names)
    assert ("strided" in kinds) == any("/strided/" in n for n in names)
    assert ("gemm" in kinds) == any("gemm/" in n for n in names)
    assert "bandwidth" in kinds
    for p in written:
        assert_png(p, (1000, 600))
    fx = load_result(write_json(h100_result(), tmp_path / "h100.json"))
    assert [make(fx).kind for make in ALL_PLOTS] == ["bandwidth", "strided", "pcie", "gemm"]


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
