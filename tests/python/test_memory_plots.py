"""The memory family's plots (allocation latency, managed memory / first touch, overlap) and its
headline metric latency_us, on synthetic CUDA-like and host-like results (fixtures.memory_rows):
every series checked against medians computed here straight from the JSON entries, the figures'
artists against their data (chart_artists), the PNGs against those figures; failed and skipped
rows left out; a result without memory rows draws none of these plots; a rise of latency_us is a
regression for the comparator and the nightly trend."""

import copy
import json
import statistics

import pytest

from chart_artists import assert_png, check_plot_figure, labelled_lines, legend_labels, xy
from conftest import cli
from fixtures import (H100_CONTEXT, HOST_CONTEXT, MEMORY_FAILURES, h100_result, memory_result,
                      memory_rows, write_json)
from gpubench_tools.compare import Thresholds, compare
from gpubench_tools.plots import (ALL_PLOTS, DPI, FIGSIZE, alloc_latency_data, bandwidth_data,
                                  first_touch_data, gemm_data, managed_data, overlap_data,
                                  pcie_data, strided_data)
from gpubench_tools.results import load_result, parse_result
from gpubench_tools.trends import trend_data

PLOT_PX = (int(FIGSIZE[0] * DPI), int(FIGSIZE[1] * DPI))
MEMORY_KINDS = {"memory_alloc", "memory_managed", "memory_first_touch", "memory_overlap"}
ALLOCATORS = {"cuda": ["cuda_malloc", "async_pool_miss", "async_pool_hit", "preallocated",
                       "pinned_host", "host_register"],
              "host": ["malloc", "mmap", "pool"]}
ALLOC_SIZES = {"4KiB": 4 << 10, "64KiB": 64 << 10, "1MiB": 1 << 20, "16MiB": 16 << 20}
MANAGED = ["demand_fault", "prefetch", "explicit_copy", "zero_copy", "read_mostly",
           "device_resident", "to_host"]
FIRST_TOUCH = ["pages_4k", "pages_2m", "populate"]
SWEEP_SIZES = {"2MiB": 2 << 20, "32MiB": 32 << 20, "512MiB": 512 << 20}


def json_median(doc, name, counter):
    """Median over the repetitions of a counter, straight from the JSON's iteration entries
    (aggregates ignored); None when the benchmark has no such entry or any entry of it is an
    error (skipped, or a repetition that failed verification: the row is not drawn)."""
    mine = [e for e in doc["benchmarks"] if e["run_name"].removesuffix("/manual_time") == name]
    if any(e.get("error_occurred") for e in mine):
        return None
    vals = [e[counter] for e in mine if e.get("run_type") == "iteration" and counter in e]
    return statistics.median(vals) if vals else None


def parsed(doc):
    """A document as the tools read it (no file)."""
    return parse_result(copy.deepcopy(doc))


def expected_series(doc, names_by_x: dict[float, str], counter: str):
    """(xs, ys) of a series from the JSON: the x values whose benchmark ran, the medians."""
    pts = [(x, json_median(doc, name, counter)) for x, name in sorted(names_by_x.items())]
    pts = [(x, y) for x, y in pts if y is not None]
    return [p[0] for p in pts], [p[1] for p in pts]


@pytest.fixture(params=["cuda", "host"])
def memory(tmp_path, request):
    """(backend, document, loaded result) of the synthetic memory result of each backend."""
    doc = memory_result(request.param)
    return request.param, doc, load_result(write_json(doc, tmp_path / f"{request.param}.json"))


