"""The comparator: real host runs, results derived from them, and its statistics."""

import json
import math
import statistics
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import another_run, cli, errored, run_script, scaled
from fixtures import h100_result, write_json
from gpubench_tools.compare import (Row, Thresholds, apply_confirmation, check_distinct, compare,
                                    failure_lines, judge, robust_noise)
from gpubench_tools.errors import UsageError
from gpubench_tools.results import load_result


def full_range(values: list[float]) -> float:
    """(largest - smallest) / median: unlike robust_noise, one outlying sample counts."""
    med = statistics.median(values)
    return (max(values) - min(values)) / med if med > 0 else math.inf


def stable_benchmark(path, repetitions: int = 5) -> str:
    """The real run's benchmark with the smallest spread: a 20 % loss there must be flagged
    (one whose own noise exceeds 20 % / noise_k would rightly be NOISY instead). The spread is
    the full range of its samples: on a loaded machine a benchmark with a tight middle and one
    sample far below it had the smallest robust_noise, and its 20 % slower copy overlapped that
    sample, so the U-test rightly called it NOISY. Both count: the one whose worse of the two
    (the full range, and the noise times the comparator's noise_k) is smallest; by the full range
    alone, a loaded run picked a row of 7 % noise, within which 20 % is rightly NOISY."""
    r = load_result(path)
    noise_k = Thresholds().noise_k

    def spread(b) -> tuple[float, float]:
        values = b.values(b.metric)
        return max(full_range(values), noise_k * robust_noise(values)), full_range(values)

    return min((b for b in r.benchmarks.values() if b.ok and len(b.samples) >= repetitions), key=spread).name


def same_run_again(path, folder) -> Path:
    """The result of `path` as another run with the very same samples would write it (only its
    date differs): NEW compared with an identical baseline, which is not NEW itself."""
    doc = json.loads(Path(path).read_text())
    doc["context"]["date"] = "2026-01-02T03:04:05+00:00"
    return write_json(doc, Path(folder) / f"again_{Path(path).name}")


def test_robust_noise_and_judge_exact_values():
    assert robust_noise([1, 2, 3, 4, 100]) == pytest.approx(1.4826 / 3)
    assert robust_noise([5.0]) == 0.0
    t = Thresholds()
    base = [100, 101, 99, 100, 100.5]
    assert judge("x", "GB/s", [80, 81, 79, 80, 80.5], base, t).verdict == "SLOWER"
    assert judge("x", "GB/s", [120, 121, 119, 120, 120.5], base, t).verdict == "FASTER"
    assert judge("x", "GB/s", [99, 100, 98, 99, 99.5], base, t).verdict == "SAME"
    noisy_base = [100, 60, 140, 80, 120]  # noise ~30 %: a 10 % loss is not a regression
    row = judge("x", "GB/s", [90, 54, 126, 72, 108], noisy_base, t)
    assert row.verdict == "NOISY" and "noise" in row.reason
    assert row.test == "noise_bound"  # the JSON says which rule decided, never ""
    assert judge("x", "GB/s", [99, 100, 98, 99, 99.5], base, t).test == "min_effect"
    assert judge("x", "GB/s", [80, 81], base, t).test == "too_few_samples"
    # Large shift but overlapping samples: the Mann-Whitney U test does not reject.
    row = judge("x", "GB/s", [70, 101, 69, 100.2, 71], base,
                Thresholds(noise_k=0.0, min_effect=0.05))
    assert row.verdict == "NOISY" and "Mann-Whitney" in row.reason


def test_real_run_against_itself_is_no_regression(host_result, tmp_path):
    code, out, err = cli("compare.py", host_result, same_run_again(host_result, tmp_path),
                         "--json", tmp_path / "c.json",
                         "--junit", tmp_path / "c.xml", "--markdown", tmp_path / "c.md")
    assert code == 0, err
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["counts"]["SLOWER"] == 0 and doc["exit_code"] == 0
    assert doc["counts"]["SAME"] == len(doc["rows"]) > 0
    suite = ET.parse(tmp_path / "c.xml").getroot()
    assert suite.get("failures") == "0" and int(suite.get("tests")) == len(doc["rows"])
    assert "no confirmed regression" in (tmp_path / "c.md").read_text() == out


def test_one_benchmark_20_percent_slower_is_flagged_and_exits_1(host_result, host_doc, tmp_path):
    name = stable_benchmark(host_result)
    slow = write_json(scaled(host_doc, name, 0.8), tmp_path / "slow.json")
    code, out, err = cli("compare.py", slow, host_result, "--json", tmp_path / "c.json",
                         "--junit", tmp_path / "c.xml")
    assert code == 1, out + err
    rows = json.loads((tmp_path / "c.json").read_text())["rows"]
    flagged = [r for r in rows if r["verdict"] == "SLOWER"]
    assert [r["name"] for r in flagged] == [name]
    assert flagged[0]["change"] == pytest.approx(-0.2, abs=1e-9)
    failures = ET.parse(tmp_path / "c.xml").getroot().findall("testcase/failure")
    assert len(failures) == 1 and name in failures[0].get("message") + out


def test_one_benchmark_1_percent_slower_is_not_flagged(host_result, host_doc, tmp_path):
    name = stable_benchmark(host_result)
    slow = write_json(scaled(host_doc, name, 0.99), tmp_path / "slow1.json")
    code, out, err = cli("compare.py", slow, host_result, "--json", tmp_path / "c.json")
    assert code == 0, out + err
    row = next(r for r in json.loads((tmp_path / "c.json").read_text())["rows"]
               if r["name"] == name)
    assert row["verdict"] == "SAME" and row["change"] == pytest.approx(-0.01, abs=1e-9)


def test_a_throttled_benchmark_is_invalid_not_slower(host_result, host_doc, tmp_path):
    name = stable_benchmark(host_result)
    doc = scaled(host_doc, name, 0.5)
    for e in doc["benchmarks"]:
        if e["run_name"].startswith(name + "/"):
            e["throttled"] = 1
    code, out, err = cli("compare.py", write_json(doc, tmp_path / "t.json"), host_result,
                         "--json", tmp_path / "c.json", "--junit", tmp_path / "c.xml")
    assert code == 0, out + err
    row = next(r for r in json.loads((tmp_path / "c.json").read_text())["rows"]
               if r["name"] == name)
    assert row["verdict"] == "INVALID" and "throttled" in row["reason"]
    assert len(ET.parse(tmp_path / "c.xml").getroot().findall("testcase/skipped")) == 1


