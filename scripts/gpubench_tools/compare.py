"""The regression comparator: a new result against a baseline (one or more earlier results).

Per benchmark, on its headline metric (the row's `metric`: GBps, TFLOPS, latency_ns or
latency_us, from its label; legacy files: TFLOPS when it does FLOP, else GB/s), over the
per-repetition samples. Higher is better, except for latency (results.LOWER_IS_BETTER: metric
latency_ns, the pointer chase, and latency_us, e.g. an allocate + free pair), where a rise is
the loss. The new result's rows say which metric and which direction; the baselines' samples of
that counter are compared.
- baseline: the samples of every baseline result pooled (runs that failed, or ran throttled,
  are left out), its median, and its noise = 1.4826 x MAD / median (a robust relative standard
  deviation that one outlier repetition cannot inflate);
- change = new median / baseline median - 1: the relative change of the metric itself, as the
  table shows its two medians (latency 1.552 -> 2.536 ns is +63.4 %, a loss; GB/s 100 -> 80 is
  -20 %, a loss). Whether a change is a loss or a gain is the verdict's business (SLOWER /
  FASTER), never the sign's alone.

Verdicts:
- INVALID: the new run failed verification or ran with throttled clocks (or the baseline has no
  valid samples of the benchmark): not a measurement of the code. A failed verification (an
  error message not starting "skipped") fails the comparison (exit 1, one
  "FAILED VERIFICATION: <benchmark>: <message>" line each, failure_lines()) unless
  Thresholds.allow_failures; a throttled run is neither pass nor fail.
Baseline files given twice (the same file, or the same result under another name:
result_identity()) are refused by check_distinct(): their repetitions would count twice; so is
a baseline that is the new result itself (check_not_new()).
A baseline in which a benchmark failed verification is not a baseline: compare() refuses it
(UsageError naming the file and the benchmark) unless allow_failures, when that benchmark's
samples are left out with a note; store.last_valid() passes such files over.
- SLOWER: |change| > min_effect AND |change| > noise_k x baseline noise, in the losing
  direction (down; up for latency), AND the samples say the shift is real:
  - a one-sided Mann-Whitney U test (new below the baseline; above it for latency) rejects
    equality at alpha, where the sample sizes let it: where its smallest attainable p-value,
    min_p_value() = 1 / C(n_new + n_baseline, n_new) (every new sample beyond every baseline
    sample), is below alpha (Row.test "mann_whitney_u");
  - otherwise the test can never reject (3 new against 3 baseline samples, gpubench's default
    repetitions: smallest p 1/20 = 0.05, not below alpha 0.05), and the samples must not
    overlap at all: every new sample below every baseline sample (Row.test "no_overlap"). Under
    no change that happens with probability min_p_value (5 % for 3 against 3), and the two
    bounds above must hold as well, so a lone outlier or a small shift is not flagged; the
    comparison adds a note that more repetitions let the U-test decide (Google Benchmark's own
    compare.py likewise warns that its U-test needs 9+ repetitions to be reliable).
  All three, so noisy benchmarks and tiny shifts do not raise alarms.
- FASTER: the mirror image.
- NOISY: the change exceeds min_effect but is not confirmed by the noise bound or the test.
Too few samples: every benchmark measured on both sides needs min_samples per-repetition
samples in NEW and in each baseline file that measured it (check_rows_repetitions()), else the
comparison is refused (UsageError "too little data", naming the file and the benchmark).
- SAME: |change| <= min_effect.
Benchmarks only in one side, and ones the harness skipped (an error message starting
"skipped", e.g. "skipped: not on the host backend: ..."), are listed as not compared: a skip is
neither a failure nor a loss of data.

Exit codes: 0 no confirmed regression (improvements included), 1 at least one SLOWER,
2 invalid input or too little data (UsageError, raised before any verdict); compare.py also
exits 2 when every row is INVALID (nothing_comparable()): a comparison that judged nothing is
no "no confirmed regression".
"""

from __future__ import annotations

