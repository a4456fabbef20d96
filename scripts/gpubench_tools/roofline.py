"""The roofline chart: its data as a plain function (tested against the JSON) and its PNG.

Axes: log-log, x = arithmetic intensity in FLOP per useful byte, y = TFLOP/s.

Hierarchical ceilings per result file (or per card given with --card), each a memory level
(a diagonal, y = GB/s x intensity / 1000) or a compute precision (a flat roof):

- theoretical (solid):
  - DRAM, FP32 and FP16 tensor: cards.csv when the device name matches a card, otherwise the
    peaks in the result's context (peak_dram_GBps, peak_fp32_TFLOPS, peak_fp16_tensor_TFLOPS);
  - BF16 and FP8 tensor (peak_bf16_tensor_TFLOPS, peak_fp8_tensor_TFLOPS, same sources): only on
    a result with rows measured against them (the cuBLAS BF16 and cuBLASLt FP8 GEMMs), and only
    where known (the table's 0 for a card without FP8 tensor cores and the context's "unknown"
    draw nothing). The FP8 roof is twice the FP16 one: drawn on every chart it would stretch the
    axis and lift the measured DRAM line's end for rows that never run FP8. BF16 is further left
    out where it equals the FP16 roof (every card listed: one line labelled FP16 stands for
    both, rather than two overprinting);
  - shared memory: the context's peak_smem_GBps (128 B per clock per SM x SMs x the device's
    clock, computed by the harness); for a card alone, the same formula at the clock of the
    card's datasheet FP32 figure (cards.Card.smem_GBps);
  - PCIe per direction: the result's negotiated link (peak_pcie_h2d/d2h_GBps), the card's
    nominal link for a card alone;
  - FP16x2 (non-tensor half2 FMA): derived from the FP32 figure where NVIDIA documents the
    ratio (cards.FP16X2_PER_FP32: 4x on sm_80, 2x on sm_90), from the card's or the context's
    compute capability;
  - no L2 line: neither the card table nor harness/model/REFERENCE_FIGURES.md has a vendor L2
    bandwidth figure (only measurements), and none is invented; nor a TF32 tensor roof: the card
    table has no such column.
  Unknown peaks (the host) are not drawn.
- measured (dashed), from the rows' labels (results.RowMeaning; row_level() for files written
  before labels), never from their names; the memory-management family is left out:
  - DRAM: the best median GB/s of the rows measured against DRAM (peak dram, or the intensity
    sweep at level dram) with working sets beyond 2 x L2; in a run without such sizes (quick
    runs, a host's large last-level cache) the largest size of each such sweep;
  - L2 (the last-level cache on the host): the best plateau of the cache-resident streaming
    sweeps (level l2, metric GBps, peak l2 or dram; l2_plateaus()): a sweep's plateau is the
    lower median GB/s of its 3 largest cache-resident sizes from L2/64 up (no line where no
    size is that large), so neither a small set that cannot occupy the machine nor a largest
    size served partly from the L1 (the H100's 16 MiB read, 16 TB/s) sets it alone;
  These two lines are roofs, the best any kernel attained (library references and the strided
  kernel included), each naming its row or sweep; the summaries' "DRAM copy" and cache plateau
  (report.headlines(), the console's, the acceptance run's) are gpubench's copy kernel alone,
  a like-for-like figure between runs and cards. Both read the cache from L2/64 up
  (results.cache_plateau_rows), so they differ only by that choice of rows;
  - shared memory: the best median GB/s at level smem;
  - PCIe: the best median GB/s at level pcie of a sustained transfer (results.sustained_transfers:
    256 MiB or more, or the largest size that ran; pinned transfers, in practice: pageable and
    bidirectional ones are slower); none on the host backend, whose pcie rows are a one-thread
    host copy, not a link;
  - FP32 / FP16 / BF16 / FP8 tensor: the best median TFLOP/s of the rows measured against that
    peak (SGEMM, peak FMA and the FP32 sweep / the FP16 GEMMs / cuBLAS BF16 / cuBLASLt FP8).

Ridge points: where each theoretical compute roof meets the theoretical DRAM diagonal (the
measured roofs with the measured DRAM line where a series has no theoretical DRAM line, as on
the host), marked and labelled with their intensity.

Points: every successful row with FLOP sits at (flop_per_byte, median TFLOPS): the intensity
sweeps as dotted curves, each point labelled with its parameter; GEMMs and peak FMA as one
marker per kernel and variant (filled: gpubench kernels, hollow: library references), named in
the legend with its best point (dozens of GEMM sizes cannot each carry a label; the GEMM plot
has them). Rows without FLOP (memory, shared memory, PCIe) are not points: they set the measured
ceilings, so a bandwidth-only run draws the card's roofs over its measured memory lines.
"""

from __future__ import annotations

import math
import statistics
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from .cards import Card, find_card_by_device_name, fp16x2_TFLOPS
from .figures import literal_text
from .output import NewFile
from .results import CACHE_PLATEAU_MIN_FRACTION, Benchmark, Result, cache_plateau_rows, sustained_transfers

#: Leftmost intensity drawn at most (FLOP/byte); further left where a point needs it.
MAX_X_LEFT = 1.0 / 16.0
#: Rightmost intensity drawn at least (the intensity sweep reaches 512 FLOP/byte, GEMMs more).
MIN_X_RIGHT = 4096.0
#: Cache-resident sizes per sweep whose median is its L2 plateau: its largest ones, ...
L2_PLATEAU_SIZES = 3
#: ... from this fraction of the L2 up (smaller sets cannot spread over every SM and L2 slice:
#: a GPU's 64 KiB copy runs at a tenth of its 4 MiB one); the summaries start there too.
L2_PLATEAU_MIN_FRACTION = CACHE_PLATEAU_MIN_FRACTION
#: PNG size in pixels = FIGSIZE x DPI.
FIGSIZE = (12.0, 7.5)
DPI = 100
#: Characters of a legend line at most (at fontsize 7 the right margin holds about 70).
LEGEND_WRAP = 62