def test_memory_rows_parse_with_their_meaning_and_metric(memory):
    backend, _, r = memory
    frag = r.benchmarks.get("memory/fragmentation/cuda_malloc/pattern:1MiB+64MiB")
    assert (frag is not None) == (backend == "cuda")
    if frag:  # a parameter joining sizes with "+", a label without a sweep
        assert frag.params == {"pattern": "1MiB+64MiB"} and frag.metric == "latency_us"
    alloc = r.benchmarks[f"memory/alloc/{ALLOCATORS[backend][0]}/bytes:1MiB"]
    assert alloc.family == "memory" and alloc.metric_kind == "latency_us"
    assert alloc.metric == "latency_us" and not alloc.higher_is_better
    assert alloc.median("latency_us") == pytest.approx(
        json_median(memory[1], alloc.name, "latency_us"))
    unit = "streams" if backend == "cuda" else "threads"
    engine = "cuda_streams" if backend == "cuda" else "host_threads"
    ov = r.benchmarks[f"memory/overlap/{engine}/{unit}:2,bytes:256MiB"]
    assert ov.params == {unit: "2", "bytes": "256MiB"} and ov.sweep == unit
    assert ov.metric == "GB/s" and ov.higher_is_better


def test_the_fixture_median_is_not_the_mean():
    """The fixtures' repetitions have an outlier, so the checks below catch a plot of means."""
    doc = memory_result("cuda")
    name = "memory/alloc/cuda_malloc/bytes:1MiB"
    vals = [e["latency_us"] for e in doc["benchmarks"]
            if e["run_name"] == name + "/manual_time" and e["run_type"] == "iteration"]
    assert len(vals) == 5 and statistics.median(vals) < 0.95 * statistics.mean(vals)


def test_allocation_latency_plot_draws_each_allocator_median_and_p99(memory):
    backend, doc, r = memory
    d = alloc_latency_data(r)
    assert d is not None and d.kind == "memory_alloc"
    fig = check_plot_figure(d)  # every line of the data drawn as the data says
    ax = fig.axes[0]
    lines = labelled_lines(ax)
    want = [w for a in ALLOCATORS[backend] for w in (a, f"{a} p99")]
    assert legend_labels(ax) == want  # the family table's order, each p99 after its median
    failed = MEMORY_FAILURES[backend]
    for a in ALLOCATORS[backend]:
        names = {x: f"memory/alloc/{a}/bytes:{t}" for t, x in ALLOC_SIZES.items()}
        xs, ys = expected_series(doc, names, "latency_us")
        assert len(xs) == 4 - sum(n in failed for n in names.values())
        x, y = xy(lines[a])
        assert list(x) == pytest.approx(xs) and list(y) == pytest.approx(ys), a
        assert lines[a].get_linestyle() == "-"
        x, y = xy(lines[f"{a} p99"])
        assert list(x) == pytest.approx(xs), a
        assert list(y) == pytest.approx(expected_series(doc, names, "p99_us")[1]), a
        assert lines[f"{a} p99"].get_linestyle() == "None"
        assert lines[f"{a} p99"].get_color() == lines[a].get_color()
        assert all(q > m for q, m in zip(y, xy(lines[a])[1]))  # p99 above the median
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    device = (H100_CONTEXT if backend == "cuda" else HOST_CONTEXT)["device_name"]
    assert device in ax.get_title() and ax.get_title().startswith("Allocation latency")


def test_the_failed_and_skipped_allocations_are_left_out():
    for backend, name in (("cuda", "host_register"), ("host", "mmap")):
        r = parsed(memory_result(backend))
        line = next(ln for ln in alloc_latency_data(r).lines if ln.label == name)
        assert line.xs == [4 << 10, 64 << 10, 1 << 20]  # 16 MiB failed / was skipped
    r = parsed(memory_result("cuda"))
    # the fragmentation rows (latency_us, no sweep) are not allocation sizes
    assert not any("fragmentation" in ln.label for ln in alloc_latency_data(r).lines)
    assert len(alloc_latency_data(r).lines) == 2 * len(ALLOCATORS["cuda"])