import json
import math
import os
import statistics
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .errors import UsageError
from .output import NewFile, commit_all, markdown_cell, visible, xml_text
from .results import Result, result_identity
from .store import too_few_repetitions

VERDICTS = ("SLOWER", "INVALID", "NOISY", "FASTER", "SAME")


@dataclass(frozen=True)
class Thresholds:
    """What counts as a regression."""

    min_effect: float = 0.05  #: relative change below which nothing is flagged (5 %)
    noise_k: float = 3.0  #: the loss must exceed this many baseline noise units
    alpha: float = 0.05  #: significance level of the Mann-Whitney U test
    min_samples: int = 3  #: repetitions needed in the new run and in each baseline result
    #: a benchmark that failed verification (a wrong output) fails the comparison unless allowed
    allow_failures: bool = False


@dataclass
class Row:
    """The verdict on one benchmark."""

    name: str
    metric: str
    verdict: str
    reason: str
    baseline_median: float | None = None
    new_median: float | None = None
    #: new median / baseline median - 1, of the metric itself (a rise of latency is positive)
    change: float | None = None
    baseline_noise: float | None = None  #: relative robust standard deviation
    p_value: float | None = None  #: one-sided, in the direction of the change
    n_new: int = 0
    n_baseline: int = 0
    failed: bool = False  #: the new run failed verification or errored
    higher_is_better: bool = True  #: False for latency: a rise of the metric is a loss
    #: the rule that decided the verdict: "min_effect" (SAME: the change within --min-effect),
    #: "too_few_samples" (NOISY: fewer than min_samples on a side), "noise_bound" (NOISY: the
    #: change within noise_k x the baseline noise), "mann_whitney_u" (the U-test), or
    #: "no_overlap" where the samples are too few for the U-test to reach alpha; "" for an
    #: INVALID row, which no rule judged
    test: str = ""
    #: the smallest one-sided p-value the U-test can give for n_new and n_baseline
    min_p_value: float | None = None

    @property
    def gain(self) -> float:
        """The change with its sign turned so that positive is faster (0 when unknown): the
        order of the report, worst first."""
        if self.change is None:
            return 0.0
        return self.change if self.higher_is_better else -self.change


@dataclass
class Comparison:
    """All verdicts of one comparison."""

    new: str
    baselines: list[str]
    device_key: str
    thresholds: Thresholds
    rows: list[Row] = field(default_factory=list)
    not_compared: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Number of rows per verdict."""
        return {v: sum(r.verdict == v for r in self.rows) for v in VERDICTS}

    @property
    def exit_code(self) -> int:
        """1 when any benchmark is a confirmed regression or (unless allowed) failed
        verification: a night on which a kernel produced wrong output is a failed night."""
        failed = any(r.failed for r in self.rows) and not self.thresholds.allow_failures
        return 1 if failed or any(r.verdict == "SLOWER" for r in self.rows) else 0

    def failures(self) -> list[Row]:
        """The rows whose new run failed verification."""
        return [r for r in self.rows if r.failed]

    def slower(self) -> list[Row]:
        """The rows flagged SLOWER."""
        return [r for r in self.rows if r.verdict == "SLOWER"]


def failure_lines(c: Comparison) -> list[str]:
    """One line per benchmark whose new run failed verification, naming it and the harness's
    message ([] when failures are allowed)."""
    if c.thresholds.allow_failures:
        return []
    return [visible(f"FAILED VERIFICATION: {r.name}: {r.reason}") for r in c.failures()]


def verdict_line(c: Comparison) -> str:
    """The comparison's one-word-and-a-bit outcome."""
    if c.failures() and not c.thresholds.allow_failures:
        return f"FAILED VERIFICATION ({len(c.failures())} benchmark(s))"
    return "REGRESSION" if c.exit_code else "no confirmed regression"


def robust_noise(values: list[float]) -> float:
    """1.4826 x median absolute deviation / median: relative spread, 0 for < 2 values."""
    if len(values) < 2:
        return 0.0
    med = statistics.median(values)
    if med == 0:
        return 0.0
    mad = statistics.median(abs(v - med) for v in values)
    return 1.4826 * mad / abs(med)