def test_a_power_capped_benchmark_is_compared_not_set_aside(host_result, host_doc, tmp_path):
    """The software power cap is how an H100 runs heavy tensor work: a row run there is data
    (half as fast is SLOWER), not INVALID like a thermally throttled one."""
    name = stable_benchmark(host_result)
    doc = scaled(host_doc, name, 0.5)
    for e in doc["benchmarks"]:
        if e["run_name"].startswith(name + "/"):
            e["power_capped"] = 1
    code, out, err = cli("compare.py", write_json(doc, tmp_path / "p.json"), host_result, "--json", tmp_path / "c.json")
    row = next(r for r in json.loads((tmp_path / "c.json").read_text())["rows"] if r["name"] == name)
    assert row["verdict"] == "SLOWER", row
    assert code != 0, out + err  # a regression fails the comparison


GATHER = "bandwidth/gather/kernel/bytes:1GiB"  # fails verification in the H100 fixture


def test_a_verification_failure_is_invalid_and_fails(tmp_path):
    fx = h100_result()
    new = load_result(write_json(fx, tmp_path / "new.json"))
    clean = json.loads(json.dumps(fx))
    clean["benchmarks"] = [e for e in clean["benchmarks"] if not e["run_name"].startswith(GATHER)]
    base = load_result(write_json(clean, tmp_path / "base.json"))
    r = compare(new, [base])
    row = next(r for r in r.rows if r.name == GATHER)
    assert row.verdict == "INVALID" and "verification failed" in row.reason and row.failed
    assert r.exit_code == 1  # a wrong output is a failed night, not a green one
    assert failure_lines(r) == [f"FAILED VERIFICATION: {GATHER}: verification failed: out[7] = 0 "
                                f"expected 3"]
    allowed = compare(new, [base], Thresholds(allow_failures=True))
    assert allowed.exit_code == 0 and failure_lines(allowed) == []


def test_a_baseline_with_a_verification_failure_is_not_taken(tmp_path):
    failed = load_result(write_json(h100_result(), tmp_path / "failed.json"))
    with pytest.raises(UsageError, match=rf"failed\.json: not a valid baseline: benchmark {GATHER} "
                                         r"failed verification \(verification failed: out\[7\]"):
        compare(failed, [failed])
    allowed = compare(failed, [failed], Thresholds(allow_failures=True))
    assert any(n.endswith(f"{GATHER} failed verification there; its samples left out")
               for n in allowed.notes)


def test_a_failed_verification_fails_the_comparator_naming_the_benchmark(host_result, host_doc,
                                                                          tmp_path):
    name = stable_benchmark(host_result)
    message = "verification failed: out[3] = 0 expected 1"
    new = write_json(errored(host_doc, name, message), tmp_path / "new.json")
    for quiet in ([], ["--quiet"]):
        code, out, err = cli("compare.py", new, host_result, *quiet)
        assert code == 1, out + err
        assert err.splitlines() == [f"compare.py: FAILED VERIFICATION: {name}: {message}"]
        assert ("FAILED VERIFICATION (1 benchmark(s))" in out) == (not quiet)
    code, out, err = cli("compare.py", new, host_result, "--json", tmp_path / "c.json",
                         "--junit", tmp_path / "c.xml", "--quiet")
    assert code == 1, err
    (row,) = [r for r in json.loads((tmp_path / "c.json").read_text())["rows"] if r["failed"]]
    assert (row["name"], row["verdict"], row["reason"]) == (name, "INVALID", message)
    (case,) = [c for c in ET.parse(tmp_path / "c.xml").getroot().findall("testcase")
               if c.find("failure") is not None]
    assert case.get("name") == name and case.find("failure").get("type") == "verification"
    assert message in case.find("failure").get("message")
    code, out, err = cli("compare.py", new, host_result, "--allow-failures")
    assert code == 0 and "FAILED" not in err, out + err


def test_a_result_that_failed_verification_is_never_a_baseline(host_result, host_doc, tmp_path):
    name = stable_benchmark(host_result)
    failed = write_json(errored(host_doc, name, "verification failed: sum 0 expected 64"),
                        tmp_path / "failed.json")
    # given as a baseline: refused, one line naming the file and the benchmark
    code, out, err = cli("compare.py", host_result, failed)
    assert code == 2 and out == ""
    assert err.splitlines() == [f"compare.py: error: {failed}: not a valid baseline: benchmark "
                                f"{name} failed verification (verification failed: sum 0 "
                                f"expected 64); --allow-failures leaves its samples out"]
    # in the history: passed over, with a note naming it
    key = host_doc["context"]["device_key"]
    store = tmp_path / "store" / key
    write_json(host_doc, store / "20260101T000000Z_good.json")
    bad = write_json(errored(host_doc, name, "verification failed: sum 0 expected 64"),
                     store / "20260102T000000Z_bad.json")
    new = write_json(another_run(host_doc), store / "20260103T000000Z_new.json")
    code, out, err = cli("compare.py", new, "--history", tmp_path / "store", "--json",
                         tmp_path / "c.json")
    assert code == 0, out + err
    assert [Path(b).name for b in json.loads((tmp_path / "c.json").read_text())["baselines"]] == \
        ["20260101T000000Z_good.json"]
    assert f"skipped baseline candidate {bad}: failed verification: {name}" in err
    # the failed one alone is no history at all
    (store / "20260101T000000Z_good.json").unlink()
    code, _, err = cli("compare.py", new, "--history", tmp_path / "store")
    assert code == 2 and "empty history" in err
    # --allow-failures takes it, leaving the failed benchmark's samples out
    code, out, err = cli("compare.py", new, "--history", tmp_path / "store", "--allow-failures",
                         "--json", tmp_path / "c2.json")
    assert code == 0, out + err
    doc = json.loads((tmp_path / "c2.json").read_text())
    assert [Path(b).name for b in doc["baselines"]] == ["20260102T000000Z_bad.json"]
    row = next(r for r in doc["rows"] if r["name"] == name)
    assert row["verdict"] == "INVALID" and not row["failed"] and "no valid baseline samples" in row["reason"]


