"""Node acceptance: "is my number normal?"

The expected bands of harness/model/bands.csv (the same table the C++ harness embeds) applied to
a result: one verdict per band - PASS, WARN or FAIL - with the row it read, and for each verdict
that is not a PASS the likely causes gpubench can name from what the result recorded (the PCIe
link, NUMA placement, clocks and throttle reasons during the row, ECC errors and remapped rows,
other processes on the GPU, MIG). A card without bands gets its numbers and no verdict, said
plainly.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from .cards import REPO_ROOT, find_card_by_device_name, load_cards
from .errors import UsageError
from .results import Benchmark, Result, cache_plateau_rows, sustained_transfers

#: The table beside the tools when installed (`cmake --install`: bin/bands.csv), else the tree's.
_INSTALLED_BANDS = Path(__file__).resolve().parents[1] / "bands.csv"
BANDS_CSV = _INSTALLED_BANDS if _INSTALLED_BANDS.is_file() else REPO_ROOT / "harness" / "model" / "bands.csv"

HEADER = ["card", "check", "link", "reference", "pass_min", "warn_min", "max", "unit", "source"]

#: Each check: what the verdict line calls it.
CHECKS = {
    "dram_copy_pct_of_peak": "DRAM copy, % of peak",
    "l2_plateau_GBps": "L2 plateau (copy)",
    "pcie_h2d_GBps": "PCIe host to device, pinned",
    "pcie_d2h_GBps": "PCIe device to host, pinned",
    "cublas_sgemm_pct_of_peak": "cuBLAS SGEMM, % of FP32 peak",
    "cublas_hgemm_pct_of_peak": "cuBLAS FP16 GEMM, % of tensor peak",
    "sgemm_pct_of_cublas": "gpubench SGEMM, % of cuBLAS",
    "hgemm_pct_of_cublas": "gpubench FP16 GEMM, % of cuBLAS",
    "fp32_fma_pct_of_peak": "peak FP32 FMA, % of peak",
}

PASS, WARN, FAIL, NOT_MEASURED = "PASS", "WARN", "FAIL", "NOT MEASURED"
#: A GPU (or node) with a band no row measured: the acceptance run is incomplete, not passed.
INCOMPLETE = "INCOMPLETE"


@dataclass(frozen=True)
class Band:
    """One row of bands.csv."""

    card: str
    check: str
    link: str
    reference: float
    pass_min: float
    warn_min: float
    max: float | None
    unit: str
    source: str


def _number(text: str, where: str, column: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{where}: column {column} is not a number: {text!r}") from None
    if value < 0:
        raise UsageError(f"{where}: column {column} is negative")
    return value


def load_bands(path: Path | str = BANDS_CSV) -> list[Band]:
    """Parses bands.csv with the C++ parser's rules; UsageError naming the file and line."""
    path = Path(path)
    try:
        rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise UsageError(f"cannot read the expected bands {path}: {e}") from None
    if not rows or rows[0] != HEADER:
        raise UsageError(f"{path}: unexpected header (want {','.join(HEADER)})")
    bands = []
    for number, row in enumerate(rows[1:], start=2):
        where = f"{path} line {number}"
        if not row:
            continue
        if len(row) != len(HEADER):
            raise UsageError(f"{where}: expected {len(HEADER)} fields, got {len(row)}")
        card, check, link, ref, pass_min, warn_min, top, unit, source = row
        b = Band(card, check, link, _number(ref, where, "reference"), _number(pass_min, where, "pass_min"),
                 _number(warn_min, where, "warn_min"), _number(top, where, "max") if top else None, unit, source)
        if check not in CHECKS:
            raise UsageError(f"{where}: unknown check {check!r}")
        if unit not in ("%", "GB/s"):
            raise UsageError(f"{where}: unit {unit!r} is not % or GB/s")
        if b.warn_min > b.pass_min:
            raise UsageError(f"{where}: warn_min is above pass_min")
        if (check.startswith("pcie_")) != bool(link):
            raise UsageError(f"{where}: a link goes with the PCIe checks and only them")
        if not source:
            raise UsageError(f"{where}: no source")
        bands.append(b)
    return bands


