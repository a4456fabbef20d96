"""scripts/run_cost.py: where a run's time went, from the wall_s and prepare_s counters of a
real host run."""

from __future__ import annotations

import json

from pathlib import Path

from conftest import cli, gpubench


def expected_costs(doc):
    """Per benchmark that ran, from the JSON: (wall s = largest wall_s, timed s = sum of
    real_time x iterations, prepare s, sizing s, verify s = the last repetition's counters)."""
    reps = {}
    for e in doc["benchmarks"]:
        if e.get("run_type") == "iteration" and not e.get("error_occurred"):
            reps.setdefault(e["run_name"].removesuffix("/manual_time"), []).append(e)
    return {n: (max(e["wall_s"] for e in es), sum(e["real_time"] * e["iterations"] * 1e-6 for e in es),
                es[-1]["prepare_s"], es[-1]["sizing_s"], es[-1]["verify_s"], int(es[-1]["calls"]))
            for n, es in reps.items()}


def table_rows(out: str) -> list[list[str]]:
    return [[c.strip() for c in l.strip("|").split("|")] for l in out.splitlines()
            if l.startswith("| bandwidth/") or l.startswith("| roofline/")]


def test_report_of_a_real_run(host_result, host_doc):
    code, out, err = cli("run_cost.py", host_result, "--top", "3")
    assert code == 0, err
    lines = out.splitlines()
    costs = expected_costs(host_doc)
    assert lines[0].startswith(f"{host_result}: {len(costs)} benchmarks, ")
    assert f" {sum(c[0] for c in costs.values()):.1f} s in benchmarks" in lines[0]
    rows = table_rows(out)
    groups = {c[0]: c for c in rows if len(c) == 9}
    top = [c for c in rows if len(c) == 7]
    # Each family/kernel row adds up its benchmarks' figures from the JSON; "other" is the rest.
    want = {}
    for name, (wall, timed, prepare, sizing, verify, _) in costs.items():
        g = want.setdefault("/".join(name.split("/")[:2]), [0, 0.0, 0.0, 0.0, 0.0, 0.0])
        for i, v in enumerate((1, wall, timed, prepare, sizing, verify)):
            g[i] += v
    total = sum(g[1] for g in want.values())
    assert sorted(groups) == sorted(want)
    for key, (n, wall, timed, prepare, sizing, verify) in want.items():
        assert groups[key][1:] == [str(n), f"{wall:.2f}", f"{timed:.2f}", f"{prepare:.2f}", f"{sizing:.2f}",
                                   f"{verify:.2f}", f"{wall - timed - prepare - sizing - verify:.2f}",
                                   f"{100 * wall / total:.0f} %"]
    # groups listed costliest first; the 3 costliest rows are the 3 largest wall times, with
    # the number of calls Google Benchmark made of each
    walls = [float(groups[c[0]][2]) for c in rows if len(c) == 9]
    assert walls == sorted(walls, reverse=True)
    assert [c[0] for c in top] == sorted(costs, key=lambda n: -costs[n][0])[:3]
    for c in top:
        assert c[6] == str(costs[c[0]][5])


def test_other_splits_into_the_first_call_and_each_later_repetitions_fixed_cost(host_result, host_doc):
    """wall_s grows by one Google Benchmark call per repetition: what a later repetition adds
    beyond its timed samples is a call's fixed cost (on an H100 it was ~10 ms, a telemetry wait);
    the rest of "other" is the first call's (trial runs, warm-ups)."""
    code, out, err = cli("run_cost.py", host_result, "--top", "0")
    assert code == 0, err
    reps = {}
    for e in host_doc["benchmarks"]:
        if e.get("run_type") == "iteration" and not e.get("error_occurred"):
            reps.setdefault(e["run_name"].removesuffix("/manual_time"), []).append(e)
    between = later = 0.0
    for es in reps.values():
        for prev, e in zip(es, es[1:]):
            between += e["wall_s"] - prev["wall_s"] - e["real_time"] * e["iterations"] * 1e-6
            later += 1
    costs = expected_costs(host_doc)
    other = sum(w - t - p - sz - v for w, t, p, sz, v, _ in costs.values())
    lines = out.splitlines()
    assert lines.index("| family/kernel | other s | first call s | later repetitions s | per later repetition ms |")
    total = next(line for line in lines if line.startswith("| all | "))
    assert total == (f"| all | {other:.2f} | {other - between:.2f} | {between:.2f} | "
                     f"{1000 * between / later:.1f} |")
    split = [c for c in table_rows(out) if len(c) == 5]
    groups = [c for c in table_rows(out) if len(c) == 9]
    assert [c[0] for c in split] == [c[0] for c in groups]  # every family/kernel, in the same order
    assert all(c[1] == g[7] for c, g in zip(split, groups))  # its "other", split