def min_p_value(n_new: int, n_base: int) -> float:
    """The smallest one-sided p-value the exact Mann-Whitney U test can give for these sample
    sizes: every sample of one side beyond every sample of the other, 1 of the
    C(n_new + n_base, n_new) equally likely orderings under no change (3 and 3: 1/20 = 0.05)."""
    return 1.0 / math.comb(n_new + n_base, n_new)


def _evidence(row: Row) -> str:
    """What confirmed a row's shift, for the reason texts."""
    if row.test == "no_overlap":
        return "no overlap"
    return f"p = {row.p_value:.3g}" if row.p_value is not None else "-"


def _mann_whitney_p(new: list[float], base: list[float], alternative: str) -> float:
    from scipy.stats import mannwhitneyu

    if len(set(new) | set(base)) == 1:
        return 1.0  # all equal: no evidence of a difference (scipy would warn)
    return float(mannwhitneyu(new, base, alternative=alternative).pvalue)


def judge(name: str, metric: str, new: list[float], base: list[float], t: Thresholds,
          higher_is_better: bool = True) -> Row:
    """The verdict for one benchmark from its new and pooled baseline samples; with
    higher_is_better False (latency) a rise of the metric is the loss."""
    row = Row(name, metric, "SAME", "", n_new=len(new), n_baseline=len(base),
              higher_is_better=higher_is_better)
    row.baseline_median = statistics.median(base)
    row.new_median = statistics.median(new)
    row.baseline_noise = robust_noise(base)
    if row.baseline_median <= 0:
        row.verdict, row.reason = "INVALID", "baseline median is not positive"
        return row
    if not higher_is_better and row.new_median <= 0:
        row.verdict, row.reason = "INVALID", "new median is not positive"
        return row
    row.change = row.new_median / row.baseline_median - 1.0
    bound = max(t.min_effect, t.noise_k * row.baseline_noise)
    # one-sided, in the direction of the change
    alternative = "less" if row.change < 0 else "greater"
    row.p_value = _mann_whitney_p(new, base, alternative)
    row.min_p_value = min_p_value(len(new), len(base))
    size = abs(row.change)
    if size <= t.min_effect:
        row.test = "min_effect"
        row.reason = f"change {row.change:+.1%} within min effect {t.min_effect:.1%}"
        return row
    if len(new) < t.min_samples or len(base) < t.min_samples:
        row.verdict, row.test = "NOISY", "too_few_samples"
        row.reason = (f"too few samples for the test ({len(new)} new, {len(base)} baseline; "
                      f"need {t.min_samples})")
        return row
    if size <= t.noise_k * row.baseline_noise:
        row.verdict, row.test = "NOISY", "noise_bound"
        row.reason = (f"change {row.change:+.1%} within {t.noise_k:g} x baseline noise "
                      f"{row.baseline_noise:.1%}")
        return row
    if row.min_p_value < t.alpha:
        row.test = "mann_whitney_u"
        if row.p_value >= t.alpha:
            row.verdict = "NOISY"
            row.reason = f"Mann-Whitney U p = {row.p_value:.3g} >= {t.alpha:g}"
            return row
        evidence = f"Mann-Whitney U p = {row.p_value:.3g}"
    else:
        row.test = "no_overlap"
        few = (f"n too small for the U-test ({len(new)} new, {len(base)} baseline: smallest p "
               f"{row.min_p_value:.3g} >= alpha {t.alpha:g})")
        apart = max(new) < min(base) if row.change < 0 else min(new) > max(base)
        if not apart:
            row.verdict = "NOISY"
            row.reason = f"new and baseline samples overlap, {few}"
            return row
        evidence = f"no overlap, {few}"
    row.verdict = "SLOWER" if (row.change < 0) == higher_is_better else "FASTER"
    row.reason = (f"{row.change:+.1%} beyond {bound:.1%} (min effect, {t.noise_k:g} x noise); "
                  f"{evidence}")
    return row


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or os.path.samefile(a, b)
    except OSError:
        return False


