#!/usr/bin/env python3
"""Names the outliers of a fleet: a results store holding one card on many nodes and GPUs
(scripts/slurm/gpubench_fleet.sbatch writes one), judged headline by headline.

  python scripts/fleet.py STORE [--nodes n01,n02,... | --expect N] [--gpus-per-node N]
                          [--json FILE] [--png FILE] [--markdown FILE] [--quiet]

Per headline metric (DRAM copy, cache plateau, PCIe per direction, SGEMM, FP16 GEMM, peak FMA),
each (node, GPU) gives one value, from its newest result that has the metric; robust z =
(value - fleet median) / (1.4826 x MAD), at least --min-spread of the median (MAD = 0: 1.253314 x
the mean absolute deviation); an outlier when |z| > --z (3.5). A metric with fewer than 3 GPUs
is "too few GPUs for statistics".
Node and GPU come from each result's context (host_name, device_ordinal); STORE/_failed/ holds
the batch script's failure records: such a node is FAILED, unless it has a result that started
after the failure (it was run again). See gpubench_tools/fleet.py for every rule.

Prints the markdown report (nodes and GPUs read, each outlier as node, GPU, metric, value, fleet
median and z, the failed nodes, every metric); --json, --png (a name ending in .png) and
--markdown also write it to files, which are never overwritten nor inside the store (the next
run would read them): each is checked (its folder written to) before the store is read, and they appear together or not at all, with the mode the
umask gives. One stderr line per outlier and failure
("fleet.py: OUTLIER: ..." / "fleet.py: FAILED: ...").
Exit: 0 no outlier and no failed node, 1 outliers or failed nodes, 2 bad input (one line on
stderr: no such or empty store, a truncated or invalid file (named), a result lacking host_name
or device_ordinal, more than one card in the store, an expected node with neither a result nor
a failure record, an output file that exists, cannot be written or is inside the store, a --png
not ending in .png).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpubench_tools.errors import exit_on_signals  # noqa: E402

exit_on_signals("fleet.py", __name__)  # a signal while the modules below load: one line

from gpubench_tools.errors import UsageError, make_parser, run_cli  # noqa: E402
from gpubench_tools.fleet import (MIN_SPREAD, Z_CUTOFF, Rules, analyse, failure_lines,  # noqa: E402
                                  png_bytes, to_json, to_markdown)
from gpubench_tools.output import NewFile, check_outside, commit_all  # noqa: E402


def node_list(text: str) -> tuple[str, ...]:
    """Node names separated by commas or spaces ("n01,n02 n03"); for Slurm's bracket form,
    expand first: scontrol show hostnames 'n[01-08]' | paste -sd,"""
    names = tuple(n for n in text.replace(",", " ").split() if n)
    if not names:
        raise UsageError("--nodes: no node name given")
    if any("[" in n or "]" in n for n in names):
        raise UsageError(f"--nodes {text}: expand Slurm's bracket form first "
                         f"(scontrol show hostnames '{text}' | paste -sd,)")
    return names


def rules_from(a) -> Rules:
    """The rules from parsed arguments, checked."""
    if not (math.isfinite(a.z) and a.z > 0):
        raise UsageError(f"--z {a.z}: need a finite number above 0")
    if not (math.isfinite(a.min_spread) and 0 <= a.min_spread < 1):
        raise UsageError(f"--min-spread {a.min_spread}: need a fraction in [0, 1)")
    if a.nodes is not None and a.expect is not None:
        raise UsageError("give --nodes or --expect, not both")
    if a.expect is not None and a.expect < 1:
        raise UsageError(f"--expect {a.expect}: need at least 1 node")
    if a.gpus_per_node is not None and a.gpus_per_node < 1:
        raise UsageError(f"--gpus-per-node {a.gpus_per_node}: need at least 1")
    nodes = node_list(" ".join(a.nodes)) if a.nodes is not None else ()
    return Rules(z_cutoff=a.z, min_spread=a.min_spread, expected_nodes=nodes,
                 expect_count=a.expect, gpus_per_node=a.gpus_per_node)


def check_outputs(json_path: str | None, png: str | None, markdown: str | None) -> None:
    """Refuses, before any work, an output that exists, is a directory, is given twice, or is
    a PNG under another name (the strip plot is PNG data, as roofline.py's --out is the
    format its name says)."""
    given = [Path(p) for p in (json_path, png, markdown) if p]
    for p in given:
        if p.is_dir():
            raise UsageError(f"{p}: is a directory, not an output file")
        if p.exists() or p.is_symlink():
            raise UsageError(f"{p} exists; fleet.py never overwrites its outputs")
    if png and Path(png).suffix.lower() != ".png":
        raise UsageError(f"--png {png}: the strip plot is a PNG; give a name ending in .png")
    if len({p.resolve() for p in given}) < len(given):
        raise UsageError("the same file is given for two outputs")


def open_outputs(flags: dict[str, str | None]) -> dict[str, NewFile]:
    """A temporary file beside every output (flag -> path), each created before the store is
    read: an output that cannot be written is refused, naming it, before any is written."""
    opened: dict[str, NewFile] = {}
    try:
        for flag, path in flags.items():
            if path:
                opened[flag] = NewFile(path, label=f"{flag} {path}")
    except BaseException:
        for f in opened.values():
            f.discard()
        raise
    return opened


def main(argv=None) -> int:
    p = make_parser("fleet.py", __doc__)
    p.add_argument("store", metavar="STORE", help="the results store of the fleet (a folder)")
    p.add_argument("--nodes", metavar="LIST", action="append",
                   help="nodes that must be in the store, comma or space separated (repeatable)")
    p.add_argument("--expect", type=int, metavar="N", help="or: how many nodes must be there")
    p.add_argument("--gpus-per-node", type=int, metavar="N",
                   help="a node with results for fewer GPUs failed")
    p.add_argument("--z", type=float, default=Z_CUTOFF, metavar="Z",
                   help=f"outlier when |robust z| > Z (default {Z_CUTOFF:g})")
    p.add_argument("--min-spread", type=float, default=MIN_SPREAD, metavar="FRACTION",
                   help=f"smallest z scale, as a fraction of the median (default {MIN_SPREAD:g})")
    p.add_argument("--json", metavar="FILE", help="write the JSON summary here")
    p.add_argument("--png", metavar="FILE", help="write the strip plot here")
    p.add_argument("--markdown", metavar="FILE", help="write the markdown report here too")
    p.add_argument("--quiet", action="store_true", help="do not print the report")
    a = p.parse_args(argv)
    if not a.store.strip():
        raise UsageError("STORE is empty: give the results store's folder")
    for flag, value in (("--json", a.json), ("--png", a.png), ("--markdown", a.markdown)):
        if value is not None and not value.strip():
            raise UsageError(f"{flag} has an empty value")
    rules = rules_from(a)
    check_outputs(a.json, a.png, a.markdown)
    # every *.json under the store is read as a result: an output there broke the next run
    check_outside([(flag, Path(v)) for flag, v in (("--json", a.json), ("--png", a.png),
                                                   ("--markdown", a.markdown)) if v],
                  Path(a.store), "the store it reads")
    outputs = open_outputs({"--markdown": a.markdown, "--json": a.json, "--png": a.png})
    try:
        rep = analyse(a.store, rules)
        report = to_markdown(rep)
        render = {"--markdown": lambda: report.encode("utf-8"),
                  "--json": lambda: to_json(rep).encode("utf-8"), "--png": lambda: png_bytes(rep)}
        for flag, f in outputs.items():
            data = render[flag]()
            f.write(lambda tmp: tmp.write_bytes(data))
        commit_all(list(outputs.values()))  # all of them, or none
    finally:
        for f in outputs.values():
            f.discard()  # a no-op for those committed
    if not a.quiet:
        print(report, end="")
    for line in failure_lines(rep):
        print(f"fleet.py: {line}", file=sys.stderr)
    return rep.exit_code


if __name__ == "__main__":
    sys.exit(run_cli("fleet.py", main))