def test_skipped_rows_fail_nothing(host_result, host_doc, tmp_path):
    r = load_result(host_result)
    host_skips = {b.name: b.error for b in r.benchmarks.values() if b.skipped}
    assert host_skips and all(e.startswith("skipped: not on the host backend: ")
                              for e in host_skips.values())
    name = stable_benchmark(host_result)
    other = next(b.name for b in r.benchmarks.values() if b.ok and b.name != name)
    new = write_json(errored(host_doc, name, "skipped: not on the host backend: test"),
                     tmp_path / "new.json")
    base = write_json(errored(host_doc, other, "skipped: does not fit in memory"),
                      tmp_path / "base.json")
    code, out, err = cli("compare.py", new, base, "--json", tmp_path / "c.json",
                         "--junit", tmp_path / "c.xml")
    assert code == 0 and err == "", out + err
    doc = json.loads((tmp_path / "c.json").read_text())
    reasons = {n["name"]: n["reason"] for n in doc["not_compared"]}
    assert reasons[name] == "skipped: not on the host backend: test"
    assert reasons[other] == "skipped in the baseline: skipped: does not fit in memory"
    for skip, why in host_skips.items():
        assert reasons[skip] == why
    assert not any(r["failed"] for r in doc["rows"]) and doc["exit_code"] == 0
    assert ET.parse(tmp_path / "c.xml").getroot().get("failures") == "0"
    assert "FAILED" not in out
    # a result with skipped rows is a baseline like any other, through --history too
    key = host_doc["context"]["device_key"]
    store = tmp_path / "store" / key
    write_json(errored(host_doc, other, "skipped: not on the host backend: test"),
               store / "20260101T000000Z_skips.json")
    later = write_json(host_doc, store / "20260102T000000Z_new.json")
    code, out, err = cli("compare.py", later, "--history", tmp_path / "store", "--json",
                         tmp_path / "c2.json")
    assert code == 0, out + err
    assert [Path(b).name for b in json.loads((tmp_path / "c2.json").read_text())["baselines"]] == \
        ["20260101T000000Z_skips.json"]


def test_a_night_of_wrong_outputs_fails_the_comparison(host_result, host_doc, tmp_path):
    broken = json.loads(json.dumps(host_doc))
    for e in broken["benchmarks"]:
        e["error_occurred"], e["error_message"] = True, "verification failed: element 3"
    new = write_json(broken, tmp_path / "new.json")
    code, out, err = cli("compare.py", new, host_result, "--junit", tmp_path / "c.xml")
    assert code == 1, out + err
    assert "FAILED VERIFICATION" in out
    failures = ET.parse(tmp_path / "c.xml").getroot().findall("testcase/failure")
    assert failures and all(f.get("type") == "verification" for f in failures)
    code, out, err = cli("compare.py", new, host_result, "--allow-failures")
    assert code == 0, out + err


def test_control_characters_in_a_message_keep_every_report_readable(host_result, host_doc, tmp_path):
    """An error_message with an ESC made the JUnit file invalid XML; its "|" and newline broke the
    markdown table's row, and the stderr line was two lines that recoloured the terminal. (A lone
    surrogate, which no UTF-8 writer produces, makes the file no gpubench result at all:
    test_script_hostile.py.)"""
    name = stable_benchmark(host_result)
    message = "verification failed: \x1b[31m |x\ny"
    new = write_json(errored(host_doc, name, message), tmp_path / "new.json")
    code, out, err = cli("compare.py", new, host_result, "--junit", tmp_path / "c.xml",
                         "--markdown", tmp_path / "c.md")
    assert code == 1, out + err
    shown = "verification failed: \\x1b[31m |x\\ny"
    assert err.splitlines() == [f"compare.py: FAILED VERIFICATION: {name}: {shown}"]
    (case,) = [c for c in ET.parse(tmp_path / "c.xml").getroot().findall("testcase")
               if c.find("failure") is not None]
    assert "verification failed: ?[31m |x\ny" in case.find("failure").get("message")
    for md in (out, (tmp_path / "c.md").read_text()):
        (row,) = [line for line in md.splitlines() if name in line and line.startswith("|")]
        assert row.endswith("| verification failed: \\x1b[31m \\|x\\ny |"), row
        assert "\x1b" not in md


@pytest.mark.parametrize("which", ["new", "baseline"])
def test_truncated_or_foreign_json_exits_2_naming_the_file(host_result, tmp_path, which):
    trunc = tmp_path / "trunc.json"
    trunc.write_text(host_result.read_text()[:3000])
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"context": {"date": "now", "executable": "bm"},
                                   "benchmarks": [{"name": "BM_x", "real_time": 1}]}))
    for bad, words in ((trunc, "not valid JSON"), (foreign, "not a gpubench result")):
        args = (bad, host_result) if which == "new" else (host_result, bad)
        proc = run_script("compare.py", *args)
        assert proc.returncode == 2
        assert proc.stderr.count("\n") == 1 and str(bad) in proc.stderr and words in proc.stderr


def test_device_key_mismatch_exits_2_unless_forced(host_result, host_doc, tmp_path):
    other = json.loads(json.dumps(host_doc))
    other["context"]["device_key"] = "host_other-cpu_64cpu_512GiB"
    other_path = write_json(other, tmp_path / "other.json")
    code, _, err = cli("compare.py", host_result, other_path)
    assert code == 2 and "device key mismatch" in err and "--force" in err
    code, out, err = cli("compare.py", host_result, other_path, "--force")
    assert code == 0 and "forced comparison" in out


def test_empty_history_exits_2_and_says_so(host_result, tmp_path):
    (tmp_path / "store").mkdir()
    proc = run_script("compare.py", host_result, "--history", tmp_path / "store")
    assert proc.returncode == 2 and "empty history" in proc.stderr
    assert load_result(host_result).device_key in proc.stderr
    with pytest.raises(UsageError, match="empty history"):
        compare(load_result(host_result), [])


