"""Rows carry their meaning: the tools select by the label's fields (peak, metric, level, sweep),
not by benchmark names; legacy files (no labels) keep their old behaviour through the fallback.

The checks here would fail if a selection went back to names: rows with unusual names but
telling labels, rows named like one thing and labelled as another.
"""

import dataclasses
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from conftest import ROOT, cli, scaled
from fixtures import (PEAK_SMEM_GBPS, _reps, entries, error_entry, h100_result, label,
                      strip_labels, write_json)
from gpubench_tools.errors import UsageError
from gpubench_tools.cards import load_cards
from gpubench_tools.compare import Thresholds, compare, judge
from gpubench_tools.plots import ALL_PLOTS, bandwidth_data, gemm_data, pcie_data
from gpubench_tools.results import RowMeaning, legacy_row_meaning, load_result, parse_row_label
from chart_artists import assert_png, check_roofline_figure, labelled_lines, xy
from gpubench_tools.roofline import (CEILING_WIDTH_DEFAULT, CEILING_WIDTHS, DPI, FIGSIZE,
                                     LEVELS, PRECISIONS, Ceiling, ceiling_style, draw_roofline,
                                     roofline_data)
from gpubench_tools.trends import trend_data

CARDS = load_cards()
GOLDEN = Path(__file__).parent / "golden" / "legacy_h100_before_labels.json"
MEM = {"verified": 1, "throttled": 0, "ops_per_iteration": 1}


def load(doc, tmp_path, name="r.json"):
    return load_result(write_json(doc, tmp_path / name))


#: Plot-data fields added after GOLDEN was recorded, at their defaults (what every plot of a
#: legacy file has: they serve the memory family's plots): left out of normal()'s tree.
LATER_FIELDS = {"markers_only": False, "color_of": "", "y_log": True, "x_counts": False,
                "lines2": [], "ylabel2": ""}


def _without_later_fields(tree):
    if isinstance(tree, dict):
        return {k: _without_later_fields(v) for k, v in tree.items()
                if not (k in LATER_FIELDS and v == LATER_FIELDS[k])}
    if isinstance(tree, list):
        return [_without_later_fields(v) for v in tree]
    return tree


def normal(obj):
    """A dataclass tree as plain JSON values (tuples become lists), as the golden file holds it
    (LATER_FIELDS at their defaults left out; set otherwise, they stay and differ)."""
    return _without_later_fields(json.loads(json.dumps(dataclasses.asdict(obj), sort_keys=True)))


# --- the label and the legacy fallback ------------------------------------------------------


def test_parse_row_label_reads_every_pair_in_any_order_and_ignores_the_rest():
    assert parse_row_label("peak=dram metric=GBps level=dram sweep=bytes") == {
        "peak": "dram", "metric": "GBps", "level": "dram", "sweep": "bytes"}
    assert parse_row_label("  sweep=m future=1 level=none  metric=TFLOPS peak=fp32 note ") == {
        "peak": "fp32", "metric": "TFLOPS", "level": "none", "sweep": "m"}
    assert parse_row_label("") == {} and parse_row_label(None) == {} and parse_row_label(3) == {}
    assert parse_row_label("free text without pairs") == {}


def test_labelled_rows_take_their_fields_from_the_label(tmp_path):
    r = load(h100_result(labelled=True), tmp_path)
    smem = r.benchmarks["bandwidth/smem/kernel/bytes:32KiB"]
    assert smem.meaning == RowMeaning("smem", "GBps", "smem", "bytes", "label")
    assert smem.labelled and smem.metric == "GB/s" and smem.higher_is_better
    cached = r.benchmarks["bandwidth/copy/kernel/bytes:4MiB"]
    assert (cached.peak_kind, cached.level) == ("l2", "l2")
    chase = r.benchmarks["bandwidth/chase/kernel/bytes:256MiB"]
    assert chase.metric_kind == "latency_ns" and chase.metric == "latency_ns"
    assert not chase.higher_is_better
    gemm = r.benchmarks["compute/sgemm/kernel/m:1024,n:1024,k:1024"]
    assert (gemm.peak_kind, gemm.metric, gemm.level, gemm.sweep) == ("fp32", "TFLOPS", "none", "m")
    # Error and skip entries carry the label too.
    skipped = r.benchmarks["bandwidth/pcie_h2d/pageable_memcpy/bytes:64KiB"]
    assert skipped.skipped and not skipped.verification_failed and skipped.level == "pcie"
    assert r.benchmarks["bandwidth/gather/kernel/bytes:1GiB"].peak_kind == "dram"