def test_managed_plot_draws_each_variant_against_size_with_its_peaks(tmp_path):
    doc = memory_result("cuda")
    r = load_result(write_json(doc, tmp_path / "cuda.json"))
    assert first_touch_data(r) is None
    d = managed_data(r)
    assert d.kind == "memory_managed"
    fig = check_plot_figure(d)
    ax = fig.axes[0]
    lines = labelled_lines(ax)
    for how in MANAGED:
        names = {x: f"memory/managed/{how}/bytes:{t}" for t, x in SWEEP_SIZES.items()}
        xs, ys = expected_series(doc, names, "GB/s")
        x, y = xy(lines[how])
        assert list(x) == pytest.approx(xs) and list(y) == pytest.approx(ys), how
    # the skipped 512 MiB demand-fault row is not drawn
    assert list(xy(lines["demand_fault"])[0]) == [2 << 20, 32 << 20]
    peaks = {label: y for y, label in d.hlines}
    assert peaks == {"PCIe H2D peak 63.02 GB/s": pytest.approx(63.0154),
                     "PCIe D2H peak 63.02 GB/s": pytest.approx(63.0154),
                     "DRAM peak 3350 GB/s": 3350.0}
    assert sorted(legend_labels(ax)) == sorted(MANAGED + list(peaks))
    assert "NVIDIA H100 80GB HBM3" in ax.get_title()
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"


def test_first_touch_plot_is_the_host_analogue_without_peaks(tmp_path):
    doc = memory_result("host")
    r = load_result(write_json(doc, tmp_path / "host.json"))
    assert managed_data(r) is None
    d = first_touch_data(r)
    assert d.kind == "memory_first_touch" and not d.hlines  # no peaks known on the host
    ax = check_plot_figure(d).axes[0]
    lines = labelled_lines(ax)
    assert legend_labels(ax) == FIRST_TOUCH
    for pages in FIRST_TOUCH:
        names = {x: f"memory/first_touch/{pages}/bytes:{t}" for t, x in SWEEP_SIZES.items()}
        xs, ys = expected_series(doc, names, "GB/s")
        assert list(xy(lines[pages])[0]) == pytest.approx(xs)
        assert list(xy(lines[pages])[1]) == pytest.approx(ys)
    assert list(xy(lines["pages_2m"])[0]) == [2 << 20, 32 << 20]  # 512 MiB skipped
    assert HOST_CONTEXT["device_name"] in ax.get_title()


def test_overlap_plot_draws_efficiency_and_end_to_end_gbps_against_the_count(memory):
    backend, doc, r = memory
    d = overlap_data(r)
    assert d.kind == "memory_overlap"
    fig = check_plot_figure(d)
    top, bottom = fig.axes
    unit, engine = (("streams", "cuda_streams") if backend == "cuda"
                    else ("threads", "host_threads"))
    names = {n: f"memory/overlap/{engine}/{unit}:{n},bytes:256MiB" for n in (1, 2, 4, 8)}
    ratios = {"overlap_efficiency": "overlap efficiency"}
    if backend == "cuda":
        ratios.update(kernel_slowdown="kernel slowdown",
                      bidir_copy_speedup="bidirectional copy speedup")
    lines = labelled_lines(top)
    assert sorted(lines) == sorted([f"{engine}: {w}" for w in ratios.values()]
                                   + ["1 = no overlap (serialized)"])
    for counter, words in ratios.items():
        xs, ys = expected_series(doc, names, counter)
        assert xs == [1, 2, 4]  # the 8-way row failed verification: not drawn
        x, y = xy(lines[f"{engine}: {words}"])
        assert list(x) == xs and list(y) == pytest.approx(ys), counter
    assert list(xy(lines["1 = no overlap (serialized)"])[1]) == [1.0, 1.0]
    gbps = labelled_lines(bottom)
    assert list(gbps) == [f"{engine}: GB/s"]
    xs, ys = expected_series(doc, names, "GB/s")
    assert list(xy(gbps[f"{engine}: GB/s"])[0]) == xs
    assert list(xy(gbps[f"{engine}: GB/s"])[1]) == pytest.approx(ys)
    assert bottom.get_xlabel() == unit and unit in top.get_title()
    assert "bytes:256MiB" in top.get_title()
    assert [t.get_text() for t in bottom.get_xticklabels()] == ["1", "2", "4"]
    assert top.get_yscale() == "linear" and bottom.get_ylabel() == "GB/s (end to end)"