def test_too_little_data_exits_2(tmp_path, host_doc):
    one = json.loads(json.dumps(host_doc))
    seen = set()
    keep = []
    for e in one["benchmarks"]:  # one repetition per benchmark, no aggregates
        if e["run_type"] == "iteration" and e["run_name"] not in seen:
            seen.add(e["run_name"])
            keep.append(e)
    one["benchmarks"] = keep
    p = write_json(one, tmp_path / "one.json")
    code, _, err = cli("compare.py", p, same_run_again(p, tmp_path))
    assert code == 2 and "too little data" in err and "--benchmark_repetitions" in err


def test_history_baseline_pools_the_last_valid_runs_of_the_device(host_doc, tmp_path):
    key = host_doc["context"]["device_key"]
    store = tmp_path / "store" / key
    name = "bandwidth/copy/kernel/bytes:16MiB"
    for i, stamp in enumerate(["20260101T000000Z", "20260102T000000Z", "20260103T000000Z"]):
        write_json(another_run(host_doc, str(i)), store / f"{stamp}_rev{i}.json")
    (store / "20260104T000000Z_bad.json").write_text("{")  # corrupt: skipped with a note
    new = write_json(scaled(host_doc, name, 0.999), store / "20260105T000000Z_new.json")
    code, out, err = cli("compare.py", new, "--history", tmp_path / "store", "--last", "2",
                         "--json", tmp_path / "c.json")
    assert code == 0, err
    doc = json.loads((tmp_path / "c.json").read_text())
    assert [p.split("/")[-1] for p in doc["baselines"]] == \
        ["20260102T000000Z_rev1.json", "20260103T000000Z_rev2.json"]
    row = next(r for r in doc["rows"] if r["name"] == name)
    assert row["n_baseline"] == 10 and row["n_new"] == 5
    assert "20260104T000000Z_bad.json" in err


def test_confirmation_keeps_only_slowdowns_seen_twice():
    from gpubench_tools.compare import Comparison

    t = Thresholds()
    first = Comparison("new", ["b"], "k", t, rows=[
        Row("a", "GB/s", "SLOWER", "x", change=-0.2), Row("b", "GB/s", "SLOWER", "x", change=-0.2),
        Row("c", "GB/s", "SAME", "x", change=0.0)])
    rerun = Comparison("rerun", ["b"], "k", t, rows=[
        Row("a", "GB/s", "SLOWER", "x", change=-0.19, p_value=0.004),
        Row("b", "GB/s", "SAME", "x", change=-0.01, p_value=0.4)])
    apply_confirmation(first, rerun)
    assert [r.verdict for r in first.rows] == ["SLOWER", "NOISY", "SAME"]
    assert "confirmed by re-run" in first.rows[0].reason
    assert "not confirmed by re-run" in first.rows[1].reason
    assert first.exit_code == 1
    # b alone SLOWER: the re-run dismissing it leaves a green comparison ...
    only_b = Comparison("new", ["b"], "k", t, rows=[Row("b", "GB/s", "SLOWER", "x", change=-0.2)])
    apply_confirmation(only_b, rerun)
    assert only_b.exit_code == 0 and only_b.rows[0].verdict == "NOISY"
    # ... but a re-run that failed verification is a failure, not a dismissal
    broken = Comparison("rerun", ["b"], "k", t, rows=[
        Row("b", "GB/s", "INVALID", "verification failed: x", failed=True)])
    only_b = Comparison("new", ["b"], "k", t, rows=[Row("b", "GB/s", "SLOWER", "x", change=-0.2)])
    apply_confirmation(only_b, broken)
    assert (only_b.rows[0].verdict, only_b.rows[0].failed, only_b.exit_code) == ("INVALID", True, 1)
    assert failure_lines(only_b) == ["FAILED VERIFICATION: b: re-run failed verification: "
                                     "verification failed: x; first run: x"]


def test_a_latency_change_reads_as_the_change_of_the_latency():
    """1.552 -> 2.536 ns is a 63.4 % rise of the latency: shown as +63.4 % beside SLOWER (it read
    -38.8 %, the change of its inverse); a fall is negative and FASTER. Worst first: the larger
    rise of latency leads the SLOWER rows."""
    from gpubench_tools.compare import Comparison, to_json, to_markdown

    t = Thresholds()
    base = [1.550, 1.552, 1.554, 1.551, 1.553]
    big = judge("chase/big", "latency_ns", [2.534, 2.536, 2.538, 2.535, 2.537], base, t,
                higher_is_better=False)
    assert big.verdict == "SLOWER" and big.change == pytest.approx(2.536 / 1.552 - 1)
    small = judge("chase/small", "latency_ns", [1.86, 1.862, 1.864, 1.861, 1.863], base, t,
                  higher_is_better=False)
    assert small.verdict == "SLOWER" and small.change == pytest.approx(0.2, abs=0.001)
    down = judge("chase/down", "latency_ns", [1.24, 1.241, 1.242, 1.243, 1.244], base, t,
                 higher_is_better=False)
    assert down.verdict == "FASTER" and down.change == pytest.approx(-0.2, abs=0.001)
    c = Comparison("new", ["base"], "k", t, rows=[small, down, big])
    table = [ln for ln in to_markdown(c).splitlines() if ln.startswith("| `")]
    assert [ln.split("`")[1] for ln in table] == ["chase/big", "chase/small", "chase/down"]
    assert "| +63.4% |" in table[0] and "| -20.0% |" in table[2]
    assert json.loads(to_json(c))["rows"][2]["change"] == pytest.approx(0.634, abs=0.001)


def three_repetitions(doc: dict) -> dict:
    """A copy of a SYNTHETIC result document with gpubench's default 3 repetitions per
    benchmark (the first three of each; the aggregates and failed verifications left out)."""
    out = json.loads(json.dumps(doc))
    out["benchmarks"] = [e for e in out["benchmarks"]
                         if e.get("run_type") == "iteration" and e.get("repetition_index", 0) < 3
                         and not str(e.get("error_message", "")).startswith("verification")]
    for e in out["benchmarks"]:
        e["repetitions"] = min(e["repetitions"], 3)
    return out