def test_legacy_rows_fall_back_to_the_name_and_keep_their_old_metric(tmp_path):
    r = load(h100_result(), tmp_path)
    assert not any(b.labelled for b in r.benchmarks.values())
    copy = r.benchmarks["bandwidth/copy/kernel/bytes:4MiB"]
    assert copy.meaning == RowMeaning("dram", "GBps", "dram", "bytes", "legacy")
    assert r.benchmarks["bandwidth/strided/kernel/bytes:1GiB,stride:2"].sweep == "stride"
    assert r.benchmarks["bandwidth/pcie_h2d/memcpy_ce/bytes:64KiB"].level == "pcie"
    assert r.benchmarks["compute/sgemm/kernel/m:1024,n:1024,k:1024"].metric == "TFLOPS"
    # The chase was compared on its GB/s before labels: a legacy file still is.
    assert legacy_row_meaning("bandwidth", "chase", "kernel", {"bytes": "1MiB"},
                              [{"GB/s": 0.1, "latency_ns": 80.0}]).metric == "GBps"
    assert legacy_row_meaning("bandwidth", "pcie_d2h", "pinned_ce", {}, []).peak_kind == "pcie_d2h"
    # The same rows with labels stripped read exactly as the legacy form.
    stripped = load(strip_labels(h100_result(labelled=True)), tmp_path, "stripped.json")
    assert stripped.benchmarks["bandwidth/copy/kernel/bytes:4MiB"].peak_kind == "dram"
    assert stripped.benchmarks["bandwidth/chase/kernel/bytes:256MiB"].metric == "GB/s"


def test_a_partial_label_takes_only_its_missing_keys_from_the_fallback(tmp_path):
    doc = h100_result()
    doc["benchmarks"] += entries("bandwidth/copy/kernel/bytes:2GiB",
                                 _reps({**MEM, "GB/s": 3000.0, "working_set_bytes": 4 << 30}),
                                 label="level=l2 owner=someone")
    b = load(doc, tmp_path).benchmarks["bandwidth/copy/kernel/bytes:2GiB"]
    assert b.labelled and b.level == "l2" and b.peak_kind == "dram" and b.metric == "GB/s"


# --- selection by fields, not names ---------------------------------------------------------


def test_an_unusual_row_labelled_peak_dram_sets_the_empirical_dram_ceiling(tmp_path):
    # Neither its family nor its kernel name says "memory stream": only its label does.
    doc = h100_result(labelled=True)
    doc["benchmarks"] += entries("compute/zz_probe/kernel/bytes:4GiB",
                                 _reps({**MEM, "GB/s": 3340.0, "working_set_bytes": 12 << 30}),
                                 label=label("dram", "GBps", "dram", "bytes"))
    r = load(doc, tmp_path)
    s = roofline_data([r], [], CARDS).series[0]
    c = s.ceiling("dram", measured=True)
    assert c.value == pytest.approx(3340.0) and "zz_probe" in c.label
    # A row without FLOP sets a ceiling; it is not a point.
    assert not any(p.name == "compute/zz_probe/kernel/bytes:4GiB" for p in s.points)
    # And it is a bandwidth-plot row, a sweep of its own.
    assert any(line.label.startswith("zz_probe [kernel]") for line in bandwidth_data(r).lines)


