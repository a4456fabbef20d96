#!/usr/bin/env python3
"""Where a gpubench run's time went, from its result file: per family/kernel, the wall time of
its benchmarks (Google Benchmark's trial runs, warm-ups, verification and preparation included),
the part that was timed samples, and the part spent preparing inputs; then the rows that cost
the most. Reads the counters wall_s and prepare_s (results of gpubench from git 2026-11-23 on).

  python scripts/run_cost.py RESULT.json [--top 10]

Bad input: one line on stderr, exit 2.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpubench_tools.errors import UsageError, make_parser, run_cli  # noqa: E402
from gpubench_tools.results import load_result, to_number  # noqa: E402


def row_costs(result) -> list[tuple[str, float, float, float]]:
    """(name, wall seconds, timed seconds, prepare seconds) per benchmark that ran."""
    rows = []
    for b in result.benchmarks.values():
        if not b.samples:
            continue
        walls = [to_number(s.get("wall_s")) for s in b.samples]
        if any(w is None for w in walls):
            raise UsageError(f"{result.path}: {b.name} has no wall_s counter (a result from an older gpubench)")
        timed = 0.0
        for s in b.samples:  # real_time is microseconds per operation
            timed += (to_number(s.get("real_time")) or 0.0) * (to_number(s.get("iterations")) or 0.0) * 1e-6
        prepare = to_number(b.samples[-1].get("prepare_s")) or 0.0
        rows.append((b.name, max(walls), timed, prepare))
    return rows


def report(result, top: int) -> str:
    rows = row_costs(result)
    if not rows:
        raise UsageError(f"{result.path}: no benchmark ran")
    groups: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for name, wall, timed, prepare in rows:
        g = groups["/".join(name.split("/")[:2])]
        g[0] += 1
        g[1] += wall
        g[2] += timed
        g[3] += prepare
    total = sum(r[1] for r in rows)
    out = [f"{result.path}: {len(rows)} benchmarks, {total:.1f} s in benchmarks "
           f"({result.device_name or result.device_key})",
           "",
           "| family/kernel | rows | wall s | timed s | prepare s | other s | share |",
           "|---|---|---|---|---|---|---|"]
    for key, (n, wall, timed, prepare) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
        out.append(f"| {key} | {int(n)} | {wall:.2f} | {timed:.2f} | {prepare:.2f} | {wall - timed - prepare:.2f} "
                   f"| {100 * wall / total:.0f} % |")
    out += ["", f"The {min(top, len(rows))} costliest rows:", "",
            "| benchmark | wall s | timed s | prepare s |", "|---|---|---|---|"]
    for name, wall, timed, prepare in sorted(rows, key=lambda r: -r[1])[:top]:
        out.append(f"| {name} | {wall:.2f} | {timed:.2f} | {prepare:.2f} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    p = make_parser("run_cost.py", __doc__)
    p.add_argument("result", metavar="RESULT.json")
    p.add_argument("--top", type=int, default=10, help="costliest rows to list (default 10)")
    a = p.parse_args(argv)
    if a.top < 0:
        raise UsageError(f"--top must be 0 or more, not {a.top}")
    print(report(load_result(a.result), a.top), end="")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli("run_cost.py", main))