@pytest.fixture(scope="module")
def default_run(tmp_path_factory) -> Path:
    """A real quick host run of a few rows with gpubench's default repetitions (3)."""
    from conftest import gpubench

    out = tmp_path_factory.mktemp("default") / "three_reps.json"
    proc = gpubench("--device=host", "--quick", f"--out={out}",
                    "--filter=^bandwidth/copy/(kernel|memcpy)/bytes:(4KiB|64KiB)$")
    assert proc.returncode == 0 and out.exists(), proc.stderr[-2000:]
    reps = {len(b.samples) for b in load_result(out).benchmarks.values() if b.ok}
    assert reps == {3}, reps  # the default the no-overlap rule is for
    return out


def test_smallest_attainable_p_of_the_u_test():
    from gpubench_tools.compare import min_p_value

    assert min_p_value(3, 3) == pytest.approx(1 / 20)  # = alpha 0.05: the test can never reject
    assert min_p_value(3, 5) == pytest.approx(1 / 56)
    assert min_p_value(5, 5) == pytest.approx(1 / 252)
    assert min_p_value(3, 6) == pytest.approx(1 / 84)  # 3 new against two pooled nights of 3


def test_three_against_three_repetitions_decides_by_no_overlap():
    """3 new and 3 baseline samples: the exact one-sided U-test's smallest p is 1/20 = 0.05, so
    at alpha 0.05 it can never reject. Samples wholly apart, beyond the effect and noise bounds,
    are SLOWER (or FASTER) by the no-overlap rule, which the row names; overlapping ones stay
    NOISY, saying why."""
    t = Thresholds()
    base = [58.7, 58.91, 59.2]
    row = judge("x", "GB/s", [2.19, 2.192, 2.2], base, t)  # the -96 % row that read NOISY
    assert (row.verdict, row.test) == ("SLOWER", "no_overlap"), row
    assert row.min_p_value == pytest.approx(0.05)
    assert row.reason.endswith("; no overlap, n too small for the U-test (3 new, 3 baseline: "
                               "smallest p 0.05 >= alpha 0.05)"), row.reason
    assert judge("x", "GB/s", [80, 81, 79], [100, 101, 99], t).verdict == "SLOWER"
    assert judge("x", "GB/s", [120, 121, 119], [100, 101, 99], t).verdict == "FASTER"
    up = judge("x", "latency_ns", [2.53, 2.536, 2.54], [1.55, 1.552, 1.556], t,
               higher_is_better=False)
    assert up.verdict == "SLOWER" and up.test == "no_overlap"
    # one new sample among the baseline's: the samples do not separate, no verdict
    row = judge("x", "GB/s", [80, 100.5, 79], [100, 101, 99], t)
    assert row.verdict == "NOISY" and "overlap" in row.reason and row.test == "no_overlap"
    # an outlier the robust noise (13.5 %) ignores still overlaps: [60, 66, 130] halved
    row = judge("x", "GB/s", [30, 33, 65], [60, 66, 130], t)
    assert row.verdict == "NOISY" and "overlap" in row.reason
    # within the noise bound: NOISY before any test
    row = judge("x", "GB/s", [80, 81, 79], [100, 70, 130], t)
    assert row.verdict == "NOISY" and "noise" in row.reason
    # enough samples: the U-test decides, as before
    row = judge("x", "GB/s", [80, 81, 79], [100, 101, 99, 100.5, 99.5], t)
    assert (row.verdict, row.test) == ("SLOWER", "mann_whitney_u")
    assert row.p_value == pytest.approx(1 / 56) and "Mann-Whitney U p = 0.0179" in row.reason


def test_a_halved_result_with_default_repetitions_is_slower(tmp_path):
    doc = three_repetitions(h100_result(labelled=True))
    base = write_json(doc, tmp_path / "base.json")
    measured = {b.name: b.metric for b in load_result(base).benchmarks.values() if b.ok}
    for name, metric in measured.items():
        if metric != "latency_ns":
            doc = scaled(doc, name, 0.5)
    half = write_json(doc, tmp_path / "half.json")
    code, out, err = cli("compare.py", half, base, "--json", tmp_path / "c.json")
    assert code == 1, out + err
    report = json.loads((tmp_path / "c.json").read_text())
    assert {r["name"]: r["verdict"] for r in report["rows"]} == \
        {n: "SAME" if m == "latency_ns" else "SLOWER" for n, m in measured.items()}
    assert all(r["test"] == "no_overlap" and r["change"] == pytest.approx(-0.5)
               for r in report["rows"] if r["verdict"] == "SLOWER")
    assert any("no-overlap rule" in n and "too few samples for the Mann-Whitney U test" in n
               for n in report["notes"])
    assert "no overlap, n too small for the U-test" in out and "REGRESSION" in out


def test_a_real_run_with_default_repetitions_against_itself_is_no_regression(default_run,
                                                                             tmp_path):
    code, out, err = cli("compare.py", default_run, same_run_again(default_run, tmp_path))
    assert code == 0 and "SLOWER 0" in out and "NOISY 0" in out, out + err


def test_pooled_baseline_nights_give_the_u_test_enough_samples(tmp_path):
    """Two baseline results of 3 repetitions each (as the nightly job pools them): 3 against 6
    samples can reach p = 1/84, so the U-test decides again."""
    doc = three_repetitions(h100_result(labelled=True))
    night2 = json.loads(json.dumps(doc))  # another night: each repetition moved a little
    for e in night2["benchmarks"]:
        if "GB/s" in e:
            e["GB/s"] *= (1.01, 0.99, 1.005)[e["repetition_index"]]
    name = "bandwidth/copy/kernel/bytes:64MiB"
    slow = write_json(scaled(doc, name, 0.7), tmp_path / "slow.json")
    c = compare(load_result(slow), [load_result(write_json(doc, tmp_path / "a.json")),
                                    load_result(write_json(night2, tmp_path / "b.json"))])
    row = next(r for r in c.rows if r.name == name)
    assert (row.verdict, row.test, row.n_baseline) == ("SLOWER", "mann_whitney_u", 6), row
    assert row.p_value == pytest.approx(1 / 84)
    assert not any("no-overlap" in n for n in c.notes)