def test_a_row_named_like_a_copy_but_labelled_pcie_is_a_transfer(tmp_path):
    doc = h100_result(labelled=True)
    doc["benchmarks"] += entries("bandwidth/copy/kernel/bytes:4GiB",
                                 _reps({**MEM, "GB/s": 9999.0, "working_set_bytes": 8 << 30}),
                                 label=label("pcie_h2d", "GBps", "pcie", "bytes"))
    r = load(doc, tmp_path)
    bw = bandwidth_data(r)
    copy = next(line for line in bw.lines if line.label.startswith("copy [kernel]"))
    assert 8 << 30 not in copy.xs and max(copy.ys) < 9999.0
    assert any(9999.0 == pytest.approx(y) for line in pcie_data(r).lines for y in line.ys)
    s = roofline_data([r], [], CARDS).series[0]
    assert s.ceiling("dram", measured=True).value < 9999.0
    assert s.ceiling("pcie", measured=True).value == pytest.approx(9999.0)
    assert not any(p.name == "bandwidth/copy/kernel/bytes:4GiB" for p in s.points)


def test_cache_resident_rows_labelled_l2_do_not_set_the_dram_ceiling(tmp_path):
    # A quick run: no size beyond 2 x L2, so the ceiling comes from the largest size of each
    # sweep. The write sweep's largest size is cache-resident: labelled rows count only rows
    # measured against DRAM; the roofline places the rows of legacy files (no labels) by their
    # working set as gpubench labels them (below L2/2: l2), so they agree. The cache-resident
    # rows set the measured L2 ceiling instead.
    doc = {"context": h100_result()["context"], "benchmarks": []}
    for kernel, tok, ws, gbps, level in (("read", "4MiB", 4 << 20, 5000.0, "l2"),
                                         ("read", "32MiB", 32 << 20, 3000.0, "dram"),
                                         ("write", "4MiB", 4 << 20, 6100.0, "l2")):
        doc["benchmarks"] += entries(f"bandwidth/{kernel}/kernel/bytes:{tok}",
                                     _reps({**MEM, "GB/s": gbps, "working_set_bytes": ws}),
                                     label=label(level, "GBps", level, "bytes"))
    r = load(doc, tmp_path)
    labelled = roofline_data([r], [], CARDS).series[0]
    assert labelled.ceiling("dram", measured=True).value == pytest.approx(3000.0)
    assert labelled.ceiling("l2", measured=True).value == pytest.approx(6100.0)
    legacy = roofline_data([load(strip_labels(doc), tmp_path, "l.json")], [], CARDS).series[0]
    assert legacy.ceiling("dram", measured=True).value == pytest.approx(3000.0)
    assert legacy.ceiling("l2", measured=True).value == pytest.approx(6100.0)
    # Both levels stay on the bandwidth-against-working-set plot.
    read = next(line for line in bandwidth_data(r).lines if line.label.startswith("read"))
    assert read.xs == [4 << 20, 32 << 20]


def test_latency_rows_are_not_bandwidth_or_roofline_points(tmp_path):
    r = load(h100_result(labelled=True), tmp_path)
    assert not any("chase" in line.label for line in bandwidth_data(r).lines)
    assert not any("smem" in line.label for line in bandwidth_data(r).lines)
    s = roofline_data([r], [], CARDS).series[0]
    assert not any("chase" in p.name for p in s.points)
    assert s.ceiling("dram", measured=True) and s.ceiling("l2", measured=True)
    assert not any("chase" in c.label for c in s.ceilings)


def test_gemm_plot_rows_and_roofs_come_from_the_fields(tmp_path):
    doc = h100_result(labelled=True)
    n = 2048
    fpb = 2 * n**3 / (3 * n * n * 2)
    doc["benchmarks"] += entries(f"compute/tensor_mm/kernel/m:{n},n:{n},k:{n}",
                                 _reps({**MEM, "GB/s": 300e3 / fpb, "TFLOPS": 300.0,
                                        "flop_per_byte": fpb}),
                                 label=label("fp16_tensor", "TFLOPS", "none", "m"))
    g = gemm_data(load(doc, tmp_path))
    assert any(line.label == "tensor_mm [kernel]" for line in g.lines)
    assert [h[1] for h in g.hlines] == ["FP32 peak 66.9 TFLOP/s", "FP16 tensor peak 989 TFLOP/s"]


# --- the shared-memory ceiling --------------------------------------------------------------


