#!/usr/bin/env python3
"""Where a gpubench run's time went, from its result file: per family/kernel, the wall time of
its benchmarks (Google Benchmark's trial runs, warm-ups, verification and preparation included),
the part that was timed samples, the parts spent preparing inputs, sizing the batch and
verifying the output, and the rest (trial runs' fixed costs, warm-ups, telemetry); then the rows
that cost the most, with the number of calls Google Benchmark made of each; and the "other"
seconds split into each benchmark's first call (trial runs, warm-ups) and the fixed cost of every
later repetition (a call's wall time beyond its timed samples). Reads the counters
wall_s and prepare_s (results of gpubench from git 2026-11-23 on) and, where present, sizing_s,
verify_s and calls (later results; "-" where a result has none).

  python scripts/run_cost.py RESULT.json [--top 10] [--baseline EARLIER.json]

With --baseline, a last table sets each family/kernel's wall, timed, prepare and other seconds
beside those of an earlier run (of the same or another revision: how a change moved the cost),
and the totals; a family/kernel in one run only is listed with "-" on the other side.

Bad input: one line on stderr, exit 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpubench_tools.errors import exit_on_signals  # noqa: E402

exit_on_signals("run_cost.py", __name__)  # a signal while the modules below load: one line

from gpubench_tools.errors import UsageError, make_parser, run_cli  # noqa: E402
# Names, the device and the files come from the input: written with visible(), their control
# characters (line breaks too) as escapes (an ESC in a forged device name recoloured the terminal).
from gpubench_tools.output import visible  # noqa: E402
from gpubench_tools.results import load_result, result_identity, to_number  # noqa: E402


COLUMNS = ("wall", "timed", "prepare", "sizing", "verify")


#: The largest value a cost counter can hold: seconds (1e9 s is 31 years) and calls; beyond it,
#: like a negative, non-finite or non-numeric value, the file is forged or corrupt (and 1e308 s
#: would sum to infinity).
COST_LIMITS = {"wall_s": 1e9, "prepare_s": 1e9, "sizing_s": 1e9, "verify_s": 1e9, "calls": 1e15}


def cost(result, b, entry: dict, key: str) -> float | None:
    """A cost counter of an entry: None when absent; UsageError naming the benchmark and the
    counter when it is not a finite number from 0 to its bound."""
    if key not in entry:
        return None
    v = entry[key]
    ok = not isinstance(v, bool) and isinstance(v, (int, float)) and 0 <= v <= COST_LIMITS[key]
    if not ok:  # (NaN fails the comparison too)
        shown = repr(v)[:40] if not isinstance(v, int) or abs(v) < 10 ** 30 else "a huge integer"
        raise UsageError(f"{result.path}: {b.name} has {key} = {shown}, not a number of "
                         f"{'calls' if key == 'calls' else 'seconds'} from 0 to {COST_LIMITS[key]:g}")
    return float(v)


#: Seconds per unit of Google Benchmark's time_unit (gpubench --benchmark_time_unit).
TIME_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def row_costs(result) -> list[tuple[str, dict]]:
    """(name, {wall, timed, prepare, sizing, verify: seconds or None, calls: int or None}) per
    benchmark that ran.

    The cost counters are cumulative over the calls of one workload: repetitions that run back
    to back share it, so the last of them holds the totals. Interleaved repetitions
    (--benchmark_enable_random_interleaving, as the nightly job runs) each start a workload of
    their own, whose counters start again from 0: a repetition whose wall_s or calls is not
    above the one before begins such a run, and the totals add up each run's last counters."""
    rows = []
    for b in result.benchmarks.values():
        if not b.samples:
            continue
        walls = [cost(result, b, s, "wall_s") for s in b.samples]
        if any(w is None for w in walls):
            raise UsageError(f"{result.path}: {b.name} has no wall_s counter (a result from an older gpubench)")
        timeds = [timed_of(result, b, s) for s in b.samples]
        calls = [cost(result, b, s, "calls") for s in b.samples]
        # Without calls (results of 2026-11-23 before it was written), a wall_s that grew by less
        # than the repetition's own timed samples can only have started again.
        starts = [i == 0 or walls[i] < walls[i - 1]
                  or (calls[i] is not None and calls[i - 1] is not None and calls[i] <= calls[i - 1])
                  or ((calls[i] is None or calls[i - 1] is None) and walls[i] - walls[i - 1] < timeds[i])
                  for i in range(len(walls))]
        # Each repetition's own wall time: the growth of wall_s, or all of it where a run starts
        # (a first call's wall time also holds Google Benchmark's trial runs before it).
        spent = [walls[i] if starts[i] else walls[i] - walls[i - 1] for i in range(len(walls))]
        check_consistent(result, b, spent, timeds)
        ends = [i for i in range(len(walls)) if i + 1 == len(walls) or starts[i + 1]]

        def total(key: str) -> float | None:
            values = [cost(result, b, b.samples[i], key) for i in ends]
            return None if any(v is None for v in values) else sum(values)

        # Each later repetition of a run: its wall time beyond its timed samples, the fixed cost
        # of a call; what is left of "other" is the first calls'.
        later = [i for i in range(len(walls)) if not starts[i]]
        total_calls = total("calls")
        rows.append((b.name, {"wall": sum(walls[i] for i in ends), "timed": sum(timeds),
                              "prepare": total("prepare_s") or 0.0, "sizing": total("sizing_s"),
                              "verify": total("verify_s"),
                              "calls": None if total_calls is None else int(total_calls),
                              "between": sum(spent[i] - timeds[i] for i in later), "later_reps": len(later)}))
    return rows