def check_not_new(new: Result, baselines: list[Result], content: bool = True) -> None:
    """Refuses (UsageError) a baseline that is the new result itself: the same path, another
    name for the same file (a link), or, with `content`, a copy of its content. Compared with
    itself NEW would be all SAME, and pooled into the baseline its samples would pull it
    towards NEW."""
    identity = result_identity(new)
    for b in baselines:
        if _same_file(new.path, b.path) or (content and result_identity(b) == identity):
            same = "" if new.path.resolve() == b.path.resolve() else \
                f" is the same result as NEW {new.path}"
            raise UsageError(f"NEW given as its own baseline: {b.path}{same} (a result "
                             f"compared with itself shows no change); give an earlier result")


def check_distinct(baselines: list[Result], new: Result | None = None) -> None:
    """Refuses (UsageError) baseline files given twice: the same path, another name for the
    same file, or a copy of its content. Pooled twice, a baseline's repetitions would count
    twice and could flip a verdict. With `new`, also a baseline that is NEW (check_not_new)."""
    if new is not None:
        check_not_new(new, baselines)
    seen: dict[str, Path] = {}
    for b in baselines:
        identity = result_identity(b)
        if identity in seen:
            first = seen[identity]
            same = "" if first.resolve() == b.path.resolve() else f" is the same result as {first}"
            raise UsageError(f"baseline given twice: {b.path}{same} (its repetitions would count "
                             f"twice); give each baseline once")
        seen[identity] = b.path


def _valid_samples(r: Result, name: str, metric: str) -> list[float] | None:
    """The baseline's valid samples of a benchmark; None when it is absent or was skipped there
    (not run: no data, rather than bad data), [] when it failed or ran throttled."""
    b = r.benchmarks.get(name)
    if b is None or b.skipped:
        return None
    if not b.ok or b.verification_failed or b.throttled:
        return []
    return b.values(metric)


def _measured(b) -> bool:
    """A row that ran and measured: not skipped, not failed, not throttled, with samples."""
    return (b is not None and b.ok and not b.skipped and not b.verification_failed
            and not b.throttled and bool(b.samples))


def check_rows_repetitions(new: Result, baselines: list[Result], min_samples: int) -> None:
    """Refuses (UsageError, "too little data") a comparison in which a benchmark measured both
    in NEW and in a baseline file has fewer than `min_samples` per-repetition samples on either
    side: the minimum holds per row, so one well-repeated row cannot carry a file whose other
    rows ran once. Rows with no samples on one side are not refused here (INVALID or not
    compared, saying why)."""
    for b in new.benchmarks.values():
        if not _measured(b):
            continue
        for r in baselines:
            rb = r.benchmarks.get(b.name)
            if not _measured(rb):
                continue
            for role, res, n in (("", new, len(b.samples)), ("baseline ", r, len(rb.samples))):
                if n < min_samples:
                    raise UsageError(f"too little data: {role}{res.path}: benchmark {b.name} has "
                                     f"{n} per-repetition sample(s); need {min_samples} (run "
                                     f"gpubench with --benchmark_repetitions={max(5, min_samples)}, "
                                     f"without --benchmark_report_aggregates_only)")