#: Memory levels (diagonals), highest bandwidth first, and their names.
LEVELS = {"smem": "shared memory", "l1": "L1", "l2": "L2", "dram": "DRAM", "pcie": "PCIe"}
#: Compute precisions (roofs) and their names.
PRECISIONS = {"fp32": "FP32", "fp16x2": "FP16x2", "fp16_tensor": "FP16 tensor",
              "bf16_tensor": "BF16 tensor", "fp8_tensor": "FP8 tensor"}


@dataclass
class Ceiling:
    """One line of the chart: a memory level's diagonal (GB/s) or a precision's roof
    (TFLOP/s), theoretical or measured."""

    kind: str  #: a key of LEVELS (diagonal) or PRECISIONS (roof)
    value: float  #: GB/s for diagonals, TFLOP/s for roofs
    diagonal: bool
    empirical: bool  #: measured (dashed) rather than theoretical (solid)
    label: str
    source: str = ""  #: where the number comes from (the card table, the context, a row)


@dataclass
class Ridge:
    """Where a compute roof meets a bandwidth diagonal (x = TFLOP/s x 1000 / GB/s)."""

    roof: str  #: the precision
    bandwidth: str  #: the memory level
    empirical: bool  #: between measured ceilings
    x: float  #: FLOP/byte
    y: float  #: TFLOP/s (the roof's)
    label: str  #: drawn beside the mark


@dataclass
class Point:
    """One benchmark with FLOP on the chart."""

    name: str  #: full benchmark name
    label: str  #: short label drawn beside the marker
    x: float  #: FLOP/byte
    y: float  #: TFLOP/s
    library: bool
    GBps: float | None = None
    sweep: str | None = None  #: intensity-sweep kernel the point belongs to (drawn as a curve)
    group: str | None = None  #: "<kernel> <variant>" of a point not on a sweep (one marker each)
    params: str = ""  #: its parameters but the size ("4096\u00b3", "fma:4096")


@dataclass
class Series:
    """Everything drawn for one result file or one card."""

    label: str
    ceilings: list[Ceiling] = field(default_factory=list)
    points: list[Point] = field(default_factory=list)
    ridges: list[Ridge] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  #: printed by the CLI (e.g. peak fallbacks)
    host: bool = False  #: a host-backend result: its "L2" is the last-level cache

    @property
    def draws_measurements(self) -> bool:
        """True when a row of the result is drawn: a measured ceiling or a point (a result
        with neither, e.g. only memory-management rows, has nothing to show)."""
        return bool(self.points) or any(c.empirical for c in self.ceilings)

    def ceiling(self, kind: str, measured: bool = False) -> Ceiling | None:
        """The theoretical (or measured) ceiling of a kind, None when not drawn."""
        return next((c for c in self.ceilings if c.kind == kind and c.empirical == measured),
                    None)

    def ridge(self, roof: str, bandwidth: str = "dram", measured: bool = False) -> float | None:
        """Intensity in FLOP/byte where a roof meets a diagonal of the same kind (theoretical or
        measured), as ridge_point() in harness/model/roofline.cpp; None when either is not
        drawn."""
        r, b = self.ceiling(roof, measured), self.ceiling(bandwidth, measured)
        return r.value * 1000.0 / b.value if r and b and b.value > 0 else None

    def top_roof(self, measured: bool) -> float | None:
        """Where the diagonals of a kind end: the highest roof of that kind, else of the other
        kind (a bandwidth-only run's measured lines end at the card's roofs), else None (they
        run to the right edge)."""
        for kind in (measured, not measured):
            roofs = [c.value for c in self.ceilings if not c.diagonal and c.empirical == kind]
            if roofs:
                return max(roofs)
        return None

    def top_diagonal(self, measured: bool) -> float | None:
        """Where the roofs of a kind start: at their ridge with the highest diagonal of that
        kind, else of the other kind, else None (from the left edge)."""
        for kind in (measured, not measured):
            diagonals = [c.value for c in self.ceilings if c.diagonal and c.empirical == kind]
            if diagonals:
                return max(diagonals)
        return None

    def roof_start(self, c: Ceiling) -> float | None:
        """The intensity a roof is drawn from (None: the left edge)."""
        top = self.top_diagonal(c.empirical)
        return c.value * 1000.0 / top if top else None

    def diagonal_end(self, c: Ceiling) -> float | None:
        """The intensity a diagonal is drawn to (None: the right edge)."""
        top = self.top_roof(c.empirical)
        return top * 1000.0 / c.value if top else None


@dataclass
class RooflineData:
    """The whole chart."""

    title: str
    series: list[Series]
    x_range: tuple[float, float]
    y_range: tuple[float, float]


def level_name(kind: str, host: bool = False) -> str:
    """A ceiling kind's name ("last-level cache" for the host's l2; "per-core cache" for the
    host's l1, since every thread re-reads its set from whichever of its core's caches holds it)."""
    if kind == "l2" and host:
        return "last-level cache"
    if kind == "l1" and host:
        return "per-core cache"
    return LEVELS.get(kind) or PRECISIONS.get(kind) or kind


def _bandwidth_text(v: float) -> str:
    return f"{v / 1000:.3g} TB/s" if v >= 10000 else f"{v:.4g} GB/s"