def test_an_older_result_without_the_breakdown(tmp_path, host_result):
    """Results from before sizing_s, verify_s and calls: those columns read "-", and "other"
    is what wall time the result does account for leaves."""
    old = json.loads(host_result.read_text())
    for b in old["benchmarks"]:
        for k in ("sizing_s", "verify_s", "calls"):
            b.pop(k, None)
    f = tmp_path / "old.json"
    f.write_text(json.dumps(old))
    code, out, err = cli("run_cost.py", f, "--top", "2")
    assert code == 0, err
    costs = expected_costs(json.loads(host_result.read_text()))
    groups = [c for c in table_rows(out) if len(c) == 9]
    assert groups and all(c[5] == "-" and c[6] == "-" for c in groups)
    for c in groups:
        members = [v for n, v in costs.items() if n.startswith(c[0] + "/")]
        assert c[7] == f"{sum(v[0] - v[1] - v[2] for v in members):.2f}"
    assert all(c[6] == "-" for c in table_rows(out) if len(c) == 7)


def test_counters_in_the_result(host_result):
    doc = json.loads(host_result.read_text())
    reps = [b for b in doc["benchmarks"] if b.get("run_type") == "iteration" and not b.get("error_occurred")]
    assert reps
    for b in reps:
        # preparing the inputs, sizing the batch and verifying are parts of the benchmark's wall time
        assert b["wall_s"] > 0 and b["prepare_s"] + b["sizing_s"] + b["verify_s"] <= b["wall_s"], b["run_name"]
        assert b["sizing_s"] > 0 and b["verify_s"] > 0 and b["calls"] >= 1, b["run_name"]
    # a benchmark's wall time grows from repetition to repetition (it is cumulative)
    by = {}
    for b in reps:
        by.setdefault(b["run_name"], []).append(b["wall_s"])
    assert by and all(len(w) == 5 for w in by.values())  # the fixture's 5 repetitions
    for name, w in by.items():
        assert w == sorted(w) and w[-1] > w[0], (name, w)


def test_bad_input_is_one_line(tmp_path, host_result):
    code, _, err = cli("run_cost.py", tmp_path / "missing.json")
    assert code == 2 and err.count("\n") == 1 and "no such file" in err
    old = json.loads(host_result.read_text())
    for b in old["benchmarks"]:
        b.pop("wall_s", None)
    f = tmp_path / "old.json"
    f.write_text(json.dumps(old))
    code, _, err = cli("run_cost.py", f)
    assert code == 2 and err.count("\n") == 1 and "no wall_s counter" in err
    code, _, err = cli("run_cost.py", host_result, "--top", "-1")
    assert code == 2 and "--top" in err