def link_key(link_text: str) -> str:
    """'gen5x16' from the context's 'Gen5 x16' ('' when unknown)."""
    m = re.fullmatch(r"\s*Gen(\d+)\s*x(\d+)\s*", link_text or "")
    return f"gen{m.group(1)}x{m.group(2)}" if m else ""


def bands_for(card_key: str, link: str, bands: list[Band]) -> list[Band]:
    """The card's own rows, then its link's rows for checks it has none of (as the C++
    harness's bands_for)."""
    own = [b for b in bands if card_key and b.card == card_key and (not b.link or b.link == link)]
    checks = {b.check for b in own}
    return own + [b for b in bands if b.card == "*" and link and b.link == link and b.check not in checks]


# ------------------------------------------------------------------------------ measurements

@dataclass
class Measurement:
    """What a check read: the value and the row it came from."""

    value: float
    row: Benchmark


def _trusted(rows: list[Benchmark]) -> list[Benchmark]:
    return [b for b in rows if b.ok and not b.verification_failed]


def _best(rows: list[Benchmark], counter: str) -> Measurement | None:
    scored = [(b.median(counter), b) for b in rows if b.median(counter) is not None]
    if not scored:
        return None
    value, row = max(scored, key=lambda s: s[0])
    return Measurement(value, row)


def _rows(result: Result, kernel: str, variant: str | None = None) -> list[Benchmark]:
    return [b for b in result.benchmarks.values() if b.kernel == kernel and (variant is None or b.variant == variant)]


def _in_cache(result: Result, b: Benchmark) -> bool:
    """The row targets the L2: its label says so; files written before rows carried labels
    by gpubench's own rule, a working set below half the L2."""
    if b.labelled:
        return b.level == "l2"
    l2, size = result.ctx_number("l2_bytes"), b.size_bytes()
    return bool(l2 and size and size < l2 / 2)


def _copy_rows(result: Result, level: str) -> list[Benchmark]:
    rows = [b for b in _rows(result, "copy", "kernel") if b.family == "bandwidth"]
    return [b for b in rows if _in_cache(result, b) == (level == "l2")]


def measure(check: str, result: Result) -> tuple[Measurement | None, list[Benchmark]]:
    """The value a check reads from the result, and the rows it looked at (so that a row which
    ran but failed verification can be named)."""
    if check == "dram_copy_pct_of_peak":
        # The largest working set beyond the cache, as the summary's DRAM headline.
        rows = _copy_rows(result, "dram")
        good = [b for b in _trusted(rows) if b.size_bytes() and b.median("pct_of_peak") is not None]
        if not good:
            return None, rows
        top = max(good, key=lambda b: b.size_bytes())
        return Measurement(top.median("pct_of_peak"), top), rows
    if check == "l2_plateau_GBps":
        rows = _copy_rows(result, "l2")
        return _best(cache_plateau_rows(_trusted(rows), result.ctx_number("l2_bytes")), "GB/s"), rows
    if check in ("pcie_h2d_GBps", "pcie_d2h_GBps"):
        # The sustained rate the band was read at: 256 MiB or more (the largest size on --quick).
        rows = _rows(result, check[: -len("_GBps")], "pinned_ce")
        return _best(sustained_transfers(_trusted(rows)), "GB/s"), rows
    if check in ("cublas_sgemm_pct_of_peak", "cublas_hgemm_pct_of_peak"):
        rows = _rows(result, check.split("_")[1], "cublas")
        return _best(_trusted(rows), "pct_of_peak"), rows
    if check in ("sgemm_pct_of_cublas", "hgemm_pct_of_cublas"):
        rows = _rows(result, check.split("_")[0], "kernel")
        return _best(_trusted(rows), "pct_of_cublas"), rows
    if check == "fp32_fma_pct_of_peak":
        rows = _rows(result, "peak_fp32_fma")
        return _best(_trusted(rows), "pct_of_peak"), rows
    raise ValueError(f"unknown check {check}")


