"""Loading and validating one gpubench result file (Google Benchmark JSON).

A result is standard Google Benchmark JSON: `context` carries Google Benchmark's own keys plus
gpubench's (device, peaks as numbers-in-strings or "unknown", versions, cache policy), and
`benchmarks[]` holds one entry per repetition (`run_type: "iteration"`) plus aggregates
(`run_type: "aggregate"`, `aggregate_name` mean/median/stddev/cv), counters at the entry's top
level. This module groups the entries by benchmark name (family/kernel/variant/params) and
exposes per-repetition samples, so every other module reads results the same way.

What a row means travels with it: gpubench writes Google Benchmark's per-entry `label` as
space-separated key=value pairs (`peak=dram metric=GBps level=dram sweep=bytes`) on iteration,
aggregate and error/skip entries alike. parse_row_label() reads them into a RowMeaning
(Benchmark.meaning); the plots, the roofline and the comparator select rows by its fields, never
by their names. Files written before the label existed get the same fields from
legacy_row_meaning(), the one place that still reads meaning into names.

Every problem with the file becomes a UsageError whose one-line message names the file.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UsageError
from .inputs import read_input
from .output import visible

#: Context keys every gpubench result has; their absence means "not a gpubench result".
REQUIRED_CONTEXT = ("gpubench_version", "backend", "device_name", "device_key")

#: Context keys the tools read as text (folder names, labels, the fleet's node and GPU): when
#: present, a string; anything else (null, a number, a list) is a forged or corrupt file.
TEXT_CONTEXT = REQUIRED_CONTEXT + ("host_name", "device_ordinal", "git_revision", "run_started_utc",
                                   "date", "driver_version", "runtime_version", "card_key")

#: Benchmark names: family/kernel/variant/params (Google Benchmark may append /manual_time ...).
#: Any lower-case family (bandwidth, compute, roofline, memory, ...): a new family must not make
#: every tool reject the files it appears in. A parameter value may join sizes with "+"
#: (memory/fragmentation/cuda_malloc/pattern:1MiB+64MiB).
NAME_RE = re.compile(r"^([a-z][a-z0-9_]*)/([a-z0-9_]+)/([a-z0-9_]+)/([A-Za-z0-9_:,.+]+)")

#: Context keys of the theoretical peaks, by ceiling kind.
PEAK_KEYS = {
    "dram": "peak_dram_GBps",
    "fp32": "peak_fp32_TFLOPS",
    "fp16_tensor": "peak_fp16_tensor_TFLOPS",
    "bf16_tensor": "peak_bf16_tensor_TFLOPS",
    "fp8_tensor": "peak_fp8_tensor_TFLOPS",
    "pcie_h2d": "peak_pcie_h2d_GBps",
    "pcie_d2h": "peak_pcie_d2h_GBps",
    "smem": "peak_smem_GBps",
}

#: Values of a row's `metric` (its label's vocabulary) -> the JSON counter that holds it
#: (latency_ns: the pointer chase's time per load; latency_us: the time of one operation, e.g.
#: an allocate + free pair of the memory family).
METRIC_COUNTERS = {"GBps": "GB/s", "TFLOPS": "TFLOPS", "latency_ns": "latency_ns",
                   "latency_us": "latency_us"}
#: Headline metrics where a lower value is better (the comparator flips its direction).
LOWER_IS_BETTER = ("latency_ns", "latency_us")
#: The label keys gpubench writes (others are ignored).
LABEL_KEYS = ("peak", "metric", "level", "sweep")

#: Words that make a variant a library reference ("cublas", "memcpy_ce", "pageable_memcpy",
#: host "memcpy", ...); every other variant is a gpubench kernel ("kernel", or the precision of
#: the intensity sweep, "fp32"/"fp16").
#: (harness/console_table.cpp, hand_written(), keeps the same list for the console's summary.)
LIBRARY_WORDS = ("cublas", "cutlass", "thrust", "cub", "memcpy", "memset", "std")

_SIZE_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


#: From this transfer size a PCIe row is a sustained rate: what nvbandwidth-style tools and the
#: expected bands (bands.csv) read, 256 MiB - 1 GiB.
SUSTAINED_TRANSFER_BYTES = 256 * 1024 * 1024


#: A cache-resident working set from this fraction of the L2 (the last-level cache on the host) up
#: is a cache plateau: a smaller set occupies a fraction of the SMs, or on the host a core's L1 (the
#: host's 16 KiB copy, 393 GB/s, was quoted as its last-level cache). The console's summary keeps
#: the same fraction (harness/console_table.h, kCachePlateauMinFraction).
CACHE_PLATEAU_MIN_FRACTION = 1.0 / 64.0


def cache_plateau_rows(rows: list[Benchmark], cache_bytes: float | None) -> list[Benchmark]:
    """The cache-resident rows a plateau is read from: working sets from
    CACHE_PLATEAU_MIN_FRACTION of the cache up; all of them only where the cache size is
    unknown. A run whose sets are all smaller (a filter keeping 4 KiB and 64 KiB of a 32 MiB
    cache) has no plateau: it once quoted the 64 KiB set, served from a core's L1, as the
    cache's. The report, the acceptance run and the roofline's measured cache line read it."""
    if not cache_bytes:
        return rows
    return [b for b in rows
            if (b.median("working_set_bytes") or b.size_bytes() or 0) >= cache_bytes * CACHE_PLATEAU_MIN_FRACTION]


def sustained_transfers(rows: list[Benchmark]) -> list[Benchmark]:
    """The transfer rows (of one direction) that measure a sustained rate: 256 MiB or more, or
    the largest size that ran where none reaches it (--quick stops at 16 MiB). A small transfer
    can be served by a cache: the host's 4 KiB memcpy read 81 GB/s where 1 GiB read 14."""
    sized = [b for b in rows if b.size_bytes()]
    if not sized:
        return []
    start = min(SUSTAINED_TRANSFER_BYTES, max(b.size_bytes() for b in sized))
    return [b for b in sized if b.size_bytes() >= start]