def test_against_a_baseline(tmp_path, host_result, host_doc):
    """--baseline: each family/kernel's seconds beside an earlier run's, with the change; one in
    only one of the runs has "-" on the other side; the totals add up."""
    old = json.loads(host_result.read_text())
    costs = expected_costs(host_doc)
    gone = sorted({"/".join(n.split("/")[:2]) for n in costs})[0]  # a family/kernel the baseline lacks
    old["benchmarks"] = [b for b in old["benchmarks"] if not b["name"].startswith(gone + "/")]
    for b in old["benchmarks"]:
        if "wall_s" in b:
            b["wall_s"] += 1.0  # every benchmark one second slower in the baseline
            b["prepare_s"] += 1.0
    f = tmp_path / "old.json"
    f.write_text(json.dumps(old))
    code, out, err = cli("run_cost.py", host_result, "--top", "0", "--baseline", f)
    assert code == 0, err
    tail = out[out.index(f"Against {f}"):]
    rows = {c[0]: c for c in (l.strip("|").split("|") for l in tail.splitlines() if l.startswith("| "))}
    rows = {k.strip(): [c.strip() for c in v] for k, v in rows.items()}
    assert rows[gone][1].startswith("- -> ") and rows[gone][2].startswith("- -> ")
    for key, c in rows.items():
        if key in (gone, "family/kernel", "all"):
            continue
        n = sum(1 for name in costs if name.startswith(key + "/"))
        assert c[1] == f"{n} -> {n}"
        assert c[2].endswith(f"({-float(n):+.2f})"), c  # wall: one second less per benchmark now
        assert c[4].endswith(f"({-float(n):+.2f})"), c  # prepare likewise
        assert c[3].endswith("(+0.00)"), c  # timed: unchanged
    assert rows["all"][1] == f"{len(costs) - sum(1 for n in costs if n.startswith(gone + '/'))} -> {len(costs)}"
    code, _, err = cli("run_cost.py", host_result, "--baseline", tmp_path / "missing.json")
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_against_a_baseline_without_sizing_and_verify(tmp_path, host_result):
    """A baseline from before sizing_s and verify_s: "other" is wall - timed - prepare on both
    sides, so the same run set beside itself shows no change (it showed a saving of every
    second of sizing and verification)."""
    old = json.loads(host_result.read_text())
    for b in old["benchmarks"]:
        b.pop("sizing_s", None)
        b.pop("verify_s", None)
    f = tmp_path / "old.json"
    f.write_text(json.dumps(old))
    code, out, err = cli("run_cost.py", host_result, "--top", "0", "--baseline", f)
    assert code == 0, err
    tail = out[out.index(f"Against {f}"):]
    assert "other includes sizing and verification in both" in tail
    rows = [[c.strip() for c in l.strip("|").split("|")] for l in tail.splitlines() if l.startswith("| ")]
    assert rows[0] == ["family/kernel", "rows", "wall s", "timed s", "prepare s", "other s"]
    for r in rows[1:]:
        assert all(c.endswith("(+0.00)") for c in r[2:]), r
    # The same run as its own baseline (or a copy of it) shows nothing: refused, as compare.py does.
    copy = tmp_path / "copy.json"
    copy.write_text(host_result.read_text())
    for same in (host_result, copy):
        code, out, err = cli("run_cost.py", host_result, "--top", "0", "--baseline", same)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert f"--baseline {same}: the same run as {host_result}" in err, err



import pytest  # noqa: E402


@pytest.mark.parametrize("key", ["wall_s", "prepare_s", "sizing_s", "verify_s", "calls"])
@pytest.mark.parametrize("value", [-100, 1e308, "x", float("inf"), float("nan"), True])
def test_an_absurd_cost_counter_is_refused(tmp_path, host_doc, key, value):
    doc = json.loads(json.dumps(host_doc))
    entry = next(e for e in doc["benchmarks"] if e.get("run_type") == "iteration" and key in e
                 and not e.get("error_occurred"))
    for e in doc["benchmarks"]:  # the same benchmark's entries alike (the last one holds totals)
        if e.get("run_name") == entry["run_name"] and key in e:
            e[key] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    code, out, err = cli("run_cost.py", bad)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert len(lines) == 1 and lines[0].startswith("run_cost.py: error: "), err
    assert str(bad) in lines[0] and entry["run_name"].split("/manual_time")[0] in lines[0]
    assert f"has {key} = " in lines[0] and "older gpubench" not in lines[0], lines[0]


def test_a_result_whose_wall_times_are_all_0_has_no_shares(tmp_path, host_doc):
    """No division by a total of 0 (the timed samples 0 as well: they run inside the wall time)."""
    doc = json.loads(json.dumps(host_doc))
    for e in doc["benchmarks"]:
        if "wall_s" in e:
            e["wall_s"] = 0
        if e.get("run_type") == "iteration":
            e["real_time"] = 0
    f = tmp_path / "zero.json"
    f.write_text(json.dumps(doc))
    code, out, err = cli("run_cost.py", f)
    assert code == 0 and "Traceback" not in err, err
    groups = [c for c in table_rows(out) if len(c) == 9]
    assert groups and all(c[2] == "0.00" and c[8] == "-" for c in groups)
    code, out, err = cli("run_cost.py", f, "--baseline", host_doc_file(tmp_path, host_doc))
    assert code == 0 and "Traceback" not in err, err


def host_doc_file(tmp_path, host_doc):
    f = tmp_path / "host.json"
    f.write_text(json.dumps(host_doc))
    return f


