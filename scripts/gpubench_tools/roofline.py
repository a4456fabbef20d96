"""The roofline chart: its data as a plain function (tested against the JSON) and its PNG.

Axes: log-log, x = arithmetic intensity in FLOP per useful byte, y = TFLOP/s.

Ceilings per result file (or per card given with --card):
- theoretical (solid): the DRAM, shared-memory and PCIe bandwidth diagonals (y = GB/s x
  intensity) and the FP32 and FP16-tensor roofs. Taken from cards.csv when the device name
  matches a card (the PCIe figure from the result's negotiated link when known, the shared-memory
  figure from the context's peak_smem_GBps: the table has none), otherwise from the peaks in the
  result's context; unknown peaks (the host) are not drawn.
- empirical (dashed): the best measured DRAM bandwidth (median GB/s of the rows whose peak is
  dram, and of the intensity sweep's rows at level dram, counting only working sets larger than
  2 x L2 when any are) and the best measured TFLOP/s of any row whose metric is TFLOPS.

Rows are chosen by what they mean (results.RowMeaning: the row's label, or the legacy fallback
for files written before labels), not by their names.

Points: every successful benchmark with a FLOP count sits at (flop_per_byte, median TFLOPS).
Memory benchmarks (metric GBps, no FLOP: global memory, shared memory, PCIe) use the
*memory column* convention: each is drawn at the
fixed intensity MEMORY_COLUMN_X (left of every real intensity, in a shaded column) on its own
bandwidth diagonal, i.e. at y = GB/s x MEMORY_COLUMN_X. On log axes the vertical distance
between such a marker and the DRAM diagonal is then exactly its fraction of peak bandwidth, and
markers can be compared with the empirical diagonal at a glance. Of a size sweep only the largest
working set (the DRAM-bound one) is drawn; plots.py has the whole sweep. Library references
(cuBLAS, Thrust, CUB, cudaMemcpy, memcpy) are drawn as hollow squares/diamonds, hand-written
kernels as filled markers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from .cards import Card, find_card_by_device_name
from .results import Benchmark, Result

#: Intensity (FLOP/byte) at which memory benchmarks are drawn (see the module comment).
MEMORY_COLUMN_X = 1.0 / 32.0
#: Rightmost intensity drawn at least (the intensity sweep reaches 1024 FLOP/byte).
MIN_X_RIGHT = 4096.0
#: PNG size in pixels = FIGSIZE x DPI.
FIGSIZE = (12.0, 7.5)
DPI = 100


@dataclass
class Ceiling:
    """One line of the chart: a bandwidth diagonal (GB/s) or a compute roof (TFLOP/s)."""

    kind: str  #: dram, smem, pcie, fp32, fp16_tensor, empirical_bandwidth, empirical_compute
    value: float  #: GB/s for diagonals, TFLOP/s for roofs
    diagonal: bool
    empirical: bool
    label: str


@dataclass
class Point:
    """One benchmark on the chart."""

    name: str  #: full benchmark name
    label: str  #: short label drawn beside the marker
    x: float  #: FLOP/byte (MEMORY_COLUMN_X for memory benchmarks)
    y: float  #: TFLOP/s (for memory benchmarks: GB/s x MEMORY_COLUMN_X / 1000)
    library: bool
    memory: bool  #: no FLOP: drawn in the memory column
    pcie: bool = False
    GBps: float | None = None
    sweep: str | None = None  #: intensity-sweep kernel the point belongs to (drawn as a curve)


@dataclass
class Series:
    """Everything drawn for one result file or one card."""

    label: str
    ceilings: list[Ceiling] = field(default_factory=list)
    points: list[Point] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  #: printed by the CLI (e.g. peak fallbacks)

    def ceiling(self, kind: str) -> Ceiling | None:
        """The ceiling of a kind, None when not drawn."""
        return next((c for c in self.ceilings if c.kind == kind), None)

    def ridge(self, roof: str, bandwidth: str = "dram") -> float | None:
        """Ridge point in FLOP/byte where a roof meets a bandwidth diagonal (as ridge_point()
        in harness/model/roofline.cpp); None when either is not drawn."""
        r, b = self.ceiling(roof), self.ceiling(bandwidth)
        return r.value * 1000.0 / b.value if r and b and b.value > 0 else None


@dataclass
class RooflineData:
    """The whole chart."""

    title: str
    series: list[Series]
    x_range: tuple[float, float]
    y_range: tuple[float, float]


def _smem_ceiling(result: Result) -> list[Ceiling]:
    """The theoretical shared-memory diagonal when the context knows it (peak_smem_GBps > 0)."""
    v = result.peaks().get("smem")
    if not v or v <= 0:
        return []
    return [Ceiling("smem", v, True, False, f"shared memory {v / 1000:.3g} TB/s")]


def _theoretical_from_card(card: Card, pcie_GBps: float | None = None) -> list[Ceiling]:
    pcie = pcie_GBps or card.pcie_GBps
    out = [
        Ceiling("dram", card.dram_GBps, True, False, f"DRAM {card.dram_GBps:g} GB/s"),
        Ceiling("fp32", card.fp32_TFLOPS, False, False, f"FP32 {card.fp32_TFLOPS:g} TFLOP/s"),
        Ceiling("fp16_tensor", card.fp16_tensor_TFLOPS, False, False,
                f"FP16 tensor {card.fp16_tensor_TFLOPS:g} TFLOP/s"),
    ]
    if pcie > 0:
        out.append(Ceiling("pcie", pcie, True, False, f"PCIe {pcie:.1f} GB/s per direction"))
    return [c for c in out if c.value > 0]


def _theoretical_from_context(result: Result) -> list[Ceiling]:
    p = result.peaks()
    out = []
    if p["dram"]:
        out.append(Ceiling("dram", p["dram"], True, False, f"DRAM {p['dram']:g} GB/s"))
    out += _smem_ceiling(result)
    if p["fp32"]:
        out.append(Ceiling("fp32", p["fp32"], False, False, f"FP32 {p['fp32']:g} TFLOP/s"))
    if p["fp16_tensor"]:
        out.append(Ceiling("fp16_tensor", p["fp16_tensor"], False, False,
                           f"FP16 tensor {p['fp16_tensor']:g} TFLOP/s"))
    pcie = max(p["pcie_h2d"] or 0, p["pcie_d2h"] or 0)
    if pcie > 0:
        out.append(Ceiling("pcie", pcie, True, False, f"PCIe {pcie:.1f} GB/s per direction"))
    return out


def measures_dram_bandwidth(b: Benchmark) -> bool:
    """Rows whose GB/s can set the empirical memory ceiling: those measured against the DRAM
    peak, and the intensity sweep (the roofline family, whose low-intensity end is
    bandwidth-bound) where it targets DRAM. Not cache-resident rows (peak l2), shared memory,
    PCIe or latency rows."""
    if b.family == "roofline":
        return b.level == "dram"
    return b.peak_kind == "dram"


def _short_params(b: Benchmark, drop=("bytes",)) -> str:
    p = {k: v for k, v in b.params.items() if k not in drop}
    if {"m", "n", "k"} <= p.keys() and p["m"] == p["n"] == p["k"]:
        rest = {k: v for k, v in p.items() if k not in ("m", "n", "k")}
        return " ".join([f"{p['m']}\u00b3"] + [f"{k}:{v}" for k, v in rest.items()])
    return " ".join(f"{k}:{v}" for k, v in p.items())


def point_label(b: Benchmark, keep_bytes: bool) -> str:
    """Short label: kernel, [library], parameters (the size only for memory benchmarks)."""
    parts = [b.kernel]
    if b.is_library:
        parts.append(f"[{b.variant}]")
    if keep_bytes and "bytes" in b.params:
        parts.append(b.params["bytes"])
    params = _short_params(b)
    if params:
        parts.append(params)
    return " ".join(parts)


def _memory_representatives(benches: list[Benchmark]) -> list[Benchmark]:
    """Of each memory size sweep (same kernel, variant and non-size params) the largest size."""
    best: dict[tuple, Benchmark] = {}
    for b in benches:
        key = (b.kernel, b.variant, tuple(sorted((k, v) for k, v in b.params.items()
                                                 if k != "bytes")))
        cur = best.get(key)
        if cur is None or (b.size_bytes() or 0) > (cur.size_bytes() or 0):
            best[key] = b
    return list(best.values())


def result_series(result: Result, card_table: list[Card]) -> Series:
    """Ceilings and points of one result file."""
    s = Series(label=result.label())
    card = find_card_by_device_name(result.device_name, card_table) \
        if result.backend != "host" else None
    if card is not None:
        p = result.peaks()
        s.ceilings = _theoretical_from_card(card, max(p["pcie_h2d"] or 0, p["pcie_d2h"] or 0))
        s.ceilings += _smem_ceiling(result)
        s.label = f"{card.display_name} {result.label().removeprefix(result.device_name).strip()}"
    else:
        s.ceilings = _theoretical_from_context(result)
        if result.backend != "host":
            s.notes.append(f"{result.path}: device '{result.device_name}' is not in cards.csv; "
                           f"using the peaks in the result's context")
        if not s.ceilings:
            s.notes.append(f"{result.path}: no theoretical peaks known for "
                           f"'{result.device_name}'; drawing empirical ceilings only")

    # The memory-management family (allocation, migration, overlap) answers other questions
    # than the roofline's: its rows neither set ceilings nor sit as points.
    good = [b for b in result.benchmarks.values()
            if b.ok and not b.verification_failed and b.family != "memory"]
    # Empirical bandwidth: best streaming GB/s, beyond L2 where the run has such sizes.
    l2 = result.ctx_number("l2_bytes") or 0
    streaming = [b for b in good if measures_dram_bandwidth(b) and (b.median("GB/s") or 0) > 0]
    beyond_l2 = [b for b in streaming if l2 and (b.median("working_set_bytes") or 0) > 2 * l2]
    # Without sizes beyond L2 (quick runs, the host's huge LLC) the largest size of each sweep.
    pool = beyond_l2 or _memory_representatives(streaming)
    if pool:
        top = max(pool, key=lambda b: b.median("GB/s"))
        v = top.median("GB/s")
        s.ceilings.append(Ceiling("empirical_bandwidth", v, True, True,
                                  f"measured {v:.4g} GB/s ({top.kernel} {top.variant})"))
    flop = [b for b in good if b.metric_kind == "TFLOPS" and (b.median("TFLOPS") or 0) > 0]
    if flop:
        top = max(flop, key=lambda b: b.median("TFLOPS"))
        v = top.median("TFLOPS")
        s.ceilings.append(Ceiling("empirical_compute", v, False, True,
                                  f"measured {v:.4g} TFLOP/s ({top.kernel} {top.variant})"))

    for b in flop:
        fpb = b.median("flop_per_byte")
        if fpb and fpb > 0:
            sweep = None
            label = point_label(b, keep_bytes=b.family != "roofline")
            if b.family == "roofline":  # one curve per sweep kernel, points labelled by k
                sweep = b.kernel if b.variant == "kernel" else f"{b.kernel} [{b.variant}]"
                label = _short_params(b) or label
            s.points.append(Point(b.name, label, fpb, b.median("TFLOPS"), b.is_library,
                                  memory=False, GBps=b.median("GB/s"), sweep=sweep))
    # 0-FLOP rows whose headline is GB/s (global and shared memory, PCIe) in the memory column.
    memory = [b for b in good if b.metric_kind == "GBps" and (b.median("TFLOPS") or 0) == 0
              and (b.median("GB/s") or 0) > 0]
    for b in _memory_representatives(memory):
        gbps = b.median("GB/s")
        s.points.append(Point(b.name, point_label(b, keep_bytes=True), MEMORY_COLUMN_X,
                              gbps * MEMORY_COLUMN_X / 1000.0, b.is_library, memory=True,
                              pcie=b.level == "pcie", GBps=gbps))
    return s


def card_series(card: Card) -> Series:
    """Theoretical ceilings of a card from the table (no results)."""
    return Series(label=f"{card.display_name} (cards.csv)", ceilings=_theoretical_from_card(card))


def roofline_data(results: list[Result], cards: list[Card], card_table: list[Card]) -> RooflineData:
    """The chart for some result files and some cards (at least one of either)."""
    series = [result_series(r, card_table) for r in results] + [card_series(c) for c in cards]
    xs = [p.x for s in series for p in s.points] or [1.0]
    x_lo = MEMORY_COLUMN_X / 32  # room left of the memory column for its labels
    x_hi = max(MIN_X_RIGHT, max(xs) * 2)
    ys = [p.y for s in series for p in s.points]
    for s in series:
        for c in s.ceilings:
            # Roofs at their value; diagonals where they enter the chart (left edge).
            ys.append(c.value if not c.diagonal else c.value * MEMORY_COLUMN_X / 1000.0)
    ys = [y for y in ys if y > 0] or [1e-3, 1.0]
    y_lo = 10 ** math.floor(math.log10(min(ys) / 2))
    y_hi = 10 ** math.ceil(math.log10(max(ys) * 2))
    if results:
        r = results[0]
        date = (r.ctx("run_started_utc") or r.ctx("date"))[:10]
        names = ", ".join(dict.fromkeys(s.label for s in series))
        title = (f"Roofline: {r.device_name} | driver {r.ctx('driver_version', '?')}, "
                 f"runtime {r.ctx('runtime_version', '?')} | {date}")
        if len(series) > 1:
            title = f"Roofline: {names}"
    else:
        title = "Theoretical roofline: " + ", ".join(c.display_name for c in cards)
    return RooflineData(title=title, series=series, x_range=(x_lo, x_hi), y_range=(y_lo, y_hi))


#: Line style and width of each ceiling kind (CEILING_STYLE_DEFAULT for a kind not listed).
CEILING_STYLES = {
    "dram": ("-", 2.0),
    "smem": ((0, (1, 1.5)), 1.8),
    "pcie": ((0, (6, 2, 1, 2)), 1.5),
    "fp32": ("-", 2.0),
    "fp16_tensor": ("-", 1.2),
    "empirical_bandwidth": ("--", 1.5),
    "empirical_compute": ("--", 1.5),
}
CEILING_STYLE_DEFAULT = (("-", 1.2), ("--", 1.2))  #: (theoretical, empirical)


def ceiling_style(c: Ceiling) -> tuple:
    """(linestyle, linewidth) of a ceiling; a kind without an entry gets a default, never a
    KeyError."""
    return CEILING_STYLES.get(c.kind, CEILING_STYLE_DEFAULT[1 if c.empirical else 0])


def _spread(values: list[float], min_gap: float) -> list[float]:
    """Moves sorted log-positions apart so neighbouring labels are at least min_gap apart."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = list(values)
    for prev, cur in zip(order, order[1:]):
        if out[cur] - out[prev] < min_gap:
            out[cur] = out[prev] + min_gap
    return out