def compare(new: Result, baselines: list[Result], t: Thresholds = Thresholds(),
            force: bool = False) -> Comparison:
    """Compares `new` with the pooled `baselines`; UsageError on invalid input/too little data."""
    if not baselines:
        raise UsageError(f"empty history: no baseline result to compare {new.path} with "
                         f"(device key {new.device_key})")
    for b in baselines:
        if b.device_key != new.device_key and not force:
            raise UsageError(f"device key mismatch: {new.path} is '{new.device_key}' but "
                             f"{b.path} is '{b.device_key}' (use --force to compare anyway)")
    for b in baselines:
        for name, bench in b.benchmarks.items():
            if bench.verification_failed and not t.allow_failures:
                raise UsageError(f"{b.path}: not a valid baseline: benchmark {name} failed "
                                 f"verification ({bench.error or 'not verified'}); "
                                 f"--allow-failures leaves its samples out")
    c = Comparison(str(new.path), [str(b.path) for b in baselines], new.device_key, t)
    for b in baselines:
        for name, bench in b.benchmarks.items():
            if bench.verification_failed:
                c.notes.append(f"{b.path}: {name} failed verification there; its samples left out")
    if force and any(b.device_key != new.device_key for b in baselines):
        c.notes.append("forced comparison across device keys")
    for b in baselines:
        if b.ctx("quick") != new.ctx("quick"):
            c.notes.append(f"{b.path} ran with quick={b.ctx('quick')}, the new result with "
                           f"quick={new.ctx('quick')}: only benchmarks of the same name compared")
    for r in [new, *baselines]:  # each file, so that a poor one is named, not pooled away
        few = too_few_repetitions(r, t.min_samples)
        if few:
            role = "" if r is new else "baseline "
            raise UsageError(f"too little data: {role}{r.path} {few} (run gpubench with "
                             f"--benchmark_repetitions={max(5, t.min_samples)}, without "
                             f"--benchmark_report_aggregates_only)")
    check_rows_repetitions(new, baselines, t.min_samples)
    for b in new.benchmarks.values():
        if b.skipped:
            c.not_compared.append((b.name, b.error or "skipped"))
            continue
        if b.verification_failed:
            c.rows.append(Row(b.name, b.metric, "INVALID", b.error or "not verified", failed=True,
                              higher_is_better=b.higher_is_better))
            continue
        if not b.samples:
            c.not_compared.append((b.name, "no per-repetition samples in the new result"))
            continue
        if b.throttled:
            c.rows.append(Row(b.name, b.metric, "INVALID", "clocks throttled during the run",
                              new_median=b.median(b.metric), n_new=len(b.samples),
                              higher_is_better=b.higher_is_better))
            continue
        pooled: list[float] = []
        seen = False
        for r in baselines:
            vals = _valid_samples(r, b.name, b.metric)
            if vals is not None:
                seen = True
                pooled += vals
        if not seen:
            skips = [r.benchmarks[b.name].error for r in baselines
                     if b.name in r.benchmarks and r.benchmarks[b.name].skipped]
            c.not_compared.append((b.name, f"skipped in the baseline: {skips[-1]}" if skips
                                   else "new benchmark: not in the baseline"))
            continue
        if not pooled:
            bad = [r.benchmarks[b.name] for r in baselines if b.name in r.benchmarks]
            why = ("failed or throttled there" if all(
                x.skipped or not x.ok or x.verification_failed or x.throttled for x in bad)
                else f"none with per-repetition values of {b.metric} there")
            c.rows.append(Row(b.name, b.metric, "INVALID", f"no valid baseline samples ({why})",
                              new_median=b.median(b.metric), n_new=len(b.samples),
                              higher_is_better=b.higher_is_better))
            continue
        values = b.values(b.metric)
        if not values:  # as a baseline without them: the row judged nothing
            c.rows.append(Row(b.name, b.metric, "INVALID", f"no per-repetition values of "
                              f"{b.metric} in the new result", n_new=len(b.samples),
                              higher_is_better=b.higher_is_better))
            continue
        c.rows.append(judge(b.name, b.metric, values, pooled, t, b.higher_is_better))
    few = [r for r in c.rows if r.test == "no_overlap"]
    if few:
        c.notes.append(
            f"{len(few)} benchmark(s) had too few samples for the Mann-Whitney U test to reach "
            f"alpha {t.alpha:g} (smallest attainable p {max(r.min_p_value for r in few):.3g}) "
            f"and were judged by the no-overlap rule; more repetitions (5 or more, or several "
            f"baseline results) let the U-test decide")
    names = set(new.benchmarks)
    for r in baselines:
        for name in r.benchmarks:
            if name not in names:
                names.add(name)
                c.not_compared.append((name, "missing from the new result"))
    if not c.rows:
        raise UsageError(f"too little data: no benchmark of {new.path} could be compared with "
                         f"the baseline ({len(c.not_compared)} not compared)")
    return c


