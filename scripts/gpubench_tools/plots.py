"""Sweep plots from one result file, each drawn only when the result holds its data:

- bandwidth: GB/s against working-set size for the streaming kernels (copy, read, write, ...,
  library references included), the L2 size and half of it (where the method changes from
  cache-resident passes to sets kept out of the cache) marked, the DRAM peak when known;
- strided: useful GB/s (solid) and sector GB/s (dashed) against the stride, at the largest span;
- pcie: GB/s against transfer size per direction and variant, the link peaks when known (one
  line when both directions have the same) and the protocol limit at the maximum payload size;
- gemm: TFLOP/s against matrix size per kernel over the square shapes, library references (the
  cuBLAS line) dashed, the other shapes as hollow markers at the cube root of m x n x k,
  the FP32 / FP16-tensor roofs when known;

and of the memory family (memory/<kernel>/<variant>/<params>, families/memory/cases.cpp):
- memory_alloc: allocate + free latency against size, log-log, one series per allocator (the
  median over repetitions of latency_us), its p99 over the pairs (p99_us) as hollow markers of
  the same colour;
- memory_managed (CUDA): GB/s against size of a kernel consuming bytes that start on the host,
  one series per way of getting them there (demand_fault, prefetch, ...; to_host: the CPU
  reading managed memory from the device), the peaks its rows are measured against when known;
- memory_first_touch (host): the analogue, page-fault GB/s against size per page kind;
- memory_overlap: overlap efficiency (serialized / concurrent time; on CUDA also kernel_slowdown
  and bidir_copy_speedup, dashed) against streams (threads on the host), a line at 1 (no
  overlap), and the end-to-end GB/s in a second panel below.

Rows are chosen by what they mean (results.RowMeaning: the row's label, or the legacy fallback
for files written before labels), never by their names:
- bandwidth: metric GBps, sweep bytes, level l2 or dram, and a memory ceiling (peak not none);
- strided: sweep stride;
- pcie: level pcie;
- gemm: metric TFLOPS, sweep m (m = n = k); the roofs of the peaks its rows name.
The memory family's rows are drawn by its own plots and by none of these four (its copy loops,
AXPY and managed rows would otherwise join the bandwidth and PCIe sweeps as if they were
library references). Within the family: memory_alloc takes metric latency_us with sweep bytes
(not the fragmentation rows, which sweep nothing); memory_managed, memory_first_touch and
memory_overlap take the family's kernels of those names (the kernel is the part of the name the
family table defines them by), the overlap's x the parameter its sweep names.

Each plot's data is a PlotData built by a plain function (tested against the JSON), drawn by
draw_plot(); Agg backend, fixed pixel size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .figures import literal_text
from .output import NewFile, commit_all
from .results import LIBRARY_WORDS, Benchmark, Result

FIGSIZE = (10.0, 6.0)
DPI = 100


@dataclass
class Line:
    """One curve: x ascending, median values."""

    label: str
    xs: list[float]
    ys: list[float]
    dashed: bool = False  #: library references (and sector GB/s)
    markers_only: bool = False  #: hollow markers, no line (the p99 beside its median curve)
    color_of: str = ""  #: the label of the line whose colour it takes ("": a colour of its own)


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
    y_log: bool = True  #: a log y axis (both panels); linear for ratios near 1
    x_counts: bool = False  #: x ticks at the data's x values, as plain numbers (1 2 4 8 streams)
    #: a second panel below the first, on the same x (the overlap's end-to-end GB/s)
    lines2: list[Line] = field(default_factory=list)
    ylabel2: str = ""


#: The family drawn by the memory_* plots (and left out of the four others).
MEMORY_FAMILY = "memory"


def _ran(result: Result) -> list[Benchmark]:
    """Rows with numbers: not skipped, not failed, verified."""
    return [b for b in result.benchmarks.values() if b.ok and not b.verification_failed]


def _good(result: Result) -> list[Benchmark]:
    """The rows the bandwidth, strided, PCIe and GEMM plots choose from."""
    return [b for b in _ran(result) if b.family != MEMORY_FAMILY]


def _memory(result: Result) -> list[Benchmark]:
    """The memory family's rows that ran, in file order (its table's order)."""
    return [b for b in _ran(result) if b.family == MEMORY_FAMILY]


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


def _library(variant: str) -> bool:
    """A library reference's variant (cuBLAS, Thrust, CUB, cudaMemcpy, memcpy): drawn dashed.
    gpubench's own variants (mma.sync `kernel`, `wmma`, `wgmma`, `pinned_sm`, ...) are solid."""
    return any(w in variant for w in LIBRARY_WORDS)


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
    plot's rows, the per-SM cache read (level l1) among them. Strided (sweep stride), the chase
    (metric latency_ns; in legacy files: no ceiling, peak none), PCIe (level pcie) and shared
    memory (level smem) are not."""
    return (b.metric_kind == "GBps" and b.sweep == "bytes" and b.level in ("l1", "l2", "dram")
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
                        lambda k: _library(k[1])))
    l2 = result.ctx_number("l2_bytes")
    if l2:
        # The host backend records its last-level cache in l2_bytes.
        level = "last-level cache" if result.backend == "host" else "L2"
        d.vlines.append((l2, f"{level} {_fmt_bytes(l2)}"))
        # Where the method changes (families/global_memory/cases.cpp): smaller sets repeat passes
        # over one cache-resident buffer, larger ones rotate buffers of 4 x the cache together (or,
        # in older files, flushed the cache before each launch), so a curve's step
        # there is the method's, not the cache's edge.
        d.vlines.append((l2 / 2, f"{level} / 2 (cache-resident below)"))
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
                                      lambda k: _library(k[1])))
    p = result.peaks()
    if p["pcie_h2d"] and p["pcie_h2d"] == p["pcie_d2h"]:  # one link, the same both ways: one line
        d.hlines.append((p["pcie_h2d"], f"PCIe peak {p['pcie_h2d']:.1f} GB/s per direction"))
    else:
        for kind, what in (("pcie_h2d", "H2D"), ("pcie_d2h", "D2H")):
            if p[kind]:
                d.hlines.append((p[kind], f"PCIe {what} peak {p[kind]:.1f} GB/s"))
    protocol = result.ctx_number("peak_pcie_protocol_GBps")
    if protocol:  # what the link carries at its maximum payload size, after TLP and DLLP overhead
        d.hlines.append((protocol, f"PCIe protocol limit {protocol:.1f} GB/s"))
    return d


def _gemm_shape(b: Benchmark) -> tuple[float, float, float] | None:
    try:
        m, n, k = (float(b.params[x]) for x in ("m", "n", "k"))
    except (KeyError, ValueError):
        return None
    return m, n, k


def _is_square(b: Benchmark) -> bool:
    shape = _gemm_shape(b)
    return bool(shape) and shape[0] == shape[1] == shape[2]


def _gemm_size(b: Benchmark) -> float | None:
    shape = _gemm_shape(b)
    if not shape:
        return None
    return shape[0] if _is_square(b) else (shape[0] * shape[1] * shape[2]) ** (1.0 / 3.0)


def gemm_data(result: Result) -> PlotData | None:
    """GEMM TFLOP/s against size: a line per kernel and variant over the square shapes (m = n =
    k), library references dashed; the other shapes (the LLM-like 4096x11008x4096 ...) as hollow
    markers in the colour of their line, at the cube root of m x n x k, not joined into it (a
    line through 8192x1024x8192 and 4096^3, one x, zigzagged)."""
    benches = [b for b in _good(result) if b.metric_kind == "TFLOPS" and b.sweep == "m"]
    key = lambda b: (b.kernel, b.variant)  # noqa: E731
    library = {key(b): b.is_library for b in benches}
    square = _group([b for b in benches if _is_square(b)], key, _gemm_size, lambda b: b.median("TFLOPS"))
    other = _group([b for b in benches if not _is_square(b)], key, _gemm_size, lambda b: b.median("TFLOPS"))
    if not square and not other:
        return None
    label = lambda k: f"{k[0]} [{k[1]}]"  # noqa: E731
    d = PlotData("gemm", _title(result, "GEMM throughput"),
                 "matrix size n (lines: m = n = k; markers: other shapes, at (m n k)^(1/3))",
                 "TFLOP/s", True, _lines(square, label, lambda k: library[k]))
    for k, pts in sorted(other.items()):
        d.lines.append(Line(f"{label(k)} other shapes", [x for x, _ in pts], [y for _, y in pts],
                            library[k], markers_only=True, color_of=label(k) if k in square else ""))
    p = result.peaks()
    peaks = {b.peak_kind for b in benches}  # the roofs the plotted rows are measured against
    if p["fp32"] and "fp32" in peaks:
        d.hlines.append((p["fp32"], f"FP32 peak {p['fp32']:g} TFLOP/s"))
    for kind, what in (("fp16_tensor", "FP16"), ("bf16_tensor", "BF16"), ("fp8_tensor", "FP8")):
        if p.get(kind) and kind in peaks:
            d.hlines.append((p[kind], f"{what} tensor peak {p[kind]:g} TFLOP/s"))
    return d


def _sized_lines(benches: list[Benchmark], counter: str) -> list[Line]:
    """One line per variant (and other parameters) of a size sweep: the median of `counter`
    against the `bytes` parameter; the series in the order of their first row in the file (the
    family table's: cuda_malloc before async_pool_miss ...)."""
    groups = _group(benches, lambda b: (b.variant, _other_params(b, ("bytes",))),
                     lambda b: b.size_bytes(), lambda b: b.median(counter))
    return [Line(f"{k[0]}{_fmt_params(k[1])}", [p[0] for p in pts], [p[1] for p in pts])
            for k, pts in groups.items()]


def alloc_latency_data(result: Result) -> PlotData | None:
    """Allocate + free latency against size, one series per allocator: the median over
    repetitions of latency_us, and the median of p99_us (the 99th percentile over the pairs of
    a sample) as hollow markers in the series' colour. None without allocation rows."""
    benches = [b for b in _memory(result) if b.metric_kind == "latency_us" and b.sweep == "bytes"]
    lines = _sized_lines(benches, "latency_us")
    if not lines:
        return None
    d = PlotData("memory_alloc", _title(result, "Allocation latency (allocate + free)"),
                 "allocation size (bytes)",
                 "us per allocate + free (line: latency_us; triangles: p99 of the pairs)", True)
    p99 = {ln.label: ln for ln in _sized_lines(benches, "p99_us")}
    for ln in lines:
        d.lines.append(ln)
        if ln.label in p99:
            q = p99[ln.label]
            d.lines.append(Line(f"{ln.label} p99", q.xs, q.ys, markers_only=True,
                                color_of=ln.label))
    return d


def _sized_gbps_data(result: Result, kernel: str, kind: str, what: str,
                     xlabel: str) -> PlotData | None:
    benches = [b for b in _memory(result) if b.kernel == kernel and b.metric_kind == "GBps"
               and b.sweep == "bytes"]
    lines = _sized_lines(benches, "GB/s")
    if not lines:
        return None
    d = PlotData(kind, _title(result, what), xlabel, "GB/s", True, lines)
    p = result.peaks()
    kinds = {b.peak_kind for b in benches}  # the ceilings the plotted rows are measured against
    for peak, name in (("pcie_h2d", "PCIe H2D peak"), ("pcie_d2h", "PCIe D2H peak"),
                       ("dram", "DRAM peak")):
        if p[peak] and peak in kinds:
            d.hlines.append((p[peak], f"{name} {p[peak]:.4g} GB/s"))
    return d


def managed_data(result: Result) -> PlotData | None:
    """CUDA: GB/s of a kernel consuming bytes that start on the host, against their size, one
    series per variant of memory/managed (demand_fault, prefetch, explicit_copy, zero_copy,
    read_mostly, device_resident; to_host: the CPU reading managed memory resident on the
    device); the PCIe / DRAM peaks its rows name, when known."""
    return _sized_gbps_data(result, "managed", "memory_managed",
                            "Managed memory: migration and its alternatives", "bytes consumed")


def first_touch_data(result: Result) -> PlotData | None:
    """Host: page-fault GB/s (first touch of fresh memory) against size, one series per page
    kind of memory/first_touch (pages_4k, pages_2m, populate): the host's analogue of
    managed_data."""
    return _sized_gbps_data(result, "first_touch", "memory_first_touch",
                            "First touch: page-fault bandwidth", "bytes touched")


#: The overlap rows' ratios drawn in the upper panel: counter -> (legend words, dashed).
OVERLAP_RATIOS = {
    "overlap_efficiency": ("overlap efficiency", False),
    "kernel_slowdown": ("kernel slowdown", True),
    "bidir_copy_speedup": ("bidirectional copy speedup", True),
}


def _count(b: Benchmark) -> float | None:
    """The value of the parameter a row sweeps (streams:4 -> 4.0); None without one."""
    try:
        return float(b.params[b.sweep])
    except (KeyError, ValueError):
        return None


def overlap_data(result: Result) -> PlotData | None:
    """Copy/compute overlap against the number of streams (threads on the host): above, the
    overlap efficiency (serialized sum / concurrent time; 1 = no overlap) and, where the rows
    have them, kernel_slowdown and bidir_copy_speedup (dashed); below, the end-to-end GB/s. One
    series per engine (and other parameters); the x is the parameter the rows' sweep names."""
    benches = [b for b in _memory(result) if b.kernel == "overlap" and _count(b) is not None]

    def key(b: Benchmark) -> tuple:
        return b.variant, _other_params(b, (b.sweep,))

    # Parameters every row shares (the pipeline's bytes) go to the title, not to each label.
    params = {_other_params(b, (b.sweep,)) for b in benches}
    shared = next(iter(params)) if len(params) == 1 else ()

    def name(k: tuple, words: str) -> str:
        return f"{k[0]}{_fmt_params(k[1]) if not shared else ''}: {words}"

    d = PlotData("memory_overlap", "", "", "ratio", True, y_log=False, x_counts=True,
                 ylabel2="GB/s (end to end)")
    for counter, (words, dashed) in OVERLAP_RATIOS.items():
        groups = _group(benches, key, _count, lambda b, c=counter: b.median(c))
        d.lines += [Line(name(k, words), [p[0] for p in pts], [p[1] for p in pts], dashed)
                    for k, pts in groups.items()]
    groups = _group(benches, key, _count, lambda b: b.median("GB/s"))
    d.lines2 = [Line(name(k, "GB/s"), [p[0] for p in pts], [p[1] for p in pts])
                for k, pts in groups.items()]
    if not d.lines and not d.lines2:
        return None
    unit = " / ".join(sorted({b.sweep for b in benches}))
    what = f"Copy/compute overlap against {unit}"
    if shared:
        what += " (" + ", ".join(f"{k}:{v}" for k, v in shared) + ")"
    d.title = _title(result, what)
    d.xlabel = unit
    if d.lines:
        d.hlines.append((1.0, "1 = no overlap (serialized)"))
    return d


#: Line styles of the peaks (black) and the marks (grey), in turn; never "--", which marks a
#: library reference's curve.
HLINE_STYLES = (":", "-.", (0, (1, 4)))
VLINE_STYLES = ("-.", ":")


#: Every sweep plot, in the order they are written.
ALL_PLOTS = (bandwidth_data, strided_data, pcie_data, gemm_data, alloc_latency_data, managed_data,
             first_touch_data, overlap_data)


def _draw_lines(ax, lines: list[Line], colors: list[str]) -> None:
    """Each line in the next colour of the cycle (or in the colour of the line it names)."""
    own: dict[str, str] = {}
    for line in lines:
        color = own.get(line.color_of) or colors[len(own) % len(colors)]
        if line.markers_only:
            ax.plot(line.xs, line.ys, marker="^", markersize=6, linestyle="None",
                    markerfacecolor="none", color=color, label=line.label)
        else:
            ax.plot(line.xs, line.ys, marker="o", markersize=4, color=color,
                    linestyle="--" if line.dashed else "-", label=line.label)
        if not line.color_of:
            own[line.label] = color


def _setup_axes(ax, d: PlotData, ylabel: str) -> None:
    from matplotlib.ticker import NullLocator

    if d.x_log2:
        ax.set_xscale("log", base=2)
    if d.x_counts:
        xs = sorted({x for ln in d.lines + d.lines2 for x in ln.xs})
        ax.set_xticks(xs, [f"{x:g}" for x in xs])
        ax.xaxis.set_minor_locator(NullLocator())
    ax.set_yscale("log" if d.y_log else "linear")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)