def test_memory_plots_of_each_backend_and_no_other(memory):
    backend, _, r = memory
    kinds = [d.kind for make in ALL_PLOTS if (d := make(r)) is not None]
    assert kinds == (["memory_alloc", "memory_managed", "memory_overlap"] if backend == "cuda"
                     else ["memory_alloc", "memory_first_touch", "memory_overlap"])


def test_a_result_without_memory_rows_draws_no_memory_plot(tmp_path):
    r = load_result(write_json(h100_result(labelled=True), tmp_path / "h100.json"))
    kinds = [d.kind for make in ALL_PLOTS if (d := make(r)) is not None]
    assert kinds == ["bandwidth", "strided", "pcie", "gemm"]
    code, out, err = cli("plot.py", r.path, "--out-dir", tmp_path / "p")
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == sorted(
        f"h100_{k}.png" for k in ("bandwidth", "strided", "pcie", "gemm"))


def test_memory_rows_that_all_failed_draw_no_memory_plot(tmp_path):
    doc = memory_result("cuda")
    doc["benchmarks"] = [{k: v for k, v in e.items() if k in ("name", "run_name", "label")}
                         | {"run_type": "iteration", "error_occurred": True,
                            "error_message": "skipped: not on this device"}
                         for e in doc["benchmarks"] if e.get("run_type") == "iteration"]
    r = load_result(write_json(doc, tmp_path / "skipped.json"))
    assert [make(r) for make in ALL_PLOTS] == [None] * len(ALL_PLOTS)
    code, _, err = cli("plot.py", r.path, "--out-dir", tmp_path / "p")
    assert code == 0 and "no sweep data to plot" in err
    assert not (tmp_path / "p").exists() or not list((tmp_path / "p").iterdir())


def test_memory_rows_stay_out_of_the_other_sweep_plots(tmp_path):
    """Copy loops, AXPY and managed rows are not bandwidth-sweep or PCIe rows: adding the
    memory family to a result leaves the four other plots exactly as they were."""
    plain = h100_result(labelled=True)
    mixed = copy.deepcopy(plain)
    mixed["benchmarks"] += memory_rows("cuda")
    a = load_result(write_json(plain, tmp_path / "plain.json"))
    b = load_result(write_json(mixed, tmp_path / "mixed.json"))
    for make in (bandwidth_data, strided_data, pcie_data, gemm_data):
        assert make(a) == make(b), make.__name__
    assert alloc_latency_data(a) is None and alloc_latency_data(b) is not None


def test_memory_rows_stay_off_the_roofline(tmp_path):
    """The memory-management family neither sets a roofline ceiling nor sits as a point: a
    result with it draws the same roofline as one without."""
    from gpubench_tools.cards import load_cards
    from gpubench_tools.roofline import result_series
    plain = h100_result(labelled=True)
    mixed = copy.deepcopy(plain)
    mixed["benchmarks"] += memory_rows("cuda")
    cards = load_cards()
    a = result_series(load_result(write_json(plain, tmp_path / "plain.json")), cards)
    b = result_series(load_result(write_json(mixed, tmp_path / "mixed.json")), cards)
    assert [p.name for p in b.points] == [p.name for p in a.points]
    assert not any(p.name.startswith("memory/") for p in b.points)
    assert [(c.kind, c.value) for c in b.ceilings] == [(c.kind, c.value) for c in a.ceilings]


