"""Roofline and sweep plots: chart data checked against the JSON values, the figures' artists
checked against that data and the JSON (every ceiling, series and point drawn where and as it
must be), the PNGs (the pixels of those checked figures), bad input.

The roofline's ceilings: theoretical (solid) from the card table or the context, measured
(dashed) from the plateaus of the working-set sweeps, one per memory level and precision;
ridges labelled; rows without FLOP set ceilings and are never points (no memory column)."""

import json
import statistics
from pathlib import Path

import numpy as np
import pytest

from chart_artists import (assert_png, check_plot_figure, check_roofline_figure,
                           labelled_lines, labelled_scatters, legend_labels, same_points, xy)
from conftest import cli, run_script
from fixtures import (H100_CONTEXT, HOST_CONTEXT, PEAK_SMEM_GBPS, _reps, entries, h100_result,
                      label, write_json)
from gpubench_tools.cards import find_card, load_cards
from gpubench_tools.plots import (ALL_PLOTS, DPI as PLOT_DPI, FIGSIZE as PLOT_FIGSIZE,
                                  bandwidth_data, gemm_data, pcie_data, strided_data)
from gpubench_tools.results import load_result, parse_result
from gpubench_tools.roofline import (AXES_RECT, DPI, FIGSIZE, ROOF_NAME_PX, diagonal_tags,
                                     l2_plateaus, roof_names, roofline_data, row_level)

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
    assert s.ceiling("fp32").value == card.fp32_TFLOPS == 66.9
    assert s.ceiling("fp16_tensor").value == card.fp16_tensor_TFLOPS == 989
    # FP16x2 (half2 FMA): 2 x FP32 on sm_90 (H100 whitepaper: 133.8 against 66.9 TFLOPS).
    assert s.ceiling("fp16x2").value == pytest.approx(133.8)
    # PCIe from the negotiated link in the result's context; shared memory from the context.
    assert s.ceiling("pcie").value == float(doc["context"]["peak_pcie_h2d_GBps"])
    smem = doc["context"].get("peak_smem_GBps")
    got = s.ceiling("smem")
    assert (got.value if got else None) == (float(smem) if smem else None)
    # No vendor L2 bandwidth figure exists in the card table: no theoretical L2 line.
    assert s.ceiling("l2") is None and s.ceiling("l2", measured=True) is not None
    theoretical = [c for c in s.ceilings if not c.empirical]
    assert sorted(c.kind for c in theoretical) == sorted(
        ["dram", "pcie", "fp32", "fp16x2", "fp16_tensor"] + (["smem"] if smem else []))
    assert all(c.diagonal == (c.kind in ("dram", "l2", "pcie", "smem")) for c in s.ceilings)
    assert s.ridge("fp32") == pytest.approx(66.9e12 / 3350e9)  # 19.97 FLOP/byte
    assert s.ridge("fp16_tensor") == pytest.approx(989e12 / 3350e9)
    assert s.ridge("fp16_tensor", "pcie") == pytest.approx(989e12 / 63.0154e9, rel=1e-5)
    assert not s.notes


def test_ridges_are_labelled_where_each_roof_meets_the_dram_line(h100):
    _, r = h100
    s = roofline_data([r], [], CARDS).series[0]
    assert [(g.roof, g.bandwidth, g.empirical) for g in s.ridges] == [
        ("fp32", "dram", False), ("fp16x2", "dram", False), ("fp16_tensor", "dram", False)]
    assert [g.x for g in s.ridges] == pytest.approx([66.9e3 / 3350, 133.8e3 / 3350, 989e3 / 3350])
    assert [g.y for g in s.ridges] == [66.9, pytest.approx(133.8), 989]
    assert [g.label for g in s.ridges] == ["ridge 20 FLOP/B", "ridge 39.9 FLOP/B",
                                           "ridge 295 FLOP/B"]


def test_measured_ceilings_are_the_plateaus_of_the_sweeps(h100):
    doc, r = h100
    s = roofline_data([r], [], CARDS).series[0]
    l2 = float(doc["context"]["l2_bytes"])
    ran = [b for b in r.benchmarks.values() if b.ok and not b.verification_failed]
    ws = lambda b: raw_median(doc, b.name, "working_set_bytes")
    streaming = [b for b in ran if b.family == "roofline" or (
        b.family == "bandwidth" and b.kernel in ("copy", "read", "write", "strided", "gather"))]
    # DRAM: the best streaming row beyond 2 x L2 (the 4 MiB copy, inside L2, is faster).
    want_dram = max(raw_median(doc, b.name, "GB/s") for b in streaming if ws(b) > 2 * l2)
    assert s.ceiling("dram", measured=True).value == pytest.approx(want_dram) == 3300
    assert raw_median(doc, "bandwidth/copy/kernel/bytes:4MiB", "GB/s") > want_dram
    # L2: the cache-resident rows (working set below L2/2: the 4 MiB copies, one size per
    # sweep, so each is its sweep's plateau) - labelled l2, or placed there by their size in a
    # file written before labels.
    cached = [b for b in streaming if b.family == "bandwidth" and ws(b) < l2 / 2]
    assert sorted(b.name for b in cached) == ["bandwidth/copy/kernel/bytes:4MiB",
                                              "bandwidth/copy/memcpy_ce/bytes:4MiB"]
    want_l2 = max(raw_median(doc, b.name, "GB/s") for b in cached)
    l2_line = s.ceiling("l2", measured=True)
    assert l2_line.value == pytest.approx(want_l2) == 6100
    assert l2_line.label == "measured L2 6100 GB/s (copy kernel 4MiB)"
    # PCIe: the best transfer; FP32: the best row measured against the FP32 peak (the
    # intensity sweep's top, above the SGEMMs); no FP16 GEMM in the fixture: no FP16 roof.
    pcie = [b for b in ran if b.kernel.startswith("pcie_")]
    assert s.ceiling("pcie", measured=True).value == pytest.approx(
        max(raw_median(doc, b.name, "GB/s") for b in pcie)) == 55
    fp32 = [b for b in ran if b.family == "roofline" or b.kernel == "sgemm"]
    assert s.ceiling("fp32", measured=True).value == pytest.approx(
        max(raw_median(doc, b.name, "TFLOPS") for b in fp32)) == 60
    assert s.ceiling("fp16_tensor", measured=True) is None
    # Shared memory: the smem row of the labelled form (none in the legacy one).
    smem = s.ceiling("smem", measured=True)
    if r.ctx("peak_smem_GBps"):
        assert smem.value == pytest.approx(
            raw_median(doc, "bandwidth/smem/kernel/bytes:32KiB", "GB/s")) == 30500
        assert smem.label == "measured shared memory 30.5 TB/s (smem kernel 32KiB)"
    else:
        assert smem is None
    assert all(c.empirical for c in s.ceilings if c.label.startswith("measured "))
    # The failed gather sets nothing.
    assert not any("gather" in c.label for c in s.ceilings)