def parse_size(token: str) -> float:
    """Bytes in a size token as written in benchmark names: "4KiB", "64MiB", "1GiB", "512B"."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(B|KiB|MiB|GiB|TiB)?", token)
    if not m:
        raise ValueError(f"not a size token: '{token}'")
    return float(m.group(1)) * _SIZE_UNITS[m.group(2) or "B"]


def to_number(value) -> float | None:
    """A context value ("3350", 3350, "unknown", "") as a float, None when unknown or invalid."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            v = float(value)  # an int beyond a float's range raises OverflowError
        except OverflowError:
            return None
        return v if math.isfinite(v) else None
    try:
        v = float(str(value).strip())
    except (ValueError, OverflowError):
        return None
    return v if math.isfinite(v) else None


@dataclass(frozen=True)
class RowMeaning:
    """What a benchmark row measures, as its label says (or, for legacy files, as its name
    implied): the fields every tool selects rows by."""

    #: ceiling pct_of_peak refers to: none, dram, l2, smem, pcie_h2d, pcie_d2h, fp32, fp16_tensor,
    #: bf16_tensor, fp8_tensor
    peak_kind: str
    metric: str  #: headline metric: GBps, TFLOPS, latency_ns or latency_us
    level: str  #: memory level targeted: dram, l2 (host: last-level cache), l1, smem, pcie, none
    sweep: str  #: the parameter its family sweeps (the plot's x axis): bytes, stride, m, fma, ...
    source: str = "label"  #: "label" (written by gpubench) or "legacy" (derived from the name)


def parse_row_label(label) -> dict[str, str]:
    """The key=value pairs of a row's label that gpubench defines (LABEL_KEYS), e.g.
    "peak=dram metric=GBps level=dram sweep=bytes" -> {"peak": "dram", ...}. Tokens in any order;
    unknown keys and tokens without "=" are ignored; {} for no label (or not a string)."""
    if not isinstance(label, str):
        return {}
    out: dict[str, str] = {}
    for token in label.split():
        key, eq, value = token.partition("=")
        if eq and key in LABEL_KEYS and value:
            out.setdefault(key, value)
    return out