def nothing_comparable(c: Comparison) -> str:
    """Why no benchmark of the comparison could be compared ("" when one could): every row is
    INVALID (throttled, no valid baseline samples, ...) and none failed verification in NEW
    (a failed verification is a finding about the code, not a lack of data: a failed
    comparison, exit 1, or reported with allow_failures)."""
    if any(r.verdict != "INVALID" or r.failed for r in c.rows):
        return ""
    first = c.rows[0]
    return (f"nothing comparable: all {len(c.rows)} benchmark(s) of {c.new} are INVALID "
            f"(e.g. {first.name}: {first.reason}); no verdict is possible")


def apply_confirmation(first: Comparison, rerun: Comparison) -> None:
    """Keeps a SLOWER verdict only where the re-run of that benchmark is SLOWER too; a suspect
    whose re-run failed verification is a failure (INVALID, failed), not a regression dismissed."""
    again = {r.name: r for r in rerun.rows}
    for row in first.rows:
        if row.verdict != "SLOWER":
            continue
        r2 = again.get(row.name)
        if r2 is not None and r2.failed:
            row.verdict, row.failed = "INVALID", True
            row.reason = f"re-run failed verification: {r2.reason}; first run: {row.reason}"
        elif r2 is not None and r2.verdict == "SLOWER":
            row.reason += f"; confirmed by re-run ({r2.change:+.1%}, {_evidence(r2)})"
        else:
            seen = f"{r2.verdict} {r2.change:+.1%}" if r2 and r2.change is not None else \
                (r2.verdict if r2 else "not measured")
            row.verdict = "NOISY"
            row.reason = f"not confirmed by re-run (re-run: {seen}); first run: {row.reason}"
    first.notes.append(f"suspects re-run: {rerun.new}")


def _fmt(v: float | None, pct: bool = False) -> str:
    if v is None:
        return "-"
    return f"{v:+.1%}" if pct else f"{v:.4g}"