# ---------------------------------------------------------------------------------- causes

def _count(text: str) -> int | None:
    """The count a context value starts with ("3", "2 (pids ...)"); None when there is none,
    or when its digits run longer than any real count (a damaged or hostile file: Python's
    int() refuses more than 4300 digits): unknown, as an absent value."""
    m = re.match(r"\s*(\d+)", text or "")
    if not m or len(m.group(1)) > 18:
        return None
    return int(m.group(1))


def _general_causes(result: Result) -> list[str]:
    """What slows every row of the GPU."""
    causes = []
    others = result.ctx("other_gpu_processes")
    if (_count(others) or 0) > 0:
        causes.append(f"other processes were using the GPU: {others}")
    if result.ctx("mig_mode") == "on":
        causes.append("MIG is on: the run saw one GPU instance, not the whole GPU")
    return causes


def _memory_causes(result: Result) -> list[str]:
    causes = []
    for key, what in (("ecc_errors_uncorrected_volatile", "uncorrectable ECC errors since the driver loaded"),
                      ("remapped_rows_uncorrectable", "rows remapped for uncorrectable errors")):
        n = _count(result.ctx(key))
        if n:
            causes.append(f"{what}: {n}")
    for key, what in (("row_remap_failure", "a row remapping failed (the GPU needs service)"),
                      ("row_remap_pending", "a row remapping is pending (the GPU needs a reset)"),
                      ("retired_pages_pending", "a page retirement is pending (the GPU needs a reset)")):
        if result.ctx(key) == "yes":
            causes.append(what)
    if result.ctx("ecc_mode") == "off" and result.backend == "cuda":
        causes.append("ECC is off (a different configuration from the one the bands were measured in)")
    return causes


def _link_causes(result: Result) -> list[str]:
    causes = []
    now, top = result.ctx("pcie_link"), result.ctx("pcie_link_max")
    if link_key(now) and link_key(top) and link_key(now) != link_key(top):
        causes.append(f"PCIe link trained at {now}, below its maximum {top} (reseat the card, check the slot "
                      "and the BIOS link settings)")
    warning = result.ctx("pcie_link_warning")
    if warning and warning != "none":
        causes.append(f"PCIe path: {warning}")
    gpu_node, cpu_node = result.ctx("gpu_numa_node"), result.ctx("bench_cpu_numa_node")
    if gpu_node.isdigit() and cpu_node.isdigit() and gpu_node != cpu_node:
        causes.append(f"the benchmark ran on NUMA node {cpu_node}, the GPU sits on node {gpu_node} "
                      f"(numa_bind: {result.ctx('numa_bind') or 'not recorded'}; gpubench binds to the GPU's "
                      "node unless --no-numa-bind, or bind the job to the GPU's CPUs)")
    return causes


def _max_sm_clock(result: Result) -> float | None:
    m = re.match(r"\s*sm (\d+)", result.ctx("nvml_max_clocks_MHz"))
    return float(m.group(1)) if m else None


def _clock_causes(result: Result, row: Benchmark | None) -> list[str]:
    if row is None:
        return []
    causes = []
    if row.throttled:
        causes.append(f"clocks were throttled during {row.name} (thermal or hardware slowdown; "
                      "see nvidia-smi -q -d PERFORMANCE)")
    if row.power_capped:
        causes.append(f"the software power cap held the clocks during {row.name} (nvidia-smi -q -d POWER "
                      "shows the limit; a limit below the card's default lowers every heavy row)")
    top, low = _max_sm_clock(result), row.median("sm_clock_min_MHz")
    if top and low and low < 0.9 * top:
        causes.append(f"the SM clock fell to {low:.0f} MHz during the row (maximum {top:.0f} MHz)")
    return causes