def legacy_row_meaning(family: str, kernel: str, variant: str, params: dict[str, str],
                       entries: list[dict]) -> RowMeaning:
    """LEGACY FALLBACK, for result files written before gpubench labelled its rows (no `label`
    on the entries; e.g. every file under results/h100_80gb_hbm3-79gib-sm90-drv580-cuda13.0/).

    Derives the four fields from the benchmark's name the way the tools used to, so those files
    select, plot and compare exactly as before:
    - metric: TFLOPS when an entry has TFLOPS > 0, else GBps (the old counter guess; the pointer
      chase is therefore compared on its GB/s, as it always was);
    - peak: what the harness's work model measured pct_of_peak against at every size (legacy
      rows carried DRAM percentages even when cache-resident): dram for the streaming memory
      kernels, none for the chase, pcie_h2d/pcie_d2h for transfers, fp32 / fp16_tensor for
      GEMM (sgemm / the others), fp32 for FP32 FMA rows and none for the FP16x2 ones;
    - level: pcie for transfers, none for the compute family, dram for the rest (legacy files
      do not say which sizes were cache-resident);
    - sweep: stride for the strided kernel, bytes for the other memory rows, m for GEMM (sizes
      m = n = k), fma for the intensity sweep, none for the peak-FMA rows.
    Never used for a labelled row (a label lacking a key takes only that key from here).
    """
    flop = any((to_number(e.get("TFLOPS")) or 0) > 0 for e in entries)
    metric = "TFLOPS" if flop else "GBps"
    fp16 = "fp16" in kernel or "fp16" in variant
    if family == "bandwidth":
        if kernel.startswith("pcie"):
            peak = "pcie_d2h" if kernel.endswith("d2h") else "pcie_h2d"
            return RowMeaning(peak, metric, "pcie", "bytes", "legacy")
        if kernel == "chase":
            return RowMeaning("none", metric, "dram", "bytes", "legacy")
        return RowMeaning("dram", metric, "dram", "stride" if kernel == "strided" else "bytes",
                          "legacy")
    if family == "roofline":
        return RowMeaning("none" if fp16 else "fp32", metric, "dram", "fma", "legacy")
    if "gemm" in kernel:
        peak = {"sgemm": "fp32", "bf16gemm": "bf16_tensor", "fp8gemm": "fp8_tensor"}.get(kernel,
                                                                                     "fp16_tensor")
        return RowMeaning(peak, metric, "none", "m", "legacy")
    return RowMeaning("none" if fp16 else "fp32", metric, "none", "none", "legacy")