def test_a_baseline_given_twice_is_refused(host_result, host_doc, tmp_path):
    """The same baseline twice pools its repetitions twice and can flip a verdict: refused,
    whether it is the same path, another name for the same file, or a copy of its content
    (even re-indented); so is NEW given as its own baseline (all SAME, or NEW's samples pooled
    into the baseline)."""
    import os

    link = tmp_path / "link.json"
    link.symlink_to(host_result)
    hard = tmp_path / "hard.json"
    os.link(host_result, hard)
    copy = write_json(host_doc, tmp_path / "copy.json")  # indent=1: other bytes, same result
    other = write_json(scaled(host_doc, stable_benchmark(host_result), 1.001), tmp_path / "o.json")
    for twice in (host_result, link, hard, copy):
        code, out, err = cli("compare.py", other, host_result, twice, "--json", tmp_path / "c.json")
        assert (code, out) == (2, ""), err
        assert err.count("\n") == 1 and "given twice" in err and str(twice) in err, err
        assert not (tmp_path / "c.json").exists()
    with pytest.raises(UsageError, match="given twice"):
        check_distinct([load_result(host_result), load_result(copy)])
    # NEW as its own baseline (alone, or pooled with another): refused the same way
    for own in (host_result, link, hard, copy):
        for args in ((host_result, own), (host_result, other, own)):
            code, out, err = cli("compare.py", *args, "--json", tmp_path / "c.json")
            assert (code, out) == (2, ""), (args, err)
            assert err.count("\n") == 1 and "NEW given as its own baseline" in err, err
            assert str(own) in err and not (tmp_path / "c.json").exists()
    code, out, err = cli("compare.py", other, host_result)
    assert code == 0, out + err
    # --history: NEW linked into the store under an earlier name is passed over, with a note
    key = host_doc["context"]["device_key"]
    (tmp_path / "store" / key).mkdir(parents=True)
    new = write_json(host_doc, tmp_path / "store" / key / "20260102T000000Z_new.json")
    os.link(new, tmp_path / "store" / key / "20260101T000000Z_old.json")
    code, out, err = cli("compare.py", new, "--history", tmp_path / "store")
    assert code == 2 and "empty history" in err.splitlines()[-1], err
    assert f"20260101T000000Z_old.json: the same result as {new}" in err


def test_history_counts_each_run_once(host_doc, tmp_path):
    """Copies of one run in the store (another name, re-indented), or of NEW, are one run: counted
    twice, its repetitions would weigh double in the baseline; NEW's would be compared with
    themselves."""
    key = host_doc["context"]["device_key"]
    store = tmp_path / "store" / key
    first = write_json(another_run(host_doc, "1"), store / "20260101T000000Z_a.json")
    copy = store / "20260102T000000Z_copy.json"
    copy.write_text(json.dumps(json.loads(first.read_text()), indent=4))  # other bytes, same run
    second = write_json(another_run(host_doc, "2"), store / "20260103T000000Z_b.json")
    new = write_json(host_doc, store / "20260105T000000Z_new.json")
    (store / "20260104T000000Z_newcopy.json").write_bytes(new.read_bytes())
    code, out, err = cli("compare.py", new, "--history", tmp_path / "store", "--json",
                         tmp_path / "c.json")
    assert code == 0, out + err
    # newest first: the later copy of the first run is kept, the earlier file passed over
    assert json.loads((tmp_path / "c.json").read_text())["baselines"] == [str(copy), str(second)]
    assert f"20260104T000000Z_newcopy.json: the same result as {new}" in err
    assert f"{first}: the same result as {copy}" in err


def one_repetition(doc: dict) -> dict:
    """A copy of a result document with one repetition per benchmark and no aggregates."""
    out = json.loads(json.dumps(doc))
    seen: set[str] = set()
    keep = []
    for e in out["benchmarks"]:
        if e["run_type"] == "iteration" and e["run_name"] not in seen:
            seen.add(e["run_name"])
            keep.append(e)
    out["benchmarks"] = keep
    return out


def aggregates_only(doc: dict) -> dict:
    """A copy of a result document as --benchmark_report_aggregates_only writes it."""
    out = json.loads(json.dumps(doc))
    out["benchmarks"] = [e for e in out["benchmarks"]
                         if e["run_type"] == "aggregate" or e.get("error_occurred")]
    return out


def test_a_baseline_with_too_few_repetitions_exits_2_naming_it(host_result, host_doc, tmp_path):
    one = write_json(one_repetition(host_doc), tmp_path / "rep1.json")
    code, out, err = cli("compare.py", host_result, one)
    assert (code, out) == (2, ""), err
    assert err == (f"compare.py: error: too little data: baseline {one} has at most 1 "
                   f"per-repetition sample(s) per benchmark; need 3 (run gpubench with "
                   f"--benchmark_repetitions=5, without --benchmark_report_aggregates_only)\n")
    # asking for more samples than 5 repetitions give: the hint asks for as many
    code, out, err = cli("compare.py", host_result, one, "--min-samples", "10")
    assert code == 2 and "need 10 (run gpubench with --benchmark_repetitions=10, without" in err, err
    agg = write_json(aggregates_only(host_doc), tmp_path / "agg.json")
    code, out, err = cli("compare.py", host_result, agg)
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert f"too little data: baseline {agg} holds only aggregates" in err
    # pooled with a full baseline, still refused: the file is named, not averaged away
    code, _, err = cli("compare.py", host_result, same_run_again(host_result, tmp_path), one)
    assert code == 2 and f"baseline {one} has at most 1" in err
    # the new result, as before
    code, _, err = cli("compare.py", one, host_result)
    assert code == 2 and f"too little data: {one} has at most 1" in err


def test_history_passes_over_a_result_with_too_few_repetitions(host_doc, tmp_path):
    key = host_doc["context"]["device_key"]
    store = tmp_path / "store" / key
    good = write_json(host_doc, store / "20260101T000000Z_good.json")
    one = write_json(one_repetition(host_doc), store / "20260102T000000Z_one.json")
    new = write_json(another_run(host_doc), store / "20260103T000000Z_new.json")
    code, out, err = cli("compare.py", new, "--history", tmp_path / "store", "--json",
                         tmp_path / "c.json")
    assert code == 0, out + err
    assert json.loads((tmp_path / "c.json").read_text())["baselines"] == [str(good)]
    assert (f"compare.py: note: skipped baseline candidate {one}: has at most 1 "
            f"per-repetition sample(s) per benchmark; need 3") in err


