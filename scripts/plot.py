#!/usr/bin/env python3
"""Draws the sweep plots of a gpubench result file, each only when the result has its data:
bandwidth against working set (L2 marked), strided falloff (useful and sector GB/s), PCIe
against transfer size, GEMM TFLOP/s against size with the cuBLAS line; and for the memory
family: allocate + free latency against size per allocator (median, p99 markers), managed
memory GB/s against size per variant (on the host: first-touch page-fault GB/s), copy/compute
overlap efficiency against streams (threads on the host) with the end-to-end GB/s below.

  python scripts/plot.py RESULT.json [--out-dir plots/<device_key>] [--force]

Writes <out-dir>/<result stem>_<kind>.png, kind one of bandwidth, strided, pcie, gemm,
memory_alloc, memory_managed, memory_first_touch, memory_overlap, and prints each path. An
existing <stem>_*.png in the directory is not overwritten without --force.
Bad input: one line on stderr, exit 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpubench_tools.errors import exit_on_signals  # noqa: E402

exit_on_signals("plot.py", __name__)  # a signal while the modules below load: one line

from gpubench_tools.errors import UsageError, make_parser, run_cli  # noqa: E402
from gpubench_tools.plots import write_plots  # noqa: E402
from gpubench_tools.results import load_result  # noqa: E402
from gpubench_tools.store import check_device_key  # noqa: E402


def main(argv=None) -> int:
    p = make_parser("plot.py", __doc__)
    p.add_argument("result", metavar="RESULT.json", help="a gpubench result file")
    p.add_argument("--out-dir", metavar="DIR",
                   help="where the PNGs go (default: plots/<device_key>)")
    p.add_argument("--force", action="store_true", help="overwrite PNGs that exist")
    a = p.parse_args(argv)
    r = load_result(a.result)
    out_dir = Path(a.out_dir) if a.out_dir else (Path("plots")
                                                 / check_device_key(r.device_key, r.path))
    if (out_dir.exists() or out_dir.is_symlink()) and not out_dir.is_dir():
        raise UsageError(f"{'--out-dir ' if a.out_dir else ''}{out_dir}: not a folder")
    existing = sorted(out_dir.glob(f"{r.path.stem}_*.png")) if out_dir.is_dir() else []
    if existing and not a.force:
        raise UsageError(f"{existing[0]} exists; plots are not overwritten without --force")
    paths = write_plots(r, out_dir, r.path.stem, overwrite=a.force)
    if not paths:
        print(f"plot.py: note: {r.path} has no sweep data to plot", file=sys.stderr)
    for path in paths:
        print(path)
    # --force replaced what this result draws; PNGs of the stem that it does not draw are an
    # earlier result's (another device's sweeps), left as they were: said, not silently mixed in.
    stale = sorted(set(existing) - {Path(x) for x in paths})
    if stale:
        print(f"plot.py: note: {len(stale)} PNG(s) of this name in {out_dir} are from an earlier plot, not "
              f"this result: {', '.join(x.name for x in stale)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli("plot.py", main))
