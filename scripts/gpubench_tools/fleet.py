"""Fleet outliers: one card on many nodes and GPUs, and the ones that do not look like the rest.

Cluster operators run gpubench on every node of a partition (scripts/slurm/gpubench_fleet.sbatch
writes every GPU's result into one results store) and want the odd GPU named. This module reads
such a store and judges every (node, GPU) against the fleet.

What is read:
- every `*.json` under the store, recursively, is a gpubench result (results.load_result), except
  hidden files (gpubench's and the batch script's temporary files start with ".") and the
  `_failed/` folder, which holds the batch script's failure records (FailureRecord);
- a result names its node and GPU in its context: `host_name` (the node: its short name, up to
  the first ".", so "n01" and "n01.cluster" are one node, as Slurm names them) and
  `device_ordinal` (the CUDA ordinal, "host" on the host backend). A result without them is bad
  input;
- one card per store. The card of a result is its backend, its `device_name` and its
  `device_key` without the driver and CUDA parts (`h100_80gb_hbm3-79gib-sm90-drv580-cuda13.0`
  -> `h100_80gb_hbm3-79gib-sm90`): the key says the card (its name's slug, memory, compute
  capability), and the name is compared too, so two names that slug alike stay apart. Nodes
  on different drivers or CUDA runtimes are one fleet (the report lists the versions seen, a
  likely cause of an outlier); two cards in one store are bad input.

The judgement, per headline metric (report.headlines(): DRAM copy, cache plateau, PCIe per
direction, SGEMM, FP16 GEMM, peak FMA per kernel; matched by the headline's `what`):
- each (node, GPU) contributes the value from its newest result that has the metric (newest by
  `run_started_utc`, then by store file name): `--device=all` writes a GPU's own rows and its
  PCIe rows into two results, a phase apart, and a later run with a narrower filter must not
  hide what an earlier one measured. The results that give a GPU's values, and its newest
  result, are its current results; older ones are counted, not used;
- robust z = (x - median) / scale over the fleet's values, scale = MAD / 0.6745 (1.4826 x MAD),
  which is Iglewicz and Hoaglin's modified z-score 0.6745 (x - median) / MAD. When MAD is 0
  (more than half the GPUs report the same value: quantised numbers, or a fleet of identical
  copies), scale = 1.253314 x the mean absolute deviation from the median (sqrt(pi/2): the
  factor that makes it a standard deviation for normal data). Then a floor: scale is at least
  `min_spread` x |median| (default 0.5 %), so a fleet tighter than that cannot make a
  deviation of under 3.5 x 0.5 % = 1.75 % of the median an outlier, and identical values with
  one exception do not divide by zero;
- an outlier: |z| > `z_cutoff` (3.5, Iglewicz and Hoaglin's recommendation), slow or fast;
- a metric with fewer than MIN_GPUS (3) values is not judged: "too few GPUs for statistics".

Failures, never dropped silently (each makes the exit status 1):
- a failure record (the batch script writes one when gpubench exits non-zero on a node): the
  node is FAILED, with its exit status and the first and last lines of gpubench's stderr
  (its `stderr_head` and `stderr_tail`; the script's header documents the format: a record
  whose fields are not of it, such as exit_status 0 or a node that is a list, is bad input,
  as an invalid result in the store is; what it holds is printed with control characters
  escaped). A record is
  superseded, and listed as such without failing the fleet, when the same node has a result
  that started after the failed run ended (the node was run again);
- a current result in which a benchmark failed verification: that GPU is FAILED;
- with `gpus_per_node`, a node with results for fewer GPUs: FAILED ("6 of 8 GPUs").

Expected nodes (`expected_nodes`, or `expect_count` nodes): a node that has neither a result nor
a failure record is bad input (UsageError), since the fleet cannot be judged without it.

Exit codes: 0 no outlier and nothing failed, 1 outliers or failures, 2 bad input (UsageError).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UsageError
from .figures import literal_text
from .inputs import read_input
from .output import visible
from .report import headlines, sig3
from .results import Result, load_result, parse_json
from .store import failed_verification, sort_key

#: Iglewicz and Hoaglin: modified z = 0.6745 (x - median) / MAD; |z| > 3.5 is an outlier.
MAD_Z_FACTOR = 0.6745
Z_CUTOFF = 3.5
#: sqrt(pi/2): mean absolute deviation -> standard deviation for normal data (the MAD = 0 case).
MEAN_AD_TO_SIGMA = 1.253314
#: The scale is never below this fraction of the median (see the module docstring).
MIN_SPREAD = 0.005
#: Fewer values than this: no statistics for the metric.
MIN_GPUS = 3
#: The batch script's failure records: STORE/_failed/<node>_<job>_<task>.json.
FAILED_DIR = "_failed"
#: The marker (and format version) of a failure record.
FAILURE_MARKER = "gpubench_failure"
#: How many of a failure's first and of its last stderr lines the report prints (the record
#: may hold more).
STDERR_LINES_SHOWN = 3

_DRIVER_TAIL_RE = re.compile(r"[-_]drv[^-_]*[-_]cuda[^-_]*$")


# ---------------------------------------------------------------------------------- identities

def short_node(host: str) -> str:
    """A node's name as Slurm knows it: the host name up to its first ".", in lower case
    ("N01.cluster" -> "n01"): host names are case-insensitive (RFC 4343), so `--nodes N01` and a
    result from n01 name one node."""
    return host.strip().split(".", 1)[0].lower()


def natural_key(text: str) -> tuple:
    """Sorts names as people count: "n2" before "n10", GPU "2" before "10"."""
    # (0, length, digits, "") for a run of digits (its value, compared without converting it:
    # a host name may hold thousands of digits, more than Python's int() takes), (1, 0, text,
    # "") otherwise: any two keys compare
    key = []
    for i, part in enumerate(re.split(r"(\d+)", text)):
        if not part:
            continue
        if i % 2:  # the odd parts of a split on a captured group are the digit runs
            digits = part.lstrip("0") or "0"
            key.append((0, len(digits), digits, ""))
        else:
            key.append((1, 0, part, ""))
    return tuple(key)


@dataclass(frozen=True)
class GpuId:
    """One GPU of the fleet: its node and its device ordinal ("host" on the host backend)."""

    node: str
    gpu: str

    @property
    def label(self) -> str:
        """"node:gpu", as the report and the PNG name it."""
        return f"{self.node}:{self.gpu}"

    @property
    def order(self) -> tuple:
        """Node, then GPU, in natural order."""
        return (natural_key(self.node), natural_key(self.gpu))


def _context_text(result: Result, key: str) -> str:
    value = str(result.context.get(key, "") or "").strip()
    if not value:
        raise UsageError(f"{result.path}: result lacks context key '{key}' (written by a gpubench "
                         f"without fleet support? run it again with a current gpubench)")
    return value


def node_name(raw: str) -> str | None:
    """short_node(raw), or None when `raw` is no host name: nothing before its first "." (".",
    "..", ".x" all became "", one node), or a control character or a space inside (no --nodes
    could name it, and it reached the report raw)."""
    node = short_node(raw)
    if not node or any(c.isspace() or not c.isprintable() for c in raw.strip()):
        return None
    return node


def gpu_of(result: Result) -> GpuId:
    """The (node, GPU) a result was measured on; UsageError when its context does not say, or
    its host_name is no host name (node_name)."""
    raw = _context_text(result, "host_name")
    node = node_name(raw)
    if node is None:
        raise UsageError(f"{result.path}: host_name {visible(raw)[:60]!r} is not a host name (no node "
                         f"name before its first '.'); results of such names would merge into one node")
    return GpuId(node, _context_text(result, "device_ordinal"))


def card_of(result: Result) -> tuple[str, str, str]:
    """The card a result was measured on: (backend, device name, device key without its driver
    and CUDA versions)."""
    return (result.backend, result.device_name, _DRIVER_TAIL_RE.sub("", result.device_key))


def card_text(card: tuple[str, str, str]) -> str:
    """A card as the report and the errors print it."""
    backend, name, key = card
    return f"'{name}' ({key}, {backend} backend)"


# ------------------------------------------------------------------------------- the store

def store_files(store: Path) -> tuple[list[Path], list[Path]]:
    """(result files, failure records) under a store, in path order; hidden files and folders
    (temporary files) left out."""
    results: list[Path] = []
    failures: list[Path] = []
    for folder, dirs, files in os.walk(store):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        here = Path(folder)
        in_failed = here.relative_to(store).parts[:1] == (FAILED_DIR,)
        for name in sorted(files):
            if name.startswith(".") or not name.endswith(".json"):
                continue
            (failures if in_failed else results).append(here / name)
    return results, failures


def check_one_card(results: list[Result]) -> tuple[str, str, str] | None:
    """The store's one card; UsageError naming two of them (with a file each) when it holds
    more."""
    first: dict[tuple[str, str, str], Path] = {}
    for r in results:
        first.setdefault(card_of(r), r.path)
    if len(first) > 1:
        (a, pa), (b, pb) = list(first.items())[:2]
        raise UsageError(f"the store holds more than one card: {card_text(a)} (e.g. {pa}) and "
                         f"{card_text(b)} (e.g. {pb}); give each card its own store")
    return next(iter(first), None)


def _started(result: Result) -> str:
    return result.ctx("run_started_utc")


def _age_key(result: Result) -> tuple:
    return (_started(result), sort_key(result.path))


def results_per_gpu(results: list[Result]) -> dict[GpuId, list[Result]]:
    """Each (node, GPU)'s results, newest first (latest run_started_utc, then latest store
    name); UsageError for a result that does not name its node and GPU."""
    per_gpu: dict[GpuId, list[Result]] = {}
    for r in sorted(results, key=_age_key, reverse=True):
        per_gpu.setdefault(gpu_of(r), []).append(r)
    return dict(sorted(per_gpu.items(), key=lambda item: item[0].order))


# ------------------------------------------------------------------------------ failure records

@dataclass
class FailureRecord:
    """What the batch script writes when gpubench exits non-zero on a node."""

    path: Path
    node: str
    exit_status: int
    job_id: str = ""
    task_id: str = ""
    started_utc: str = ""
    ended_utc: str = ""
    command: str = ""
    stderr_head: list[str] = field(default_factory=list)  #: its first lines, when not in the tail
    stderr_tail: list[str] = field(default_factory=list)  #: the last lines of gpubench's stderr
    superseded_by: str = ""  #: a later result of the node ("" while the failure stands)


#: A record's text fields, as the batch script writes them (json_string: always strings).
RECORD_TEXTS = ("job_id", "task_id", "restart_count", "started_utc", "ended_utc", "command")
#: Its stderr lines (json_lines: lists of strings).
RECORD_LINES = ("stderr_head", "stderr_tail")


def _record_text(doc: dict, key: str, path: Path) -> str:
    """A text field of a record ("" when absent); UsageError for another type (a list was
    printed as "['a']")."""
    value = doc.get(key, "")
    if not isinstance(value, str):
        raise UsageError(f"{path}: not a gpubench failure record: {key} = "
                         f"{json.dumps(value, default=str)[:40]} is not a string")
    return value


def _record_time(doc: dict, key: str, path: Path) -> str:
    """started_utc / ended_utc: "" when absent, else the batch script's `date -u
    +%Y-%m-%dT%H:%M:%SZ`, as gpubench's run_started_utc, which it is compared with as text
    ("0" preceded every result and "yesterday" followed them all)."""
    value = _record_text(doc, key, path)
    if value:
        try:
            _dt.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
        except ValueError:
            raise UsageError(f"{path}: not a gpubench failure record: {key} {visible(value)[:40]!r} is "
                             f"not a UTC time as 2026-11-25T07:00:00Z") from None
    return value


def _record_lines(doc: dict, key: str, path: Path) -> list[str]:
    """A list of stderr lines of a record ([] when absent); UsageError for anything else."""
    value = doc.get(key, [])
    if not isinstance(value, list) or not all(isinstance(line, str) for line in value):
        raise UsageError(f"{path}: not a gpubench failure record: {key} is not a list of lines")
    return value


def _record_node(doc: dict, path: Path) -> str:
    """The record's node, as short_node() names it; UsageError when it is not a host name: not
    a string, empty, or holding a control character or a space (no --nodes could name it, and
    it reached the report raw)."""
    raw = _record_text(doc, "node", path)
    node = node_name(raw)
    if node is None:
        raise UsageError(f"{path}: not a gpubench failure record: node {visible(raw)[:60]!r} is "
                         f"not a host name")
    return node


def _record_status(doc: dict, path: Path) -> int:
    """The record's exit_status: gpubench's non-zero status as the shell saw it (1 to 255, 128 +
    the signal for a killed run); a record is written only when gpubench failed, so 0, a
    negative or a larger number (or not an integer) is no record of the batch script's."""
    status = doc.get("exit_status")
    if isinstance(status, bool) or not isinstance(status, int) or not 1 <= status <= 255:
        shown = json.dumps(status, default=str)
        shown = shown if len(shown) <= 40 else f"{shown[:20]}... ({len(shown)} characters)"
        raise UsageError(f"{path}: not a gpubench failure record: exit_status {shown} is not a "
                         f"failed run's status (an integer from 1 to 255)")
    return status


def load_failure(path: Path) -> FailureRecord:
    """Reads one failure record; UsageError naming the file when it is not one (as a result that
    is not one: fleet.py refuses a store with an invalid file rather than judge without it)."""
    text = read_input(path, "failure record").decode("utf-8", errors="replace")  # stderr: any bytes
    if not text.strip():
        raise UsageError(f"{path}: empty file, not a gpubench failure record")
    doc = parse_json(text, path, "failure record")
    if not isinstance(doc, dict) or doc.get(FAILURE_MARKER) != 1:
        raise UsageError(f"{path}: not a gpubench failure record (no \"{FAILURE_MARKER}\": 1); "
                         f"only the batch script's records belong in {FAILED_DIR}/")
    node, status = _record_node(doc, path), _record_status(doc, path)
    texts = [_record_time(doc, key, path) if key.endswith("_utc") else _record_text(doc, key, path)
             for key in RECORD_TEXTS]
    job, task, _, started, ended, command = texts
    return FailureRecord(path, node, status, job, task, started, ended, command,
                         *[_record_lines(doc, key, path) for key in RECORD_LINES])


def mark_superseded(failures: list[FailureRecord], results: list[Result]) -> None:
    """Marks each failure after which its node produced a result (the node was run again)."""
    for f in failures:
        if not f.ended_utc:
            continue
        later = [r for r in results if gpu_of(r).node == f.node and _started(r) > f.ended_utc]
        if later:
            f.superseded_by = str(max(later, key=_age_key).path)


# -------------------------------------------------------------------------------- statistics

@dataclass
class Spread:
    """The centre and scale of a metric's values over the fleet."""

    median: float
    mad: float  #: median absolute deviation from the median
    scale: float  #: what z divides by (see the module docstring)
    scale_from: str  #: "MAD", "mean absolute deviation" or "floor"

    def z(self, value: float) -> float:
        """The robust z-score of a value (0 when every value is the median)."""
        return (value - self.median) / self.scale if self.scale > 0 else 0.0


def robust_spread(values: list[float], min_spread: float = MIN_SPREAD) -> Spread:
    """Median, MAD and the z scale of values: MAD / 0.6745; when that is 0, 1.253314 x the mean
    absolute deviation; never below min_spread x |median|."""
    med = statistics.median(values)
    deviations = [abs(v - med) for v in values]
    mad = statistics.median(deviations)
    scale, source = mad / MAD_Z_FACTOR, "MAD"
    if scale == 0:
        scale, source = MEAN_AD_TO_SIGMA * statistics.fmean(deviations), "mean absolute deviation"
    floor = min_spread * abs(med)
    if scale < floor:
        scale, source = floor, "floor"
    return Spread(med, mad, scale, source)


@dataclass
class Reading:
    """One GPU's value of one headline metric, and where it comes from."""

    gpu: GpuId
    value: float
    row: str  #: the benchmark the headline was taken from
    path: str  #: its result file
    throttled: bool = False  #: that row ran with throttled clocks


@dataclass
class MetricVerdict:
    """One headline metric over the fleet."""

    what: str
    unit: str
    readings: list[Reading]
    spread: Spread | None  #: None when there are too few values
    lacking: list[GpuId] = field(default_factory=list)  #: GPUs none of whose results has it

    @property
    def note(self) -> str:
        """Why the metric was not judged ("" when it was)."""
        return "" if self.spread else "too few GPUs for statistics"

    def z(self, reading: Reading) -> float | None:
        """A reading's robust z (None when the metric is not judged)."""
        return self.spread.z(reading.value) if self.spread else None


@dataclass
class Outlier:
    """A (node, GPU) whose value of a metric is beyond the cutoff."""

    gpu: GpuId
    what: str
    value: float
    unit: str
    median: float
    z: float
    row: str
    path: str
    throttled: bool

    @property
    def direction(self) -> str:
        """"low" (slower than the fleet) or "high"."""
        return "low" if self.z < 0 else "high"


@dataclass
class Failure:
    """A node or GPU that failed: a failure record, a failed verification, missing GPUs."""

    node: str
    gpu: str  #: "" when the whole node failed
    what: str  #: one line
    detail: list[str] = field(default_factory=list)  #: e.g. the last lines of stderr
    path: str = ""  #: the record or result it comes from


# ------------------------------------------------------------------------------- the analysis

@dataclass(frozen=True)
class Rules:
    """What counts as an outlier, and what the fleet must hold."""

    z_cutoff: float = Z_CUTOFF
    min_spread: float = MIN_SPREAD
    min_gpus: int = MIN_GPUS
    expected_nodes: tuple[str, ...] = ()  #: nodes that must be in the store
    expect_count: int | None = None  #: or: how many nodes must be
    gpus_per_node: int | None = None  #: a node with fewer GPUs (results) failed


@dataclass
class FleetReport:
    """The verdict on a store."""

    store: str
    rules: Rules
    card: tuple[str, str, str] | None
    files_read: int
    gpus: list[GpuId]
    metrics: list[MetricVerdict]
    outliers: list[Outlier]
    failures: list[Failure]
    superseded: list[FailureRecord]
    versions: dict[str, list[str]]  #: context key -> distinct values over the current results

    @property
    def nodes(self) -> list[str]:
        """Every node seen: with results or with a standing failure record."""
        seen = {g.node for g in self.gpus} | {f.node for f in self.failures}
        return sorted(seen, key=natural_key)

    @property
    def failed_nodes(self) -> list[str]:
        """Nodes with at least one failure."""
        return sorted({f.node for f in self.failures}, key=natural_key)

    @property
    def exit_code(self) -> int:
        """0 clean, 1 outliers or failures."""
        return 1 if self.outliers or self.failures else 0


@dataclass
class GpuResults:
    """What one (node, GPU) contributes: its readings by metric and the results they come from."""

    readings: dict[str, tuple[str, Reading]]  #: what -> (unit, reading)
    current: list[Result]  #: the results giving a reading, and the newest one
    #: what -> (minus the count of headlines of the result it came from, its place among them):
    #: the report lists the metrics in the order of the fullest result
    ranks: dict[str, tuple[int, int]] = field(default_factory=dict)


def gpu_readings(gpu: GpuId, history: list[Result]) -> GpuResults:
    """Per headline metric, the value of the newest result (history: newest first) that has it."""
    got = GpuResults({}, [history[0]])
    for r in history:
        heads = headlines(r)
        gave = False
        for place, h in enumerate(heads):
            if h.what not in got.readings:
                b = r.benchmarks.get(h.row)
                got.readings[h.what] = (h.unit, Reading(gpu, h.value, h.row, str(r.path),
                                                        bool(b and b.throttled)))
                got.ranks[h.what] = (-len(heads), place)
                gave = True
        if gave and r is not history[0]:
            got.current.append(r)
    return got


def judge_metrics(per_gpu: dict[GpuId, GpuResults], rules: Rules) -> list[MetricVerdict]:
    """Every headline metric over the fleet, judged where it has enough values; in the order
    headlines() gives them for the fullest result."""
    by_metric: dict[str, tuple[str, list[Reading]]] = {}
    rank: dict[str, tuple[int, int]] = {}
    for got in per_gpu.values():
        for what, (unit, reading) in got.readings.items():
            by_metric.setdefault(what, (unit, []))[1].append(reading)
            rank[what] = min(rank.get(what, got.ranks[what]), got.ranks[what])
    verdicts = []
    for what in sorted(by_metric, key=lambda w: (rank[w], w)):
        unit, readings = by_metric[what]
        values = [x.value for x in readings]
        spread = robust_spread(values, rules.min_spread) if len(values) >= rules.min_gpus else None
        lacking = [g for g, got in per_gpu.items() if what not in got.readings]
        verdicts.append(MetricVerdict(what, unit, readings, spread, lacking))
    return verdicts


def find_outliers(metrics: list[MetricVerdict], z_cutoff: float) -> list[Outlier]:
    """Every reading beyond the cutoff, by node, GPU, metric."""
    out = []
    for m in metrics:
        for x in m.readings:
            z = m.z(x)
            if z is not None and abs(z) > z_cutoff:
                out.append(Outlier(x.gpu, m.what, x.value, m.unit, m.spread.median, z, x.row,
                                   x.path, x.throttled))
    return sorted(out, key=lambda o: (o.gpu.order, o.what))


def _record_failure(f: FailureRecord) -> Failure:
    job = f" (job {f.job_id}, task {f.task_id})" if f.job_id else ""
    detail = f.stderr_head[:STDERR_LINES_SHOWN]
    if detail and f.stderr_tail:
        detail.append("...")
    detail += f.stderr_tail[-STDERR_LINES_SHOWN:]
    return Failure(f.node, "", f"gpubench exited with status {f.exit_status}{job}", detail,
                   str(f.path))


def collect_failures(per_gpu: dict[GpuId, GpuResults], records: list[FailureRecord],
                     rules: Rules) -> list[Failure]:
    """Standing failure records, GPUs with a current result that failed verification, and
    nodes with fewer GPUs than rules.gpus_per_node."""
    out = [_record_failure(f) for f in records if not f.superseded_by]
    for gpu, got in per_gpu.items():
        for r in got.current:
            bad = failed_verification(r)
            if bad:
                name, message = bad[0]
                more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
                out.append(Failure(gpu.node, gpu.gpu, f"verification failed: {name}{more}",
                                   [message], str(r.path)))
    if rules.gpus_per_node:
        per_node: dict[str, int] = {}
        for gpu in per_gpu:
            per_node[gpu.node] = per_node.get(gpu.node, 0) + 1
        for node, n in sorted(per_node.items(), key=lambda item: natural_key(item[0])):
            if n < rules.gpus_per_node:
                out.append(Failure(node, "", f"{n} of {rules.gpus_per_node} GPUs have a result"))
    return sorted(out, key=lambda f: (natural_key(f.node), natural_key(f.gpu), f.what))


def check_expected(seen: set[str], rules: Rules) -> None:
    """UsageError when an expected node has neither a result nor a failure record."""
    missing = [n for n in dict.fromkeys(short_node(n) for n in rules.expected_nodes)
               if n not in seen]
    if missing:
        raise UsageError(f"expected node{'s' if len(missing) > 1 else ''} without results or a "
                         f"failure record: {', '.join(missing)} ({count(len(seen), 'node')} in "
                         f"the store)")
    if rules.expect_count is not None and len(seen) < rules.expect_count:
        raise UsageError(f"expected {rules.expect_count} nodes, the store has {len(seen)}: "
                         f"{', '.join(sorted(seen, key=natural_key)) or 'none'}")


def check_one_kind_of_run(per_gpu: dict[GpuId, GpuResults]) -> None:
    """UsageError when the results the report would use mix --quick runs with full ones: a quick
    run measures smaller sizes under the same metric names (its "DRAM copy" row can be
    cache-resident), so against full runs it reads as a false outlier."""
    quick = sorted({gpu.label for gpu, got in per_gpu.items() for r in got.current if r.ctx("quick") == "true"},
                   key=natural_key)
    full = sorted({gpu.label for gpu, got in per_gpu.items() for r in got.current if r.ctx("quick") != "true"},
                  key=natural_key)
    if quick and full:
        raise UsageError(f"the store mixes --quick runs ({_names(quick, 5)}) with full ones "
                         f"({_names(full, 5)}), whose sizes differ under the same metric names: run "
                         f"those GPUs again with the fleet's arguments, or keep them in another store")


def _versions(per_gpu: dict[GpuId, GpuResults]) -> dict[str, list[str]]:
    keys = ("driver_version", "runtime_version", "gpubench_version", "git_revision")
    current = [r for got in per_gpu.values() for r in got.current]
    return {k: sorted({r.ctx(k, "?") for r in current}) for k in keys}


def analyse(store: Path | str, rules: Rules = Rules()) -> FleetReport:
    """Reads a store and judges its fleet (see the module docstring); UsageError on bad input."""
    store = Path(store)
    if not store.exists():
        raise UsageError(f"{store}: no such store")
    if not store.is_dir():
        raise UsageError(f"{store}: is a file; give the results store (a folder)")
    result_paths, record_paths = store_files(store)
    if not result_paths and not record_paths:
        raise UsageError(f"{store}: empty store: no gpubench result and no failure record in it")
    results = [load_result(p) for p in result_paths]
    card = check_one_card(results)
    history = results_per_gpu(results)  # also checks every result names its node and GPU
    records = [load_failure(p) for p in record_paths]
    mark_superseded(records, results)
    seen = {g.node for g in history} | {f.node for f in records}
    check_expected(seen, rules)
    per_gpu = {gpu: gpu_readings(gpu, hist) for gpu, hist in history.items()}
    check_one_kind_of_run(per_gpu)
    metrics = judge_metrics(per_gpu, rules)
    return FleetReport(str(store), rules, card, len(result_paths) + len(record_paths),
                       list(per_gpu), metrics, find_outliers(metrics, rules.z_cutoff),
                       collect_failures(per_gpu, records, rules),
                       [f for f in records if f.superseded_by], _versions(per_gpu))


# --------------------------------------------------------------------------------- rendering

def count(n: int, word: str) -> str:
    """"1 node", "8 nodes", "1 GPU", "64 GPUs"."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def _names(names: list[str], limit: int = 10) -> str:
    """A list of names, the first `limit` of a long one and how many more."""
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _value(v: float | None, unit: str) -> str:
    return f"{sig3(v)} {unit}" if v is not None else "-"


def verdict_line(rep: FleetReport) -> str:
    """One line: the count of outliers and failed nodes, or that the fleet is clean."""
    if not rep.exit_code:
        return "no outlier, no failed node"
    parts = []
    if rep.outliers:
        parts.append(count(len(rep.outliers), "outlier"))
    if rep.failures:
        parts.append(count(len(rep.failed_nodes), "failed node"))
    return ", ".join(parts)


def _versions_lines(rep: FleetReport) -> list[str]:
    mixed = {k: v for k, v in rep.versions.items() if len(v) > 1}
    if not mixed:
        return []
    return ["- versions differ across the fleet (a likely cause of an outlier): "
            + "; ".join(f"{k}: {', '.join(v)}" for k, v in mixed.items())]


def to_markdown(rep: FleetReport) -> str:
    """The report for people: what was read, the outliers, the failures, every metric."""
    r = rep.rules
    card = card_text(rep.card) if rep.card else "none (no result, only failure records)"
    lines = [
        f"# gpubench fleet: {rep.card[1] if rep.card else 'no result'}",
        "",
        f"- store: `{rep.store}`",
        f"- card: {card}",
        f"- read: {count(rep.files_read, 'file')}; {count(len(rep.nodes), 'node')}, "
        f"{count(len(rep.gpus), 'GPU')} "
        f"(per metric, each GPU's newest result that has it)",
        f"- nodes: {', '.join(rep.nodes) or 'none'}",
        f"- outlier: |robust z| > {r.z_cutoff:g}, z = (value - fleet median) / (1.4826 x MAD; "
        f"at least {r.min_spread:.2%} of the median); a metric needs {r.min_gpus} GPUs",
        *_versions_lines(rep),
        f"- result: **{verdict_line(rep)}**",
        "",
        f"## Outliers ({len(rep.outliers)})",
        "",
    ]
    if rep.outliers:
        lines += ["| node | GPU | metric | value | fleet median | z | row |",
                  "|---|---|---|---|---|---|---|"]
        for o in rep.outliers:
            mark = " (throttled)" if o.throttled else ""
            lines.append(f"| {o.gpu.node} | {o.gpu.gpu} | {o.what} | {_value(o.value, o.unit)}"
                         f"{mark} | {_value(o.median, o.unit)} | {o.z:+.1f} | `{o.row}` |")
    else:
        lines.append("None.")
    lines += ["", f"## Failed ({len(rep.failures)})", ""]
    if rep.failures:
        for f in rep.failures:
            where = f"{f.node}:{f.gpu}" if f.gpu else f.node
            lines.append(f"- **FAILED** {where}: {f.what}" + (f" (`{f.path}`)" if f.path else ""))
            lines += [f"  - `{d.replace('`', chr(39))}`" for d in f.detail]
    else:
        lines.append("None.")
    if rep.superseded:
        lines += ["", "Earlier failures, since run again (not counted):"]
        lines += [f"- {s.node}: status {s.exit_status} (`{s.path}`), then `{s.superseded_by}`"
                  for s in rep.superseded]
    lines += ["", "## Metrics", "",
              "| metric | GPUs | fleet median | z scale | outliers | note |",
              "|---|---|---|---|---|---|"]
    for m in rep.metrics:
        n_out = sum(1 for o in rep.outliers if o.what == m.what)
        if m.spread:
            rel = m.spread.scale / abs(m.spread.median) if m.spread.median else 0.0
            spread = f"{rel:.2%} of the median ({m.spread.scale_from})"
            median = _value(m.spread.median, m.unit)
        else:
            spread, median = "-", "-"
        lacking = f"lacking on {_names([g.label for g in m.lacking])}" if m.lacking else ""
        note = "; ".join(x for x in (m.note, lacking) if x)
        lines.append(f"| {m.what} | {len(m.readings)} | {median} | {spread} | "
                     f"{n_out if m.spread else '-'} | {note} |")
    if not rep.metrics:
        lines.append("| (none) | 0 | - | - | - | no headline metric in any result |")
    # a record's stderr, a host name and a path come from the store: an ESC or a newline in
    # one would reach the terminal raw, or split a line
    return "\n".join(visible(line) for line in lines) + "\n"


def failure_lines(rep: FleetReport) -> list[str]:
    """One line per outlier and failure, for stderr (CI logs)."""
    out = [f"OUTLIER: {o.gpu.label}: {o.what} {_value(o.value, o.unit)}, fleet median "
           f"{_value(o.median, o.unit)}, z {o.z:+.1f}" for o in rep.outliers]
    out += [f"FAILED: {f.node}{':' + f.gpu if f.gpu else ''}: {f.what}" for f in rep.failures]
    return [visible(line) for line in out]  # (as to_markdown's)


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def to_json(rep: FleetReport) -> str:
    """The verdict for machines."""
    def metric(m: MetricVerdict) -> dict:
        s = m.spread
        return {"metric": m.what, "unit": m.unit, "gpus": len(m.readings),
                "median": s.median if s else None, "mad": s.mad if s else None,
                "scale": s.scale if s else None, "scale_from": s.scale_from if s else None,
                "note": m.note, "lacking": [g.label for g in m.lacking],
                "values": {x.gpu.label: {"value": x.value, "z": _finite(m.z(x)), "row": x.row}
                           for x in m.readings}}

    doc = {
        "tool": "gpubench fleet",
        "store": rep.store,
        "card": dict(zip(("backend", "device_name", "card_key"), rep.card)) if rep.card else None,
        "rules": {"z_cutoff": rep.rules.z_cutoff, "min_spread": rep.rules.min_spread,
                  "min_gpus": rep.rules.min_gpus,
                  "expected_nodes": list(rep.rules.expected_nodes),
                  "expect_count": rep.rules.expect_count,
                  "gpus_per_node": rep.rules.gpus_per_node},
        "files_read": rep.files_read,
        "nodes": rep.nodes,
        "gpus": [g.label for g in rep.gpus],
        "exit_code": rep.exit_code,
        "verdict": verdict_line(rep),
        "outliers": [{"node": o.gpu.node, "gpu": o.gpu.gpu, "metric": o.what, "value": o.value,
                      "unit": o.unit, "median": o.median, "z": o.z, "direction": o.direction,
                      "row": o.row, "file": o.path, "throttled": o.throttled}
                     for o in rep.outliers],
        "failed": [{"node": f.node, "gpu": f.gpu or None, "what": f.what, "detail": f.detail,
                    "file": f.path or None} for f in rep.failures],
        "superseded_failures": [{"node": s.node, "exit_status": s.exit_status,
                                 "file": str(s.path), "rerun": s.superseded_by}
                                for s in rep.superseded],
        "versions": rep.versions,
        "metrics": [metric(m) for m in rep.metrics],
    }
    return json.dumps(doc, indent=2) + "\n"


# ------------------------------------------------------------------------------------ the PNG

#: Figure width, the height of one metric's strip and of one FAILED line (inches), at DPI.
FIG_WIDTH = 10.0
STRIP_HEIGHT = 0.7
TEXT_LINE_HEIGHT = 0.2
#: Failed nodes named under the plot (the report lists them all).
FAILED_SHOWN = 6
DPI = 100


def fleet_figure(rep: FleetReport):
    """The matplotlib Figure (no pyplot state): one horizontal strip of dots per metric, each
    GPU's value divided by the fleet median, the +-cutoff band shaded, outliers in red and
    labelled node:gpu; failed nodes named under the plot. The tests read its artists."""
    from matplotlib.figure import Figure

    metrics = rep.metrics
    failed = rep.failures[:FAILED_SHOWN]
    strips_in = STRIP_HEIGHT * max(len(metrics), 1)
    bottom_in = 0.7 + TEXT_LINE_HEIGHT * len(failed)  # the x label, then the FAILED lines
    height = bottom_in + strips_in + 0.5  # and the title
    fig = Figure(figsize=(FIG_WIDTH, height), dpi=DPI)
    ax = fig.add_axes((0.24, bottom_in / height, 0.72, strips_in / height))
    flagged = {(o.gpu, o.what) for o in rep.outliers}
    for row, m in enumerate(reversed(metrics)):
        _draw_strip(ax, row, m, flagged, rep.rules.z_cutoff)
    ax.axvline(1.0, color="0.4", linewidth=0.8)
    ax.set_yticks(range(len(metrics)))
    ax.set_yticklabels([m.what + ("" if m.spread else "\n(too few GPUs)")
                        for m in reversed(metrics)], fontsize=8)
    ax.set_ylim(-0.6, max(len(metrics), 1) - 0.4)
    ax.set_xlabel("value / fleet median")
    ax.grid(axis="x", alpha=0.3)
    if any(m.spread for m in metrics):
        ax.legend(loc="best", fontsize=8, frameon=False)
    title = rep.card[1] if rep.card else "no result"
    ax.set_title(f"gpubench fleet: {title}: {count(len(rep.nodes), 'node')}, "
                 f"{count(len(rep.gpus), 'GPU')}; "
                 f"{verdict_line(rep)}", fontsize=10)
    for i, f in enumerate(failed):
        where = f"{f.node}:{f.gpu}" if f.gpu else f.node
        fig.text(0.02, (0.1 + TEXT_LINE_HEIGHT * (len(failed) - 1 - i)) / height,
                 f"FAILED {where}: {f.what}", color="tab:red", fontsize=8)
    literal_text(fig)
    return fig


def _draw_strip(ax, row: int, m: MetricVerdict, flagged: set, z_cutoff: float) -> None:
    """One metric's dots at height `row`: normalised values, a little vertical spread so that
    equal values stay visible, the band of |z| <= cutoff shaded, outliers red and labelled."""
    median = m.spread.median if m.spread else statistics.median(x.value for x in m.readings)
    if not median:
        return
    if m.spread:
        half = z_cutoff * m.spread.scale / abs(median)
        ax.fill_between([1 - half, 1 + half], row - 0.3, row + 0.3, color="tab:green",
                        alpha=0.12, linewidth=0, label=f"|z| <= {z_cutoff:g}" if row == 0 else None)
    # deterministic jitter within +-0.2 of the strip
    points = [(x, x.value / median, row + ((i * 37) % 11 - 5) / 25.0)
              for i, x in enumerate(m.readings)]
    normal = [(px, py) for x, px, py in points if (x.gpu, m.what) not in flagged]
    if normal:
        ax.scatter(*zip(*normal), s=12, color="tab:blue", alpha=0.6, linewidths=0)
    for x, px, py in points:
        if (x.gpu, m.what) in flagged:
            ax.scatter([px], [py], s=28, color="tab:red", zorder=3)
            ax.annotate(x.gpu.label, (px, py), xytext=(4, 4), textcoords="offset points",
                        fontsize=8, color="tab:red")


def png_bytes(rep: FleetReport) -> bytes:
    """fleet_figure() as PNG bytes (Agg)."""
    import io

    buf = io.BytesIO()
    fleet_figure(rep).savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()