@dataclass
class Benchmark:
    """All entries of one benchmark (one name) in a result file."""

    name: str  #: family/kernel/variant/params
    family: str
    kernel: str
    variant: str
    params: dict[str, str]
    samples: list[dict] = field(default_factory=list)  #: successful per-repetition entries
    aggregates: dict[str, dict] = field(default_factory=dict)  #: aggregate_name -> entry
    errors: list[str] = field(default_factory=list)  #: error_message of failed entries
    #: what the row measures: from its label, or legacy_row_meaning() for unlabelled files
    meaning: RowMeaning | None = None
    label_fields: dict[str, str] = field(default_factory=dict)  #: parsed label of its entries

    @property
    def peak_kind(self) -> str:
        """The ceiling its pct_of_peak refers to (none, dram, l2, smem, pcie_h2d, ...)."""
        return self._meaning().peak_kind

    @property
    def metric_kind(self) -> str:
        """Its headline metric in the label's vocabulary: GBps, TFLOPS, latency_ns or
        latency_us."""
        return self._meaning().metric

    @property
    def level(self) -> str:
        """The memory level it targets: dram, l2, l1, smem, pcie, none."""
        return self._meaning().level

    @property
    def sweep(self) -> str:
        """The parameter its family sweeps (bytes, stride, m, ...)."""
        return self._meaning().sweep

    @property
    def labelled(self) -> bool:
        """True when gpubench wrote its meaning into the result (not a legacy file)."""
        return self._meaning().source == "label"

    def _meaning(self) -> RowMeaning:
        if self.meaning is None:
            self.meaning = resolve_meaning(self)
        return self.meaning

    @property
    def is_library(self) -> bool:
        """True for library references (cuBLAS, Thrust, CUB, cudaMemcpy, host memcpy)."""
        return any(w in self.variant for w in LIBRARY_WORDS)

    @property
    def error(self) -> str | None:
        """The first error message, None when the benchmark ran."""
        return self.errors[0] if self.errors else None

    @property
    def ok(self) -> bool:
        """Ran without error and has numbers (per-repetition samples or a median aggregate)."""
        return not self.errors and bool(self.samples or "median" in self.aggregates)

    def _entries(self) -> list[dict]:
        """Per-repetition samples; the median aggregate in files written with
        --benchmark_report_aggregates_only."""
        if self.samples:
            return self.samples
        return [self.aggregates["median"]] if "median" in self.aggregates else []

    @property
    def verification_failed(self) -> bool:
        """An entry failed verification, or a sample says it was not verified."""
        if any(not e.startswith("skipped") for e in self.errors):
            return True
        return any("verified" in s and to_number(s["verified"]) != 1 for s in self._entries())

    @property
    def skipped(self) -> bool:
        """The harness skipped the benchmark with a reason (e.g. does not fit in memory)."""
        return bool(self.errors) and all(e.startswith("skipped") for e in self.errors)

    @property
    def throttled(self) -> bool:
        """Any repetition ran with throttled clocks (thermal or hardware slowdown; in results
        written before power_capped existed, the software power cap too)."""
        return any((to_number(s.get("throttled")) or 0) != 0 for s in self._entries())

    @property
    def power_capped(self) -> bool:
        """Any repetition ran at the software power cap (power_capped=1): how an H100 runs heavy
        tensor work, so a fact about the row rather than a reason to set it aside."""
        return any((to_number(s.get("power_capped")) or 0) != 0 for s in self._entries())

    @property
    def metric(self) -> str:
        """The JSON counter of the headline metric (what values()/median() take): "GB/s",
        "TFLOPS", "latency_ns" or "latency_us", from metric_kind (a "GBps" counter is used
        where the entries carry one instead of "GB/s"). Legacy files: TFLOPS when the benchmark
        does FLOP, GB/s otherwise, as always.

        (A benchmark reporting both, like the intensity sweep, derives them from the same time,
        so comparing one of them is enough.)
        """
        kind = self.metric_kind
        counter = METRIC_COUNTERS.get(kind, kind)
        if kind == "GBps":
            entries = self._entries()
            if entries and not any("GB/s" in e for e in entries) and any("GBps" in e for e in entries):
                return "GBps"
        return counter

    @property
    def higher_is_better(self) -> bool:
        """False for latency-like headline metrics (a rise is a regression)."""
        return self.metric_kind not in LOWER_IS_BETTER

    def values(self, counter: str) -> list[float]:
        """Per-repetition values of a counter (samples that lack it are left out)."""
        out = []
        for s in self.samples:
            v = to_number(s.get(counter))
            if v is not None:
                out.append(v)
        return out

    def median(self, counter: str) -> float | None:
        """Median over repetitions of a counter (None when no sample has it)."""
        vals = self.values(counter)
        if vals:
            return statistics.median(vals)
        agg = self.aggregates.get("median")
        return to_number(agg.get(counter)) if agg else None

    def size_bytes(self) -> float | None:
        """The `bytes` parameter in bytes, else the working_set_bytes counter."""
        if "bytes" in self.params:
            try:
                return parse_size(self.params["bytes"])
            except ValueError:
                pass
        return self.median("working_set_bytes")


@dataclass
class Result:
    """One gpubench result file."""

    path: Path
    context: dict
    benchmarks: dict[str, Benchmark]  #: by name, in file order

    def ctx(self, key: str, default: str = "") -> str:
        """A context value as a string."""
        v = self.context.get(key, default)
        return default if v is None else str(v)

    def ctx_number(self, key: str) -> float | None:
        """A numeric context value; None when absent or "unknown"."""
        return to_number(self.context.get(key))

    @property
    def device_key(self) -> str:
        """Stable hardware key (directory name in the results store)."""
        return self.ctx("device_key")

    @property
    def device_name(self) -> str:
        """The device name as the driver (or the host) reports it."""
        return self.ctx("device_name")

    @property
    def backend(self) -> str:
        """"cuda" or "host"."""
        return self.ctx("backend")

    def peaks(self) -> dict[str, float | None]:
        """Theoretical peaks from the context (GB/s or TFLOPS), None where unknown."""
        return {kind: self.ctx_number(key) for kind, key in PEAK_KEYS.items()}

    def label(self) -> str:
        """Short label for legends: device name and run date."""
        date = self.ctx("run_started_utc") or self.ctx("date")
        return f"{self.device_name} {date[:10]}".strip()


def resolve_meaning(b: Benchmark) -> RowMeaning:
    """A benchmark's meaning: its label's fields; legacy_row_meaning() when no entry has a label
    (and for the keys a partial label leaves out)."""
    got = b.label_fields
    if all(k in got for k in LABEL_KEYS):
        return RowMeaning(got["peak"], got["metric"], got["level"], got["sweep"], "label")
    legacy = legacy_row_meaning(b.family, b.kernel, b.variant, b.params, b._entries())
    if not got:
        return legacy
    return RowMeaning(got.get("peak", legacy.peak_kind), got.get("metric", legacy.metric),
                      got.get("level", legacy.level), got.get("sweep", legacy.sweep), "label")


