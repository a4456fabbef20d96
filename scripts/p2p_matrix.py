#!/usr/bin/env python3
"""The peer-to-peer bandwidth matrix of a node from its `gpubench --device=all` results (one file
per GPU, e.g. the run's <stem>.deviceN.json files): tables on stdout, row = the GPU that ran,
column = its peer, one table per row kind (copy engine write, read and bidirectional, SM write, read
and bidirectional), GB/s with bytes counted once per direction, and the link of every pair from
NVML's topology; with --out, the same as a heatmap PNG (each cell annotated with its GB/s and
link up to 16 GPUs, colours only beyond).

  python scripts/p2p_matrix.py RESULT.json [RESULT.json ...] [--out PNG] [--force]

An existing PNG is not overwritten without --force. Bad input (a missing file, results of
several hosts, two runs of one GPU, no peer-to-peer rows, a GPU or peer beyond 0-63: no node has
more than 64 GPUs): one line on stderr, exit 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpubench_tools.errors import exit_on_signals  # noqa: E402

exit_on_signals("p2p_matrix.py", __name__)  # a signal while the modules below load: one line

from gpubench_tools.errors import UsageError, make_parser, run_cli  # noqa: E402
from gpubench_tools.output import check_replaceable  # noqa: E402
from gpubench_tools.p2p_matrix import draw_matrix, matrix_data, to_text  # noqa: E402
from gpubench_tools.results import load_result  # noqa: E402


def main(argv=None) -> int:
    p = make_parser("p2p_matrix.py", __doc__)
    p.add_argument("results", metavar="RESULT.json", nargs="+", help="one result file per GPU")
    p.add_argument("--out", metavar="PNG", help="also draw the matrices as a heatmap PNG")
    p.add_argument("--force", action="store_true", help="overwrite the PNG if it exists")
    a = p.parse_args(argv)
    if a.out is not None:
        out = Path(a.out)
        if out.suffix.lower() not in (".png", ".svg", ".pdf"):
            raise UsageError(f"--out {a.out!r}: give a .png, .svg or .pdf file")
        if out.is_dir():
            raise UsageError(f"--out {a.out}: is a folder")
        check_replaceable(out, f"--out {a.out}")  # a link (one that points nowhere too), a device
        if out.exists() and not a.force:
            raise UsageError(f"{a.out} exists; plots are not overwritten without --force")
        if not out.parent.is_dir():
            raise UsageError(f"--out {a.out}: folder {out.parent} does not exist")
    d = matrix_data([load_result(r) for r in a.results])
    sys.stdout.write(to_text(d))
    if a.out:
        print(draw_matrix(d, a.out, overwrite=a.force))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli("p2p_matrix.py", main))