def test_the_smem_ceiling_is_drawn_when_the_context_knows_it(tmp_path):
    r = load(h100_result(labelled=True), tmp_path)
    s = roofline_data([r], [], CARDS).series[0]
    smem = s.ceiling("smem")
    assert smem.value == float(PEAK_SMEM_GBPS) and smem.diagonal and not smem.empirical
    assert smem.label == "shared memory 33.4 TB/s"
    # Its row sets the measured shared-memory ceiling, like every 0-FLOP memory row, and is not
    # a point.
    measured = s.ceiling("smem", measured=True)
    assert measured.value == pytest.approx(
        r.benchmarks["bandwidth/smem/kernel/bytes:32KiB"].median("GB/s"))
    assert measured.diagonal and not any(p.name.startswith("bandwidth/smem/") for p in s.points)
    # A device the card table lacks: from the context as well.
    doc = h100_result(labelled=True)
    doc["context"]["device_name"] = "NVIDIA Future GPU"
    s2 = roofline_data([load(doc, tmp_path, "f.json")], [], CARDS).series[0]
    assert s2.ceiling("smem").value == float(PEAK_SMEM_GBPS)
    # Drawn: a solid diagonal of 33.4 TB/s from the left edge, the measured one dashed.
    data = roofline_data([r], [], CARDS)
    fig = check_roofline_figure(data)
    lines = labelled_lines(fig.axes[0])
    line = lines["shared memory 33.4 TB/s"]
    x, y = xy(line)
    assert y[0] * 1000 / x[0] == pytest.approx(float(PEAK_SMEM_GBPS))
    assert line.get_linestyle() == "-" and line.get_linewidth() == CEILING_WIDTHS["smem"]
    assert lines[measured.label].get_linestyle() == "--"
    png = draw_roofline(data, tmp_path / "smem.png")
    assert_png(png, (int(FIGSIZE[0] * DPI), int(FIGSIZE[1] * DPI)), fig)


@pytest.mark.parametrize("value", [None, "unknown", ""])
def test_no_smem_ceiling_without_a_known_peak(tmp_path, value):
    doc = h100_result(labelled=True)
    if value is None:
        del doc["context"]["peak_smem_GBps"]
    else:
        doc["context"]["peak_smem_GBps"] = value
    s = roofline_data([load(doc, tmp_path)], [], CARDS).series[0]
    assert s.ceiling("smem") is None
    assert s.ceiling("smem", measured=True).value == pytest.approx(30500.0)  # the row still drawn
    assert roofline_data([load(h100_result(), tmp_path, "legacy.json")], [],
                         CARDS).series[0].ceiling("smem") is None


def test_a_zero_smem_peak_is_not_taken_for_an_unknown_one(tmp_path):
    # gpubench writes "unknown"; a 0 is a hand-edited file, refused rather than read as unknown
    doc = h100_result(labelled=True)
    doc["context"]["peak_smem_GBps"] = "0"
    with pytest.raises(UsageError, match="peak_smem_GBps = 0 is not positive"):
        load(doc, tmp_path)


def test_every_ceiling_kind_has_a_style_and_an_unknown_one_a_default():
    for kind in list(LEVELS) + list(PRECISIONS):
        assert kind in CEILING_WIDTHS
        assert ceiling_style(Ceiling(kind, 1.0, True, False, "x")) == ("-", CEILING_WIDTHS[kind])
        assert ceiling_style(Ceiling(kind, 1.0, True, True, "x")) == ("--", CEILING_WIDTHS[kind])
    assert ceiling_style(Ceiling("l3", 1.0, True, False, "x")) == ("-", CEILING_WIDTH_DEFAULT)
    assert CEILING_WIDTH_DEFAULT == 1.2
    assert ceiling_style(Ceiling("l3", 1.0, True, True, "x")) == ("--", CEILING_WIDTH_DEFAULT)


# --- skipped rows and the comparator --------------------------------------------------------


def without_failures(doc):
    """The document without its failed-verification entry (which rightly fails a night)."""
    out = json.loads(json.dumps(doc))
    out["benchmarks"] = [e for e in out["benchmarks"]
                         if not str(e.get("error_message", "")).startswith("verification")]
    return out