#: Counters that hold a measurement, with the largest value a real one can have. Every bound is
#: far beyond any device, so no real run comes near it: the fastest bandwidth a GPU reaches is
#: tens of TB/s (shared memory or L1 summed over the SMs, ~3e4 GB/s on an H100; 1e9 GB/s is an
#: exabyte per second), the fastest tensor throughput tens of PFLOP/s (~2e4 TFLOPS; 1e9 is a
#: zettaFLOP/s), a percentage of a peak or of cuBLAS a few hundred at most (cache-resident rows of
#: old files against the DRAM peak; 1e6), an arithmetic intensity at most thousands of FLOP per
#: byte, a working set at most a node's memory (TBs; 1e18 bytes is an exabyte), one operation at
#: most hours in any time unit (1e15 ns is 11 days). A value beyond its bound, like a negative or
#: non-finite one or a string, is a forged or corrupt file, and would otherwise overflow the
#: tools' arithmetic (1e308 GB/s turns into infinity on a plot's axis).
MEASURED_COUNTER_LIMITS = {
    "GB/s": 1e9, "GBps": 1e9, "sector_GB/s": 1e9,
    "TFLOPS": 1e9, "flop_per_byte": 1e9,
    "pct_of_peak": 1e6, "pct_of_cublas": 1e6, "pct_of_protocol_limit": 1e6, "pct_of_roofline": 1e6,
    "latency_ns": 1e15, "latency_us": 1e15, "p50_us": 1e15, "p99_us": 1e15, "real_time": 1e15,
    "working_set_bytes": 1e18,
    # The overlap rows' ratios (plotted) and the clock the telemetry read: far beyond any real value.
    "overlap_efficiency": 1e3, "kernel_slowdown": 1e3, "bidir_copy_speedup": 1e3, "sm_clock_min_MHz": 1e6,
}


#: The smallest non-zero value a measured counter can hold. The smallest real ones are a hundredth
#: (a pointer chase's 0.011 GB/s, a percentage of a peak of 0.08): 1e-9 of any of their units is
#: no measurement (1e-9 GB/s is a byte per second), and the tools divide by these counters (a
#: ridge point is TFLOP/s / GB/s): 5e-324 GB/s made them infinite. 0 stays valid.
MEASURED_COUNTER_FLOOR = 1e-9