def _theoretical(kind: str, value: float | None, source: str) -> Ceiling | None:
    """A theoretical ceiling, None for an unknown (None, 0 or negative) value."""
    if not value or value <= 0:
        return None
    if kind == "pcie":
        label = f"PCIe {value:.1f} GB/s per direction"
    elif kind == "smem":
        label = f"shared memory {value / 1000:.3g} TB/s"
    elif kind in LEVELS:
        label = f"{LEVELS[kind]} {value:g} GB/s"
    else:
        label = f"{PRECISIONS[kind]} {value:g} TFLOP/s"
    return Ceiling(kind, value, kind in LEVELS, False, label, source)


def _distinct_bf16(bf16: float | None, fp16: float | None, source: str) -> Ceiling | None:
    """The BF16 tensor roof, or None where it coincides with the FP16 one (every card listed:
    two identical lines would overprint, and the FP16 line stands for both)."""
    if bf16 and fp16 and abs(bf16 - fp16) <= 1e-9 * fp16:
        return None
    return _theoretical("bf16_tensor", bf16, source)


#: Roofs drawn only on a result with rows measured against them (see the module comment).
MEASURED_ONLY_ROOFS = ("bf16_tensor", "fp8_tensor")


def _theoretical_ceilings(card: Card | None, result: Result | None) -> list[Ceiling]:
    """The solid lines: a card's figures (with a result: its negotiated link and its device's
    shared-memory peak), or a result's context peaks; see the module comment."""
    if result is not None and result.backend == "host":
        return []
    rows_kinds = {b.peak_kind for b in result.benchmarks.values()} if result is not None else set()
    p = result.peaks() if result is not None else {}
    link = max(p.get("pcie_h2d") or 0, p.get("pcie_d2h") or 0)
    if card is not None:
        table = f"cards.csv {card.key}"
        out = [
            _theoretical("smem", p["smem"], "context peak_smem_GBps") if result is not None
            else _theoretical("smem", card.smem_GBps, f"{table}: 128 B/clk/SM x SMs x FP32 clock"),
            _theoretical("dram", card.dram_GBps, table),
            _theoretical("pcie", link, "context peak_pcie_*_GBps (negotiated link)") if link
            else _theoretical("pcie", card.pcie_GBps, f"{table} (nominal link)"),
            _theoretical("fp32", card.fp32_TFLOPS, table),
            _theoretical("fp16x2", card.fp16x2_TFLOPS, f"{table}: FP32 x cards.FP16X2_PER_FP32"),
            _theoretical("fp16_tensor", card.fp16_tensor_TFLOPS, table),
            _distinct_bf16(card.bf16_tensor_TFLOPS, card.fp16_tensor_TFLOPS, table),
            _theoretical("fp8_tensor", card.fp8_tensor_TFLOPS, table),
        ]
        out = [c for c in out if c is None or c.kind not in MEASURED_ONLY_ROOFS or c.kind in rows_kinds]
    else:
        ctx = "context"
        out = [
            _theoretical("smem", p["smem"], f"{ctx} peak_smem_GBps"),
            _theoretical("dram", p["dram"], f"{ctx} peak_dram_GBps"),
            _theoretical("pcie", link, f"{ctx} peak_pcie_*_GBps"),
            _theoretical("fp32", p["fp32"], f"{ctx} peak_fp32_TFLOPS"),
            _theoretical("fp16x2", fp16x2_TFLOPS(result.ctx("cc"), p["fp32"]),
                         f"{ctx} peak_fp32_TFLOPS x cards.FP16X2_PER_FP32 (cc {result.ctx('cc')})"),
            _theoretical("fp16_tensor", p["fp16_tensor"], f"{ctx} peak_fp16_tensor_TFLOPS"),
            _distinct_bf16(p.get("bf16_tensor"), p["fp16_tensor"], f"{ctx} peak_bf16_tensor_TFLOPS"),
            _theoretical("fp8_tensor", p.get("fp8_tensor"), f"{ctx} peak_fp8_tensor_TFLOPS"),
        ]
        out = [c for c in out if c is None or c.kind not in MEASURED_ONLY_ROOFS or c.kind in rows_kinds]
    return [c for c in out if c is not None]


def row_level(b: Benchmark, l2_bytes: float) -> str:
    """The memory level a row measured: its label's. A row of a file written before labels
    (which the legacy fallback puts at dram) is at l2 when its working set is below half the L2,
    the rule gpubench labels rows by (memory_level() in harness/family.h)."""
    if b.labelled or b.level != "dram" or not l2_bytes:
        return b.level
    ws = b.median("working_set_bytes")
    return "l2" if ws is not None and 0 < ws < l2_bytes / 2 else "dram"


def measures_dram_bandwidth(b: Benchmark, level: str) -> bool:
    """Rows whose GB/s can set the measured DRAM ceiling: at level dram, measured against the
    DRAM peak, or the intensity sweep (the roofline family, whose low-intensity end is
    bandwidth-bound). Not cache-resident rows, shared memory, PCIe or latency rows."""
    return level == "dram" and (b.family == "roofline" or b.peak_kind == "dram")


def _short_params(b: Benchmark, drop=("bytes",)) -> str:
    """The parameters but the size: "4096\u00b3" for a square GEMM, "4096x11008x4096" (m x n x k)
    for another, "fma:16", "stride:2"."""
    p = {k: v for k, v in b.params.items() if k not in drop}
    if {"m", "n", "k"} <= p.keys():
        rest = {k: v for k, v in p.items() if k not in ("m", "n", "k")}
        shape = f"{p['m']}\u00b3" if p["m"] == p["n"] == p["k"] else f"{p['m']}x{p['n']}x{p['k']}"
        return " ".join([shape] + [f"{k}:{v}" for k, v in rest.items()])
    return " ".join(f"{k}:{v}" for k, v in p.items())


