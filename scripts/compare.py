#!/usr/bin/env python3
"""Compares a new gpubench result with a baseline and says whether anything got slower.

  python scripts/compare.py NEW.json BASELINE.json [MORE_BASELINES.json ...]
  python scripts/compare.py NEW.json --history results --last 5     # last 5 valid, same device

Per benchmark: SAME, FASTER, SLOWER, NOISY or INVALID (see gpubench_tools/compare.py). SLOWER
needs the loss to exceed --min-effect AND --noise-k x the baseline's noise AND a one-sided
Mann-Whitney U test at --alpha (where the samples are too few for that test ever to reach
--alpha, e.g. 3 against 3: no overlap between new and baseline samples instead); INVALID =
throttled or failed verification. The change is new / baseline - 1 of the metric itself (a rise
of latency is positive, and a loss).
Prints the markdown report; --markdown/--json/--junit also write it to files: new files (an
existing one replaced only with --force, never an input nor through a symbolic link) in folders
that exist, one per option, written all or none (a failure leaves none of them).
A benchmark of NEW that failed verification fails the comparison: one line on stderr each,
"compare.py: FAILED VERIFICATION: <benchmark>: <message>", exit 1 (unless --allow-failures).
A baseline in which a benchmark failed verification is refused (exit 2; --history passes such
files over). Rows the harness skipped ("skipped: ...") fail nothing: they are not compared.
Exit: 0 no confirmed regression, 1 regression or failed verification, 2 invalid input or too
little data (one line on stderr: missing or truncated file, not a regular file (a FIFO, a device),
not a gpubench result, device-key
mismatch without --force, a device key that is no folder name with --history, a --history that
is no folder, --last without --history, empty history,
a baseline that failed verification, a baseline given twice or NEW given as its own baseline,
fewer than --min-samples repetitions in NEW or in a baseline file on any benchmark measured in
both; --history passes over with a note files with too few on every benchmark, and copies of
one run (the same result under another name: the newest counts once, a copy of NEW never); "nothing
comparable" when every compared benchmark is INVALID and none failed verification: no report
is written then).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpubench_tools.errors import exit_on_signals  # noqa: E402

exit_on_signals("compare.py", __name__)  # a signal while the modules below load: one line

from gpubench_tools.compare import (Thresholds, check_distinct, check_not_new, compare,  # noqa: E402
                                    failure_lines, nothing_comparable, open_reports,
                                    to_markdown,
                                    write_reports)
from gpubench_tools.errors import UsageError, make_parser, run_cli  # noqa: E402
from gpubench_tools.output import check_not_inputs, visible  # noqa: E402
from gpubench_tools.results import load_result  # noqa: E402
from gpubench_tools.store import check_device_key, history, last_valid  # noqa: E402


def add_threshold_args(p) -> None:
    """The comparator's thresholds, shared with nightly.py."""
    d = Thresholds()
    p.add_argument("--min-effect", type=float, default=d.min_effect, metavar="FRACTION",
                   help=f"smallest relative change ever flagged (default {d.min_effect})")
    p.add_argument("--noise-k", type=float, default=d.noise_k, metavar="K",
                   help=f"a loss must exceed K x the baseline noise (default {d.noise_k:g})")
    p.add_argument("--alpha", type=float, default=d.alpha,
                   help=f"Mann-Whitney U significance level (default {d.alpha})")
    p.add_argument("--min-samples", type=int, default=d.min_samples, metavar="N",
                   help=f"repetitions needed per benchmark (default {d.min_samples})")
    p.add_argument("--allow-failures", action="store_true",
                   help="do not fail (exit 1) because a benchmark failed verification in the new "
                        "run, and take baselines in which one did (its samples left out)")


def thresholds_from(a) -> Thresholds:
    """Thresholds from parsed arguments, checked."""
    import math
    if not all(math.isfinite(v) for v in (a.min_effect, a.noise_k, a.alpha)):
        raise UsageError("--min-effect, --noise-k and --alpha must be finite numbers")
    if not 0 <= a.min_effect < 1:
        raise UsageError(f"--min-effect {a.min_effect} is not a fraction in [0, 1)")
    if a.noise_k < 0 or not 0 < a.alpha < 1 or a.min_samples < 2:
        raise UsageError("--noise-k must be >= 0, --alpha in (0, 1), --min-samples >= 2")
    return Thresholds(a.min_effect, a.noise_k, a.alpha, a.min_samples, a.allow_failures)


def report_paths(a) -> list[tuple[str, Path]]:
    """The report options given: (flag, path as the user wrote it)."""
    return [(flag, Path(value)) for flag, value in (("--markdown", a.markdown), ("--json", a.json),
                                                     ("--junit", a.junit)) if value is not None]