#: The most operations one repetition can time (Google Benchmark's iteration counts stop far below).
MAX_ITERATIONS = 10 ** 15


def timed_of(result, b, s: dict) -> float:
    """One repetition's timed seconds: real_time (one operation, in its time_unit) x iterations.
    UsageError naming the benchmark when either is missing or not a number it could hold (the
    loader bounds real_time where present; iterations is read by this tool alone)."""
    unit = s.get("time_unit", "us")
    unit = TIME_UNIT_SECONDS.get(unit) if isinstance(unit, str) else None
    if unit is None:
        raise UsageError(f"{result.path}: {b.name} has time_unit {s.get('time_unit')!r}, not ns, us, ms or s")
    real_time, iterations = s.get("real_time"), s.get("iterations")
    if to_number(real_time) is None or isinstance(real_time, str):
        shown = "none" if "real_time" not in s else repr(real_time)[:40]
        raise UsageError(f"{result.path}: {b.name} has real_time {shown}, not the time of an operation")
    whole = isinstance(iterations, int) or (isinstance(iterations, float) and iterations.is_integer())
    if isinstance(iterations, bool) or not whole or not 1 <= iterations <= MAX_ITERATIONS:
        shown = "none" if "iterations" not in s else "a huge integer" \
            if isinstance(iterations, int) and abs(iterations) >= 10 ** 30 else repr(iterations)[:40]
        raise UsageError(f"{result.path}: {b.name} has iterations {shown}, not a whole number of "
                         f"operations from 1 to {MAX_ITERATIONS:g}")
    return float(real_time) * float(iterations) * unit


def check_consistent(result, b, spent: list[float], timeds: list[float]) -> None:
    """UsageError when a repetition's timed samples took longer than its own wall time (they
    ran inside it): counters that contradict each other, which the tables would show as
    negative seconds."""
    for i, (wall, timed) in enumerate(zip(spent, timeds)):
        if timed > wall * (1 + 1e-6) + 1e-6:
            raise UsageError(f"{result.path}: {b.name}: repetition {i} timed {timed:.6g} s of samples in "
                             f"{wall:.6g} s of wall time: not a gpubench result")


def no_rows(result) -> UsageError:
    """Why row_costs() found no row: a file of aggregates only has benchmarks that ran, but not the
    per-repetition entries whose counters are read (as compare.py says for the same file)."""
    if any(b.aggregates and not b.samples for b in result.benchmarks.values()):
        return UsageError(f"{result.path}: only aggregates (mean, median, ...), no per-repetition "
                          f"entries to read the costs from (run gpubench without "
                          f"--benchmark_report_aggregates_only)")
    return UsageError(f"{result.path}: no benchmark ran")


def seconds(v) -> str:
    return "-" if v is None else f"{v:.2f}"


def share(part: float, total: float) -> str:
    """A part of the total wall time as a percentage; "-" when the total is 0 (a result whose
    every wall_s is 0 has no shares)."""
    return f"{100 * part / total:.0f} %" if total > 0 else "-"


def other(c: dict) -> float:
    """The wall time not accounted for by the named parts (those a result lacks count as 0)."""
    return c["wall"] - sum(c[k] or 0.0 for k in COLUMNS[1:])