def _legend(ax) -> None:
    if not ax.get_legend_handles_labels()[0]:
        return  # nothing labelled (matplotlib would warn on stderr)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7, frameon=False,
              borderaxespad=0.0)


def plot_figure(d: PlotData):
    """The matplotlib Figure of one sweep plot (FIGSIZE x DPI; no pyplot state, nothing to
    close): every Line of d as a curve labelled with its label (dashed when d says so; hollow
    markers without a line for markers_only, in the colour of the line color_of names), every
    peak in hlines as a horizontal line and every mark in vlines as a vertical one, each named
    in the legend. With lines2, a second panel below on the same x (fig.axes[1], its own
    legend, the x label under it). draw_plot() writes it; the tests read its artists."""
    import matplotlib
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    if d.lines2:
        ax = fig.add_axes((0.08, 0.55, 0.6, 0.37))
        ax2 = fig.add_axes((0.08, 0.1, 0.6, 0.37), sharex=ax)
    else:
        ax, ax2 = fig.add_axes((0.08, 0.1, 0.6, 0.8)), None
    _setup_axes(ax, d, d.ylabel)
    ax.set_title(d.title, fontsize=10)
    _draw_lines(ax, d.lines, colors)
    # Each peak and mark a style of its own (the FP32 and FP16 roofs were two identical lines).
    for i, (y, label) in enumerate(d.hlines):
        ax.axhline(y, color="black", linewidth=1.2, linestyle=HLINE_STYLES[i % len(HLINE_STYLES)], label=label)
    for i, (x, label) in enumerate(d.vlines):
        ax.axvline(x, color="grey", linewidth=1.2, linestyle=VLINE_STYLES[i % len(VLINE_STYLES)], label=label)
    _legend(ax)
    if ax2 is None:
        ax.set_xlabel(d.xlabel)
        literal_text(fig)
        return fig
    _setup_axes(ax2, d, d.ylabel2)
    ax2.set_xlabel(d.xlabel)
    _draw_lines(ax2, d.lines2, colors)
    _legend(ax2)
    literal_text(fig)
    return fig


def draw_plot(d: PlotData, out_png: Path | str, overwrite: bool = False) -> Path:
    """Writes one sweep plot (plot_figure(), FIGSIZE x DPI pixels) and returns its path; whole
    or not at all (output.NewFile), never over an existing file unless `overwrite`."""
    with NewFile(out_png, overwrite) as out:
        out.write(lambda tmp: plot_figure(d).savefig(tmp, format=out.format, dpi=DPI))
    return out.path


def write_plots(result: Result, out_dir: Path | str, stem: str,
                overwrite: bool = False) -> list[Path]:
    """Draws every plot whose data the result holds as out_dir/<stem>_<kind>.png: all of them
    or, when one fails or the run is interrupted, none (each is drawn to a temporary file,
    and they are moved onto their names together at the end)."""
    pending: list[NewFile] = []
    try:
        for make in ALL_PLOTS:
            d = make(result)
            if d is not None:
                f = NewFile(Path(out_dir) / f"{stem}_{d.kind}.png", overwrite)
                pending.append(f)
                f.write(lambda tmp, d=d, f=f: plot_figure(d).savefig(tmp, format=f.format, dpi=DPI))
    except BaseException:
        for f in pending:
            f.discard()
        raise
    return commit_all(pending)