def plateau_doc(labelled: bool) -> dict:
    """An H100 result (L2 50 MiB: cache-resident below 25 MiB, plateau sizes from 0.78 MiB)
    with hand-picked cache-resident sweeps: a read sweep whose largest size is an L1 outlier,
    a copy sweep of two plateau sizes, a write sweep whose small sizes cannot fill the GPU."""
    doc = {"context": h100_result()["context"], "benchmarks": []}
    rows = [("read", "256KiB", 256 << 10, 900.0), ("read", "1MiB", 1 << 20, 4000.0),
            ("read", "4MiB", 4 << 20, 5000.0), ("read", "16MiB", 16 << 20, 16000.0),
            ("copy", "1MiB", 2 << 20, 6000.0), ("copy", "4MiB", 8 << 20, 7000.0),
            ("copy", "16MiB", 32 << 20, 2800.0), ("write", "16KiB", 16 << 10, 100.0),
            ("write", "64KiB", 64 << 10, 700.0), ("write", "256KiB", 256 << 10, 800.0),
            ("write", "1MiB", 1 << 20, 6500.0), ("write", "1GiB", 1 << 30, 3100.0)]
    for kernel, tok, ws, gbps in rows:
        level = "l2" if ws < 25 << 20 else "dram"
        doc["benchmarks"] += entries(
            f"bandwidth/{kernel}/kernel/bytes:{tok}",
            _reps({"verified": 1, "GB/s": gbps, "working_set_bytes": ws}),
            label=label(level, "GBps", level, "bytes") if labelled else None)
    return doc


@pytest.mark.parametrize("labelled", [True, False], ids=["labelled", "legacy"])
def test_the_l2_ceiling_is_a_robust_plateau(tmp_path, labelled):
    """Per sweep the lower median of its 3 largest cache-resident sizes from L2/64 up: the
    read sweep's 16 MiB L1 outlier (16000) sets nothing (its plateau: 5000), the copy sweep's
    two sizes give the lower (6000), the write sweep's 64-256 KiB sets (too small to fill the
    GPU) are left out, so its 1 MiB row is its plateau (6500) and the best. Files written before
    labels place rows by their working set exactly so."""
    r = load_result(write_json(plateau_doc(labelled), tmp_path / "p.json"))
    s = roofline_data([r], [], CARDS).series[0]
    c = s.ceiling("l2", measured=True)
    assert c.value == 6500.0
    assert c.label == "measured L2 6500 GB/s (write kernel 1MiB)"
    plateaus = {rows[0].kernel: (v, [b.params["bytes"] for b in rows])
                for v, rows in l2_plateaus([b for b in r.benchmarks.values()
                                            if row_level(b, 50 << 20) == "l2"], 50 << 20)}
    assert plateaus == {"read": (5000.0, ["1MiB", "4MiB", "16MiB"]),
                        "copy": (6000.0, ["1MiB", "4MiB"]), "write": (6500.0, ["1MiB"])}
    # DRAM: the 1 GiB write (beyond 2 x L2); the 16 MiB copy (32 MiB working set) is not.
    assert s.ceiling("dram", measured=True).value == 3100.0


def test_memory_rows_set_ceilings_and_are_not_points(h100):
    doc, r = h100
    s = roofline_data([r], [], CARDS).series[0]
    points = {p.name: p for p in s.points}
    flop_names = {b.name for b in r.benchmarks.values() if b.ok and raw_median(doc, b.name, "TFLOPS")}
    assert set(points) == flop_names  # no row without FLOP is a point: no memory column
    for n in flop_names:
        assert points[n].x == pytest.approx(raw_median(doc, n, "flop_per_byte"))
        assert points[n].y == pytest.approx(raw_median(doc, n, "TFLOPS"))
    assert points["compute/sgemm/cublas/m:4096,n:4096,k:4096"].library
    assert not points["compute/sgemm/kernel/m:4096,n:4096,k:4096"].library
    assert points["compute/sgemm/kernel/m:4096,n:4096,k:4096"].group == "sgemm kernel"
    assert points["compute/sgemm/kernel/m:4096,n:4096,k:4096"].params == "4096\u00b3"
    sweep = points["roofline/intensity/fp32/fma:16,bytes:1GiB"]
    assert not sweep.library and sweep.sweep == "intensity [fp32]" and sweep.group is None
    # The chart starts at 1/16 FLOP/byte (left of the sweep's 1/4), no room kept for a column.
    assert roofline_data([r], [], CARDS).x_range == (1 / 16, 4096.0)


def test_a_card_the_table_lacks_falls_back_to_the_context_peaks(tmp_path):
    doc = h100_result()
    doc["context"].update(device_name="NVIDIA Future GPU", peak_dram_GBps="5000",
                          peak_fp32_TFLOPS="90", peak_fp16_tensor_TFLOPS="unknown")
    r = load_result(write_json(doc, tmp_path / "future.json"))
    s = roofline_data([r], [], CARDS).series[0]
    assert s.ceiling("dram").value == 5000 and s.ceiling("fp32").value == 90
    assert s.ceiling("fp16x2").value == 180  # cc 9.0 in the context: 2 x FP32
    assert s.ceiling("fp16_tensor") is None
    assert any("not in cards.csv" in n for n in s.notes)
    code, out, err = cli("roofline.py", r.path, "--out", tmp_path / "future.png")
    assert code == 0 and out.strip() == str(tmp_path / "future.png")
    assert err.count("\n") == 1 and "using the peaks in the result's context" in err
    doc["context"]["cc"] = "8.9"  # no documented FP16x2 ratio: no FP16x2 roof
    s = roofline_data([load_result(write_json(doc, tmp_path / "f89.json"))], [], CARDS).series[0]
    assert s.ceiling("fp16x2") is None and s.ceiling("fp32").value == 90