def point_label(b: Benchmark, keep_bytes: bool) -> str:
    """Short label: kernel, [library], parameters (the size only where asked)."""
    parts = [b.kernel]
    if b.is_library:
        parts.append(f"[{b.variant}]")
    if keep_bytes and "bytes" in b.params:
        parts.append(b.params["bytes"])
    params = _short_params(b)
    if params:
        parts.append(params)
    return " ".join(parts)


def _row_text(b: Benchmark) -> str:
    """A row in a ceiling's label: kernel, variant, size and its other parameters."""
    return " ".join(t for t in (b.kernel, b.variant, b.params.get("bytes", ""), _short_params(b))
                    if t)


def _sweep_key(b: Benchmark) -> tuple:
    """A size sweep: same kernel, variant and parameters but the size."""
    return (b.kernel, b.variant, tuple(sorted((k, v) for k, v in b.params.items()
                                              if k != "bytes")))


def _largest_of_each_sweep(benches: list[Benchmark]) -> list[Benchmark]:
    """Of each size sweep the largest size."""
    best: dict[tuple, Benchmark] = {}
    for b in benches:
        cur = best.get(_sweep_key(b))
        if cur is None or (b.size_bytes() or 0) > (cur.size_bytes() or 0):
            best[_sweep_key(b)] = b
    return list(best.values())


def l2_plateaus(benches: list[Benchmark], l2_bytes: float) -> list[tuple[float, list[Benchmark]]]:
    """Per size sweep of cache-resident rows: (its plateau, the rows it is the median of, in
    size order). The plateau is the lower median GB/s of the sweep's L2_PLATEAU_SIZES largest
    working sets from L2_PLATEAU_MIN_FRACTION of the L2 up (results.cache_plateau_rows, as the
    summaries read it; a sweep with none that large has no plateau): one outlier, like a largest
    size served partly from the L1 (an H100's 16 MiB read: 16 TB/s), cannot set it, nor can a
    small set that does not occupy the machine."""
    sweeps: dict[tuple, list[Benchmark]] = {}
    for b in benches:
        sweeps.setdefault(_sweep_key(b), []).append(b)
    out = []
    for rows in sweeps.values():
        large = sorted(cache_plateau_rows(rows, l2_bytes), key=lambda b: b.median("working_set_bytes") or 0)
        if large:
            top = large[-L2_PLATEAU_SIZES:]
            out.append((statistics.median_low(b.median("GB/s") for b in top), top))
    return out


def _measured(kind: str, value: float, text: str, host: bool, source: str) -> Ceiling:
    unit = "TFLOP/s" if kind in PRECISIONS else ""
    amount = f"{value:.4g} {unit}" if unit else _bandwidth_text(value)
    return Ceiling(kind, value, kind in LEVELS, True,
                   f"measured {level_name(kind, host)} {amount} ({text})", source)


def _measured_ceilings(result: Result, good: list[Benchmark]) -> list[Ceiling]:
    """The dashed lines, from the rows (see the module comment)."""
    host = result.backend == "host"
    l2 = result.ctx_number("l2_bytes") or 0
    level = {b.name: row_level(b, l2) for b in good}
    gbps = [b for b in good if (b.median("GB/s") or 0) > 0]
    out: list[Ceiling] = []

    def best(kind: str, rows: list[Benchmark], counter: str, source: str):
        if rows:
            top = max(rows, key=lambda b: b.median(counter))
            out.append(_measured(kind, top.median(counter), _row_text(top), host,
                                 f"{source}: {top.name}"))

    streaming = [b for b in gbps if measures_dram_bandwidth(b, level[b.name])]
    beyond_l2 = [b for b in streaming if l2 and (b.median("working_set_bytes") or 0) > 2 * l2]
    best("dram", beyond_l2 or _largest_of_each_sweep(streaming), "GB/s",
         "best DRAM-level GB/s beyond 2 x L2" if beyond_l2
         else "best DRAM-level GB/s, largest size of each sweep (no size beyond 2 x L2)")
    cached = [b for b in gbps if level[b.name] == "l2" and b.metric_kind == "GBps"
              and b.peak_kind in ("l2", "dram")]
    plateaus = l2_plateaus(cached, l2)
    if plateaus:
        value, rows = max(plateaus, key=lambda p: p[0])
        text = _row_text(rows[0]) if len(rows) == 1 else \
            (f"{rows[0].kernel} {rows[0].variant}, median of "
             f"{rows[0].params.get('bytes', '?')}-{rows[-1].params.get('bytes', '?')}")
        out.append(_measured("l2", value, text, host, "best sweep plateau at level l2: "
                             + ", ".join(b.name for b in rows)))
    best("smem", [b for b in gbps if level[b.name] == "smem" and b.metric_kind == "GBps"],
         "GB/s", "best GB/s at level smem")
    # L1: the per-SM cache read (every block re-reads one set), at its best size.
    best("l1", [b for b in gbps if level[b.name] == "l1" and b.metric_kind == "GBps"],
         "GB/s", "best GB/s at level l1")
    if not host:
        pcie = [b for b in gbps if level[b.name] == "pcie" and b.metric_kind == "GBps"]
        best("pcie", [b for kind in dict.fromkeys(b.peak_kind for b in pcie)
                      for b in sustained_transfers([x for x in pcie if x.peak_kind == kind])],
             "GB/s", "best GB/s at level pcie, of a sustained transfer (256 MiB or more)")
    flop = [b for b in good if b.metric_kind == "TFLOPS" and (b.median("TFLOPS") or 0) > 0]
    for kind in ("fp32", "fp16_tensor", "bf16_tensor", "fp8_tensor"):
        best(kind, [b for b in flop if b.peak_kind == kind], "TFLOPS",
             f"best TFLOP/s of the rows with peak {kind}")
    return out