def likely_causes(check: str, result: Result, row: Benchmark | None) -> list[str]:
    """What the result knows that would explain a low number for this check."""
    causes = _general_causes(result) + _clock_causes(result, row)
    if check.startswith("pcie_"):
        causes += _link_causes(result)
    elif check in ("dram_copy_pct_of_peak", "l2_plateau_GBps"):
        causes += _memory_causes(result)
    return causes


# --------------------------------------------------------------------------------- verdicts

@dataclass
class Verdict:
    """One band and the verdict on the result."""

    check: str
    what: str
    band: Band
    verdict: str  #: PASS, WARN, FAIL or NOT MEASURED
    value: float | None = None
    row: str = ""
    why: str = ""  #: what the verdict means in words
    causes: list[str] = field(default_factory=list)


def fmt(value: float) -> str:
    """Three significant figures without an exponent (7100, 55.1, 0.512)."""
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def judge(value: float, band: Band) -> tuple[str, str]:
    """The verdict on a value and its reason."""
    unit = band.unit
    if band.max is not None and value > band.max:
        return WARN, (f"{fmt(value)} {unit} is above what this card can do ({band.max:g} {unit}): a cache-resident "
                      "working set, a wrong peak in the card table, or a timing fault")
    if value >= band.pass_min:
        return PASS, f"{fmt(value)} {unit} >= {band.pass_min:g} {unit}"
    if value >= band.warn_min:
        return WARN, f"{fmt(value)} {unit} is below the pass band ({band.pass_min:g}) but above {band.warn_min:g} {unit}"
    return FAIL, f"{fmt(value)} {unit} is below {band.warn_min:g} {unit} (healthy: >= {band.pass_min:g})"


@dataclass
class GpuVerdict:
    """The acceptance of one GPU: its bands' verdicts and its own."""

    host: str
    gpu: str
    device_name: str
    card_key: str
    files: list[str]
    verdicts: list[Verdict]
    note: str = ""  #: why there is no verdict, when there is none
    #: the checks no band covers for this GPU, each with the reason ("no band for H100 PCIe")
    unjudged: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """FAIL if a band failed, INCOMPLETE if one was not measured, WARN if one warned, PASS
        if all passed, NO BANDS without a band."""
        if not self.verdicts:
            return "NO BANDS"
        seen = {v.verdict for v in self.verdicts}
        for v in (FAIL, NOT_MEASURED, WARN):
            if v in seen:
                return INCOMPLETE if v == NOT_MEASURED else v
        return PASS


def merge_gpu_results(results: list[Result]) -> Result:
    """One GPU's results as one (--device=all writes its own rows and its link rows in two
    files): the first file's context, every file's rows."""
    first = results[0]
    benchmarks = {}
    for r in results:
        benchmarks.update(r.benchmarks)
    return Result(first.path, dict(first.context), benchmarks)


def _unjudged(applicable: list[Band], card_key: str, result: Result, link: str) -> list[str]:
    """The checks without a band for this GPU, each with why: said plainly, never dropped."""
    have = {b.check for b in applicable}
    out = []
    for check, what in CHECKS.items():
        if check in have:
            continue
        if check.startswith("pcie_"):
            why = f"no band for a {link} link" if link else "the PCIe link is unknown"
        elif card_key == "none":
            why = f"{result.device_name} is not in the card table"
        else:
            why = f"no sourced figure for {card_key} (harness/model/bands.csv)"
        out.append(f"{what}: {why}")
    return out


def _card_by_name(device_name: str) -> str:
    """The card table's key for results written before the context named it."""
    card = find_card_by_device_name(device_name, load_cards())
    return card.key if card else "none"