def check_measured_counters(entry: dict, where: str, path: Path) -> None:
    """UsageError ("not a gpubench result") when a measured counter of a benchmark entry (see
    MEASURED_COUNTER_LIMITS) is not 0 nor a finite number from MEASURED_COUNTER_FLOOR to its
    bound; `where` names the entry
    in the message. Checked on each repetition and on the mean and median aggregates (the
    figures the tools read); entries that failed carry no measurement, and the other aggregates
    may hold NaN legitimately (the cv of an all-zero counter)."""
    if entry.get("error_occurred"):
        return
    if entry.get("run_type") == "aggregate" and entry.get("aggregate_name") not in ("mean", "median"):
        return
    for key, limit in MEASURED_COUNTER_LIMITS.items():
        if key not in entry:
            continue
        v = entry[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            why = f"a {type(v).__name__}, not a number"
        elif isinstance(v, int) and v > limit:  # ints are exact, and may exceed a float's range
            why = "too large, not a number"
        elif isinstance(v, float) and not math.isfinite(v):
            why = "not a measured number"
        elif v < 0:
            why = "negative, not a measured number"
        elif 0 < v < MEASURED_COUNTER_FLOOR:
            why = "above 0 but below 1e-9: not a measured number"
        elif v > limit:
            why = f"above {limit:g}, beyond any device: not a measured number"
        else:
            continue
        shown = json.dumps(v)[:40] if isinstance(v, (str, list, dict)) else _shown_number(v)
        raise UsageError(f"{path}: not a gpubench result: {where} has {key} = {shown}, {why}")


def _shown_number(v) -> str:
    """A number for a one-line message: a huge integer is abbreviated by its digit count."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10 ** 30:
        return f"an integer of {len(str(abs(v)))} digits"
    return str(v)


#: The range of a numeric context value, as (lowest, highest, what it is): far beyond any device
#: at both ends (the fastest peak is tens of TB/s or PFLOP/s: ~3e4 GB/s or TFLOPS; the slowest, a
#: host's PCIe stand-in, some GB/s; an L2 or last-level cache holds MBs to GBs). Beyond them the
#: tools' arithmetic overflows or divides by zero (a peak of 1e-320 GB/s, of 1e308 TFLOPS).
CONTEXT_NUMBER_RANGES = {"peak": (1e-3, 1e9, "a peak is from 0.001 to 1e9 GB/s or TFLOPS"),
                         "l2_bytes": (1.0, 1e15, "a cache holds from 1 to 1e15 bytes")}


def check_context_numbers(ctx: dict, path: Path) -> None:
    """UsageError ("not a gpubench result") when a numeric context value the tools read (the
    theoretical peaks, l2_bytes) is not a positive finite number, as a JSON number or a string,
    nor "unknown" (or empty): gpubench writes "unknown" for a peak it does not know, never 0 or
    less, and a negative peak drew its roof below the axis and turned every pct_of_peak negative.
    A huge integer would crash the tools' arithmetic, and so would a value outside
    CONTEXT_NUMBER_RANGES."""
    for key in list(PEAK_KEYS.values()) + ["l2_bytes"]:
        if key not in ctx or ctx[key] is None:
            continue
        v = ctx[key]
        if isinstance(v, str):
            if v.strip().lower() in ("", "unknown"):
                continue
            number = to_number(v)
            if number is None:
                raise UsageError(f"{path}: not a gpubench result: context {key} = '{v[:40]}' is "
                                 f"neither a number nor 'unknown'")
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            raise UsageError(f"{path}: not a gpubench result: context {key} is a "
                             f"{type(v).__name__}, not a number")
        else:
            number = to_number(v)
            if number is None:
                raise UsageError(f"{path}: not a gpubench result: context {key} = "
                                 f"{_shown_number(v)} is not a number")
        if number <= 0:
            raise UsageError(f"{path}: not a gpubench result: context {key} = {number:g} is not "
                             f"positive (an unknown value is written 'unknown')")
        lo, hi, what = CONTEXT_NUMBER_RANGES.get(key, CONTEXT_NUMBER_RANGES["peak"])
        if not lo <= number <= hi:
            raise UsageError(f"{path}: not a gpubench result: context {key} = {number:g} is beyond "
                             f"any device ({what})")


#: The longest context text a result may hold: gpubench's longest values (pcie_timing, the pids
#: of other_gpu_processes on a busy GPU) are a few hundred characters; a longer one is a forged
#: or damaged file, and would be carried into every line and label that names it.
MAX_CONTEXT_TEXT = 16384

#: The longest integer a result may hold: more digits than this cannot be a float (1.8e308).
_MAX_INT_DIGITS = 308


def _json_int(path: Path, what: str = "result"):
    """json.loads's parse_int for an input file: an integer longer than any real one is a
    UsageError naming the file (Python's int() refuses more than 4300 digits with a ValueError,
    and slowly)."""
    def parse(s: str) -> int:
        if len(s.lstrip("-")) > _MAX_INT_DIGITS:
            raise UsageError(f"{path}: not a gpubench {what}: an integer of "
                             f"{len(s.lstrip('-'))} digits is not a number")
        return int(s)
    return parse


#: Google Benchmark's entry kinds: a repetition (or a failed one) and an aggregate over them.
RUN_TYPES = ("iteration", "aggregate")


def check_entry_once(entry: dict, name: str, i: int, seen: dict[tuple, int], path: Path) -> None:
    """UsageError ("not a gpubench result") for an entry whose run_type Google Benchmark does not
    write (absent, or unknown: the tools took it for a repetition, and one without `verified`
    for a wrong output), and for a repetition or aggregate of `name` the file already holds (a
    benchmarks list concatenated twice: its samples pooled twice inflated the comparator's
    evidence). `seen` maps (name, kind, index) to the entry that had it."""
    kind = entry.get("run_type")
    if kind not in RUN_TYPES:
        shown = "no run_type" if "run_type" not in entry else \
            f"run_type {json.dumps(kind, default=str)[:40]}"
        raise UsageError(f"{path}: not a gpubench result: benchmarks[{i}] ({name}) has {shown}, "
                         f"not 'iteration' or 'aggregate'")
    if kind == "aggregate":
        key, what = (name, kind, str(entry.get("aggregate_name"))), \
            f"its {str(entry.get('aggregate_name'))[:40]} aggregate"
    elif "repetition_index" in entry:
        key, what = (name, kind, json.dumps(entry["repetition_index"], default=str)), \
            f"repetition {json.dumps(entry['repetition_index'], default=str)[:40]}"
    else:
        return  # (a file of a Google Benchmark that numbers no repetition)
    if key in seen:
        raise UsageError(f"{path}: not a gpubench result: {name} has {what} twice "
                         f"(benchmarks[{seen[key]}] and [{i}]): one run's entries repeated")
    seen[key] = i


#: A context's device_ordinal: the CUDA index as gpubench writes it (std::to_string, so no sign
#: and no leading zero), or "host" on the host backend.
_ORDINAL_RE = re.compile(r"host|0|[1-9][0-9]{0,5}")


def check_device_ordinal(ctx: dict, path: Path) -> None:
    """UsageError ("not a gpubench result") for a device_ordinal gpubench never writes ("-1",
    "01", "gpu0"): the fleet and the acceptance run name a GPU by it, and "-1" or "01" named a
    GPU no node has, or one GPU twice."""
    ordinal = ctx.get("device_ordinal")
    if isinstance(ordinal, str) and not _ORDINAL_RE.fullmatch(ordinal):
        raise UsageError(f"{path}: not a gpubench result: context device_ordinal "
                         f"{json.dumps(ordinal)[:40]} is neither a CUDA device number nor 'host'")


def _bench_name(entry: dict) -> str:
    raw = entry.get("run_name") or entry.get("name") or ""
    return str(raw)


#: The deepest nesting of lists and objects a result may have: gpubench writes 4 levels (the
#: context's `caches` list of objects); a document nested deeper is forged or damaged, and one
#: nested thousands deep overflows the parser's stack (a RecursionError named no file).
MAX_JSON_DEPTH = 64


def parse_json(text: str, path: Path, what: str = "result"):
    """json.loads of an input file's text; every way it is not JSON (truncated, a number
    Python will not convert, nested deeper than MAX_JSON_DEPTH) is a UsageError naming `path`:
    shared by the result files and the fleet's failure records, so that the stores' readers can
    pass over (or name) the file."""
    try:
        doc = json.loads(text, parse_int=_json_int(path, what))
    except json.JSONDecodeError as e:
        which = "" if what == "result" else f"{what} is "  # ("... failure record is not valid JSON")
        raise UsageError(f"{path}: {which}not valid JSON (truncated or corrupt?): {e.msg} at line "
                         f"{e.lineno} column {e.colno}") from None
    except RecursionError:  # deeper than the parser's stack
        doc = _TOO_DEEP
    except ValueError as e:  # a number Python's parser will not convert
        raise UsageError(f"{path}: not a gpubench {what}: a value is not a number ({e})") from None
    if doc is _TOO_DEEP or _depth_over(doc, MAX_JSON_DEPTH):
        raise UsageError(f"{path}: not a gpubench {what}: nested too deeply (more than "
                         f"{MAX_JSON_DEPTH} levels of lists and objects)")
    if _SURROGATE_ESCAPE_RE.search(text):
        lone = _lone_surrogate(doc)
        if lone is not None:
            raise UsageError(f"{path}: not a gpubench {what}: the text {visible(lone)[:60]!r} holds an "
                             f"unpaired UTF-16 surrogate escape, which no UTF-8 writer produces")
    return doc


#: A \uD800-\uDFFF escape in JSON text: the only way a surrogate gets into a parsed string (the
#: text itself is decoded from UTF-8); a pair is one character once parsed, a lone one is not.
_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(doc) -> str | None:
    """The first key or text of `doc` holding a lone surrogate (printing or writing it as UTF-8
    raised: a traceback in the plots, the report and run_cost), or None."""
    stack = [doc]
    while stack:
        node = stack.pop()
        items = list(node.items()) if isinstance(node, dict) else [(None, v) for v in node] \
            if isinstance(node, list) else []
        for key, value in items:
            for text in (key, value):
                if isinstance(text, str) and _SURROGATE_RE.search(text):
                    return text
            if isinstance(value, (dict, list)):
                stack.append(value)
    return None


_TOO_DEEP = object()


def _depth_over(doc, limit: int) -> bool:
    """Whether lists and objects nest more than `limit` deep (iterative: a check that recursed
    would overflow where the parser did not)."""
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False


def load_result(path: Path | str) -> Result:
    """Reads and validates a gpubench result; UsageError with a one-line reason on bad input."""
    path = Path(path)
    data = read_input(path)  # a FIFO or a device is refused, never read
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: cannot read ({e})") from None
    if not text.strip():
        raise UsageError(f"{path}: empty file, not a gpubench result")
    return parse_result(parse_json(text, path), path)


def parse_result(doc, path: Path | str = "<memory>") -> Result:
    """Validates an already parsed JSON document (see load_result)."""
    path = Path(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("context"), dict) \
            or not isinstance(doc.get("benchmarks"), list):
        raise UsageError(f"{path}: not a gpubench result: expected Google Benchmark JSON with a "
                         f"'context' object and a 'benchmarks' list")
    ctx = doc["context"]
    if "gpubench_version" not in ctx:
        raise UsageError(f"{path}: not a gpubench result: its context has no 'gpubench_version' "
                         f"(written by another Google Benchmark program?)")
    for k in TEXT_CONTEXT:
        if k in ctx and not isinstance(ctx[k], str):
            shown = "null" if ctx[k] is None else json.dumps(ctx[k], default=str)[:40] \
                if not isinstance(ctx[k], int) else _shown_number(ctx[k])
            raise UsageError(f"{path}: not a gpubench result: context {k} = {shown} is a "
                             f"{'null' if ctx[k] is None else type(ctx[k]).__name__}, not a string")
    for k, v in ctx.items():
        if isinstance(v, str) and len(v) > MAX_CONTEXT_TEXT or len(str(k)) > MAX_CONTEXT_TEXT:
            raise UsageError(f"{path}: not a gpubench result: context {str(k)[:40]!r} holds "
                             f"{max(len(str(k)), len(v) if isinstance(v, str) else 0)} characters "
                             f"(gpubench writes at most a few hundred)")
    missing = [k for k in REQUIRED_CONTEXT if not str(ctx.get(k, "")).strip()]
    if missing:
        raise UsageError(f"{path}: gpubench result lacks context keys: {', '.join(missing)}")
    check_context_numbers(ctx, path)
    check_device_ordinal(ctx, path)
    if not doc["benchmarks"]:  # gpubench refuses a filter that selects nothing, and skips are rows
        raise UsageError(f"{path}: not a gpubench result: its benchmarks list is empty (gpubench writes "
                         f"a row for every benchmark it selected, skipped ones included)")
    benches: dict[str, Benchmark] = {}
    seen: dict[tuple, int] = {}  # entry_key() -> its index
    for i, entry in enumerate(doc["benchmarks"]):
        if not isinstance(entry, dict):
            raise UsageError(f"{path}: benchmarks[{i}] is not an object")
        raw = _bench_name(entry)
        m = NAME_RE.match(raw)
        if not m:
            raise UsageError(f"{path}: benchmarks[{i}] name '{raw}' is not "
                             f"family/kernel/variant/params")
        name = "/".join(m.groups())
        b = benches.get(name)
        if b is None:
            params = {}
            for kv in m.group(4).split(","):
                k, _, v = kv.partition(":")
                params[k] = v
            b = Benchmark(name=name, family=m.group(1), kernel=m.group(2), variant=m.group(3),
                          params=params)
            benches[name] = b
        check_measured_counters(entry, f"benchmarks[{i}] ({raw})", path)
        check_entry_once(entry, name, i, seen, path)
        if not b.label_fields:
            b.label_fields = parse_row_label(entry.get("label"))
        if entry.get("error_occurred"):
            b.errors.append(str(entry.get("error_message") or "error (no message)"))
        elif entry.get("run_type") == "aggregate":
            b.aggregates[str(entry.get("aggregate_name", ""))] = entry
        else:
            b.samples.append(entry)
    for b in benches.values():
        b.meaning = resolve_meaning(b)
    return Result(path=path, context=ctx, benchmarks=benches)


def result_identity(r: Result) -> str:
    """A digest of what a result holds: its context and every entry, benchmark by benchmark.
    Two files with the same identity are the same run whatever their names or formatting (a
    link, a copy, a re-indented file)."""
    doc = [r.context, [[b.name, b.samples, b.aggregates, b.errors] for b in r.benchmarks.values()]]
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()