def to_markdown(c: Comparison) -> str:
    """A human report: summary, the verdict table (worst first) and what was not compared."""
    t = c.thresholds
    counts = c.counts()
    lines = [
        "# gpubench comparison",
        "",
        f"- new: `{visible(c.new)}`",
        f"- baseline ({len(c.baselines)}): " + ", ".join(f"`{visible(b)}`" for b in c.baselines),
        f"- device key: `{visible(c.device_key)}`",
        f"- thresholds: min effect {t.min_effect:.1%}, {t.noise_k:g} x baseline noise, "
        f"Mann-Whitney U alpha {t.alpha:g} (where the samples are too few for it to reach "
        f"alpha: no overlap)",
        "- verdicts: " + ", ".join(f"{v} {n}" for v, n in counts.items()),
        f"- result: **{verdict_line(c)}**",
        "",
        "| benchmark | metric | baseline | new | change | noise | p | verdict | why |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    order = {v: i for i, v in enumerate(VERDICTS)}
    for r in sorted(c.rows, key=lambda r: (order[r.verdict], r.gain)):
        noise = f"{r.baseline_noise:.1%}" if r.baseline_noise is not None else "-"
        p = f"{r.p_value:.3g}" if r.p_value is not None else "-"
        # (a cell ends at a "|" or a newline: an error_message may hold either)
        lines.append(f"| `{markdown_cell(r.name)}` | {markdown_cell(r.metric)} | {_fmt(r.baseline_median)} | "
                     f"{_fmt(r.new_median)} | {_fmt(r.change, True)} | {noise} | {p} | "
                     f"**{r.verdict}** | {markdown_cell(r.reason)} |")
    if c.not_compared:
        lines += ["", "Not compared:", ""]
        lines += [f"- `{visible(n)}`: {visible(why)}" for n, why in c.not_compared]
    if c.notes:
        lines += ["", "Notes:", ""] + [f"- {visible(n)}" for n in c.notes]
    return "\n".join(lines) + "\n"


def to_json(c: Comparison) -> str:
    """The comparison for machines."""
    doc = {
        "tool": "gpubench compare",
        "new": c.new,
        "baselines": c.baselines,
        "device_key": c.device_key,
        "thresholds": asdict(c.thresholds),
        "exit_code": c.exit_code,
        "counts": c.counts(),
        "rows": [asdict(r) for r in c.rows],
        "not_compared": [{"name": n, "reason": why} for n, why in c.not_compared],
        "notes": c.notes,
    }
    return json.dumps(doc, indent=2) + "\n"


def to_junit(c: Comparison) -> str:
    """JUnit XML: one test case per benchmark; SLOWER and failed verification fail (unless
    failures are allowed), other INVALID rows are skipped."""
    counts = c.counts()
    failing = 0 if c.thresholds.allow_failures else len(c.failures())
    suite = ET.Element("testsuite", name="gpubench.compare", tests=str(len(c.rows)),
                       failures=str(counts["SLOWER"] + failing), errors="0",
                       skipped=str(counts["INVALID"] - failing))
    props = ET.SubElement(suite, "properties")
    for k, v in (("device_key", c.device_key), ("new", c.new),
                 ("baselines", " ".join(c.baselines))):
        ET.SubElement(props, "property", name=k, value=xml_text(v))
    for r in c.rows:
        case = ET.SubElement(suite, "testcase", classname=xml_text(f"gpubench.{r.name.split('/')[0]}"),
                             name=xml_text(r.name), time="0")
        # (ElementTree writes any character; one XML forbids, an ESC in an error_message, made
        # the file unreadable)
        summary = xml_text(f"{r.verdict}: {r.metric} {_fmt(r.baseline_median)} -> {_fmt(r.new_median)} "
                           f"({_fmt(r.change, True)}): {r.reason}")
        if r.verdict == "SLOWER":
            ET.SubElement(case, "failure", message=summary, type="regression").text = summary
        elif r.failed and not c.thresholds.allow_failures:
            ET.SubElement(case, "failure", message=summary, type="verification").text = summary
        elif r.verdict == "INVALID":
            ET.SubElement(case, "skipped", message=summary)
        else:
            ET.SubElement(case, "system-out").text = summary
    ET.indent(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") \
        + "\n"


REPORTS = (("--markdown", to_markdown), ("--json", to_json), ("--junit", to_junit))


def open_reports(markdown: Path | str | None = None, json_path: Path | str | None = None,
                 junit: Path | str | None = None,
                 overwrite: bool = False) -> list[tuple[NewFile, object]]:
    """A temporary file in each requested report's folder (output.NewFile), with its renderer:
    creating them is the check, before any work, that every folder can be written (UsageError
    naming the path otherwise, and no temporary left)."""
    files: list[tuple[NewFile, object]] = []
    try:
        for (flag, render), path in zip(REPORTS, (markdown, json_path, junit)):
            if path is not None:
                files.append((NewFile(path, overwrite, label=str(path)), render))
    except BaseException:
        for f, _ in files:
            f.discard()
        raise
    return files


def write_reports(c: Comparison, markdown: Path | str | None = None,
                  json_path: Path | str | None = None, junit: Path | str | None = None,
                  overwrite: bool = False, files: list | None = None) -> None:
    """Writes the requested report files (or the ones open_reports() prepared) all or none:
    each is written to its temporary, then all are moved onto their names together
    (output.commit_all); on any error (a full disk, a file that appeared meanwhile without
    `overwrite`) none is left, not even a partial or empty one, and the UsageError names the
    path."""
    if files is None:
        files = open_reports(markdown, json_path, junit, overwrite)
    try:
        for f, render in files:
            try:
                with open(f.tmp, "w", encoding="utf-8") as out:
                    out.write(render(c))
            except OSError as e:
                raise UsageError(f"{f.label}: cannot write: {e.strerror or e}") from None
        commit_all([f for f, _ in files])
    except BaseException:
        for f, _ in files:
            f.discard()
        raise