def bandwidth_only(doc: dict) -> dict:
    """The document's bandwidth family alone, as `gpubench --filter=bandwidth` writes it."""
    out = json.loads(json.dumps(doc))
    out["benchmarks"] = [e for e in out["benchmarks"] if e["run_name"].startswith("bandwidth/")]
    return out


@pytest.mark.parametrize("labelled", [True, False], ids=["labelled", "legacy"])
def test_a_bandwidth_only_result_draws_the_cards_compute_roofs(tmp_path, labelled):
    """The main command's run (--filter=bandwidth: no row with FLOP) is still a roofline: the
    card's compute roofs and ridges, the measured memory ceilings ending at the card's top
    roof."""
    doc = bandwidth_only(h100_result(labelled=labelled))
    r = load_result(write_json(doc, tmp_path / "bw.json"))
    assert not any((b.median("TFLOPS") or 0) > 0 for b in r.benchmarks.values())
    d = roofline_data([r], [], CARDS)
    s = d.series[0]
    assert not s.points
    assert [(c.kind, c.value) for c in s.ceilings if not c.diagonal] == [
        ("fp32", 66.9), ("fp16x2", pytest.approx(133.8)), ("fp16_tensor", 989)]
    assert [g.label for g in s.ridges] == ["ridge 20 FLOP/B", "ridge 39.9 FLOP/B",
                                           "ridge 295 FLOP/B"]
    assert {c.kind for c in s.ceilings if c.empirical} == (
        {"dram", "l2", "pcie"} | ({"smem"} if labelled else set()))
    lines = labelled_lines(check_roofline_figure(d).axes[0])
    for name, value in (("FP32 66.9 TFLOP/s", 66.9), ("FP16x2 133.8 TFLOP/s", 133.8),
                        ("FP16 tensor 989 TFLOP/s", 989)):
        assert list(xy(lines[name])[1]) == pytest.approx([value, value])
    (dram,) = [k for k in lines if k.startswith("measured DRAM ")]
    assert xy(lines[dram])[1][-1] == pytest.approx(989)  # up to the card's top roof
    # A device the card table lacks: the roofs from its context.
    doc["context"].update(device_name="NVIDIA Future GPU", peak_fp32_TFLOPS="90")
    s = roofline_data([load_result(write_json(doc, tmp_path / "f.json"))], [], CARDS).series[0]
    assert [(c.kind, c.value) for c in s.ceilings if not c.diagonal] == [
        ("fp32", 90), ("fp16x2", 180), ("fp16_tensor", 989)]


def test_cards_only_chart_has_each_cards_roofline_and_no_empty_column():
    cards = [find_card("h100_sxm", CARDS), find_card("a100_80gb_sxm", CARDS)]
    d = roofline_data([], cards, CARDS)
    assert [s.ceiling("dram").value for s in d.series] == [3350, 2039]
    assert [s.ceiling("pcie").value for s in d.series] == pytest.approx([63.0154, 31.5077], abs=1e-3)
    # 128 B/clk/SM x SMs x the clock of the FP32 figure: H100 132 x 1.98 GHz, A100 108 x 1.41.
    assert [s.ceiling("smem").value for s in d.series] == pytest.approx(
        [128 * 132 * 66.9e12 / (132 * 256) / 1e9, 128 * 108 * 19.5e12 / (108 * 128) / 1e9])
    assert [s.ceiling("smem").value for s in d.series] == pytest.approx([33450, 19500])
    # FP16x2: 2 x FP32 on sm_90, 4 x on sm_80 (A100 whitepaper: 78 against 19.5).
    assert [s.ceiling("fp16x2").value for s in d.series] == pytest.approx([133.8, 78])
    assert all(not s.points and not any(c.empirical for c in s.ceilings) for s in d.series)
    assert [[g.label for g in s.ridges] for s in d.series] == [
        ["ridge 20 FLOP/B", "ridge 39.9 FLOP/B", "ridge 295 FLOP/B"],
        ["ridge 9.56 FLOP/B", "ridge 38.3 FLOP/B", "ridge 153 FLOP/B"]]
    assert "H100 SXM" in d.title and "A100 80GB SXM" in d.title
    # No column at the left: the chart starts at 1/16 FLOP/byte, where the lowest line (the
    # A100's PCIe) is on the chart.
    assert d.x_range == (1 / 16, 4096.0)
    lo, hi = d.y_range
    assert lo < 31.5077 / 16 / 1000 and hi > 989
    fig = check_roofline_figure(d)  # no patch, nothing but the ceilings and ridges
    assert not any("benchmarks" in t.get_text() or "1/32" in t.get_text()
                   for t in fig.axes[0].texts)  # the old column's caption


