"""scripts/run_cost.py: where a run's time went, from the wall_s and prepare_s counters of a
real host run."""

from __future__ import annotations

import json

from conftest import cli


def test_report_of_a_real_run(host_result):
    code, out, err = cli("run_cost.py", host_result, "--top", "3")
    assert code == 0, err
    lines = out.splitlines()
    assert "benchmarks," in lines[0] and " s in benchmarks" in lines[0]
    groups = [l for l in lines if l.startswith("| bandwidth/") or l.startswith("| roofline/")]
    assert groups, out
    shares = 0.0
    for row in groups[: len(groups)]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        if len(cells) != 7:
            continue  # the costliest-rows table
        wall, timed, prepare = float(cells[2]), float(cells[3]), float(cells[4])
        assert wall >= timed >= 0 and prepare >= 0, row
        shares += float(cells[6].rstrip(" %"))
    assert 95 <= shares <= 105  # the groups' shares add up (rounded)
    assert out.count("| bandwidth/") + out.count("| roofline/") >= 3


def test_counters_in_the_result(host_result):
    doc = json.loads(host_result.read_text())
    reps = [b for b in doc["benchmarks"] if b.get("run_type") == "iteration" and not b.get("error_occurred")]
    for b in reps:
        assert b["wall_s"] > 0 and b["prepare_s"] >= 0
        # a benchmark's wall time grows from repetition to repetition (it is cumulative)
    by = {}
    for b in reps:
        by.setdefault(b["run_name"], []).append(b["wall_s"])
    assert all(w == sorted(w) and w[-1] > w[0] for w in by.values() if len(w) > 1)


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
