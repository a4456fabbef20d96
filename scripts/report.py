#!/usr/bin/env python3
"""Writes the one-page HTML report of a gpubench result file: the summary (headline numbers
against the card; failed, skipped, noisy and throttled rows), the acceptance verdicts where the
card has expected bands, the roofline and sweep plots (embedded as PNG, drawn from the result),
every benchmark grouped by family, and the context. One self-contained file: no script, nothing
fetched.

  python scripts/report.py RESULT.json [--out plots/<device_key>/<stem>.html] [--force]

Prints the path. An existing report is not overwritten without --force.
Bad input (missing file, not a gpubench result, truncated JSON): one line on stderr, exit 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpubench_tools.errors import exit_on_signals  # noqa: E402

exit_on_signals("report.py", __name__)  # a signal while the modules below load: one line

from gpubench_tools.errors import UsageError, make_parser, run_cli  # noqa: E402
from gpubench_tools.output import NewFile  # noqa: E402
from gpubench_tools.report import build_report  # noqa: E402
from gpubench_tools.results import load_result  # noqa: E402
from gpubench_tools.store import check_device_key  # noqa: E402


def check_out(out: Path, force: bool) -> None:
    """Refuses an output that is a directory, not .html, or exists (without --force)."""
    if out.is_dir():
        raise UsageError(f"--out {out}: is a directory; give the report's file name")
    if out.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"--out {out}: the report must end in .html")
    if out.exists() and not force:
        raise UsageError(f"{out} exists; reports are not overwritten without --force")


def main(argv=None) -> int:
    p = make_parser("report.py", __doc__)
    p.add_argument("result", metavar="RESULT.json", help="a gpubench result file")
    p.add_argument("--out", metavar="FILE.html",
                   help="the report (default: plots/<device_key>/<result stem>.html, next to "
                        "the PNGs scripts/run.sh writes)")
    p.add_argument("--force", action="store_true", help="overwrite the report if it exists")
    a = p.parse_args(argv)
    r = load_result(a.result)
    out = Path(a.out) if a.out else (Path("plots") / check_device_key(r.device_key, r.path)
                                     / f"{r.path.stem}.html")
    check_out(out, a.force)
    # A temporary file in the report's folder, created before anything is drawn (an output
    # that cannot be written is refused at once), moved onto `out` when complete: a reader
    # never sees half a report, and a failed or interrupted run leaves nothing behind.
    # (f.write: a full disk names the report, not only "No space left on device")
    with NewFile(out, overwrite=a.force, label=f"--out {out}") as f:
        page = build_report(r)
        # backslashreplace: a result's file name that is not UTF-8 reaches the page as Python
        # holds it (surrogate escapes), shown as \udcff rather than failing the report.
        f.write(lambda tmp: tmp.write_text(page, encoding="utf-8", errors="backslashreplace"))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli("report.py", main))