def test_real_host_run_has_no_theoretical_ceilings_and_its_measured_ones(host_result, host_doc):
    r = load_result(host_result)
    s = roofline_data([r], [], CARDS).series[0]
    assert s.host and not any(not c.empirical for c in s.ceilings)
    assert any("no theoretical peaks" in n for n in s.notes)
    l2 = float(host_doc["context"]["l2_bytes"])
    ran = [b for b in r.benchmarks.values() if b.ok]
    # DRAM: the rows whose label targets DRAM (peak=dram, or the intensity sweep at
    # level=dram): beyond 2 x LLC, else the largest size of each sweep.
    dram = [b for b in ran
            if b.level == "dram" and (b.peak_kind == "dram" or b.family == "roofline")]
    beyond = [b for b in dram if b.median("working_set_bytes") > 2 * l2]
    largest = {}
    for b in dram:
        key = (b.kernel, b.variant, tuple(sorted((k, v) for k, v in b.params.items() if k != "bytes")))
        if key not in largest or b.size_bytes() > largest[key].size_bytes():
            largest[key] = b
    pool = beyond or list(largest.values())
    if pool:
        assert s.ceiling("dram", measured=True).value == pytest.approx(
            max(raw_median(host_doc, b.name, "GB/s") for b in pool))
    else:
        assert s.ceiling("dram", measured=True) is None
    # The last-level cache: the rows labelled l2, named as what they are on the host.
    cached = [b for b in ran if b.family == "bandwidth" and b.level == "l2"]
    assert cached and all(b.peak_kind == "l2" for b in cached)
    llc = s.ceiling("l2", measured=True)
    assert llc.label.startswith("measured last-level cache ")
    assert llc.value in [raw_median(host_doc, b.name, "GB/s") for b in cached]
    # The host's pcie rows are a one-thread host copy, not a link: no PCIe ceiling.
    assert any(b.level == "pcie" for b in ran) and s.ceiling("pcie", measured=True) is None
    fp32 = [b for b in ran if b.peak_kind == "fp32"]
    assert s.ceiling("fp32", measured=True).value == pytest.approx(
        max(raw_median(host_doc, b.name, "TFLOPS") for b in fp32))
    # No theoretical DRAM line: the measured roof's ridge with the measured DRAM line.
    if s.ceiling("dram", measured=True):
        (ridge,) = s.ridges
        assert (ridge.roof, ridge.empirical) == ("fp32", True)
        assert ridge.x == pytest.approx(s.ceiling("fp32", True).value * 1000
                                        / s.ceiling("dram", True).value)
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
    assert "H100 SXM 2026-11-22: FP16x2 133.8 TFLOP/s" in legend
    assert not any(k.startswith("B200 (cards.csv): FP16x2") for k in legend)  # sm_100: unknown
    assert_png(png, ROOFLINE_PX, fig)


def test_several_runs_of_one_card_draw_its_roofline_once(tmp_path):
    """Three runs of one H100 on one chart: each theoretical ceiling once (it was drawn three
    times), the runs told apart by time and revision, a compact legend inside the figure."""
    runs = []
    for i, when in enumerate(("2026-11-23T07:09:22Z", "2026-11-23T07:26:36Z", "2026-11-23T08:13:40Z")):
        doc = h100_result()
        doc["context"].update(run_started_utc=when, git_revision=f"{i}abcdef12345")
        for e in doc["benchmarks"]:  # each run measured its own figures
            for k in ("GB/s", "TFLOPS"):
                if isinstance(e.get(k), (int, float)):
                    e[k] *= 1 - 0.25 * i
        runs.append(load_result(write_json(doc, tmp_path / f"run{i}.json")))
    d = roofline_data(runs, [], CARDS)
    assert [len([c for c in s.ceilings if not c.empirical]) for s in d.series][1:] == [0, 0]
    assert all(c.empirical for s in d.series[1:] for c in s.ceilings)
    assert [s.label for s in d.series] == ["H100 SXM 2026-11-23 07:09 UTC 0abcdef",
                                           "H100 SXM 2026-11-23 07:26 UTC 1abcdef",
                                           "H100 SXM 2026-11-23 08:13 UTC 2abcdef"]
    assert d.title == "Roofline: 3 runs of NVIDIA H100 80GB HBM3"
    fig = check_roofline_figure(d)  # the legend: the compact form, inside the figure
    legend = legend_labels(fig.axes[0])
    assert "FP32 66.9 TFLOP/s" in legend and not any(k.endswith(": FP32 66.9 TFLOP/s") for k in legend)
    assert len(legend) < 30, legend


def test_card_only_png_and_list(tmp_path):
    code, out, err = cli("roofline.py", "--card", "h100_sxm", "--out", tmp_path / "h.png")
    assert code == 0, err
    d = roofline_data([], [find_card("h100_sxm", CARDS)], CARDS)
    fig = check_roofline_figure(d)
    assert sorted(labelled_lines(fig.axes[0])) == sorted([
        "shared memory 33.5 TB/s", "DRAM 3350 GB/s", "PCIe 63.0 GB/s per direction",
        "FP32 66.9 TFLOP/s", "FP16x2 133.8 TFLOP/s", "FP16 tensor 989 TFLOP/s"])
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
    assert bw.vlines == [(float(H100_CONTEXT["l2_bytes"]), "L2 50 MiB"),
                         (float(H100_CONTEXT["l2_bytes"]) / 2, "L2 / 2 (cache-resident below)")]
    assert bw.hlines[0][0] == 3350
    st = strided_data(r)
    useful, sector = st.lines
    assert useful.xs == [1, 2, 8] and not useful.dashed and sector.dashed
    assert sector.ys[2] == pytest.approx(raw_median(
        doc, "bandwidth/strided/kernel/bytes:1GiB,stride:8", "sector_GB/s"))
    pc = pcie_data(r)
    assert pc.lines[0].xs == [64 << 10, 16 << 20, 256 << 20]
    assert pc.hlines == [(pytest.approx(63.0154), "PCIe peak 63.0 GB/s per direction")]  # one link, one line
    gm = gemm_data(r)
    cublas = next(l for l in gm.lines if "cublas" in l.label)
    assert cublas.dashed and cublas.xs == [1024, 4096] and cublas.ys == pytest.approx([30, 50])
    assert gm.hlines == [(66.9, "FP32 peak 66.9 TFLOP/s")]
    assert not next(l for l in gm.lines if l.label == "sgemm [kernel]").dashed  # gpubench's own: solid


