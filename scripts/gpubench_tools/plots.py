"""Sweep plots from one result file, each drawn only when the result holds its data:

- bandwidth: GB/s against working-set size for the streaming kernels (copy, read, write, ...,
  library references included), the L2 size marked, the DRAM peak when known;
- strided: useful GB/s (solid) and sector GB/s (dashed) against the stride, at the largest span;
- pcie: GB/s against transfer size per direction and variant, the link peaks when known;
- gemm: TFLOP/s against matrix size per kernel, library references (the cuBLAS line) dashed,
  the FP32 / FP16-tensor roofs when known.

Rows are chosen by what they mean (results.RowMeaning: the row's label, or the legacy fallback
for files written before labels), never by their names:
- bandwidth: metric GBps, sweep bytes, level l2 or dram, and a memory ceiling (peak not none);
- strided: sweep stride;
- pcie: level pcie;
- gemm: metric TFLOPS, sweep m (m = n = k); the roofs of the peaks its rows name.

Each plot's data is a PlotData built by a plain function (tested against the JSON), drawn by
draw_plot(); Agg backend, fixed pixel size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .results import Benchmark, Result

FIGSIZE = (10.0, 6.0)
DPI = 100


@dataclass
class Line:
    """One curve: x ascending, median values."""

    label: str
    xs: list[float]
    ys: list[float]
    dashed: bool = False  #: library references (and sector GB/s)


@dataclass
class PlotData:
    """Everything one sweep plot draws."""

    kind: str  #: bandwidth, strided, pcie, gemm
    title: str
    xlabel: str
    ylabel: str
    x_log2: bool
    lines: list[Line] = field(default_factory=list)
    hlines: list[tuple[float, str]] = field(default_factory=list)  #: peaks
    vlines: list[tuple[float, str]] = field(default_factory=list)  #: L2 size


def _good(result: Result) -> list[Benchmark]:
    return [b for b in result.benchmarks.values() if b.ok and not b.verification_failed]


def _group(benches, key, x_of, y_of) -> dict[tuple, list[tuple[float, float]]]:
    groups: dict[tuple, list[tuple[float, float]]] = {}
    for b in benches:
        x, y = x_of(b), y_of(b)
        if x and y:
            groups.setdefault(key(b), []).append((x, y))
    return {k: sorted(v) for k, v in groups.items()}


def _lines(groups, label_of, dashed_of) -> list[Line]:
    return [Line(label_of(k), [p[0] for p in pts], [p[1] for p in pts], dashed_of(k))
            for k, pts in sorted(groups.items())]


def _other_params(b: Benchmark, drop: tuple[str, ...]) -> tuple:
    return tuple(sorted((k, v) for k, v in b.params.items() if k not in drop))


def _fmt_params(params: tuple) -> str:
    return "".join(f" {k}:{v}" for k, v in params)


def _fmt_bytes(n: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n:g} B"


def _title(result: Result, what: str) -> str:
    date = (result.ctx("run_started_utc") or result.ctx("date"))[:10]
    return f"{what}: {result.device_name} | {date}"


def is_working_set_bandwidth(b: Benchmark) -> bool:
    """A GB/s row of a working-set sweep through the cache hierarchy and DRAM: the bandwidth
    plot's rows. Strided (sweep stride), the chase (metric latency_ns; in legacy files: no
    ceiling, peak none), PCIe (level pcie) and shared memory (level smem) are not."""
    return (b.metric_kind == "GBps" and b.sweep == "bytes" and b.level in ("l2", "dram")
            and b.peak_kind != "none")


def bandwidth_data(result: Result) -> PlotData | None:
    """GB/s against working set for the streaming memory kernels; None without such data."""
    benches = [b for b in _good(result) if is_working_set_bandwidth(b)]
    groups = _group(benches, lambda b: (b.kernel, b.variant, _other_params(b, ("bytes",))),
                    lambda b: b.median("working_set_bytes") or b.size_bytes(),
                    lambda b: b.median("GB/s"))
    if not groups:
        return None
    d = PlotData("bandwidth", _title(result, "Bandwidth against working set"),
                 "working set (bytes)", "GB/s (useful bytes)", True,
                 _lines(groups, lambda k: f"{k[0]} [{k[1]}]{_fmt_params(k[2])}",
                        lambda k: k[1] != "kernel"))
    l2 = result.ctx_number("l2_bytes")
    if l2:
        # The host backend records its last-level cache in l2_bytes.
        level = "last-level cache" if result.backend == "host" else "L2"
        d.vlines.append((l2, f"{level} {_fmt_bytes(l2)}"))
    if result.peaks()["dram"]:
        d.hlines.append((result.peaks()["dram"], f"DRAM peak {result.peaks()['dram']:g} GB/s"))
    return d


def strided_data(result: Result) -> PlotData | None:
    """Useful and sector GB/s against the stride, at the largest span of each variant."""
    benches = [b for b in _good(result) if b.sweep == "stride" and "stride" in b.params]
    if not benches:
        return None
    largest: dict[str, float] = {}
    for b in benches:
        largest[b.variant] = max(largest.get(b.variant, 0), b.size_bytes() or 0)
    benches = [b for b in benches if (b.size_bytes() or 0) == largest[b.variant]]
    d = PlotData("strided", _title(result, "Strided access falloff"), "stride (elements)",
                 "GB/s", True)
    for metric, dashed in (("GB/s", False), ("sector_GB/s", True)):
        groups = _group(benches, lambda b: b.variant, lambda b: float(b.params["stride"]),
                        # no sector counter = traffic equals the useful bytes
                        lambda b, m=metric: b.median(m) or b.median("GB/s"))
        what = "useful" if metric == "GB/s" else "sector (DRAM traffic)"
        d.lines += _lines(groups, lambda k, w=what: f"{k} {w} "
                          f"({_fmt_bytes(largest[k])} span)", lambda k, ds=dashed: ds)
    if result.peaks()["dram"]:
        d.hlines.append((result.peaks()["dram"], f"DRAM peak {result.peaks()['dram']:g} GB/s"))
    return d


def pcie_data(result: Result) -> PlotData | None:
    """Host-device transfer GB/s against transfer size."""
    benches = [b for b in _good(result) if b.level == "pcie"]
    groups = _group(benches, lambda b: (b.kernel, b.variant, _other_params(b, ("bytes",))),
                    lambda b: b.size_bytes(), lambda b: b.median("GB/s"))
    if not groups:
        return None
    d = PlotData("pcie", _title(result, "Host-device transfers"), "transfer size (bytes)",
                 "GB/s", True, _lines(groups, lambda k: f"{k[0]} [{k[1]}]{_fmt_params(k[2])}",
                                      lambda k: k[1] != "kernel"))
    p = result.peaks()
    for kind, what in (("pcie_h2d", "H2D"), ("pcie_d2h", "D2H")):
        if p[kind]:
            d.hlines.append((p[kind], f"PCIe {what} peak {p[kind]:.1f} GB/s"))
    return d


def _gemm_size(b: Benchmark) -> float | None:
    try:
        m, n, k = (float(b.params[x]) for x in ("m", "n", "k"))
    except (KeyError, ValueError):
        return None
    return m if m == n == k else (m * n * k) ** (1.0 / 3.0)


def gemm_data(result: Result) -> PlotData | None:
    """GEMM TFLOP/s against size (cube root of m x n x k), library references dashed."""
    benches = [b for b in _good(result) if b.metric_kind == "TFLOPS" and b.sweep == "m"]
    groups = _group(benches, lambda b: (b.kernel, b.variant), _gemm_size,
                    lambda b: b.median("TFLOPS"))
    if not groups:
        return None
    d = PlotData("gemm", _title(result, "GEMM throughput"), "matrix size n (m = n = k)",
                 "TFLOP/s", True, _lines(groups, lambda k: f"{k[0]} [{k[1]}]",
                                         lambda k: k[1] != "kernel"))
    p = result.peaks()
    peaks = {b.peak_kind for b in benches}  # the roofs the plotted rows are measured against
    if p["fp32"] and "fp32" in peaks:
        d.hlines.append((p["fp32"], f"FP32 peak {p['fp32']:g} TFLOP/s"))
    if p["fp16_tensor"] and "fp16_tensor" in peaks:
        d.hlines.append((p["fp16_tensor"], f"FP16 tensor peak {p['fp16_tensor']:g} TFLOP/s"))
    return d


#: Every sweep plot, in the order they are written.
ALL_PLOTS = (bandwidth_data, strided_data, pcie_data, gemm_data)


def plot_figure(d: PlotData):
    """The matplotlib Figure of one sweep plot (FIGSIZE x DPI; no pyplot state, nothing to
    close): every Line of d as a curve labelled with its label (dashed when d says so), every
    peak in hlines as a horizontal line and every mark in vlines as a vertical one, each named
    in the legend. draw_plot() writes it; the tests read its artists."""
    import matplotlib
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    ax = fig.add_axes((0.08, 0.1, 0.6, 0.8))
    if d.x_log2:
        ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_title(d.title, fontsize=10)
    ax.set_xlabel(d.xlabel)
    ax.set_ylabel(d.ylabel)
    ax.grid(True, which="major", alpha=0.3)
    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, line in enumerate(d.lines):
        ax.plot(line.xs, line.ys, marker="o", markersize=4, color=colors[i % len(colors)],
                linestyle="--" if line.dashed else "-", label=line.label)
    for y, label in d.hlines:
        ax.axhline(y, color="black", linewidth=1.2, linestyle=":", label=label)
    for x, label in d.vlines:
        ax.axvline(x, color="grey", linewidth=1.2, linestyle="-.", label=label)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7, frameon=False,
              borderaxespad=0.0)
    return fig


def draw_plot(d: PlotData, out_png: Path | str) -> Path:
    """Writes one sweep plot (plot_figure(), FIGSIZE x DPI pixels) and returns its path."""
    out_png = Path(out_png)
    out_png.parent.mkdir(parents=True, exist_ok=True)
    plot_figure(d).savefig(out_png, dpi=DPI)
    return out_png


def write_plots(result: Result, out_dir: Path | str, stem: str) -> list[Path]:
    """Draws every plot whose data the result holds as out_dir/<stem>_<kind>.png."""
    out = []
    for make in ALL_PLOTS:
        d = make(result)
        if d is not None:
            out.append(draw_plot(d, Path(out_dir) / f"{stem}_{d.kind}.png"))
    return out
