"""Loading and validating one gpubench result file (Google Benchmark JSON).

A result is standard Google Benchmark JSON: `context` carries Google Benchmark's own keys plus
gpubench's (device, peaks as numbers-in-strings or "unknown", versions, cache policy), and
`benchmarks[]` holds one entry per repetition (`run_type: "iteration"`) plus aggregates
(`run_type: "aggregate"`, `aggregate_name` mean/median/stddev/cv), counters at the entry's top
level. This module groups the entries by benchmark name (family/kernel/variant/params) and
exposes per-repetition samples, so every other module reads results the same way.

Every problem with the file becomes a UsageError whose one-line message names the file.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UsageError

#: Context keys every gpubench result has; their absence means "not a gpubench result".
REQUIRED_CONTEXT = ("gpubench_version", "backend", "device_name", "device_key")

#: Benchmark names: family/kernel/variant/params (Google Benchmark may append /manual_time ...).
NAME_RE = re.compile(r"^(bandwidth|compute|roofline)/([a-z0-9_]+)/([a-z0-9_]+)/([A-Za-z0-9_:,.]+)")

#: Context keys of the theoretical peaks, by ceiling kind.
PEAK_KEYS = {
    "dram": "peak_dram_GBps",
    "fp32": "peak_fp32_TFLOPS",
    "fp16_tensor": "peak_fp16_tensor_TFLOPS",
    "pcie_h2d": "peak_pcie_h2d_GBps",
    "pcie_d2h": "peak_pcie_d2h_GBps",
}

#: Words that make a variant a library reference ("cublas", "memcpy_ce", "pageable_memcpy",
#: host "memcpy", ...); every other variant is a gpubench kernel ("kernel", or the precision of
#: the intensity sweep, "fp32"/"fp16").
LIBRARY_WORDS = ("cublas", "cutlass", "thrust", "cub", "memcpy", "memset", "std")

_SIZE_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


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
        return float(value) if math.isfinite(value) else None
    try:
        v = float(str(value).strip())
    except ValueError:
        return None
    return v if math.isfinite(v) else None


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
        """Any repetition ran with throttled clocks."""
        return any((to_number(s.get("throttled")) or 0) != 0 for s in self._entries())

    @property
    def metric(self) -> str:
        """The headline throughput: TFLOPS when the benchmark does FLOP, GB/s otherwise.

        (A benchmark reporting both, like the intensity sweep, derives them from the same time,
        so comparing one of them is enough.)
        """
        if any((to_number(s.get("TFLOPS")) or 0) > 0 for s in self._entries()):
            return "TFLOPS"
        return "GB/s"

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


def _bench_name(entry: dict) -> str:
    raw = entry.get("run_name") or entry.get("name") or ""
    return str(raw)


def load_result(path: Path | str) -> Result:
    """Reads and validates a gpubench result; UsageError with a one-line reason on bad input."""
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{path}: no such file")
    if path.is_dir():
        raise UsageError(f"{path}: is a directory, not a result file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: cannot read ({e})") from None
    if not text.strip():
        raise UsageError(f"{path}: empty file, not a gpubench result")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"{path}: not valid JSON (truncated or corrupt?): {e.msg} at line "
                         f"{e.lineno} column {e.colno}") from None
    return parse_result(doc, path)


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
    missing = [k for k in REQUIRED_CONTEXT if not str(ctx.get(k, "")).strip()]
    if missing:
        raise UsageError(f"{path}: gpubench result lacks context keys: {', '.join(missing)}")
    benches: dict[str, Benchmark] = {}
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
        if not entry.get("error_occurred") and entry.get("run_type") != "aggregate":
            # a repetition's figures are measured numbers: NaN or Infinity is a broken file
            # (aggregates may hold NaN legitimately: the cv of an all-zero counter)
            for k in ("GB/s", "TFLOPS", "real_time", "pct_of_peak"):
                v = entry.get(k)
                if isinstance(v, float) and not math.isfinite(v):
                    raise UsageError(f"{path}: benchmarks[{i}] ({raw}) has {k} = {v}, not a measured number")
        if entry.get("error_occurred"):
            b.errors.append(str(entry.get("error_message") or "error (no message)"))
        elif entry.get("run_type") == "aggregate":
            b.aggregates[str(entry.get("aggregate_name", ""))] = entry
        else:
            b.samples.append(entry)
    return Result(path=path, context=ctx, benchmarks=benches)