def test_gemm_plot_joins_square_shapes_and_marks_the_others_apart(tmp_path):
    """A line per kernel and variant over m = n = k; the other shapes as markers in the line's
    colour (8192x1024x8192 sits at the x of 4096^3: joined, the line zigzagged); gpubench's own
    variants solid (the wgmma kernel was dashed like a library), library references dashed."""
    doc = h100_result(labelled=True)
    for shape, tf in (("m:4096,n:4096,k:4096", 600.0), ("m:8192,n:8192,k:8192", 650.0),
                      ("m:8192,n:1024,k:8192", 420.0)):
        doc["benchmarks"] += entries(f"compute/hgemm/wgmma/{shape}",
                                     _reps({"verified": 1, "TFLOPS": tf, "pct_of_peak": tf / 9.89}),
                                     label=label("fp16_tensor", "TFLOPS", "none", "m"))
    gm = gemm_data(load_result(write_json(doc, tmp_path / "r.json")))
    line = next(l for l in gm.lines if l.label == "hgemm [wgmma]")
    assert line.xs == [4096, 8192] and line.ys == pytest.approx([600, 650])
    assert not line.dashed and not line.markers_only
    other = next(l for l in gm.lines if l.label == "hgemm [wgmma] other shapes")
    assert other.markers_only and other.color_of == "hgemm [wgmma]"
    assert other.xs == pytest.approx([4096]) and other.ys == pytest.approx([420])
    assert "markers: other shapes" in gm.xlabel


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
    median = lambda name, counter: next(
        e[counter] for e in doc["benchmarks"] if e["run_name"].startswith(name + "/")
        and e["aggregate_name"] == "median")
    assert s.points
    for p in s.points:
        assert (p.y, p.GBps) == pytest.approx((median(p.name, "TFLOPS"), median(p.name, "GB/s")))
    # The measured ceilings from the medians too: each names its row and has its value.
    measured = [c for c in s.ceilings if c.empirical]
    assert {c.kind for c in measured} >= {"l2", "fp32"}
    for c in measured:
        if c.kind != "l2":  # a plateau may be the median of several rows
            row = c.source.rsplit(": ", 1)[1]
            assert c.value == pytest.approx(median(row, "TFLOPS" if c.kind == "fp32" else "GB/s"))
    doc["context"]["date"] = "2026-01-02T03:04:05+00:00"  # another run of the same kind, not NEW itself
    code, _, err = cli("compare.py", r.path, write_json(doc, tmp_path / "agg_earlier.json"))
    assert code == 2 and "too little data" in err and "aggregates_only" in err


def test_the_per_sm_cache_read_draws_the_measured_l1_line_and_its_sweep(tmp_path):
    """block_set_read rows (level l1): the measured L1 ceiling is their best GB/s, a diagonal,
    and the bandwidth plot draws their sweep beside the streaming kernels'."""
    doc = h100_result(labelled=True)
    mem = {"verified": 1, "throttled": 0, "sm_clock_MHz": 1980, "mem_clock_MHz": 2619}
    for tok, ws, gbps in (("16KiB", 16 << 10, 21000.0), ("64KiB", 64 << 10, 24500.0),
                          ("1MiB", 1 << 20, 9100.0)):
        doc["benchmarks"] += entries(f"bandwidth/block_set_read/kernel/bytes:{tok}",
                                     _reps({**mem, "GB/s": gbps, "working_set_bytes": ws}),
                                     label=label("l1", "GBps", "l1", "bytes"))
    r = load_result(write_json(doc, tmp_path / "l1.json"))
    s = roofline_data([r], [], CARDS).series[0]
    l1 = s.ceiling("l1", measured=True)
    assert l1.value == pytest.approx(raw_median(doc, "bandwidth/block_set_read/kernel/bytes:64KiB", "GB/s"))
    assert l1.value == pytest.approx(24500, rel=0.01)
    assert l1.label.startswith("measured L1 24.") and l1.label.endswith("(block_set_read kernel 64KiB)")
    assert l1.diagonal and s.ceiling("l1") is None  # no theoretical L1 figure
    line = next(l for l in bandwidth_data(r).lines if l.label.startswith("block_set_read [kernel]"))
    assert line.xs == [16 << 10, 64 << 10, 1 << 20]
    lines = labelled_lines(check_roofline_figure(roofline_data([r], [], CARDS)).axes[0])
    assert any(k.startswith("measured L1 ") for k in lines)


def test_the_hosts_per_core_cache_read_is_not_called_an_l1(tmp_path, host_doc):
    """On the host every thread re-reads one set from its own core's caches (L1 or L2 by size):
    the measured line of a real host run with block_set_read rows added says per-core cache."""
    doc = json.loads(json.dumps(host_doc))
    doc["benchmarks"] += entries("bandwidth/block_set_read/kernel/bytes:16KiB",
                                 _reps({"verified": 1, "GB/s": 98.5, "working_set_bytes": 16 << 10}),
                                 label=label("l1", "GBps", "l1", "bytes"))
    r = load_result(write_json(doc, tmp_path / "host_l1.json"))
    assert r.backend == "host"
    line = roofline_data([r], [], CARDS).series[0].ceiling("l1", measured=True)
    assert line.label.startswith("measured per-core cache 98.") and " L1 " not in line.label


def test_host_sweep_marks_its_last_level_cache_not_an_l2(host_result, host_doc):
    r = load_result(host_result)
    bw = bandwidth_data(r)
    assert len(bw.vlines) == 2
    assert bw.vlines[0][0] == float(host_doc["context"]["l2_bytes"])
    assert bw.vlines[0][1].startswith("last-level cache ")
    assert bw.vlines[1] == (float(host_doc["context"]["l2_bytes"]) / 2,
                            "last-level cache / 2 (cache-resident below)")


# --- what the charts draw: their artists, against the data and the JSON ---------------------


def line_slope(lines, label):
    """GB/s of a diagonal: y x 1000 / x where it enters the chart (the left edge)."""
    x, y = xy(lines[label])
    return y[0] * 1000.0 / x[0]


def roof_value_and_start(lines, label):
    """(TFLOP/s, first intensity) of a roof: its drawn part."""
    x, y = xy(lines[label])
    assert np.ptp(y) == 0, f"{label} is not flat"
    return y[0], x[0]