def test_a_baseline_benchmark_without_samples_says_so(host_result, host_doc, tmp_path):
    """One benchmark of the baseline holds only its aggregates (the others are complete): its
    row is INVALID for want of samples, not "failed or throttled there"."""
    name = stable_benchmark(host_result)
    doc = json.loads(json.dumps(host_doc))
    doc["benchmarks"] = [e for e in doc["benchmarks"] if not (
        e["run_name"].startswith(name + "/") and e["run_type"] == "iteration")]
    c = compare(load_result(host_result), [load_result(write_json(doc, tmp_path / "b.json"))])
    row = next(r for r in c.rows if r.name == name)
    assert (row.verdict, row.reason) == (
        "INVALID", f"no valid baseline samples (none with per-repetition values of {row.metric} "
                   f"there)")


def test_report_outputs_are_checked_before_any_work(host_result, host_doc, tmp_path):
    """One file for two outputs, an output in a folder that does not exist, an empty output
    value, an output that is an input: one line, exit 2, nothing written or created."""
    md = tmp_path / "r.md"
    base = same_run_again(host_result, tmp_path)
    cases = [
        (["--markdown", md, "--json", md], "the same file is given for two outputs"),
        (["--markdown", md, "--junit", tmp_path / "." / "r.md"],
         "the same file is given for two outputs"),
        (["--markdown", tmp_path / "missing" / "deeper" / "r.md"],
         f"{tmp_path / 'missing' / 'deeper' / 'r.md'}: folder {tmp_path / 'missing' / 'deeper'} "
         f"does not exist"),
        (["--junit", ""], "--junit has an empty value"),
        (["--json", " "], "--json has an empty value"),
        (["--json", base, "--force"], f"--json {base}: is an input of this comparison"),
    ]
    before = base.read_bytes()
    for extra, message in cases:
        code, out, err = cli("compare.py", host_result, base, *extra)
        assert (code, out) == (2, ""), (extra, err)
        assert err == f"compare.py: error: {message}\n", (extra, err)
    assert not md.exists() and not (tmp_path / "missing").exists()
    assert base.read_bytes() == before
    # the folder existing, all three are written
    code, out, err = cli("compare.py", host_result, base, "--markdown", md, "--json",
                         tmp_path / "r.json", "--junit", tmp_path / "r.xml", "--quiet")
    assert code == 0 and md.read_text().startswith("# gpubench comparison"), err
    assert json.loads((tmp_path / "r.json").read_text())["exit_code"] == 0
    assert ET.parse(tmp_path / "r.xml").getroot().tag == "testsuite"


@pytest.mark.parametrize("which", ["new", "baseline"])
@pytest.mark.parametrize("counter, value", [("GB/s", -200.0), ("GB/s", -1), ("TFLOPS", -0.5),
                                            ("latency_ns", -23.0)])
def test_a_negative_rate_or_latency_is_not_a_result(which, counter, value, tmp_path):
    """gpubench never writes a negative GB/s, TFLOPS or latency: such a file is refused, one
    line naming it and the entry, exit 2 (it compared as "-200 %", exit 0)."""
    doc = without_failed_rows(h100_result(labelled=True))
    good = write_json(doc, tmp_path / "good.json")
    entry = next(e for e in doc["benchmarks"] if e["run_type"] == "iteration" and counter in e)
    entry[counter] = value
    bad = write_json(doc, tmp_path / "bad.json")
    args = (bad, good) if which == "new" else (good, bad)
    code, out, err = cli("compare.py", *args)
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1 and err.startswith(f"compare.py: error: {bad}: not a gpubench result: benchmarks[")
    assert f"has {counter} = {value}" in err and "negative" in err, err


def without_failed_rows(doc: dict) -> dict:
    """The document without its failed-verification entries (such a result is no baseline)."""
    out = json.loads(json.dumps(doc))
    out["benchmarks"] = [e for e in out["benchmarks"]
                         if not str(e.get("error_message", "")).startswith("verification")]
    return out


def test_force_never_writes_over_an_input_or_through_a_link(host_result, host_doc, tmp_path):
    """--force replaces an existing report, never an input: not a baseline of the --history
    store, not a hard link to an input, and a symbolic link is refused rather than written
    through (a dangling one would create its target). One line, exit 2, nothing changed."""
    import os

    key = host_doc["context"]["device_key"]
    store = tmp_path / "store"
    stored = write_json(host_doc, store / key / "20260101T000000Z_a.json")
    base = same_run_again(host_result, tmp_path)
    hard = tmp_path / "h.json"
    os.link(base, hard)
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "target.json")
    before = {p: p.read_bytes() for p in (stored, base)}
    cases = [
        # (a result of the store: refused as one before the store's files are read)
        (["--history", store, "--json", stored], "is a gpubench result (or what is left of one); results are never "
                                                "overwritten"),
        ([base, "--json", hard], f"--json {hard}: is an input"),
        ([base, "--markdown", dangling], f"--markdown {dangling}: is a symbolic link"),
    ]
    for extra, message in cases:
        code, out, err = cli("compare.py", host_result, *extra, "--force")
        assert (code, out) == (2, ""), (extra, err)
        assert err.count("\n") == 1 and message in err, (extra, err)
    assert all(p.read_bytes() == b for p, b in before.items())
    assert not (tmp_path / "target.json").exists() and dangling.is_symlink()