def _ridges(s: Series) -> list[Ridge]:
    """The ridges labelled: each theoretical roof with the theoretical DRAM diagonal; each
    measured roof with the measured DRAM diagonal where there is no theoretical one (measured
    and theoretical ridges would otherwise overprint each other)."""
    measured = s.ceiling("dram") is None
    out = []
    for c in s.ceilings:
        if c.diagonal or c.empirical != measured:
            continue
        x = s.ridge(c.kind, "dram", measured)
        if x:
            out.append(Ridge(c.kind, "dram", measured, x, c.value, f"ridge {x:.3g} FLOP/B"))
    return out


def result_series(result: Result, card_table: list[Card]) -> Series:
    """Ceilings, ridges and points of one result file."""
    host = result.backend == "host"
    s = Series(label=result.label(), host=host)
    card = None if host else find_card_by_device_name(result.device_name, card_table)
    s.ceilings = _theoretical_ceilings(card, result)
    if card is not None:
        s.label = f"{card.display_name} {result.label().removeprefix(result.device_name).strip()}"
    else:
        if not host:
            s.notes.append(f"{result.path}: device '{result.device_name}' is not in cards.csv; "
                           f"using the peaks in the result's context")
        if not s.ceilings:
            s.notes.append(f"{result.path}: no theoretical peaks known for "
                           f"'{result.device_name}'; drawing measured ceilings only")

    # The memory-management family (allocation, migration, overlap) answers other questions
    # than the roofline's: its rows neither set ceilings nor sit as points.
    good = [b for b in result.benchmarks.values()
            if b.ok and not b.verification_failed and b.family != "memory"]
    s.ceilings += _measured_ceilings(result, good)
    s.ridges = _ridges(s)

    for b in good:
        if b.metric_kind != "TFLOPS" or not (b.median("TFLOPS") or 0) > 0:
            continue
        fpb = b.median("flop_per_byte")
        if fpb and fpb > 0:
            sweep = None
            label = point_label(b, keep_bytes=b.family != "roofline")
            if b.family == "roofline":  # one curve per sweep kernel, points labelled by k
                sweep = b.kernel if b.variant == "kernel" else f"{b.kernel} [{b.variant}]"
                label = _short_params(b) or label
            s.points.append(Point(b.name, label, fpb, b.median("TFLOPS"), b.is_library,
                                  GBps=b.median("GB/s"), sweep=sweep,
                                  group=None if sweep else f"{b.kernel} {b.variant}",
                                  params=_short_params(b)))
    return s


def card_series(card: Card) -> Series:
    """Theoretical ceilings and ridges of a card from the table (no results)."""
    s = Series(label=f"{card.display_name} (cards.csv)",
               ceilings=_theoretical_ceilings(card, None))
    s.ridges = _ridges(s)
    return s


def _pow2_floor(v: float) -> float:
    return 2.0 ** math.floor(math.log2(v))


def _one_of_each(series: list[Series], results: list[Result]) -> None:
    """Several results on one chart: a theoretical ceiling the series before already drew (the
    same card) is drawn once, and series of one day are told apart by their time and revision
    (three runs of one H100 drew every roof three times under one legend label)."""
    def same(c) -> tuple[str, str]:  # the context's rounded peak and the table's own figure
        return (c.kind, f"{c.value:.5g}")  # (63.0154 and 63.01538461538462 GB/s) are one roof

    drawn: set[tuple[str, str]] = set()
    for s in series:
        kept = [c for c in s.ceilings if c.empirical or same(c) not in drawn]
        drawn |= {same(c) for c in s.ceilings if not c.empirical}
        if len(kept) != len(s.ceilings):
            s.ceilings = kept
            s.ridges = _ridges(s)
    labels = [s.label for s in series]
    for i, r in enumerate(results):
        if labels.count(series[i].label) > 1:
            when = (r.ctx("run_started_utc") or "")[11:16]
            rev = r.ctx("git_revision", "")[:7]
            series[i].label = " ".join(x for x in (series[i].label, when and f"{when} UTC", rev) if x)
    labels = [s.label for s in series]
    for i, r in enumerate(results):  # runs of the same minute and revision: their file names
        if labels.count(series[i].label) > 1:
            series[i].label = f"{series[i].label} ({r.path.stem})"


def roofline_data(results: list[Result], cards: list[Card], card_table: list[Card]) -> RooflineData:
    """The chart for some result files and some cards (at least one of either)."""
    series = [result_series(r, card_table) for r in results] + [card_series(c) for c in cards]
    if len(series) > 1:
        _one_of_each(series, results)
    xs = [p.x for s in series for p in s.points]
    x_lo = _pow2_floor(min([MAX_X_LEFT] + [x / 2 for x in xs]))
    x_hi = max([MIN_X_RIGHT] + [x * 2 for x in xs] + [r.x * 2 for s in series for r in s.ridges])
    ys = [p.y for s in series for p in s.points]
    for s in series:
        for c in s.ceilings:
            # Roofs at their value; diagonals at both ends (a series without roofs, like a
            # host bandwidth run, has its diagonals run to the right edge).
            if c.diagonal:
                end = s.diagonal_end(c)
                ys += [c.value * x / 1000.0 for x in (x_lo, min(end, x_hi) if end else x_hi)]
            else:
                ys.append(c.value)
    ys = [y for y in ys if y > 0] or [1e-3, 1.0]
    y_lo = 10 ** math.floor(math.log10(min(ys) / 2))
    y_hi = 10 ** math.ceil(math.log10(max(ys) * 2))
    if results:
        r = results[0]
        date = (r.ctx("run_started_utc") or r.ctx("date"))[:10]
        title = (f"Roofline: {r.device_name} | driver {r.ctx('driver_version', '?')}, "
                 f"runtime {r.ctx('runtime_version', '?')} | {date}")
        if len(series) > 1:  # the legend names each series; the title says what is compared
            devices = ", ".join(dict.fromkeys(x.device_name for x in results))
            runs = f"{len(results)} runs" if len(results) > 1 else "1 run"
            title = f"Roofline: {runs} of {devices}"
            if cards:
                title += " and " + ", ".join(c.display_name for c in cards) + " (cards.csv)"
    else:
        title = "Theoretical roofline: " + ", ".join(c.display_name for c in cards)
    return RooflineData(title=title, series=series, x_range=(x_lo, x_hi), y_range=(y_lo, y_hi))