@pytest.mark.parametrize("backend", ["cuda", "host"])
def test_plot_cli_writes_the_memory_pngs_and_never_overwrites_them(tmp_path, backend):
    path = write_json(memory_result(backend), tmp_path / f"{backend}_mem.json")
    out_dir = tmp_path / "p"
    code, out, err = cli("plot.py", path, "--out-dir", out_dir)
    assert code == 0, err
    second = "memory_managed" if backend == "cuda" else "memory_first_touch"
    want = [f"{backend}_mem_{k}.png" for k in ("memory_alloc", second, "memory_overlap")]
    assert [line.split("/")[-1] for line in out.split()] == want
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(want)
    r = load_result(path)
    data = {d.kind: d for make in ALL_PLOTS if (d := make(r)) is not None}
    for name in want:  # each file is the checked figure of its data
        kind = name.removeprefix(f"{backend}_mem_").removesuffix(".png")
        assert_png(out_dir / name, PLOT_PX, check_plot_figure(data[kind]))
    before = {p.name: p.read_bytes() for p in out_dir.iterdir()}
    code, _, err = cli("plot.py", path, "--out-dir", out_dir)
    assert code == 2 and "--force" in err and len(err.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in out_dir.iterdir()} == before
    (out_dir / want[0]).write_bytes(b"stale")
    code, _, err = cli("plot.py", path, "--out-dir", out_dir, "--force")
    assert code == 0, err
    assert (out_dir / want[0]).read_bytes() != b"stale"


# --- latency_us, the headline of the allocation rows: lower is better -------------------------


def with_latency(doc: dict, name: str, factor: float) -> dict:
    """A copy of a document with one benchmark's latency counters multiplied by `factor`."""
    out = json.loads(json.dumps(doc))
    hit = 0
    for e in out["benchmarks"]:
        if e["run_name"] == name + "/manual_time" and e.get("aggregate_name") != "cv":
            for k in ("latency_us", "p50_us", "p99_us"):
                if isinstance(e.get(k), (int, float)):
                    e[k] *= factor
                    hit += 1
    assert hit, name
    return out


def without_failures(doc: dict) -> dict:
    """The document without its failed-verification entries (a result with one is no
    baseline); its skips stay."""
    out = json.loads(json.dumps(doc))
    out["benchmarks"] = [e for e in out["benchmarks"]
                         if not str(e.get("error_message", "")).startswith("verification")]
    return out


def test_a_rise_of_latency_us_is_a_regression(tmp_path):
    name = "memory/alloc/cuda_malloc/bytes:1MiB"
    base = without_failures(memory_result("cuda"))
    slower = with_latency(base, name, 1.6)  # every repetition above the base
    b = write_json(base, tmp_path / "base.json")
    n = write_json(slower, tmp_path / "new.json")
    c = compare(load_result(n), [load_result(b)])
    row = next(r for r in c.rows if r.name == name)
    assert row.metric == "latency_us" and not row.higher_is_better
    assert row.verdict == "SLOWER" and row.change == pytest.approx(0.6)  # latency up 60 %
    assert [r.name for r in c.rows if r.verdict == "SLOWER"] == [name]
    code, out, _ = cli("compare.py", n, b)
    assert code == 1 and "SLOWER" in out and name in out
    # the mirror image: a fall of latency is FASTER, and fails nothing
    c = compare(load_result(b), [load_result(n)])
    row = next(r for r in c.rows if r.name == name)
    assert row.verdict == "FASTER" and row.change == pytest.approx(1 / 1.6 - 1)
    assert c.exit_code == 0


def test_the_nightly_trend_marks_a_latency_rise_slower(tmp_path):
    name = "memory/alloc/host_register/bytes:1MiB"
    base = memory_result("cuda")
    runs = [load_result(write_json(base, tmp_path / "20260101T000000Z_a.json")),
            load_result(write_json(base, tmp_path / "20260102T000000Z_b.json")),
            load_result(write_json(with_latency(base, name, 1.6),
                                   tmp_path / "20260103T000000Z_c.json"))]
    d = trend_data(runs, name, 5, Thresholds())
    assert d.metric == "latency_us"
    assert [p.verdict for p in d.points][1:] == ["SAME", "SLOWER"]
    assert d.points[2].median == pytest.approx(1.6 * d.points[0].median)