def test_rows_skipped_as_not_on_this_backend_do_not_fail_the_comparison(tmp_path):
    doc = without_failures(h100_result(labelled=True))
    new = write_json(doc, tmp_path / "new.json")
    base = write_json(scaled(doc, "bandwidth/copy/kernel/bytes:1GiB", 1.01), tmp_path / "b.json")
    code, out, err = cli("compare.py", new, base, "--json", tmp_path / "c.json",
                         "--junit", tmp_path / "c.xml")
    assert code == 0, out + err
    report = json.loads((tmp_path / "c.json").read_text())
    skipped = {n["name"]: n["reason"] for n in report["not_compared"]}
    assert skipped["bandwidth/pcie_h2d/pageable_memcpy/bytes:64KiB"].startswith(
        "skipped: not on the cuda backend")
    assert not any(r["failed"] for r in report["rows"])
    assert "INVALID" not in {r["verdict"] for r in report["rows"]}
    assert "FAILED" not in out and 'failures="0"' in (tmp_path / "c.xml").read_text()


def test_a_row_skipped_in_the_baseline_is_not_compared_not_invalid(tmp_path):
    name = "bandwidth/copy/kernel/bytes:64MiB"
    doc = without_failures(h100_result(labelled=True))
    base = json.loads(json.dumps(doc))
    base["benchmarks"] = [e for e in base["benchmarks"] if not e["run_name"].startswith(name + "/")]
    base["benchmarks"].append(error_entry(name, "skipped: not on the host backend: CUDA only",
                                          label=label("dram", "GBps", "dram", "bytes")))
    c = compare(load(doc, tmp_path, "n.json"), [load(base, tmp_path, "b.json")])
    assert name not in {r.name for r in c.rows}
    assert dict(c.not_compared)[name].startswith("skipped in the baseline: skipped: not on the host")
    assert c.exit_code == 0


def test_latency_is_compared_lower_is_better(tmp_path):
    name = "bandwidth/chase/kernel/bytes:256MiB"
    doc = without_failures(h100_result(labelled=True))
    slower = json.loads(json.dumps(doc))
    for e in slower["benchmarks"]:
        if e["run_name"].startswith(name + "/") and e.get("aggregate_name") != "cv":
            e["latency_ns"] *= 1.25
            e["GB/s"] /= 1.25
    c = compare(load(slower, tmp_path, "n.json"), [load(doc, tmp_path, "b.json")])
    row = next(r for r in c.rows if r.name == name)
    assert row.metric == "latency_ns" and not row.higher_is_better
    # the change is the latency's own: up 25 %, and that rise is the loss
    assert row.verdict == "SLOWER" and row.change == pytest.approx(0.25)
    faster = judge("x", "latency_ns", [80, 81, 79, 80, 80.5], [100, 101, 99, 100, 100.5],
                   Thresholds(), higher_is_better=False)
    assert faster.verdict == "FASTER" and faster.change == pytest.approx(-0.2)
    # Legacy files (no labels): the same rows compared on GB/s, as before.
    c2 = compare(load(strip_labels(slower), tmp_path, "n2.json"),
                 [load(strip_labels(doc), tmp_path, "b2.json")])
    row2 = next(r for r in c2.rows if r.name == name)
    assert row2.metric == "GB/s" and row2.higher_is_better and row2.verdict == "SLOWER"


def test_a_trend_across_the_switch_to_labels_stays_on_the_newest_metric(tmp_path):
    name = "bandwidth/chase/kernel/bytes:256MiB"
    doc = without_failures(h100_result(labelled=True))
    runs = [load(strip_labels(doc), tmp_path, "20260101T000000Z_a.json"),
            load(doc, tmp_path, "20260102T000000Z_b.json")]
    d = trend_data(runs, name, 5, Thresholds())
    assert d.metric == "latency_ns" and len(d.points) == 2
    assert d.points[0].median == pytest.approx(d.points[1].median)
    assert d.points[1].verdict == "SAME"