# --------------------------------------------------------------------------------- drawing

#: Line style of theoretical and measured ceilings.
THEORETICAL_STYLE, MEASURED_STYLE = "-", "--"
#: Line width per ceiling kind (CEILING_WIDTH_DEFAULT for a kind not listed).
CEILING_WIDTHS = {"dram": 2.0, "fp32": 2.0, "l1": 1.4, "l2": 1.6, "smem": 1.6, "pcie": 1.4, "fp16x2": 1.6,
                  "fp16_tensor": 1.6, "bf16_tensor": 1.4, "fp8_tensor": 1.6}
CEILING_WIDTH_DEFAULT = 1.2
#: Colour per ceiling kind on a one-series chart (several series: one colour per series).
CEILING_COLORS = {"smem": "tab:green", "l1": "tab:gray", "l2": "tab:orange", "dram": "tab:blue",
                  "pcie": "tab:purple", "fp32": "tab:red", "fp16x2": "tab:brown",
                  "fp16_tensor": "tab:pink", "bf16_tensor": "tab:olive", "fp8_tensor": "tab:cyan"}
#: Colour of the points and sweeps on a one-series chart.
POINT_COLOR = "0.15"
#: Marker of each intensity sweep, in sweep order.
SWEEP_MARKERS = "ohp*PX"
#: Marker of each point group (kernel and variant), in name order; library references hollow.
GROUP_MARKERS = "o^vDsph<>d8"


def group_legend(pts: list[Point]) -> str:
    """A point group's legend entry: its kernel and variant, what it is, its best point (the
    GEMMs come in dozens of sizes: their points are not labelled one by one; the GEMM plot has
    each size)."""
    top = max(pts, key=lambda p: p.y)
    what = "library" if top.library else "gpubench"
    at = f" at {top.params}" if top.params else ""
    return f"{top.group} ({what}): best {top.y:.4g} TFLOP/s{at}"


def ceiling_style(c: Ceiling) -> tuple:
    """(linestyle, linewidth) of a ceiling: solid theoretical, dashed measured; a kind without
    a width gets CEILING_WIDTH_DEFAULT, never a KeyError."""
    return (MEASURED_STYLE if c.empirical else THEORETICAL_STYLE,
            CEILING_WIDTHS.get(c.kind, CEILING_WIDTH_DEFAULT))


def ceiling_line(s: Series, c: Ceiling, x_range: tuple[float, float]) -> tuple[list, list]:
    """The two ends of a ceiling's line (straight on log-log axes): a diagonal from the left
    edge to where it meets the highest roof of its kind (Series.diagonal_end), a roof from its
    ridge with the highest diagonal of its kind (Series.roof_start) to the right edge."""
    x_lo, x_hi = x_range
    if c.diagonal:
        end = s.diagonal_end(c)
        x1 = min(x_hi, end) if end else x_hi
        xs = [x_lo, max(x1, x_lo)]
        return xs, [c.value * x / 1000.0 for x in xs]
    start = s.roof_start(c)
    x0 = max(x_lo, start) if start else x_lo
    return [min(x0, x_hi), x_hi], [c.value, c.value]


def diagonal_tag(s: Series, c: Ceiling) -> str | None:
    """The name and value written along a diagonal near its left end: every theoretical one,
    and a measured one whose level has no theoretical line (the measured line beside a
    theoretical one is named in the legend: two names would overprint); None for a roof or an
    untagged diagonal."""
    if not c.diagonal or (c.empirical and s.ceiling(c.kind) is not None):
        return None
    name = f"{level_name(c.kind, s.host)} {_bandwidth_text(c.value)}"
    return f"{name} (measured)" if c.empirical else name


#: Estimated width of a character of the 7-point tags, and the room a tag needs between its line
#: and the next one up, in pixels: the tag sits 2 points above its line and is about 10 pixels
#: tall, so lines closer than this (perpendicular on screen) get staggered tags (the host's
#: per-core cache at 101 GB/s below its last-level cache at 152 GB/s touched at 13).
TAG_CHAR_PX, TAG_HEIGHT_PX = 5.3, 17.0


def _px_per_decade(data: RooflineData) -> tuple[float, float]:
    """Pixels per decade of the x and the y axis (the axes' box is fixed)."""
    (x_lo, x_hi), (y_lo, y_hi) = data.x_range, data.y_range
    return (AXES_RECT[2] * FIGSIZE[0] * DPI / math.log10(x_hi / x_lo),
            AXES_RECT[3] * FIGSIZE[1] * DPI / math.log10(y_hi / y_lo))


