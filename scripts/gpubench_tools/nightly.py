"""The nightly job: run gpubench into the results store, compare with the device's history,
confirm suspects by a re-run, write the report, the JUnit file and the trend plots.

Steps:
1. `gpubench --results-dir=DIR --benchmark_repetitions=R
   --benchmark_enable_random_interleaving=true [--filter] [--quick] [--device]`; the stored
   file is the path gpubench prints as `result: <path>` (last stderr line).
2. Baseline: the last N valid results of the same device key before it (store.last_valid).
   Results in which a benchmark failed verification are never baselines (unless
   --allow-failures). None: the report says "no baseline yet" and the job exits 2 (0 with
   --allow-empty-history, for the first night of a new machine) - or 1 when the new result
   itself failed verification somewhere or has no verified benchmark.
3. compare.compare(); when something is SLOWER, gpubench runs again with only those benchmarks
   (`--filter=^(name|name...)/`), written beside the report (not into the store: the history
   keeps one full run per night), and a SLOWER verdict stands only if the re-run is SLOWER too.
4. report.md, report.json, junit.xml and trends/<benchmark>.png in the report directory.
5. Exit with the comparator's code (0 / 1 / 2): 1 for a confirmed regression or a benchmark that
   failed verification (each named on a "FAILED VERIFICATION: <benchmark>: <message>" line,
   NightlyOutcome.failures). Rows the harness skipped ("skipped: ...") fail nothing.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .compare import (Comparison, Thresholds, apply_confirmation, compare, failure_lines, to_json,
                      to_junit, to_markdown, verdict_line)
from .errors import UsageError
from .gpubench_process import (Finished, check_results_dir, executable, new_folders, remove_new_empty,
                               run)
from .output import NewFile, check_outside, commit_all, make_folders, remove_empty, temporary_prefix, umask, visible
from .results import Result, load_result
from .store import (check_device_key, failed_verification, history, is_valid_baseline,
                    last_valid)
from .trends import draw_trend, file_name, trend_data


@dataclass
class NightlyOptions:
    """Everything the job needs (the CLI's flags)."""

    gpubench: Path
    results_dir: Path
    report_dir: Path | None = None  #: default: <results_dir>/../plots/nightly/<device_key>
    device: str = "auto"
    filter: str | None = None
    quick: bool = False
    repetitions: int = 5
    last_n: int = 5
    thresholds: Thresholds = Thresholds()
    rerun: bool = True
    allow_empty_history: bool = False
    trend_window: int = 30
    extra_args: list[str] = field(default_factory=list)
    timeout_s: float = 6 * 3600


@dataclass
class NightlyOutcome:
    """What the job produced."""

    exit_code: int
    result: Path
    report_dir: Path
    files: list[Path] = field(default_factory=list)
    comparison: Comparison | None = None
    message: str = ""
    #: "FAILED VERIFICATION: <benchmark>: <message>" per benchmark of the new run that failed
    failures: list[str] = field(default_factory=list)
    #: one line per stored file left out (not a valid result, failed verification, ...)
    notes: list[str] = field(default_factory=list)


def run_gpubench(o: NightlyOptions, args: list[str], writes_to: Path) -> Finished:
    """Runs gpubench with the common flags plus `args`; UsageError when it cannot run or runs
    past the timeout (stopped with SIGTERM first, so it removes its temporary result from
    `writes_to`, the folder it writes to: gpubench_process.run)."""
    cmd = [executable(o.gpubench), f"--device={o.device}",
           f"--benchmark_repetitions={o.repetitions}",
           "--benchmark_enable_random_interleaving=true"]
    if o.quick:
        cmd.append("--quick")
    cmd += o.extra_args + args
    try:
        proc = run(cmd, o.timeout_s, [writes_to])
    except FileNotFoundError:
        raise UsageError(f"{o.gpubench}: gpubench executable not found (build it, or pass "
                         f"--gpubench PATH)") from None
    except PermissionError:
        raise UsageError(f"{o.gpubench}: not executable") from None
    if proc.timed_out:
        raise UsageError(f"{o.gpubench} did not finish within {o.timeout_s:g} s (stopped; no "
                         f"result stored)")
    if proc.returncode not in (0, 1):  # 1 = a benchmark failed verification: still a result
        first = (proc.stderr.strip().splitlines() or ["(no output)"])[0]
        raise UsageError(f"gpubench exited {proc.returncode}: {first}")
    return proc


def stored_path(proc: Finished) -> Path:
    """The `result: <path>` line gpubench prints last on stderr."""
    for line in reversed(proc.stderr.splitlines()):
        if line.startswith("result: "):
            return Path(line[len("result: "):])  # (a path may begin or end with a space)
    raise UsageError("gpubench printed no 'result: <path>' line")


def suspects_filter(names: list[str]) -> str:
    """A --filter regex selecting exactly these benchmarks (Google Benchmark appends
    /manual_time to the names it matches)."""
    return "^(" + "|".join(re.escape(n) for n in names) + ")(/|$)"


def default_report_root(results_dir: Path) -> Path:
    """Where the nightly reports go without --report-dir (a folder per device key below)."""
    return results_dir.resolve().parent / "plots" / "nightly"


def check_folder(folder: Path, what: str) -> None:
    """UsageError unless `folder` is a folder that can be written, or can be created there:
    the nearest part of it that exists is a folder we may write in. Checked before gpubench
    runs (hours), so that a report with nowhere to go is refused at once, not after."""
    p = folder
    while not (p.exists() or p.is_symlink()) and p.parent != p:
        p = p.parent
    if not p.is_dir():
        raise UsageError(f"{what} {folder}: {p} is not a folder" if p != folder
                         else f"{what} {folder}: not a folder")
    if not os.access(p, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {folder}: {p} is not writable")


def run_nightly(o: NightlyOptions) -> NightlyOutcome:
    """The whole job; UsageError for problems before a comparison is possible (every output
    folder is checked before gpubench runs)."""
    check_results_dir(o.results_dir)
    check_folder(o.results_dir, "--results-dir")
    if o.report_dir is not None:
        check_folder(o.report_dir, "--report-dir")
        # every *.json under the store is read as a result: a report there broke fleet.py's next run
        check_outside([("--report-dir", o.report_dir)], o.results_dir, "the results store")
    else:
        check_folder(default_report_root(o.results_dir), "the default report folder")
    store_made = make_folders(o.results_dir)
    keys_before = new_folders(o.results_dir)
    args = [f"--results-dir={o.results_dir}"]
    if o.filter:
        args.append(f"--filter={o.filter}")
    try:
        new_path = stored_path(run_gpubench(o, args, o.results_dir))
    except BaseException:  # no result: the folders made for it go, when empty
        remove_new_empty(o.results_dir, keys_before)
        remove_empty(store_made)
        raise
    new = load_result(new_path)
    check_device_key(new.device_key, new_path)  # it names folders below
    # one folder per night (named after its result), so no night's report replaces another's;
    # built under a temporary name beside it and renamed into place when whole, so that a
    # failed or interrupted night leaves no folder (or a partial one) behind
    report_dir = (o.report_dir or default_report_root(o.results_dir) / new.device_key) \
        / new_path.stem
    made = make_folders(report_dir.parent)
    try:
        if report_dir.exists() or report_dir.is_symlink():
            raise UsageError(f"{report_dir}: the night's report folder exists already "
                             f"(not overwritten)")
        building = Path(tempfile.mkdtemp(prefix=temporary_prefix(report_dir), suffix=".tmp",
                                          dir=report_dir.parent))
    except BaseException:
        remove_empty(made)
        raise
    try:
        os.chmod(building, 0o777 & ~umask())
        out = _night(o, new, new_path, building, report_dir)
        os.rename(building, report_dir)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        remove_empty(made)
        raise
    out.report_dir = report_dir
    out.files = [report_dir / f.relative_to(building) for f in out.files]
    return out


def _night(o: NightlyOptions, new: Result, new_path: Path, report_dir: Path,
           final_dir: Path) -> NightlyOutcome:
    """Compares, confirms and writes the night's report into `report_dir` (the temporary
    folder that becomes `final_dir`)."""
    out = NightlyOutcome(0, new_path, report_dir)
    notes: list[str] = []
    baselines = last_valid(o.results_dir, new.device_key, o.last_n, exclude=new_path,
                           before=new_path, notes=notes,
                           allow_failures=o.thresholds.allow_failures,
                           min_samples=o.thresholds.min_samples)
    if not baselines:
        failed = [] if o.thresholds.allow_failures else failed_verification(new)
        if failed:
            out.exit_code = 1
            out.failures = [visible(f"FAILED VERIFICATION: {n}: {m}") for n, m in failed]  # (as compare's)
            out.message = (f"{new_path}: FAILED VERIFICATION ({len(failed)} benchmark(s)): "
                           + ", ".join(n for n, _ in failed) + f" (and there is no baseline "
                           f"yet for device key '{new.device_key}')")
        elif not is_valid_baseline(new, o.thresholds.allow_failures):
            out.exit_code = 1
            out.message = (f"{new_path}: no benchmark ran verified and unthrottled; not a valid "
                           f"result (and there is no baseline yet for device key '{new.device_key}')")
        else:
            out.exit_code = 0 if o.allow_empty_history else 2
            out.message = (f"no baseline yet: {new_path} is the first valid result of device key "
                           f"'{new.device_key}' in {o.results_dir}; the next run compares with it")
        out.notes = notes
        md = report_dir / "report.md"
        text = (f"# gpubench nightly\n\n- new: `{new_path}`\n- {out.message}\n"
                + "".join(f"- {line}\n" for line in out.failures) + "".join(f"- {line}\n" for line in notes))
        # (named as it will be: the folder being built is a temporary one; f.write names it on a full disk)
        with NewFile(md, label=str(final_dir / md.name)) as f:
            f.write(lambda tmp: tmp.write_text(text, encoding="utf-8"))
        out.files.append(md)
        return out
    c = compare(new, baselines, o.thresholds)
    c.notes += notes
    if c.slower() and o.rerun:
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        rerun_path = report_dir / f"rerun_{stamp}.json"
        run_gpubench(o, [f"--filter={suspects_filter([r.name for r in c.slower()])}",
                         f"--out={rerun_path}"], report_dir)
        rerun = load_result(rerun_path)
        rerun.path = final_dir / rerun_path.name  # where it will be
        apply_confirmation(c, compare(rerun, baselines, o.thresholds))
        out.files.append(rerun_path)
    out.comparison = c
    out.exit_code = c.exit_code
    out.failures = failure_lines(c)
    trend_notes: list[str] = []
    trends = write_trends(o, new, c, report_dir / "trends", trend_notes, shown_dir=final_dir / "trends")
    c.notes += trend_notes
    out.notes = notes + trend_notes
    reports = [NewFile(report_dir / name, label=str(final_dir / name))
               for name in ("report.md", "report.json", "junit.xml")]
    try:  # all three whole, or none
        for f, render in zip(reports, (to_markdown, to_json, to_junit)):
            text = render(c)
            f.write(lambda tmp: tmp.write_text(text, encoding="utf-8"))
        out.files += commit_all(reports)
    finally:
        for f in reports:
            f.discard()  # a no-op for those committed
    out.files += trends
    out.message = (f"{verdict_line(c)}: "
                   + ", ".join(f"{v} {n}" for v, n in c.counts().items()))
    return out


def write_trends(o: NightlyOptions, new: Result, c: Comparison, out_dir: Path,
                 notes: list[str] | None = None, shown_dir: Path | None = None) -> list[Path]:
    """One trend PNG per compared benchmark over the last trend_window stored runs (a stored
    file that is not a valid result is left out, with a line in `notes` naming it); messages
    name `shown_dir` for `out_dir` (the folder out_dir becomes)."""
    paths = history(o.results_dir, new.device_key)[-o.trend_window:]  # (last_valid noted bad names)
    runs: list[Result] = []
    for p in paths:
        try:
            r = load_result(p)
        except UsageError as e:
            if notes is not None:
                notes.append(f"left out of the trends: {e}")
            continue
        if r.device_key == new.device_key:
            runs.append(r)
    written = []
    for row in c.rows:
        d = trend_data(runs, row.name, o.last_n, o.thresholds,
                       final_verdict=row.verdict if row.verdict != "INVALID" else None)
        if d is not None and len(d.points) >= 2:
            written.append(draw_trend(d, out_dir / file_name(row.name),
                                      label=str((shown_dir or out_dir) / file_name(row.name))))
    return written
