#!/usr/bin/env python3
"""The nightly regression job, for cron or a CI scheduler.

  python scripts/nightly.py [--gpubench PATH] [--results-dir results]
                            [--report-dir DIR] [--filter REGEX] [--quick] [--repetitions 5]

Runs gpubench (--gpubench, else GPUBENCH_BIN, else the gpubench beside this script when
installed, else the build tree's build/gpubench: as validate.py finds it) with repetitions and
random interleaving into the results store
(<results-dir>/<device_key>/<UTC time>_<revision>.json), compares the new result with the last
--last valid results of the same device key, re-runs the benchmarks found SLOWER once to confirm
them, and writes report.md, report.json, junit.xml and trends/<benchmark>.png into the report
directory (default <results-dir>/../plots/nightly/<device_key>).
A benchmark that failed verification fails the night: one line on stderr each,
"nightly.py: FAILED VERIFICATION: <benchmark>: <message>", and that result is never a baseline
(both unless --allow-failures). Rows gpubench skipped ("skipped: ...") fail nothing.
Exit: 0 no confirmed regression, 1 confirmed regression or failed verification, 2 invalid input,
gpubench could not run, or no baseline yet (first run of a device key; 0 with
--allow-empty-history).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpubench_tools.errors import exit_on_signals  # noqa: E402

exit_on_signals("nightly.py", __name__)  # a signal while the modules below load: one line

from compare import add_threshold_args, thresholds_from  # noqa: E402
from gpubench_tools.errors import UsageError, make_parser, run_cli  # noqa: E402
from gpubench_tools.gpubench_process import check_timeout, default_gpubench  # noqa: E402
from gpubench_tools.nightly import NightlyOptions, run_nightly  # noqa: E402
from gpubench_tools.output import visible  # noqa: E402


def main(argv=None) -> int:
    p = make_parser("nightly.py", __doc__)
    p.add_argument("--gpubench", type=Path, default=None, metavar="PATH",
                   help="the gpubench executable (default: GPUBENCH_BIN, then the gpubench "
                        "beside this script when installed, then the build tree's build/gpubench)")
    p.add_argument("--results-dir", type=Path, default=Path("results"), metavar="DIR",
                   help="the results store (default results)")
    p.add_argument("--report-dir", type=Path, metavar="DIR",
                   help="where report.md, report.json, junit.xml, trends/ go")
    p.add_argument("--device", default="auto", help="gpubench --device (default auto)")
    p.add_argument("--filter", metavar="REGEX", help="gpubench --filter")
    p.add_argument("--quick", action="store_true", help="gpubench --quick (smoke runs)")
    p.add_argument("--repetitions", type=int, default=5, metavar="N",
                   help="--benchmark_repetitions (default 5)")
    p.add_argument("--last", type=int, default=5, metavar="N",
                   help="baseline = the last N valid results of the device key (default 5)")
    add_threshold_args(p)
    p.add_argument("--no-rerun", action="store_true",
                   help="do not re-run suspects to confirm a regression")
    p.add_argument("--allow-empty-history", action="store_true",
                   help="exit 0 (not 2) when there is no baseline yet")
    p.add_argument("--trend-window", type=int, default=30, metavar="N",
                   help="runs shown in the trend plots (default 30)")
    p.add_argument("--gpubench-arg", action="append", default=[], metavar="ARG",
                   help="extra argument passed to gpubench, e.g. --gpubench-arg=--no-numa-bind")
    p.add_argument("--timeout", type=float, default=6 * 3600, metavar="SECONDS",
                   help="longest a gpubench run may take (default 6 h)")
    a = p.parse_args(argv)
    check_timeout(a.timeout)
    if a.device.strip() == "all":  # one result per GPU and phase: the history is a device key's
        raise UsageError("--device all: nightly.py compares one GPU's result with that GPU's history; "
                         "run it once per GPU (--device 0, --device 1, ...)")
    if a.repetitions < 2 or a.last < 1 or a.trend_window < 2:
        raise UsageError("--repetitions >= 2, --last >= 1 and --trend-window >= 2 are needed")
    o = NightlyOptions(
        gpubench=a.gpubench or default_gpubench(Path(__file__).resolve().parent),
        results_dir=a.results_dir,
        report_dir=a.report_dir, device=a.device, filter=a.filter, quick=a.quick,
        repetitions=a.repetitions, last_n=a.last, thresholds=thresholds_from(a),
        rerun=not a.no_rerun, allow_empty_history=a.allow_empty_history,
        trend_window=a.trend_window, extra_args=a.gpubench_arg, timeout_s=a.timeout)
    out = run_nightly(o)
    # (paths, notes and messages name stored files and their rows: never a raw ESC or newline)
    print(f"result: {visible(str(out.result))}")
    for f in out.files:
        print(f"wrote: {visible(str(f))}")
    for line in out.notes:  # a stored file left out of the baseline or the trends
        print(f"note: {visible(line)}")
    stream = sys.stderr if out.exit_code == 2 else sys.stdout
    print(f"nightly.py: {visible(out.message)}", file=stream)
    for line in out.failures:
        print(f"nightly.py: {visible(line)}", file=sys.stderr)
    return out.exit_code


if __name__ == "__main__":
    sys.exit(run_cli("nightly.py", main))