def diagonal_tags(data: RooflineData) -> list[tuple[int, Ceiling, str, float]]:
    """The tags written along diagonals (diagonal_tag()), as (series index, diagonal, text, x
    where the text starts, on the line). A tag starts just right of where its line enters the
    chart (the left edge, or the bottom edge for a slow level); where the line below is so close
    that the two tags would overlap (the host's last-level cache and DRAM lines), it starts
    after the lower tag's end instead."""
    px_x, px_y = _px_per_decade(data)
    cos = math.cos(math.atan2(px_y, px_x))  # of the diagonals' on-screen angle
    tags = []
    for si, s in enumerate(data.series):
        for c in s.ceilings:
            text = diagonal_tag(s, c)
            if text:
                x = max(data.x_range[0] * 1.25, data.y_range[0] * 1.6 * 1000.0 / c.value)
                tags.append([c.value, x, si, c, text])
    tags.sort(key=lambda t: t[0])
    for lower, upper in zip(tags, tags[1:]):
        if math.log10(upper[0] / lower[0]) * px_y * cos < TAG_HEIGHT_PX:
            end = lower[1] * 10 ** (len(lower[4]) * TAG_CHAR_PX * cos / px_x)
            upper[1] = max(upper[1], end * 1.1)
    return [(si, c, text, x) for _, x, si, c, text in tags]


#: Height of a roof name in pixels, with a little air (fontsize 7 at DPI).
ROOF_NAME_PX = 11.0
#: The axes' box in the figure (left, bottom, width, height), fixed so text never moves.
AXES_RECT = (0.07, 0.09, 0.58, 0.82)


def roof_names(data: RooflineData) -> list[tuple[int, Ceiling, str, float]]:
    """The names written at the right edge, as (series index, roof, text, y of the text's
    bottom): every roof of a one-series chart, the theoretical ones of a chart with several.
    Nominally just above a theoretical roof and just below a measured one; where two would
    overlap, the upper one moves up until they do not (H100 FP32 66.9 beside A100 FP16x2 78)."""
    y_lo, y_hi = data.y_range
    px_per_decade = AXES_RECT[3] * FIGSIZE[1] * DPI / math.log10(y_hi / y_lo)
    h = ROOF_NAME_PX / px_per_decade  # a name's height in decades
    several = len(data.series) > 1
    names = []
    for si, s in enumerate(data.series):
        for c in s.ceilings:
            if not c.diagonal and (not several or not c.empirical):
                bottom = math.log10(c.value * 0.94) - h if c.empirical else \
                    math.log10(c.value * 1.06)
                names.append([bottom, si, c])
    names.sort(key=lambda n: n[0])
    for prev, cur in zip(names, names[1:]):
        cur[0] = max(cur[0], prev[0] + h)
    return [(si, c, c.label.split(" (")[0], 10 ** bottom) for bottom, si, c in names]


def _screen_angle(ax, x: float, y: float) -> float:
    """The on-screen angle in degrees of a diagonal (slope 1 on log-log axes) at (x, y)."""
    (x0, y0), (x1, y1) = ax.transData.transform([(x, y), (x * 2, y * 2)])
    return math.degrees(math.atan2(y1 - y0, x1 - x0))


def _compact_legend(data: RooflineData, colors: list, group_marker: dict, sweep_marker: dict):
    """The legend of a chart of several series (each one's every ceiling and point group would
    run off the figure): each series by its colour, each theoretical ceiling (drawn once per
    card), one entry for the measured ceilings, and each point group and sweep once, by its
    marker, in grey (hollow: a library reference)."""
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], color=colors[si % len(colors)], linewidth=2.5, label=s.label)
               for si, s in enumerate(data.series)]
    # Named by their series where more than one has theoretical ceilings (several cards).
    cards = sum(1 for s in data.series if any(not c.empirical for c in s.ceilings))
    for si, s in enumerate(data.series):
        for c in s.ceilings:
            if not c.empirical:
                handles.append(Line2D([], [], color=colors[si % len(colors)], linestyle=THEORETICAL_STYLE,
                                      linewidth=ceiling_style(c)[1],
                                      label=f"{s.label}: {c.label}" if cards > 1 else c.label))
    if any(c.empirical for s in data.series for c in s.ceilings):
        handles.append(Line2D([], [], color="0.4", linestyle=MEASURED_STYLE,
                              label="measured ceilings, each in its run's colour"))
    library = {p.group: p.library for s in data.series for p in s.points if p.group}
    for g, m in group_marker.items():
        handles.append(Line2D([], [], linestyle="none", marker=m, markersize=6, color="0.35",
                              markerfacecolor="none" if library[g] else "0.35",
                              label=f"{g} ({'library' if library[g] else 'gpubench'})"))
    for w, m in sweep_marker.items():
        handles.append(Line2D([], [], linestyle=":", marker=m, markersize=4, color="0.35",
                              label=f"{w} sweep"))
    return handles, [h.get_label() for h in handles]