def test_reports_are_written_all_or_none(host_result, host_doc, tmp_path, monkeypatch):
    """A folder that cannot be written is refused before any work, and a write that fails (a
    full disk) leaves no report at all, not even an empty one: the rerun is not refused as
    "exists", and the line names the user's path."""
    import errno
    import io

    import gpubench_tools.compare as comparator

    base = same_run_again(host_result, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    md, js = out / "m.md", out / "m.json"
    # /proc takes no new files, even from root
    code, stdout, err = cli("compare.py", host_result, base, "--markdown", md, "--json", js,
                            "--junit", "/proc/gpubench-report.xml")
    assert (code, stdout) == (2, "") and err.count("\n") == 1, err
    assert "/proc/gpubench-report.xml: cannot write there" in err
    assert list(out.iterdir()) == []

    class Full(io.StringIO):
        def write(self, s):
            raise OSError(errno.ENOSPC, "No space left on device")

    real_open = open
    monkeypatch.setattr(comparator, "open",
                        lambda p, *a, **k: Full() if str(p).endswith(".tmp") and "m.json" in str(p)
                        else real_open(p, *a, **k), raising=False)
    code, stdout, err = cli("compare.py", host_result, base, "--markdown", md, "--json", js)
    assert (code, stdout) == (2, "") and err.count("\n") == 1, err
    assert f"{js}: cannot write: No space left on device" in err
    assert list(out.iterdir()) == []
    monkeypatch.undo()
    code, _, err = cli("compare.py", host_result, base, "--markdown", md, "--json", js)
    assert code == 0 and md.stat().st_size > 0 and json.loads(js.read_text()), err


@pytest.mark.parametrize("key", ["/tmp/x", "", "../x", "..", "a/../../b"])
def test_history_refuses_a_device_key_that_is_no_folder_name(key, host_doc, tmp_path):
    """--history reads STORE/<NEW's device key>: a key that is absolute, empty or climbs out of
    the store is refused, one line naming NEW, exit 2, before any history file is read."""
    store = tmp_path / "store"
    (store / "x").mkdir(parents=True)
    escape = tmp_path / "x"
    escape.mkdir()
    write_json(host_doc, escape / "20260101T000000Z_a.json")
    doc = json.loads(json.dumps(host_doc))
    doc["context"]["device_key"] = key
    new = tmp_path / "new.json"
    new.write_text(json.dumps(doc))
    code, out, err = cli("compare.py", new, "--history", store)
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1 and str(new) in err, err
    # (an empty key is refused already by the loader as a missing context key)
    assert ("device key" in err and "folder name" in err) or "lacks context keys: device_key" in err


def test_the_repetition_minimum_holds_per_row(host_result, host_doc, tmp_path):
    """A baseline (or NEW) with enough repetitions on one row and 1 on the others is refused,
    naming the file and a thin row: the minimum is per row measured in both files, not the
    maximum over rows."""
    rows = [b for b in load_result(host_result).benchmarks.values() if b.ok]
    keep = rows[0].name
    thin = json.loads(json.dumps(host_doc))
    thin["benchmarks"] = [e for e in thin["benchmarks"] if e["run_type"] == "iteration" and (
        e["run_name"].startswith(keep + "/") or e.get("repetition_index", 0) == 0)]
    thin = write_json(thin, tmp_path / "thin.json")
    full = same_run_again(host_result, tmp_path)
    for args, role in (((host_result, thin), "baseline "), ((thin, full), "")):
        code, out, err = cli("compare.py", *args)
        assert (code, out) == (2, ""), err
        assert err.count("\n") == 1 and f"too little data: {role}{thin}: benchmark " in err, err
        assert "has 1 per-repetition sample(s); need 3" in err and keep not in err, err


def test_a_comparison_of_only_invalid_rows_exits_2(host_result, host_doc, tmp_path):
    """Every row INVALID (here: NEW ran throttled throughout) is no "no confirmed regression":
    one line "nothing comparable: ...", exit 2, no report written. One row that could be
    compared is enough for the usual verdict."""
    doc = json.loads(json.dumps(host_doc))
    for e in doc["benchmarks"]:
        e["throttled"] = 1
    hot = write_json(doc, tmp_path / "hot.json")
    code, out, err = cli("compare.py", hot, host_result, "--json", tmp_path / "c.json")
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1 and err.startswith("compare.py: error: nothing comparable: ")
    assert "INVALID" in err and "throttled" in err and not (tmp_path / "c.json").exists()
    name = stable_benchmark(host_result)
    for e in doc["benchmarks"]:
        if e["run_name"].startswith(name + "/"):
            e.pop("throttled")
    code, out, err = cli("compare.py", write_json(doc, tmp_path / "one.json"), host_result)
    assert code == 0, out + err


def test_an_input_that_is_no_regular_file_is_refused_unopened(host_result, tmp_path):
    """/dev/zero (read until memory ran out) and a FIFO (the read blocked forever), as NEW or
    as a baseline, directly or through a link: one line, exit 2, before anything is opened."""
    import os

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    for bad in ("/dev/zero", link, fifo):
        for args in ((bad, host_result), (host_result, bad)):
            code, out, err = cli("compare.py", *args, "--json", tmp_path / "c.json")
            assert (code, out) == (2, ""), (args, err)
            assert err == f"compare.py: error: {bad}: not a regular file (a FIFO, device or " \
                          f"socket), not a result file\n", err
            assert not (tmp_path / "c.json").exists()


def test_a_new_result_without_the_headline_counter_is_invalid_row_by_row(host_result, host_doc, tmp_path):
    """NEW whose entries lack the headline counter (GB/s removed by hand): as with a baseline
    that lacks it, each such row is INVALID, saying why (statistics.median of nothing was a
    traceback). Rows with their counter are still compared."""
    doc = another_run(host_doc)
    for e in doc["benchmarks"]:
        e.pop("GB/s", None)
    new = write_json(doc, tmp_path / "new.json")
    code, out, err = cli("compare.py", new, host_result, "--json", tmp_path / "c.json")
    assert code == 0 and "Traceback" not in err, err
    rows = json.loads((tmp_path / "c.json").read_text())["rows"]
    gbps = [r for r in rows if r["metric"] == "GB/s"]
    assert gbps and all(r["verdict"] == "INVALID" and "no per-repetition values of GB/s in the new result"
                        in r["reason"] for r in gbps)
    assert any(r["verdict"] != "INVALID" for r in rows)  # the TFLOPS rows
    # every compared row without it: nothing comparable, one line, exit 2
    only = json.loads(json.dumps(doc))
    only["benchmarks"] = [e for e in only["benchmarks"] if e["name"].startswith("bandwidth/copy/")]
    base = json.loads(json.dumps(host_doc))
    base["benchmarks"] = [e for e in base["benchmarks"] if e["name"].startswith("bandwidth/copy/")]
    code, out, err = cli("compare.py", write_json(only, tmp_path / "only.json"),
                         write_json(base, tmp_path / "base.json"))
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "nothing comparable" in err