def test_roofline_figure_draws_every_ceiling_and_point_of_its_data(h100):
    _, r = h100
    data = roofline_data([r], [], CARDS)
    s = data.series[0]
    kinds = {(c.kind, c.empirical) for c in s.ceilings}
    assert kinds >= {("dram", False), ("fp32", False), ("fp16x2", False), ("fp16_tensor", False),
                     ("pcie", False), ("dram", True), ("l2", True), ("pcie", True), ("fp32", True)}
    assert (("smem", False) in kinds) == (r.ctx("peak_smem_GBps") != "")
    fig = check_roofline_figure(data)
    # the legend: the ceilings, the sweep and the point groups, nothing else
    assert len(legend_labels(fig.axes[0])) == len(s.ceilings) + 1 + len(
        labelled_scatters(fig.axes[0]))


def test_roofline_figure_shows_the_json_values(h100):
    """Read from the figure alone: each ceiling's line at the card's / context's / measured
    value it names, solid when theoretical and dashed when measured; each ridge labelled at its
    intensity; each benchmark with FLOP at its JSON coordinates; no row without FLOP drawn."""
    doc, r = h100
    ax = check_roofline_figure(roofline_data([r], [], CARDS)).axes[0]
    lines, scatters = labelled_lines(ax), labelled_scatters(ax)
    solid = {k for k, ln in lines.items() if ln.get_linestyle() == "-"}
    dashed = {k for k, ln in lines.items() if ln.get_linestyle() == "--"}
    # theoretical, solid: the card table (H100 SXM), the negotiated link, the context's smem
    smem = bool(r.ctx("peak_smem_GBps"))
    assert solid == {"DRAM 3350 GB/s", "PCIe 63.0 GB/s per direction", "FP32 66.9 TFLOP/s",
                     "FP16x2 133.8 TFLOP/s", "FP16 tensor 989 TFLOP/s"} | (
        {"shared memory 33.4 TB/s"} if smem else set())
    assert line_slope(lines, "DRAM 3350 GB/s") == pytest.approx(3350)
    assert line_slope(lines, "PCIe 63.0 GB/s per direction") == pytest.approx(63.0154)
    if smem:
        assert line_slope(lines, "shared memory 33.4 TB/s") == pytest.approx(float(PEAK_SMEM_GBPS))
    top = float(PEAK_SMEM_GBPS) if smem else 3350  # roofs start at the highest diagonal
    for roof, value in (("FP32 66.9 TFLOP/s", 66.9), ("FP16x2 133.8 TFLOP/s", 133.8),
                        ("FP16 tensor 989 TFLOP/s", 989)):
        got, start = roof_value_and_start(lines, roof)
        assert got == pytest.approx(value) and start == pytest.approx(value * 1000 / top)
    # measured, dashed: every level's plateau and the best FP32 row, at the JSON values
    measured = {k.split(" ")[1]: k for k in dashed}
    assert all(k.startswith("measured ") for k in dashed)
    assert set(measured) == {"DRAM", "L2", "PCIe", "FP32"} | ({"shared"} if smem else set())
    for level, row in (("DRAM", "bandwidth/copy/kernel/bytes:64MiB"),
                       ("L2", "bandwidth/copy/kernel/bytes:4MiB"),
                       ("PCIe", "bandwidth/pcie_h2d/memcpy_ce/bytes:256MiB")):
        assert line_slope(lines, measured[level]) == pytest.approx(raw_median(doc, row, "GB/s"))
    if smem:
        assert line_slope(lines, measured["shared"]) == pytest.approx(
            raw_median(doc, "bandwidth/smem/kernel/bytes:32KiB", "GB/s"))
    assert roof_value_and_start(lines, measured["FP32"])[0] == pytest.approx(
        raw_median(doc, "roofline/intensity/fp32/fma:256,bytes:1GiB", "TFLOPS"))
    # ridges: a mark and a label where each roof meets the DRAM line
    ridges = {a.get_text(): a.xy for a in ax.texts if a.get_text().startswith("ridge ")}
    assert ridges == {"ridge 20 FLOP/B": pytest.approx((66.9e3 / 3350, 66.9)),
                      "ridge 39.9 FLOP/B": pytest.approx((133.8e3 / 3350, 133.8)),
                      "ridge 295 FLOP/B": pytest.approx((989e3 / 3350, 989))}
    # points: GEMM kernels filled, cuBLAS hollow, at (flop_per_byte, TFLOPS)
    at = lambda n: (raw_median(doc, n, "flop_per_byte"), raw_median(doc, n, "TFLOPS"))
    gemm = "compute/sgemm/{}/m:{n},n:{n},k:{n}"
    same_points(scatters["sgemm kernel (gpubench): best 40 TFLOP/s at 4096\u00b3"],
                [at(gemm.format("kernel", n=n)) for n in (1024, 4096)], "sgemm kernel")
    same_points(scatters["sgemm cublas (library): best 50 TFLOP/s at 4096\u00b3"],
                [at(gemm.format("cublas", n=n)) for n in (1024, 4096)], "sgemm cublas")
    # the intensity sweep: one curve through its three points, in intensity order
    x, y = xy(lines["intensity [fp32] sweep (labels: its parameter)"])
    sweep = [at(f"roofline/intensity/fp32/fma:{k},bytes:1GiB") for k in (1, 16, 256)]
    assert list(x) == pytest.approx([p[0] for p in sweep])
    assert list(y) == pytest.approx([p[1] for p in sweep])
    # no row without FLOP is drawn as a point: every scatter point is a GEMM's
    drawn = np.concatenate(list(scatters.values()))
    assert len(drawn) == 4 and all(x > 1 for x, _ in drawn)
    # the failed gather is drawn nowhere
    assert not any("gather" in t.get_text() for t in ax.texts)
    assert not any("gather" in k for k in lines)


def test_roofline_figure_of_a_real_host_run(host_result, host_doc):
    r = load_result(host_result)
    data = roofline_data([r], [], CARDS)
    ax = check_roofline_figure(data).axes[0]
    lines = labelled_lines(ax)
    s = data.series[0]
    # no theoretical ceiling on the host: the measured ones (dashed) and the sweep(s) only
    assert sorted(lines) == sorted([c.label for c in s.ceilings] + [
        f"{p} sweep (labels: its parameter)" for p in {p.sweep for p in s.points if p.sweep}])
    assert all(lines[c.label].get_linestyle() == "--" for c in s.ceilings)
    llc = s.ceiling("l2", measured=True)
    assert line_slope(lines, llc.label) == pytest.approx(llc.value)
    # its tag on the line names the last-level cache, not an L2
    assert any(t.get_text().startswith("last-level cache ") for t in ax.texts)
    best_tf = max(raw_median(host_doc, b.name, "TFLOPS") or 0 for b in r.benchmarks.values()
                  if b.ok and b.peak_kind == "fp32")
    assert roof_value_and_start(lines, s.ceiling("fp32", measured=True).label)[0] == \
        pytest.approx(best_tf)