def roofline_figure(data: RooflineData):
    """The matplotlib Figure of the chart (FIGSIZE x DPI; no pyplot state, nothing to close).

    One series: a colour per ceiling kind (CEILING_COLORS), the points in POINT_COLOR; several:
    a colour per series. Per series: every ceiling a line (ceiling_line(); solid theoretical,
    dashed measured) labelled in the legend ("<series>: " first when there are several); every
    ridge a hollow marker at (x, roof) with its label; every intensity sweep a dotted curve
    through its points, each annotated with its label; the other FLOP rows one scatter per
    kernel and variant (filled: gpubench kernels, hollow: library references; group_legend()).
    Then the tags along the diagonals (diagonal_tags()) and the roofs' names at the right edge
    (roof_names()). draw_roofline() writes it; the tests read its artists."""
    import matplotlib
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    ax = fig.add_axes(AXES_RECT)
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

    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    several = len(data.series) > 1
    # One marker per point group and sweep across every series, so a shape means one kernel.
    group_marker = {g: GROUP_MARKERS[i % len(GROUP_MARKERS)] for i, g in
                    enumerate(sorted({p.group for s in data.series for p in s.points if p.group}))}
    sweep_marker = {w: SWEEP_MARKERS[i % len(SWEEP_MARKERS)] for i, w in
                    enumerate(sorted({p.sweep for s in data.series for p in s.points if p.sweep}))}
    for si, s in enumerate(data.series):
        series_color = colors[si % len(colors)]
        color_of = (lambda kind: series_color) if several else \
            (lambda kind: CEILING_COLORS.get(kind, series_color))
        point_color = series_color if several else POINT_COLOR
        prefix = f"{s.label}: " if several else ""
        for c in s.ceilings:
            xs, ys = ceiling_line(s, c, data.x_range)
            style, width = ceiling_style(c)
            color = color_of(c.kind)
            ax.plot(xs, ys, linestyle=style, linewidth=width, color=color,
                    alpha=0.8 if c.empirical else 1.0, label=prefix + c.label)
        for r in s.ridges:
            color = color_of(r.roof)
            ax.plot([r.x], [r.y], linestyle="none", marker="o", markersize=6,
                    markerfacecolor="white", markeredgecolor=color, markeredgewidth=1.2,
                    zorder=6)
            # Above left of the mark: above the roofline, where nothing else is drawn; every
            # other series below right (two cards' ridges are often close).
            above = si % 2 == 0
            ax.annotate(r.label, (r.x, r.y), xytext=(-4, 4) if above else (4, -4),
                        textcoords="offset points", ha="right" if above else "left",
                        va="bottom" if above else "top", fontsize=6.5, color=color)

        sweeps: dict[str, list[Point]] = {}
        for p in s.points:
            if p.sweep:
                sweeps.setdefault(p.sweep, []).append(p)
        for i, (sweep, pts) in enumerate(sorted(sweeps.items())):
            pts.sort(key=lambda p: p.x)
            ax.plot([p.x for p in pts], [p.y for p in pts], linestyle=":", linewidth=0.9,
                    color=point_color, marker=sweep_marker[sweep],
                    markersize=4, zorder=5, label=f"{prefix}{sweep} sweep (labels: its parameter)")
            for p in pts:
                ax.annotate(p.label, (p.x, p.y), xytext=(3, -8 if i % 2 == 0 else 4),
                            textcoords="offset points", fontsize=5, color=point_color)
        groups: dict[str, list[Point]] = {}
        for p in s.points:
            if p.group:
                groups.setdefault(p.group, []).append(p)
        for i, (group, pts) in enumerate(sorted(groups.items())):
            lib = pts[0].library
            ax.scatter([p.x for p in pts], [p.y for p in pts],
                       marker=group_marker[group], s=28, zorder=5,
                       facecolors="none" if lib else point_color, edgecolors=point_color,
                       linewidths=1.2, label=prefix + group_legend(pts))
    for si, c, text, tx in diagonal_tags(data):  # along the line, 2 points above it
        color = colors[si % len(colors)] if several else \
            CEILING_COLORS.get(c.kind, colors[si % len(colors)])
        angle = _screen_angle(ax, tx, c.value * tx / 1000.0)
        ax.annotate(text, (tx, c.value * tx / 1000.0),
                    xytext=(-2 * math.sin(math.radians(angle)), 2 * math.cos(math.radians(angle))),
                    textcoords="offset points", rotation=angle, rotation_mode="anchor",
                    ha="left", va="bottom", fontsize=7, color=color)
    # Roof names at the right edge, on a light box (GEMM points reach the edge); with several
    # series only the theoretical ones (close measured roofs would overprint each other; the
    # legend has them all).
    for si, c, text, y in roof_names(data):
        color = colors[si % len(colors)] if several else \
            CEILING_COLORS.get(c.kind, colors[si % len(colors)])
        ax.text(x_hi / 1.05, y, text, ha="right", va="bottom", fontsize=7, color=color, zorder=7,
                bbox=dict(facecolor="white", alpha=0.75, edgecolor="none", pad=0.6))
    # Long entries wrapped, so that the legend stays inside the figure's right margin.
    handles, labels = ax.get_legend_handles_labels()
    if several:
        handles, labels = _compact_legend(data, colors, group_marker, sweep_marker)
    ax.legend(handles, [textwrap.fill(t, LEGEND_WRAP, subsequent_indent="  ") for t in labels],
              loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7, frameon=False, borderaxespad=0.0)
    fig.text(0.67, 0.03, "solid: theoretical (cards.csv or the result's context); dashed:\n"
             "measured (the plateaus of the working-set sweeps, the best\n"
             "TFLOP/s per precision). Rows without FLOP set ceilings; circles:\n"
             "ridge points, where a roof meets the DRAM line (FLOP/byte).",
             fontsize=7, color="0.3")
    literal_text(fig)
    return fig


def draw_roofline(data: RooflineData, out_png: Path | str | NewFile,
                  overwrite: bool = False) -> Path:
    """Writes the chart (roofline_figure()) as a PNG of FIGSIZE x DPI pixels (or the SVG or PDF
    its name asks for) and returns its path; whole or not at all (output.NewFile), never over
    an existing file unless `overwrite`. `out_png` may be a NewFile opened beforehand (the CLI
    opens it before any work, so an unwritable folder is refused at once)."""
    out = out_png if isinstance(out_png, NewFile) else NewFile(out_png, overwrite)
    with out:
        out.write(lambda tmp: roofline_figure(data).savefig(tmp, format=out.format, dpi=DPI))
    return out.path