def check_input_files(a) -> None:
    """Refuses, before any is opened, an input that exists but is not a regular file (after
    links): a FIFO would block the read forever, /dev/zero would be read until memory runs out.
    A missing file or a directory is left to load_result(), which says so."""
    for value in [a.new, *a.baselines]:
        try:
            st = os.stat(value)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{value}: not a regular file (a FIFO, device or socket), not a "
                             f"result file")


def check_outputs(a) -> None:
    """Refuses, before any work, a report option with an empty value, one file given for two
    outputs, an output that is a directory, a symbolic link (even with --force: writing through
    it would replace whatever it points at) or one of the inputs (even with --force), one that
    exists (without --force), and one whose folder does not exist: like validate.py, compare.py
    creates no folders, so a mistyped path is an error rather than a new tree."""
    given = [(flag, value) for flag, value in (("--markdown", a.markdown), ("--json", a.json),
                                               ("--junit", a.junit)) if value is not None]
    for flag, value in given:
        if not value.strip():
            raise UsageError(f"{flag} has an empty value")
    paths = report_paths(a)
    if len({p.resolve() for _, p in paths}) < len(paths):
        raise UsageError("the same file is given for two outputs")
    check_not_inputs(paths, [Path(p) for p in [a.new, *a.baselines]])
    for flag, p in paths:
        if p.is_symlink():
            raise UsageError(f"{flag} {p}: is a symbolic link; reports are written only to "
                             f"plain new files (remove the link or name another file)")
        if p.is_dir():
            raise UsageError(f"{p}: is a directory, not a report file")
        if p.exists() and not a.force:
            raise UsageError(f"{p} exists; reports are not overwritten without --force")
        if not p.parent.is_dir():
            raise UsageError(f"{p}: folder {p.parent} does not exist")


def main(argv=None) -> int:
    p = make_parser("compare.py", __doc__)
    p.add_argument("new", metavar="NEW.json", help="the result to judge")
    p.add_argument("baselines", nargs="*", metavar="BASELINE.json",
                   help="baseline results (their repetitions are pooled)")
    p.add_argument("--history", metavar="DIR", help="results store to take the baseline from "
                   "(the last --last valid results of NEW's device key, NEW excluded)")
    p.add_argument("--last", type=int, metavar="N",
                   help="how many earlier results form the baseline with --history (default 5)")
    p.add_argument("--force", action="store_true",
                   help="compare even when the device keys differ, and overwrite existing report files")
    add_threshold_args(p)
    p.add_argument("--markdown", metavar="FILE", help="write the markdown report here too")
    p.add_argument("--json", metavar="FILE", help="write the JSON report here")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML here")
    p.add_argument("--quiet", action="store_true", help="do not print the markdown report")
    a = p.parse_args(argv)
    if a.last is not None and not a.history:  # it would be ignored
        raise UsageError("--last needs --history (it picks how many of the store's results form "
                         "the baseline)")
    a.last = 5 if a.last is None else a.last
    if a.history:
        history_dir = Path(a.history)
        if not history_dir.exists():
            raise UsageError(f"--history {a.history}: no such folder")
        if not history_dir.is_dir():
            raise UsageError(f"--history {a.history}: not a folder (the results store)")
    t = thresholds_from(a)
    check_input_files(a)
    check_outputs(a)
    files = open_reports(a.markdown, a.json, a.junit, overwrite=a.force)
    try:
        new = load_result(a.new)
        if a.baselines and a.history:
            raise UsageError("give baseline files or --history, not both")
        if a.baselines:
            baselines = [load_result(b) for b in a.baselines]
            check_distinct(baselines, new)
        elif a.history:
            if a.last < 1:
                raise UsageError(f"--last {a.last}: need at least 1")
            # the key names the store's folder: one that leads out of it is refused
            check_device_key(new.device_key, new.path)
            notes: list[str] = []
            # every file of the device key's history may be read: none may be an output
            check_not_inputs(report_paths(a), history(a.history, new.device_key))
            baselines = last_valid(a.history, new.device_key, a.last, exclude=new.path,
                                   before=new.path if new.path.parent.name == new.device_key
                                   else None, notes=notes, allow_failures=t.allow_failures,
                                   min_samples=t.min_samples)
            for n in notes:
                print(f"compare.py: note: {visible(n)}", file=sys.stderr)
            check_not_new(new, baselines, content=False)  # NEW linked into the store
            if not baselines:
                raise UsageError(f"empty history: no valid earlier result for device key "
                                 f"'{new.device_key}' in {a.history}")
        else:
            raise UsageError("no baseline: give BASELINE.json files or --history DIR")
        c = compare(new, baselines, t, force=a.force)
        if nothing_comparable(c):
            raise UsageError(nothing_comparable(c))
        write_reports(c, files=files)
    except BaseException:
        for f, _ in files:
            f.discard()
        raise
    if not a.quiet:
        print(to_markdown(c), end="")
    for line in failure_lines(c):
        print(f"compare.py: {line}", file=sys.stderr)
    return c.exit_code


if __name__ == "__main__":
    sys.exit(run_cli("compare.py", main))