@pytest.mark.parametrize("unit", [[], {}, 3, None])
def test_a_time_unit_that_is_not_text_is_bad_input(tmp_path, host_doc, unit):
    """A list as time_unit was looked up in a dict: TypeError, a traceback."""
    doc = json.loads(json.dumps(host_doc))
    for e in doc["benchmarks"]:
        e["time_unit"] = unit
    f = tmp_path / "unit.json"
    f.write_text(json.dumps(doc))
    code, out, err = cli("run_cost.py", f)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert "has time_unit" in err and "not ns, us, ms or s" in err, err


def test_a_file_of_aggregates_only_says_so(tmp_path, host_doc, host_result):
    """A run with --benchmark_report_aggregates_only was reported as "no benchmark ran"."""
    doc = json.loads(json.dumps(host_doc))
    doc["benchmarks"] = [e for e in doc["benchmarks"] if e.get("run_type") == "aggregate"]
    assert doc["benchmarks"]
    agg = tmp_path / "agg.json"
    agg.write_text(json.dumps(doc))
    for args in ([agg], [host_result, "--baseline", agg]):
        code, out, err = cli("run_cost.py", *args)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert f"{agg}: only aggregates" in err and "without --benchmark_report_aggregates_only" in err, err


def test_timed_seconds_read_each_entrys_time_unit(tmp_path, host_doc, host_result):
    """real_time is in the file's time_unit (gpubench --benchmark_time_unit): the same run written
    in ms reads the same timed seconds as in us (it read 1000 x less); an unknown unit is one line."""
    doc = json.loads(json.dumps(host_doc))
    for e in doc["benchmarks"]:
        if e.get("time_unit") == "us":
            e["time_unit"], e["real_time"] = "ms", e["real_time"] / 1e3
    ms = tmp_path / "ms.json"
    ms.write_text(json.dumps(doc))
    code_us, out_us, err_us = cli("run_cost.py", host_result)
    code_ms, out_ms, err_ms = cli("run_cost.py", ms)
    assert code_us == code_ms == 0, err_us + err_ms
    assert table_rows(out_ms) == table_rows(out_us)
    for e in doc["benchmarks"]:
        if e.get("time_unit") == "ms":
            e["time_unit"] = "fortnights"
    ms.write_text(json.dumps(doc))
    code, out, err = cli("run_cost.py", ms)
    assert code == 2 and "time_unit 'fortnights'" in err and len(err.strip().splitlines()) == 1, err


def one_benchmark_edited(tmp_path, host_doc, edit) -> tuple[Path, str]:
    """A copy of the host run whose first successful benchmark's repetitions went through
    edit(entries); (the file, the benchmark's name)."""
    doc = json.loads(json.dumps(host_doc))
    reps = [e for e in doc["benchmarks"] if e.get("run_type") == "iteration" and not e.get("error_occurred")]
    name = reps[0]["run_name"]
    edit([e for e in reps if e["run_name"] == name])
    f = tmp_path / "edited.json"
    f.write_text(json.dumps(doc))
    return f, name.removesuffix("/manual_time")


@pytest.mark.parametrize("key,value", [("iterations", 1e308), ("iterations", -10 ** 9), ("iterations", "lots"),
                                       ("iterations", True), ("iterations", 0), ("iterations", 2.5),
                                       ("iterations", None), ("real_time", None)])
def test_iterations_and_real_time_are_read_as_measurements(tmp_path, host_doc, key, value):
    """The timed seconds are real_time x iterations: a value no run can hold, or none (None:
    the key removed), is one line naming the benchmark; it was read as a number or as 0, and a
    forged count printed inf or negative seconds with exit 0."""
    def edit(entries):
        for e in entries:
            if value is None:
                e.pop(key)
            else:
                e[key] = value
    f, name = one_benchmark_edited(tmp_path, host_doc, edit)
    code, out, err = cli("run_cost.py", f)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"run_cost.py: error: {f}: {name} has {key} "), lines[0]


@pytest.mark.parametrize("case", ["timed beyond the wall time", "wall time falling to 0"])
def test_counters_that_contradict_each_other_are_refused(tmp_path, host_doc, case):
    """A repetition's timed samples run inside its wall time (the growth of the cumulative
    wall_s): a file that says otherwise printed negative seconds with exit 0."""
    def edit(entries):
        if case == "timed beyond the wall time":
            entries[0]["real_time"] = 1e6 * entries[0]["wall_s"] / entries[0]["iterations"] * 2  # us: 2 x the wall
        else:
            entries[2]["wall_s"] = 0.0
    f, name = one_benchmark_edited(tmp_path, host_doc, edit)
    code, out, err = cli("run_cost.py", f)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1, err
    assert lines[0].startswith(f"run_cost.py: error: {f}: {name}: repetition ") and "of wall time" in lines[0], err