def roofline_figure(data: RooflineData):
    """The matplotlib Figure of the chart (FIGSIZE x DPI; no pyplot state, nothing to close).

    Per series (one colour): every ceiling a line labelled with its label ("<series>: " first
    when there are several series) - a diagonal y = GB/s x intensity / 1000 from the memory
    column rightwards, capped at the series' highest roof (the measured compute roof for the
    measured diagonal), a roof flat at its TFLOP/s from its ridge with the DRAM diagonal (the
    measured one for the measured roof); every intensity sweep a dotted curve through its points;
    the other FLOP rows as scatter markers (filled: gpubench kernels, hollow: library
    references), the memory rows as scatter markers in the memory column (memory kernels, their
    library references, PCIe); every point annotated with its label at its (x, y).
    draw_roofline() writes it; the tests read its artists."""
    import matplotlib
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    ax = fig.add_axes((0.07, 0.09, 0.58, 0.82))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    x_lo, x_hi = data.x_range
    y_lo, y_hi = data.y_range
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.set_xlabel("arithmetic intensity (FLOP per byte)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(data.title, fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    col_lo, col_hi = MEMORY_COLUMN_X / 1.35, MEMORY_COLUMN_X * 1.35
    ax.axvspan(col_lo, col_hi, color="0.92", zorder=0)
    ax.text(MEMORY_COLUMN_X, y_hi / 1.3, "memory\nbenchmarks\n(GB/s x 1/32)", ha="center",
            va="top", fontsize=6, color="0.35")

    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    x = np.geomspace(MEMORY_COLUMN_X, x_hi, 400)
    for si, s in enumerate(data.series):
        color = colors[si % len(colors)]
        theo_roof = max([c.value for c in s.ceilings if not c.diagonal and not c.empirical],
                        default=None)
        emp_roof = next((c.value for c in s.ceilings if c.kind == "empirical_compute"), None)
        prefix = f"{s.label}: " if len(data.series) > 1 else ""
        for c in s.ceilings:
            if c.diagonal:
                roof = emp_roof if c.empirical else theo_roof
                y = c.value * x / 1000.0
                if roof:
                    y = np.minimum(y, roof)
            else:
                y = np.full_like(x, c.value)
                ridge = s.ridge(c.kind, "empirical_bandwidth" if c.empirical else "dram")
                if ridge:  # a roof starts at its ridge with the bandwidth diagonal
                    y = np.where(x >= ridge, y, np.nan)
            style, width = ceiling_style(c)
            ax.plot(x, y, linestyle=style, linewidth=width, color=color,
                    alpha=0.75 if c.empirical else 1.0, label=prefix + c.label)
            end = np.flatnonzero(np.isfinite(y))
            # Roof names at the right edge; with several series only the theoretical ones
            # (close measured roofs would overprint each other; the legend has them all).
            if end.size and not c.diagonal and (len(data.series) == 1 or not c.empirical):
                ax.text(x_hi / 1.05, c.value * (0.94 if c.empirical else 1.06),
                        c.label.split(" (")[0], ha="right",
                        va="top" if c.empirical else "bottom", fontsize=7, color=color)

        sweeps: dict[str, list[Point]] = {}
        for p in s.points:
            if p.sweep and not p.memory:
                sweeps.setdefault(p.sweep, []).append(p)
        for i, (sweep, pts) in enumerate(sorted(sweeps.items())):
            pts.sort(key=lambda p: p.x)
            ax.plot([p.x for p in pts], [p.y for p in pts], linestyle=":", linewidth=0.8,
                    color=color, marker="ohp*PX"[i % 6], markersize=5, zorder=5,
                    label=f"{prefix}{sweep} sweep (labels: its parameter)")
            for p in pts:
                ax.annotate(p.label, (p.x, p.y), xytext=(3, -8 if i % 2 == 0 else 4),
                            textcoords="offset points", fontsize=5, color=color)
        compute_pts = [p for p in s.points if not p.memory and not p.sweep]
        for lib in (False, True):
            pts = [p for p in compute_pts if p.library == lib]
            if pts:
                ax.scatter([p.x for p in pts], [p.y for p in pts], marker="s" if lib else "o",
                           s=36, zorder=5, facecolors="none" if lib else color, edgecolors=color,
                           linewidths=1.5,
                           label=prefix + ("library references" if lib else "gpubench kernels"))
        for p in compute_pts:
            ax.annotate(p.label, (p.x, p.y), xytext=(4, -9), textcoords="offset points",
                        fontsize=6, color=color)
        mem_pts = [p for p in s.points if p.memory]
        for lib, pcie, marker, what in ((False, False, "v", "memory kernels"),
                                        (True, False, "D", "memory library references"),
                                        (False, True, "^", "PCIe kernels"),
                                        (True, True, "^", "PCIe library references")):
            pts = [p for p in mem_pts if p.library == lib and p.pcie == pcie]
            if pts:
                ax.scatter([p.x for p in pts], [p.y for p in pts], marker=marker, s=30, zorder=5,
                           facecolors="none" if lib else color, edgecolors=color,
                           linewidths=1.2, label=prefix + what + " (memory column)")
        if mem_pts:
            logs = _spread([math.log10(p.y) for p in mem_pts],
                           (math.log10(y_hi) - math.log10(y_lo)) / 45)
            for p, ly in zip(mem_pts, logs):
                # Labels go right of the column: to its left they ran off the figure.
                ax.annotate(p.label, (p.x, p.y), xytext=(col_hi * 1.1, 10 ** ly),
                            textcoords="data", ha="left", va="center", fontsize=5.5,
                            color=color, arrowprops=dict(arrowstyle="-", color=color, lw=0.4))
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7, frameon=False,
              borderaxespad=0.0)
    fig.text(0.67, 0.03, "solid (dotted: shared memory; dash-dot: PCIe): theoretical (cards.csv\n"
             "or result context); dashed: measured.\n"
             "Memory benchmarks have no FLOP: drawn at 1/32 FLOP/byte on their own\n"
             "bandwidth diagonal (distance to the DRAM line = fraction of peak).",
             fontsize=7, color="0.3")
    return fig


def draw_roofline(data: RooflineData, out_png: Path | str) -> Path:
    """Writes the chart (roofline_figure()) as a PNG of FIGSIZE x DPI pixels and returns its
    path."""
    out_png = Path(out_png)
    out_png.parent.mkdir(parents=True, exist_ok=True)
    roofline_figure(data).savefig(out_png, dpi=DPI)
    return out_png