def evaluate_gpu(result: Result, bands: list[Band], files: list[str] | None = None) -> GpuVerdict:
    """The verdicts of one GPU's (merged) result against its card's bands."""
    card_key = result.ctx("card_key") or _card_by_name(result.device_name)
    gpu = GpuVerdict(result.ctx("host_name", "unknown"), result.ctx("device_ordinal", "unknown"),
                     result.device_name, card_key, files or [str(result.path)], [])
    if result.backend != "cuda":
        gpu.note = "no expected bands on the host backend: numbers without a verdict"
        return gpu
    link = link_key(result.ctx("pcie_link_max")) or link_key(result.ctx("pcie_link"))
    applicable = bands_for("" if card_key == "none" else card_key, link, bands)
    if not applicable:
        gpu.note = f"no expected bands for {result.device_name}: numbers without a verdict"
        return gpu
    gpu.unjudged = _unjudged(applicable, card_key, result, link)
    for band in applicable:
        found, looked_at = measure(band.check, result)
        v = Verdict(band.check, CHECKS[band.check], band, NOT_MEASURED)
        if found is None:
            failed = [b.name for b in looked_at if b.verification_failed]
            if failed:
                v.verdict, v.why = FAIL, f"{failed[0]} failed verification"
                v.causes = ["a wrong result: see error_message in the result file"]
            else:
                v.why = "no row of the result measures it (run gpubench --validate)"
            gpu.verdicts.append(v)
            continue
        v.value, v.row = found.value, found.row.name
        v.verdict, v.why = judge(found.value, band)
        if v.verdict != PASS:
            v.causes = likely_causes(band.check, result, found.row) or [
                "none gpubench can see (compare with the other GPUs of the node and the fleet)"]
        gpu.verdicts.append(v)
    return gpu


def group_by_gpu(results: list[Result]) -> list[tuple[str, str, list[Result]]]:
    """The results by (host, device ordinal), in the order first seen. Results of one host and
    ordinal must be of one device: a file without an ordinal (older ones) from another device
    or backend (a host run, an H100 run of the same machine name) was merged into the first, and
    one device was judged with the other's rows (UsageError)."""
    groups: dict[tuple[str, str], list[Result]] = {}
    for r in results:
        rs = groups.setdefault((r.ctx("host_name", "unknown"), r.ctx("device_ordinal", "unknown")), [])
        if rs and r.device_key != rs[0].device_key:
            raise UsageError(f"{rs[0].path} and {r.path} are runs of different devices ({rs[0].device_key}, "
                             f"{r.device_key}) with one host name and GPU ordinal: give one device's results")
        check_complementary(rs, r)
        rs.append(r)
    return [(host, gpu, rs) for (host, gpu), rs in groups.items()]


def check_complementary(earlier: list[Result], r: Result) -> None:
    """UsageError when `r` measures a benchmark one of `earlier` (files of its GPU) measures too:
    one GPU's files are read as one only when they hold different rows (--device=all's
    --row-scope=local and links halves); two whole runs (or one file given twice, or a copy)
    were merged, the later file's rows silently replacing the earlier's, so the verdict
    depended on the order of the files."""
    for other in earlier:
        shared = next((name for name in other.benchmarks if name in r.benchmarks), None)
        if shared is None:
            continue
        if Path(other.path).resolve() == Path(r.path).resolve():
            raise UsageError(f"{r.path} is given twice")
        raise UsageError(f"{other.path} and {r.path} are two runs of one GPU ({r.ctx('host_name', 'unknown')} "
                         f"GPU {r.ctx('device_ordinal', 'unknown')}) that both measure {shared}: give one run "
                         f"per GPU (a --device=all run's local and links halves measure different rows)")


def evaluate(results: list[Result], bands: list[Band]) -> list[GpuVerdict]:
    """Every GPU's verdicts."""
    return [evaluate_gpu(merge_gpu_results(rs), bands, [str(r.path) for r in rs]) for _, _, rs in group_by_gpu(results)]


def node_verdict(gpus: list[GpuVerdict]) -> str:
    """The node's verdict: the worst GPU's (NO BANDS when no GPU had a band)."""
    seen = {g.verdict for g in gpus}
    for v in (FAIL, INCOMPLETE, WARN, PASS):
        if v in seen:
            return v
    return "NO BANDS"