def test_interleaved_repetitions_add_up_each_workloads_counters(tmp_path):
    """With --benchmark_enable_random_interleaving (as the nightly job runs) a repetition that
    follows another benchmark's starts a workload of its own, whose cumulative counters start
    again: the totals add up each run's last counters, and no part is negative (a fall of wall_s
    read as a negative later-repetition cost, and the totals held the last run's alone)."""
    out_file = tmp_path / "interleaved.json"
    proc = gpubench("--device=host", "--quick", "--filter=^bandwidth/copy/kernel/", "--benchmark_repetitions=4",
                    "--benchmark_enable_random_interleaving=true", "--benchmark_min_time=0.001", f"--out={out_file}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out_file.read_text())
    runs: dict[str, list[list[dict]]] = {}
    for e in doc["benchmarks"]:  # in the order they ran
        if e.get("run_type") != "iteration" or e.get("error_occurred"):
            continue
        name = e["run_name"].removesuffix("/manual_time")
        mine = runs.setdefault(name, [])
        if not mine or e["calls"] <= mine[-1][-1]["calls"] or e["wall_s"] < mine[-1][-1]["wall_s"]:
            mine.append([])  # a new workload: its counters start again
        mine[-1].append(e)
    assert any(len(r) > 1 for r in runs.values()), "no repetition ran after another benchmark's"
    code, out, err = cli("run_cost.py", out_file, "--top", str(len(runs)))
    assert code == 0, err
    top = {c[0]: c for c in table_rows(out) if len(c) == 7}
    assert sorted(top) == sorted(runs)
    for name, rs in runs.items():
        wall = sum(r[-1]["wall_s"] for r in rs)
        assert top[name][1:] == [f"{wall:.2f}", f"{sum(e['real_time'] * e['iterations'] * 1e-6 for r in rs for e in r):.2f}",
                                 f"{sum(r[-1]['prepare_s'] for r in rs):.2f}", f"{sum(r[-1]['sizing_s'] for r in rs):.2f}",
                                 f"{sum(r[-1]['verify_s'] for r in rs):.2f}", str(int(sum(r[-1]['calls'] for r in rs)))]
    total = next(line for line in out.splitlines() if line.startswith("| all | "))
    cells = [c.strip() for c in total.strip("|").split("|")][1:]
    # No negative seconds ("-": no repetition ran right after another of its benchmark).
    assert all(c == "-" or float(c) >= 0 for c in cells), total


def test_an_older_interleaved_result_without_calls_is_read(tmp_path):
    """Results of 2026-11-23 before the calls counter: an interleaved repetition whose fresh
    wall_s is not below the one before was read as a continuation of it, and its timed samples,
    beyond the small growth, refused the genuine file."""
    out_file = tmp_path / "interleaved.json"
    proc = gpubench("--device=host", "--quick", "--filter=^bandwidth/copy/kernel/bytes:4KiB$",
                    "--benchmark_repetitions=2", "--benchmark_min_time=0.001", f"--out={out_file}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out_file.read_text())
    reps = [e for e in doc["benchmarks"] if e.get("run_type") == "iteration"]
    assert len(reps) == 2
    # As if the second repetition had run after another benchmark: a workload of its own whose
    # wall_s, trial runs included, grew past the first's (its own timed samples are all of it).
    timed = reps[1]["real_time"] * reps[1]["iterations"] * 1e-6
    reps[1]["wall_s"] = reps[0]["wall_s"] + timed / 2
    assert reps[1]["wall_s"] >= timed
    for e in doc["benchmarks"]:
        e.pop("calls", None)
    f = tmp_path / "old_interleaved.json"
    f.write_text(json.dumps(doc))
    code, out, err = cli("run_cost.py", f, "--top", "1")
    assert code == 0, err
    top = next(c for c in table_rows(out) if len(c) == 7)
    assert top[1] == f"{reps[0]['wall_s'] + reps[1]['wall_s']:.2f}" and top[6] == "-"