def test_a_night_with_rows_skipped_on_this_backend_is_not_a_failed_night(tmp_path):
    from test_store_nightly import FAKE

    doc = without_failures(h100_result(labelled=True))
    template = write_json(doc, tmp_path / "template.json")
    key = doc["context"]["device_key"]
    write_json(doc, tmp_path / "results" / key / "20260101T000000Z_seed.json")
    exe = tmp_path / "fake_gpubench"
    exe.write_text(FAKE.format(python=sys.executable))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    env = {"FAKE_TEMPLATE": str(template), "FAKE_BENCH": "bandwidth/copy/kernel/bytes:1GiB",
           "FAKE_FACTOR": "1.0", "FAKE_RERUN_FACTOR": "1.0"}
    os.environ.update(env)
    try:
        code, out, err = cli("nightly.py", "--gpubench", exe, "--filter",
                             "^bandwidth/(copy/kernel|pcie_h2d/pageable_memcpy|copy/memcpy)/",
                             "--results-dir", tmp_path / "results",
                             "--report-dir", tmp_path / "report")
    finally:
        for k in env:
            os.environ.pop(k, None)
    assert code == 0, out + err
    (report_json,) = (tmp_path / "report").glob("*/report.json")
    report = json.loads(report_json.read_text())
    assert report["exit_code"] == 0 and report["counts"]["SAME"] == len(report["rows"]) == 3
    reasons = dict((n["name"], n["reason"]) for n in report["not_compared"])
    assert reasons["bandwidth/copy/memcpy/bytes:64MiB"].startswith("skipped: not on the cuda")
    assert reasons["bandwidth/pcie_h2d/pageable_memcpy/bytes:64KiB"].startswith("skipped:")


# --- legacy files: what the tools gave before labels ----------------------------------------


def golden_files():
    return sorted(json.loads(GOLDEN.read_text())["files"])


@pytest.mark.parametrize("rel", golden_files(), ids=lambda p: Path(p).stem)
def test_committed_legacy_h100_results_plot_as_before_labels(rel):
    """The real H100 results (written before labels) give exactly the sweep-plot data, roofline
    ceilings and points, and headline metrics the name-based tools gave (recorded in GOLDEN)."""
    want = json.loads(GOLDEN.read_text())["files"][rel]
    r = load_result(ROOT / rel)
    assert not any(b.labelled for b in r.benchmarks.values())
    plots = {d.kind: normal(d) for make in ALL_PLOTS if (d := make(r)) is not None}
    assert plots == want["plots"]
    roofline_carries_over(r, roofline_data([r], [], CARDS), want["roofline"])
    assert {n: b.metric for n, b in r.benchmarks.items()} == want["metrics"]


def roofline_carries_over(r, data, golden):
    """The roofline was redrawn since GOLDEN was recorded (hierarchical ceilings, rows without
    FLOP set ceilings instead of sitting in a memory column): what it kept must still equal the
    name-based tools' data - the card table's ceilings, the points of the rows with FLOP, the
    measured DRAM ceiling where the run has DRAM-level sizes beyond 2 x L2 (a quick run's
    cache-resident "DRAM" figure is now an L2 one: the new line is lower), and the best
    measured TFLOP/s where it came from a row with an FP32 or FP16-tensor peak."""
    (s,), (g,) = data.series, golden["series"]
    assert s.label == g["label"] and data.title == golden["title"]
    for c in g["ceilings"]:
        if not c["empirical"]:
            new = s.ceiling(c["kind"])
            assert (new.value, new.label, new.diagonal) == (c["value"], c["label"], c["diagonal"])
    keep = ("name", "x", "y", "library", "GBps", "sweep")
    want = sorted((tuple(p[k] for k in keep) for p in g["points"] if not p["memory"]),
                  key=str)
    assert sorted((tuple(getattr(p, k) for k in keep) for p in s.points), key=str) == want
    old = {c["kind"]: c for c in g["ceilings"] if c["empirical"]}
    l2 = r.ctx_number("l2_bytes")
    beyond = any(b.ok and (b.peak_kind == "dram" or b.family == "roofline")
                 and b.median("working_set_bytes") > 2 * l2 for b in r.benchmarks.values())
    dram = s.ceiling("dram", measured=True)
    if "empirical_bandwidth" not in old:
        assert dram is None
    elif beyond:
        assert dram.value == old["empirical_bandwidth"]["value"]
    else:
        assert dram.value < old["empirical_bandwidth"]["value"]
    roofs = [c.value for c in s.ceilings if c.empirical and not c.diagonal]
    if "empirical_compute" in old and "fp16x2" not in old["empirical_compute"]["label"]:
        assert max(roofs) == old["empirical_compute"]["value"]
