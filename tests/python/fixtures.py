"""Hand-made result documents that follow gpubench's JSON contract, for tests that need a GPU
result (no GPU here). Every number in them is SYNTHETIC, chosen to exercise the code, and never
presented as a measurement; tests that need measured data use real host runs (conftest.py).

memory_result("cuda" | "host") holds the rows of the memory family (alone; memory_rows() gives
them to add to another document), labelled as gpubench writes them.

Two forms: h100_result() is a LEGACY file (no `label` on its entries, as gpubench wrote before
rows carried their meaning: the tools fall back to legacy_row_meaning()), h100_result(labelled=True)
the current form, every entry labelled `peak=... metric=... level=... sweep=...`, with the
shared-memory row, a pointer chase and rows skipped as "not on the cuda backend".
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

H100_CONTEXT = {
    # Google Benchmark's own keys.
    "date": "2026-11-22T01:00:00+00:00", "host_name": "fixture", "executable": "gpubench",
    "num_cpus": 2, "mhz_per_cpu": 2000, "cpu_scaling_enabled": False, "caches": [],
    "library_build_type": "release",
    # gpubench's keys (strings, "unknown" where not known).
    "gpubench_version": "0.1.0", "git_revision": "fixture0", "backend": "cuda",
    "device_name": "NVIDIA H100 80GB HBM3",
    "device_key": "nvidia_h100_80gb_hbm3_80gib_cc90_drv550_cuda12.4",
    "cc": "9.0", "sm_count": "132", "sm_clock_MHz": "1980", "mem_clock_MHz": "2619",
    "bus_width_bits": "5120", "l2_bytes": "52428800", "memory_bytes": "85899345920",
    "peak_dram_GBps": "3350", "peak_fp32_TFLOPS": "66.9", "peak_fp16_tensor_TFLOPS": "989",
    "peak_pcie_h2d_GBps": "63.0154", "peak_pcie_d2h_GBps": "63.0154",
    "peaks_source": "card table: h100_sxm", "driver_version": "550.54.15",
    "runtime_version": "12.4", "cache_policy": "l2_flush_before_each_sample",
    "byte_convention": "read+write", "quick": "false", "run_started_utc": "2026-11-22T01:00:00Z",
}


def label(peak: str, metric: str, level: str, sweep: str) -> str:
    """A row label as gpubench writes it."""
    return f"peak={peak} metric={metric} level={level} sweep={sweep}"


def entries(name: str, values: list[dict], manual_time: bool = True,
            label: str | None = None) -> list[dict]:
    """Per-repetition entries plus mean/median/stddev/cv aggregates, as Google Benchmark writes
    them for `name` with one dict of counters per repetition (each with `label` when given)."""
    run_name = name + ("/manual_time" if manual_time else "")
    out = []
    reps = len(values)
    for i, counters in enumerate(values):
        e = {"name": run_name, "family_index": 0, "per_family_instance_index": 0,
             "run_name": run_name, "run_type": "iteration", "repetitions": reps,
             "repetition_index": i, "threads": 1, "iterations": 10, "real_time": 1.0,
             "cpu_time": 1.0, "time_unit": "ms"}
        e.update(counters)
        if label is not None:
            e["label"] = label
        out.append(e)
    if reps > 1:
        import statistics
        keys = [k for k, v in values[0].items() if isinstance(v, (int, float))]
        for agg in ("mean", "median", "stddev", "cv"):
            e = {"name": f"{run_name}_{agg}", "family_index": 0, "per_family_instance_index": 0,
                 "run_name": run_name, "run_type": "aggregate", "repetitions": reps,
                 "threads": 1, "aggregate_name": agg, "iterations": reps, "real_time": 1.0,
                 "cpu_time": 1.0, "time_unit": "ms"}
            if label is not None:
                e["label"] = label
            for k in keys:
                col = [v[k] for v in values]
                m = statistics.mean(col)
                e[k] = {"mean": m, "median": statistics.median(col),
                        "stddev": statistics.stdev(col),
                        "cv": statistics.stdev(col) / m if m else 0}[agg]
            out.append(e)
    return out


def error_entry(name: str, message: str, label: str | None = None, repetition: int = 0) -> dict:
    """An entry for a benchmark that failed or was skipped (SkipWithError); `repetition` its
    repetition_index (after the repetitions that ran: each index appears once in a file)."""
    e = {"name": name + "/manual_time", "run_name": name + "/manual_time",
         "run_type": "iteration", "repetitions": 1, "repetition_index": repetition, "threads": 1,
         "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "ms",
         "error_occurred": True, "error_message": message}
    if label is not None:
        e["label"] = label
    return e


def _reps(base: dict, spread: float = 0.004, n: int = 5) -> list[dict]:
    """n repetitions around `base` (deterministic small spread on the throughput counters)."""
    out = []
    for i in range(n):
        f = 1.0 + spread * (i - (n - 1) / 2)
        d = dict(base)
        for k in ("GB/s", "sector_GB/s", "TFLOPS", "pct_of_peak", "latency_ns"):
            if k in d:
                d[k] = d[k] * f
        out.append(d)
    return out


#: Shared-memory bandwidth of an H100 SXM in the context of labelled fixtures (GB/s).
PEAK_SMEM_GBPS = "33400"


def h100_result(labelled: bool = False) -> dict:
    """A synthetic H100 result with every plot's data: size sweep, strided, PCIe, GEMM, sweep.

    labelled=False: the legacy form (no labels: the tools derive each row's meaning from its
    name). labelled=True: every entry labelled as gpubench writes it now (the 4 MiB copy, below
    L2/2, is cache-resident: peak=l2, no pct_of_peak), plus the shared-memory row (and
    peak_smem_GBps in the context), a pointer chase (metric latency_ns) and two rows skipped as
    "not on the cuda backend"."""
    lab = (lambda *f: label(*f)) if labelled else (lambda *f: None)
    half_l2 = float(H100_CONTEXT["l2_bytes"]) / 2
    b = []
    mem = {"verified": 1, "throttled": 0, "sm_clock_MHz": 1980, "mem_clock_MHz": 2619}
    for tok, ws, gbps in (("4MiB", 8 << 20, 6100.0), ("64MiB", 128 << 20, 3300.0),
                          ("1GiB", 2 << 30, 2950.0)):
        level = "l2" if labelled and ws < half_l2 else "dram"
        pct = {} if level == "l2" else {"pct_of_peak": gbps / 33.5}
        b += entries(f"bandwidth/copy/kernel/bytes:{tok}",
                     _reps({**mem, "GB/s": gbps, **pct,
                            "working_set_bytes": ws, "ops_per_iteration": 1}),
                     label=lab(level, "GBps", level, "bytes"))
        b += entries(f"bandwidth/copy/memcpy_ce/bytes:{tok}",
                     _reps({**mem, "GB/s": gbps * 0.97, "working_set_bytes": ws,
                            "ops_per_iteration": 1}),
                     label=lab(level, "GBps", level, "bytes"))
    for stride, useful in ((1, 2900.0), (2, 1500.0), (8, 370.0)):
        b += entries(f"bandwidth/strided/kernel/bytes:1GiB,stride:{stride}",
                     _reps({**mem, "GB/s": useful, "sector_GB/s": useful * min(stride, 8),
                            "working_set_bytes": 2 << 30, "ops_per_iteration": 1}),
                     label=lab("dram", "GBps", "dram", "stride"))
    for tok, gbps in (("64KiB", 8.0), ("16MiB", 50.0), ("256MiB", 55.0)):
        b += entries(f"bandwidth/pcie_h2d/memcpy_ce/bytes:{tok}",
                     _reps({**mem, "GB/s": gbps, "working_set_bytes": 1 << 20,
                            "ops_per_iteration": 1}),
                     label=lab("pcie_h2d", "GBps", "pcie", "bytes"))
    for n, tf, ref in ((1024, 20.0, 30.0), (4096, 40.0, 50.0)):
        fpb = 2 * n**3 / (3 * n * n * 4)
        b += entries(f"compute/sgemm/kernel/m:{n},n:{n},k:{n}",
                     _reps({**mem, "GB/s": tf * 1000 / fpb, "TFLOPS": tf, "flop_per_byte": fpb,
                            "pct_of_cublas": 100 * tf / ref, "working_set_bytes": 12 * n * n,
                            "ops_per_iteration": 1}),
                     label=lab("fp32", "TFLOPS", "none", "m"))
        b += entries(f"compute/sgemm/cublas/m:{n},n:{n},k:{n}",
                     _reps({**mem, "GB/s": ref * 1000 / fpb, "TFLOPS": ref,
                            "flop_per_byte": fpb, "working_set_bytes": 12 * n * n,
                            "ops_per_iteration": 1}),
                     label=lab("fp32", "TFLOPS", "none", "m"))
    for k in (1, 16, 256):
        fpb = 2 * k / 8  # one load + one store of 4 bytes per element
        tf = min(2900 * fpb / 1000, 60.0)
        b += entries(f"roofline/intensity/fp32/fma:{k},bytes:1GiB",
                     _reps({**mem, "GB/s": tf * 1000 / fpb, "TFLOPS": tf, "flop_per_byte": fpb,
                            "working_set_bytes": 2 << 30, "ops_per_iteration": 1}),
                     label=lab("fp32", "TFLOPS", "dram", "fma"))
    b.append(error_entry("bandwidth/gather/kernel/bytes:1GiB", "verification failed: out[7] = "
                         "0 expected 3", label=lab("dram", "GBps", "dram", "bytes")))
    doc = {"context": copy.deepcopy(H100_CONTEXT), "benchmarks": b}
    if labelled:
        doc["context"]["peak_smem_GBps"] = PEAK_SMEM_GBPS
        b += entries("bandwidth/smem/kernel/bytes:32KiB",
                     _reps({**mem, "GB/s": 30500.0, "pct_of_peak": 30500.0 / 334.0,
                            "working_set_bytes": 32 << 10, "ops_per_iteration": 1}),
                     label=label("smem", "GBps", "smem", "bytes"))
        for tok, ws, ns in (("16KiB", 16 << 10, 23.0), ("256MiB", 256 << 20, 345.0)):
            level = "l2" if ws < half_l2 else "dram"
            b += entries(f"bandwidth/chase/kernel/bytes:{tok}",
                         _reps({**mem, "GB/s": 8 / ns, "latency_ns": ns,
                                "working_set_bytes": ws, "ops_per_iteration": 1}),
                         label=label("none", "latency_ns", level, "bytes"))
        b.append(error_entry("bandwidth/pcie_h2d/pageable_memcpy/bytes:64KiB",
                             "skipped: not on the cuda backend: the host's pageable copy",
                             label=label("pcie_h2d", "GBps", "pcie", "bytes")))
        b.append(error_entry("bandwidth/copy/memcpy/bytes:64MiB",
                             "skipped: not on the cuda backend: host memcpy",
                             label=label("dram", "GBps", "dram", "bytes")))
    return doc


#: Context of the synthetic host result (the host backend knows no peaks: "unknown").
HOST_CONTEXT = {
    **{k: v for k, v in H100_CONTEXT.items() if not k.startswith("peak")},
    "backend": "host", "device_name": "Synthetic EPYC 9654 (host)",
    "device_key": "host_synthetic-epyc-9654_96cpu_768GiB", "cc": "unknown", "sm_count": "96",
    "l2_bytes": "402653184", "memory_bytes": "824633720832", "peaks_source": "unknown",
    "driver_version": "unknown", "runtime_version": "unknown",
    **{k: "unknown" for k in H100_CONTEXT if k.startswith("peak")},
}

#: Repetition factors of the memory fixtures: one outlier repetition, so a median over the
#: repetitions (1.01) differs from their mean (1.104) - a plot drawing the mean is caught.
MEMORY_REP_FACTORS = (1.0, 1.02, 0.99, 1.5, 1.01)

#: Memory-family rows the memory fixtures hold as failures: name -> error message. Skips (the
#: workloads' own reasons: an error entry alone) and failed verifications (repetitions with
#: numbers, then one that failed), each to be left out of every plot.
MEMORY_FAILURES = {
    "cuda": {
        "memory/alloc/host_register/bytes:16MiB": "verification failed: buffer[3] = 0 expected 7",
        "memory/managed/demand_fault/bytes:512MiB":
            "skipped: 512 MiB of managed memory is more than a quarter of the free device memory",
        "memory/overlap/cuda_streams/streams:8,bytes:256MiB":
            "verification failed: out[12] = 0 expected 2",
    },
    "host": {
        "memory/alloc/mmap/bytes:16MiB": "skipped: mmap failed: cannot allocate memory",
        "memory/first_touch/pages_2m/bytes:512MiB":
            "skipped: transparent huge pages are disabled (never)",
        "memory/overlap/host_threads/threads:8,bytes:256MiB":
            "verification failed: out[5] = 0 expected 4",
    },
}


def _memory_reps(base: dict, scaled: tuple[str, ...]) -> list[dict]:
    """One dict of counters per repetition: the `scaled` counters times MEMORY_REP_FACTORS."""
    out = []
    for f in MEMORY_REP_FACTORS:
        d = dict(base)
        for k in scaled:
            d[k] = base[k] * f
        out.append(d)
    return out


def memory_rows(backend: str) -> list[dict]:
    """The entries of the memory family (families/memory/cases.cpp) on `backend` ("cuda" or
    "host"), labelled as gpubench writes them, with SYNTHETIC values: every allocator's
    latency_us / p50_us / p99_us against size, the copy loops, the fragmentation rows (CUDA),
    managed memory (CUDA) or first touch (host), the overlap pipeline and AXPY in four
    precisions; the rows of MEMORY_FAILURES as error entries."""
    cuda = backend == "cuda"
    failures = MEMORY_FAILURES[backend]
    ok = {"verified": 1, "throttled": 0}
    b: list[dict] = []

    def add(name, base, scaled, row_label):
        reps = _memory_reps({**ok, **base}, scaled)
        message = failures.get(name, "")
        if message.startswith("skipped"):  # never ran: the reason alone
            b.append(error_entry(name, message, label=row_label))
        elif message:  # the last repetition's output was wrong: the others have numbers
            b.extend(entries(name, reps[:-1], label=row_label))
            b.append(error_entry(name, message, label=row_label, repetition=len(reps) - 1))
        else:
            b.extend(entries(name, reps, label=row_label))

    # allocate + free: a fixed cost (us) plus a per-MiB cost, p99 a tail above the median
    allocators = ({"cuda_malloc": (8.0, 0.5), "async_pool_miss": (30.0, 0.8),
                   "async_pool_hit": (1.5, 0.0), "preallocated": (0.2, 0.0),
                   "pinned_host": (50.0, 9.0), "host_register": (40.0, 6.0)} if cuda else
                  {"malloc": (0.05, 0.3), "mmap": (2.0, 0.25), "pool": (0.02, 0.0)})
    lat = label("none", "latency_us", "none", "bytes")
    for a, (fixed, per_mib) in allocators.items():
        for tok in ("4KiB", "64KiB", "1MiB", "16MiB"):
            us = fixed + per_mib * parse_mib(tok)
            add(f"memory/alloc/{a}/bytes:{tok}",
                {"GB/s": 0.0, "latency_us": us, "p50_us": us * 0.97, "p99_us": us * 1.8,
                 "working_set_bytes": parse_mib(tok) * (1 << 20)},
                ("latency_us", "p50_us", "p99_us"), lat)
    for how in (("cuda_malloc_each", "async_pool_each", "allocated_once") if cuda
                else ("malloc_each", "allocated_once")):
        for tok in ("1MiB", "16MiB"):
            gbps = (2500.0 if cuda else 60.0) * (1.0 if how == "allocated_once" else 0.3)
            add(f"memory/alloc_loop/{how}/bytes:{tok}",
                {"GB/s": gbps, "us_per_iteration": 12.0, "pct_of_peak": gbps / 33.5,
                 "working_set_bytes": 2 * parse_mib(tok) * (1 << 20)},
                ("GB/s", "us_per_iteration"), label("dram", "GBps", "dram", "bytes"))
    if cuda:
        for a in ("cuda_malloc", "async_pool"):
            add(f"memory/fragmentation/{a}/pattern:1MiB+64MiB",
                {"latency_us": 25.0, "largest_block_pct_of_free": 97.0,
                 "working_set_bytes": 64 << 20}, ("latency_us",),
                "peak=none metric=latency_us level=none")
        managed = {"demand_fault": 9.0, "prefetch": 40.0, "explicit_copy": 50.0,
                   "zero_copy": 25.0, "read_mostly": 8.0, "device_resident": 2600.0,
                   "to_host": 12.0}
        for how, gbps in managed.items():
            peak = {"device_resident": "dram", "to_host": "pcie_d2h"}.get(how, "pcie_h2d")
            level = "dram" if how == "device_resident" else "pcie"
            for tok in ("2MiB", "32MiB", "512MiB"):
                extra = ({"us_per_4KiB_page": 1.1, "us_per_2MiB_page": 95.0}
                         if how == "demand_fault" else {})
                add(f"memory/managed/{how}/bytes:{tok}",
                    {"GB/s": gbps * (0.5 + parse_mib(tok) / 1024), **extra,
                     "working_set_bytes": parse_mib(tok) * (1 << 20)},
                    ("GB/s",), label(peak, "GBps", level, "bytes"))
    else:
        for pages, gbps in (("pages_4k", 4.0), ("pages_2m", 11.0), ("populate", 7.5)):
            for tok in ("2MiB", "32MiB", "512MiB"):
                add(f"memory/first_touch/{pages}/bytes:{tok}",
                    {"GB/s": gbps * (0.8 + parse_mib(tok) / 2048),
                     "working_set_bytes": parse_mib(tok) * (1 << 20)},
                    ("GB/s",), label("none", "GBps", "dram", "bytes"))
    unit, engine = ("streams", "cuda_streams") if cuda else ("threads", "host_threads")
    for n in (1, 2, 4, 8):
        base = {"GB/s": (24.0 if cuda else 15.0) * (1 + 0.6 * (n > 1) + 0.1 * (n > 2)),
                "overlap_efficiency": 1.0 + 0.7 * (n > 1) + 0.2 * (n > 2),
                "working_set_bytes": 256 << 20}
        scaled = ["GB/s", "overlap_efficiency"]
        if cuda:
            base.update(kernel_slowdown=1.0 + 0.05 * n, bidir_copy_speedup=1.0 + 0.1 * (n > 1))
            scaled += ["kernel_slowdown", "bidir_copy_speedup"]
        add(f"memory/overlap/{engine}/{unit}:{n},bytes:256MiB", base, tuple(scaled),
            label("none", "GBps", "pcie" if cuda else "dram", unit))
    for precision, elem in (("fp64", 8), ("fp32", 4), ("fp16", 2), ("bf16", 2)):
        gbps = 3000.0 if cuda else 80.0
        add(f"memory/axpy/{precision}/bytes:256MiB",
            {"GB/s": gbps, "Gelem_per_s": gbps / (3 * elem), "pct_of_peak": gbps / 33.5,
             "working_set_bytes": 768 << 20}, ("GB/s", "Gelem_per_s"),
            label("dram", "GBps", "dram", "bytes"))
    return b


def parse_mib(token: str) -> float:
    """A size token of the fixtures in MiB ("4KiB" -> 0.00390625)."""
    for unit, mib in (("KiB", 1 / 1024), ("MiB", 1.0), ("GiB", 1024.0)):
        if token.endswith(unit):
            return float(token[: -len(unit)]) * mib
    raise ValueError(token)


def memory_result(backend: str) -> dict:
    """A synthetic result of the memory family alone on `backend` ("cuda": the H100 context;
    "host": a host context without peaks)."""
    ctx = H100_CONTEXT if backend == "cuda" else HOST_CONTEXT
    return {"context": copy.deepcopy(ctx), "benchmarks": memory_rows(backend)}


def strip_labels(doc: dict) -> dict:
    """A copy of a document without any `label`: the same rows as a legacy file holds them."""
    out = copy.deepcopy(doc)
    for e in out["benchmarks"]:
        e.pop("label", None)
    return out


def write_json(doc: dict, path: Path) -> Path:
    """Writes a document as JSON and returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1))
    return path