def test_roof_names_at_the_right_edge_never_overlap():
    """H100 FP32 (66.9) and A100 FP16x2 (78) are 0.07 decades apart: the upper name moves up by
    a name's height; names far apart stay just above their roofs."""
    d = roofline_data([], [find_card("h100_sxm", CARDS), find_card("a100_80gb_sxm", CARDS)],
                      CARDS)
    names = roof_names(d)
    assert len(names) == 6
    h = ROOF_NAME_PX / (AXES_RECT[3] * FIGSIZE[1] * DPI / np.log10(d.y_range[1] / d.y_range[0]))
    bottoms = [np.log10(y) for *_, y in names]
    assert bottoms == sorted(bottoms)
    assert all(b - a >= h - 1e-12 for a, b in zip(bottoms, bottoms[1:]))
    for _, c, text, y in names:
        assert text == c.label and y >= c.value * 1.06 * (1 - 1e-12)
    at = {text: y for _, _, text, y in names}
    assert at["FP32 19.5 TFLOP/s"] == pytest.approx(19.5 * 1.06)  # alone: just above
    assert at["FP16x2 78 TFLOP/s"] == pytest.approx(10 ** (np.log10(66.9 * 1.06) + h))
    # Drawn where roof_names() puts them.
    ax = check_roofline_figure(d).axes[0]
    drawn = sorted((t.get_text(), t.get_position()[1]) for t in ax.texts
                   if t.get_text() in at and t.get_position()[0] == pytest.approx(d.x_range[1] / 1.05))
    assert drawn == sorted((k, pytest.approx(v)) for k, v in at.items())


def test_tags_of_close_diagonals_do_not_overlap():
    """The host's last-level cache and DRAM lines run 0.08 decades apart: the upper tag starts
    after the lower one ends; far apart lines (a card's) are tagged at the left edge."""
    doc = {"context": dict(HOST_CONTEXT), "benchmarks": []}
    for kernel, tok, ws, gbps in (("copy", "4MiB", 8 << 20, 54.78), ("copy", "1GiB", 2 << 30, 45.81)):
        level = "l2" if ws < 192 << 20 else "dram"
        doc["benchmarks"] += entries(f"bandwidth/{kernel}/kernel/bytes:{tok}",
                                     _reps({"verified": 1, "GB/s": gbps, "working_set_bytes": ws}),
                                     label=label(level, "GBps", level, "bytes"))
    r = parse_result(doc)
    d = roofline_data([r], [], CARDS)
    tags = diagonal_tags(d)
    assert [(c.kind, text) for _, c, text, _ in tags] == [
        ("dram", "DRAM 45.81 GB/s (measured)"),
        ("l2", "last-level cache 54.78 GB/s (measured)")]
    (_, _, _, x_dram), (_, _, _, x_llc) = tags
    assert x_dram == pytest.approx(d.x_range[0] * 1.25) and x_llc > x_dram * 4
    # Lines 0.18 decades apart (a host's per-core cache under its last-level cache) are still
    # too close for two tags side by side: staggered too.
    doc = {"context": dict(HOST_CONTEXT), "benchmarks": []}
    for kernel, tok, ws, gbps, level in (("block_set_read", "256KiB", 256 << 10, 101.4, "l1"),
                                         ("copy", "4MiB", 8 << 20, 151.6, "l2")):
        doc["benchmarks"] += entries(f"bandwidth/{kernel}/kernel/bytes:{tok}",
                                     _reps({"verified": 1, "GB/s": gbps, "working_set_bytes": ws}),
                                     label=label(level, "GBps", level, "bytes"))
    close = {c.kind: x for _, c, _, x in diagonal_tags(roofline_data([parse_result(doc)], [], CARDS))}
    assert close["l2"] > close["l1"] * 4
    cards = diagonal_tags(roofline_data([], [find_card("h100_sxm", CARDS)], CARDS))
    assert [text for _, _, text, _ in cards] == ["PCIe 63.02 GB/s", "DRAM 3350 GB/s",
                                                  "shared memory 33.5 TB/s"]
    assert [x for *_, x in cards][1:] == pytest.approx([1 / 16 * 1.25] * 2)


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
        "vlines": {"L2 50 MiB": float(H100_CONTEXT["l2_bytes"]),
                   "L2 / 2 (cache-resident below)": float(H100_CONTEXT["l2_bytes"]) / 2},
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
        "hlines": {"PCIe peak 63.0 GB/s per direction": 63.0154},
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
    for name, (xs, pattern, tokens, counter, dashed) in spec["lines"].items():
        x, y = xy(lines[name])
        assert list(x) == pytest.approx(xs), name
        assert list(y) == pytest.approx([raw_median(doc, pattern.format(t), counter)
                                         for t in tokens]), name
        assert (lines[name].get_linestyle() == "--") == dashed, name
    for name, value in spec["hlines"].items():
        assert list(xy(lines[name])[1]) == pytest.approx([value, value]), name
    for name, value in spec["vlines"].items():
        assert list(xy(lines[name])[0]) == pytest.approx([value, value]), name


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
    (mark,) = [k for k in lines if k.startswith("last-level cache ") and "/ 2" not in k]
    assert list(xy(lines[mark])[0]) == pytest.approx([llc, llc])
    assert list(xy(lines["last-level cache / 2 (cache-resident below)"])[0]) == pytest.approx([llc / 2, llc / 2])
    st = strided_data(r)
    ax = check_plot_figure(st).axes[0]
    strided = {int(b.params["stride"]): b.name for b in r.benchmarks.values()
               if b.ok and b.kernel == "strided"}
    (useful,) = [ln for k, ln in labelled_lines(ax).items() if " useful " in k]
    x, y = xy(useful)
    assert list(x) == sorted(strided)
    assert list(y) == pytest.approx([raw_median(host_doc, strided[k], "GB/s") for k in sorted(strided)])


