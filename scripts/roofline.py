#!/usr/bin/env python3
"""Draws the roofline of gpubench result files and/or cards from the card table as a PNG.

  python scripts/roofline.py RESULT.json --out plots/<device_key>/<stem>.png
  python scripts/roofline.py --card h100_sxm --card a100_80gb_sxm --out plots/h100_vs_a100.png
  python scripts/roofline.py A.json B.json --card h200            # several on one chart

Draws the hierarchical roofline (gpubench_tools/roofline.py says where every line comes from):
theoretical ceilings solid (shared memory, DRAM, PCIe; FP32, FP16x2, FP16 tensor), measured ones
dashed (the plateaus of the working-set sweeps: shared memory, L2, DRAM, PCIe; the best FP32 and
FP16-tensor rows), ridge points labelled, rows with FLOP at their arithmetic intensity.

Prints the PNG path. Bad input (missing file, not a gpubench result, unknown card, --list-cards
with anything to draw, a result with no row to draw: only memory-management rows, or none): one
line on stderr, exit 2. A result from a card cards.csv lacks uses the peaks in its own context.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpubench_tools.errors import exit_on_signals  # noqa: E402

exit_on_signals("roofline.py", __name__)  # a signal while the modules below load: one line

from gpubench_tools.cards import CARDS_CSV, find_card, load_cards  # noqa: E402
from gpubench_tools.errors import UsageError, make_parser, run_cli  # noqa: E402
from gpubench_tools.output import NewFile  # noqa: E402
from gpubench_tools.results import load_result, result_identity  # noqa: E402
from gpubench_tools.roofline import draw_roofline, roofline_data  # noqa: E402
from gpubench_tools.store import check_device_key  # noqa: E402


def default_out(results, cards) -> Path:
    """plots/<device_key>/<stem>.png for one result, plots/roofline_<...>.png otherwise."""
    if len(results) == 1 and not cards:
        r = results[0]
        return Path("plots") / check_device_key(r.device_key, r.path) / f"{r.path.stem}.png"
    names = [r.path.stem for r in results] + [c.key for c in cards]
    return Path("plots") / ("roofline_" + "_vs_".join(names)[:120] + ".png")


def main(argv=None) -> int:
    p = make_parser("roofline.py", __doc__)
    p.add_argument("results", nargs="*", metavar="RESULT.json", help="gpubench result files")
    p.add_argument("--card", action="append", default=[], metavar="NAME",
                   help="also draw the theoretical roofline of a card (key or name in "
                        "cards.csv); repeatable")
    p.add_argument("--force", action="store_true", help="overwrite the PNG if it exists")
    p.add_argument("--out", metavar="PNG", help="output PNG (default: plots/<device_key>/"
                   "<result stem>.png for one result, plots/roofline_<names>.png otherwise)")
    p.add_argument("--cards-csv", default=str(CARDS_CSV), metavar="CSV",
                   help="the card table (default: harness/model/cards.csv)")
    p.add_argument("--list-cards", action="store_true", help="list the known cards and exit")
    a = p.parse_args(argv)
    if a.list_cards:  # (they would be ignored)
        given = [o for o, on in (("RESULT", a.results), ("--card", a.card), ("--out", a.out),
                                 ("--force", a.force)) if on]
        if given:
            raise UsageError(f"--list-cards takes no {' or '.join(given)}: it only lists the card table")
    table = load_cards(a.cards_csv)
    if a.list_cards:
        for c in table:
            fp16x2 = f"{c.fp16x2_TFLOPS:.4g} TF" if c.fp16x2_TFLOPS else "unknown"
            print(f"{c.key:16} {c.display_name:18} DRAM {c.dram_GBps:g} GB/s, FP32 "
                  f"{c.fp32_TFLOPS:g} TF, FP16x2 {fp16x2}, FP16 tensor "
                  f"{c.fp16_tensor_TFLOPS:g} TF, FP8 tensor "
                  f"{f'{c.fp8_tensor_TFLOPS:g} TF' if c.fp8_tensor_TFLOPS else 'none'}, "
                  f"shared memory {c.smem_GBps / 1000:.3g} TB/s")
        return 0
    if not a.results and not a.card:
        raise UsageError("nothing to draw: give result files and/or --card NAME")
    if a.out:
        out_path = Path(a.out)
        if out_path.is_dir():
            raise UsageError(f"--out {a.out}: is a directory; give the PNG's file name")
        if out_path.suffix.lower() not in (".png", ".svg", ".pdf"):
            raise UsageError(f"--out {a.out}: the image must end in .png, .svg or .pdf")
        if out_path.exists() and not a.force:
            raise UsageError(f"{a.out} exists; plots are not overwritten without --force")
    cards = [find_card(n, table) for n in a.card]
    twice = [c.key for i, c in enumerate(cards) if c.key in [x.key for x in cards[:i]]]
    if twice:
        raise UsageError(f"--card {twice[0]} given twice (it would be drawn twice)")
    seen: dict[Path, str] = {}
    for r in a.results:
        p = Path(r)
        same = p.resolve() if p.exists() else p
        if same in seen:
            raise UsageError(f"{r}: given twice (as {seen[same]}); each result is drawn once")
        seen[same] = r
    results = [load_result(r) for r in a.results]
    runs: dict[object, Path] = {}
    for r in results:  # a copy of a run under another name (compare.py refuses one alike)
        first = runs.setdefault(result_identity(r), r.path)
        if first != r.path:
            raise UsageError(f"{r.path}: the same run as {first} (a copy); each result is drawn once")
    target = Path(a.out) if a.out else default_out(results, cards)
    if not a.out and target.exists() and not a.force:
        raise UsageError(f"{target} exists; plots are not overwritten without --force")
    data = roofline_data(results, cards, table)
    for r, s in zip(results, data.series):  # the results' series come first
        if not s.draws_measurements:
            raise UsageError(f"{r.path}: no row to draw on a roofline: none of its successful rows "
                             f"sets a measured ceiling or a point (bandwidth rows set one from a "
                             f"cache level's plateau or a DRAM-sized set, compute and intensity rows "
                             f"give points; memory-management rows stay off it; --card NAME draws a "
                             f"card's roofline alone)")
    # The PNG is drawn to a temporary file in its folder, created now (a folder that cannot be
    # written is refused before any note or drawing) and moved onto its name when complete.
    out = NewFile(target, overwrite=a.force, label=f"--out {a.out}" if a.out else None)
    try:
        for s in data.series:
            for note in s.notes:
                print(f"roofline.py: note: {note}", file=sys.stderr)
        print(draw_roofline(data, out))
    finally:
        out.discard()  # a no-op once committed
    return 0


if __name__ == "__main__":
    sys.exit(run_cli("roofline.py", main))