def report(result, top: int) -> str:
    rows = row_costs(result)
    if not rows:
        raise no_rows(result)
    groups = group_costs(rows)
    total = sum(c["wall"] for _, c in rows)
    out = [f"{visible(str(result.path))}: {len(rows)} benchmarks, {total:.1f} s in benchmarks "
           f"({visible(result.device_name or result.device_key)})",
           "",
           "| family/kernel | rows | wall s | timed s | prepare s | sizing s | verify s | other s | share |",
           "|---|---|---|---|---|---|---|---|---|"]
    for key, g in sorted(groups.items(), key=lambda kv: -kv[1]["wall"]):
        out.append(f"| {visible(key)} | {g['rows']} | " + " | ".join(seconds(g[k]) for k in COLUMNS)
                   + f" | {other(g):.2f} | {share(g['wall'], total)} |")
    # "other", split: the first call (Google Benchmark's trial runs, warm-ups, poisoning - up to
    # the end of the first repetition) and every later repetition's fixed cost.
    later = sum(c["later_reps"] for _, c in rows)
    out += ["", "Where \"other\" went: the first call of each benchmark (Google Benchmark's trial runs, "
            "warm-ups, poisoning) and the fixed cost of each later repetition (wall time beyond its "
            "timed samples):", "",
            "| family/kernel | other s | first call s | later repetitions s | per later repetition ms |",
            "|---|---|---|---|---|"]
    for key, g in sorted(groups.items(), key=lambda kv: -kv[1]["wall"]):
        out.append(f"| {visible(key)} | {other(g):.2f} | {other(g) - g['between']:.2f} | {g['between']:.2f} | "
                   + (f"{1000 * g['between'] / g['later_reps']:.1f}" if g["later_reps"] else "-") + " |")
    all_other = sum(other(c) for _, c in rows)
    all_between = sum(c["between"] for _, c in rows)
    out.append(f"| all | {all_other:.2f} | {all_other - all_between:.2f} | {all_between:.2f} | "
               + (f"{1000 * all_between / later:.1f}" if later else "-") + " |")
    out += ["", f"The {min(top, len(rows))} costliest rows:", "",
            "| benchmark | wall s | timed s | prepare s | sizing s | verify s | calls |",
            "|---|---|---|---|---|---|---|"]
    for name, c in sorted(rows, key=lambda r: -r[1]["wall"])[:top]:
        calls = "-" if c["calls"] is None else str(c["calls"])
        out.append(f"| {visible(name)} | " + " | ".join(seconds(c[k]) for k in COLUMNS) + f" | {calls} |")
    return "\n".join(out) + "\n"


def group_costs(rows: list[tuple[str, dict]]) -> dict[str, dict]:
    """Per family/kernel: rows, and the sum of each column (None where a row lacks it)."""
    groups: dict[str, dict] = {}
    for name, c in rows:
        g = groups.setdefault("/".join(name.split("/")[:2]),
                              {"rows": 0, "between": 0.0, "later_reps": 0, **{k: 0.0 for k in COLUMNS}})
        g["rows"] += 1
        g["between"] += c["between"]
        g["later_reps"] += c["later_reps"]
        for k in COLUMNS:
            g[k] = None if g[k] is None or c[k] is None else g[k] + c[k]
    return groups


def against(result, baseline) -> str:
    """The family/kernel wall, timed, prepare and other seconds of `result` beside `baseline`'s."""
    new, old = group_costs(row_costs(result)), group_costs(row_costs(baseline))
    if not old:
        raise no_rows(baseline)
    # Sizing and verification apart only where both runs have them; otherwise "other" holds them
    # on both sides alike (an older baseline's "other" would look like a saving).
    split = all(g[k] is not None for side in (new, old) for g in side.values() for k in ("sizing", "verify"))
    parts = ("wall", "timed", "prepare", "sizing", "verify", "other") if split else ("wall", "timed", "prepare", "other")

    def part(g, k):
        if g is None:
            return None
        if k == "other":
            return other(g) if split else g["wall"] - g["timed"] - g["prepare"]
        return g[k]

    def pair(a, b):
        delta = "-" if a is None or b is None else f"{a - b:+.2f}"
        return f"{seconds(b)} -> {seconds(a)} ({delta})"

    note = [] if split else ["(one of the runs has no sizing_s or verify_s: other includes sizing and verification in both)",
                             ""]
    out = ["", f"Against {visible(str(baseline.path))} (seconds, baseline -> this run):", "", *note,
           "| family/kernel | rows | " + " | ".join(f"{k} s" for k in parts) + " |",
           "|---|---|" + "---|" * len(parts)]
    keys = sorted(set(new) | set(old), key=lambda k: -max((new.get(k) or {"wall": 0})["wall"],
                                                          (old.get(k) or {"wall": 0})["wall"]))
    for k in keys:
        a, b = new.get(k), old.get(k)
        rows = f"{'-' if b is None else b['rows']} -> {'-' if a is None else a['rows']}"
        out.append(f"| {visible(k)} | {rows} | " + " | ".join(pair(part(a, p), part(b, p)) for p in parts) + " |")
    totals = [(sum(part(g, p) or 0.0 for g in new.values()), sum(part(g, p) or 0.0 for g in old.values()))
              for p in parts]
    out.append("| all | " + f"{sum(g['rows'] for g in old.values())} -> {sum(g['rows'] for g in new.values())} | "
               + " | ".join(pair(a, b) for a, b in totals) + " |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    p = make_parser("run_cost.py", __doc__)
    p.add_argument("result", metavar="RESULT.json")
    p.add_argument("--top", type=int, default=10, help="costliest rows to list (default 10)")
    p.add_argument("--baseline", metavar="EARLIER.json", help="an earlier run to set the costs beside")
    a = p.parse_args(argv)
    if a.top < 0:
        raise UsageError(f"--top must be 0 or more, not {a.top}")
    result = load_result(a.result)
    text = report(result, a.top)
    if a.baseline is not None:
        baseline = load_result(a.baseline)
        if result_identity(baseline) == result_identity(result):
            raise UsageError(f"--baseline {a.baseline}: the same run as {a.result} (set beside itself it "
                             f"shows no change); give an earlier run")
        text += against(result, baseline)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli("run_cost.py", main))