def test_a_long_legend_entry_stays_inside_the_figure():
    """The committed host run's cache line has the longest legend entry drawn so far ("measured
    last-level cache ... (copy kernel, median of 4MiB-64MiB)"): wrapped, not cut at the edge."""
    from chart_artists import legend_labels
    from gpubench_tools.roofline import roofline_figure
    root = Path(__file__).resolve().parents[2]
    path = next((root / "results" / "host_intel-r-xeon-r-processor_2cpu_24GiB").glob("*.json"))
    fig = roofline_figure(roofline_data([load_result(path)], [], CARDS))
    labels = legend_labels(fig.axes[0])  # asserts the legend is inside the figure
    assert any("median of 4MiB-64MiB" in t for t in labels), labels


def with_library_gemms(doc: dict) -> dict:
    """The document plus cuBLAS BF16 and cuBLASLt FP8 rows at 4096^3, labelled as gpubench
    labels them (peak bf16_tensor / fp8_tensor), and the context's BF16/FP8 peaks."""
    out = json.loads(json.dumps(doc))
    out["context"].update(peak_bf16_tensor_TFLOPS="989", peak_fp8_tensor_TFLOPS="1979")
    n = 4096
    for name, tflops, in_bytes, peak in (("compute/bf16gemm/cublas", 700.0, 2, "bf16_tensor"),
                                         ("compute/fp8gemm/cublaslt", 1300.0, 1, "fp8_tensor")):
        out["benchmarks"] += entries(
            f"{name}/m:{n},n:{n},k:{n}",
            _reps({"TFLOPS": tflops, "GB/s": tflops * 1e3 * (2 * in_bytes + 4) / (2 * n),
                   "working_set_bytes": float((2 * in_bytes + 4) * n * n), "ops_per_iteration": 1}),
            label=label(peak, "TFLOPS", "none", "m"))
    return out


def test_bf16_and_fp8_roofs_where_rows_are_measured_against_them(tmp_path):
    # A result with the BF16 and FP8 library GEMMs: the H100's FP8 roof (cards.csv, dense:
    # 1979) is drawn with its ridge; BF16's equals the FP16 roof, which stands for both.
    r = load_result(write_json(with_library_gemms(h100_result(labelled=True)), tmp_path / "lib.json"))
    s = roofline_data([r], [], CARDS).series[0]
    assert s.ceiling("fp8_tensor").value == find_card("h100_sxm", CARDS).fp8_tensor_TFLOPS == 1979
    assert s.ceiling("bf16_tensor") is None and s.ceiling("fp16_tensor").value == 989
    assert s.ridge("fp8_tensor") == pytest.approx(1979e12 / 3350e9)
    assert s.ceiling("fp8_tensor", measured=True).value == pytest.approx(1300.0)
    assert s.ceiling("bf16_tensor", measured=True).value == pytest.approx(700.0)
    check_roofline_figure(roofline_data([r], [], CARDS))
    # The GEMM plot: each library row against its own tensor peak.
    hlines = [text for _, text in gemm_data(r).hlines]
    assert "FP8 tensor peak 1979 TFLOP/s" in hlines and "BF16 tensor peak 989 TFLOP/s" in hlines
    # A device the table lacks: from the context; a BF16 peak that differs gets its own roof.
    doc = with_library_gemms(h100_result(labelled=True))
    doc["context"].update(device_name="NVIDIA Future GPU", peak_bf16_tensor_TFLOPS="1200",
                          peak_fp8_tensor_TFLOPS="unknown")
    s = roofline_data([load_result(write_json(doc, tmp_path / "f.json"))], [], CARDS).series[0]
    assert s.ceiling("bf16_tensor").value == 1200
    assert s.ceiling("fp8_tensor") is None  # unknown: not drawn


def test_no_fp8_roof_without_fp8_rows_or_fp8_tensor_cores(tmp_path, h100):
    _, r = h100
    assert roofline_data([r], [], CARDS).series[0].ceiling("fp8_tensor") is None  # no FP8 rows
    doc = with_library_gemms(h100_result(labelled=True))
    doc["context"].update(device_name="NVIDIA A100-SXM4-80GB", cc="8.0", peak_fp8_tensor_TFLOPS="unknown")
    s = roofline_data([load_result(write_json(doc, tmp_path / "a100.json"))], [], CARDS).series[0]
    assert find_card("a100_80gb_sxm", CARDS).fp8_tensor_TFLOPS == 0
    assert s.ceiling("fp8_tensor") is None  # the card has none: no roof, no percentage


def test_runs_of_the_same_minute_and_revision_are_labelled_by_file(tmp_path):
    runs = []
    for i in range(3):
        doc = h100_result()
        doc["context"].update(run_started_utc="2026-11-23T07:09:22Z", git_revision="0abcdef12345")
        runs.append(load_result(write_json(doc, tmp_path / f"run{i}.json")))
    d = roofline_data(runs, [find_card("h100_sxm", CARDS)], CARDS)
    labels = [s.label for s in d.series[:3]]
    assert len(set(labels)) == 3 and all(f"run{i}" in labels[i] for i in range(3)), labels
    theoretical = [(c.kind, round(c.value, 2)) for s in d.series for c in s.ceilings
                   if not c.empirical]
    assert len(theoretical) == len(set(theoretical)), theoretical  # PCIe from both, once


def test_the_same_input_given_twice_is_refused(tmp_path, host_result):
    other_name = tmp_path / "link.json"
    other_name.symlink_to(host_result)
    for args, says in (([host_result, host_result], "given twice"),
                       ([host_result, other_name], "given twice"),
                       (["--card", "h100_sxm", "--card", "h100_sxm"], "--card h100_sxm given twice")):
        png = tmp_path / "r.png"
        code, out, err = cli("roofline.py", *args, "--out", png)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and says in lines[0], err
        assert lines[0].startswith("roofline.py: error: ") and not png.exists()
