"""scripts/fleet.py on fixture stores: a fleet of one card, 8 nodes x 8 GPUs, built from a real
H100 result whose headline rows are varied per GPU (seeded, +-1 % uniform noise), one planted
outlier; failure records; and every kind of bad input (one line on stderr, exit 2).

The base document joins two real runs of the committed H100 results (the bandwidth run and the
compute run of the same session: only together do they hold every headline) and keeps only
their headline rows' repetitions, so a 64-GPU store loads in a second. Every value derived from
them is SYNTHETIC, for the test; nothing under results/ is modified.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import shutil
import struct
from pathlib import Path

import pytest

from conftest import ROOT, THROUGHPUT_COUNTERS, cli, run_script
from gpubench_tools.errors import UsageError
from gpubench_tools.fleet import MEAN_AD_TO_SIGMA, Rules, analyse, fleet_figure, robust_spread
from gpubench_tools.report import headlines
from gpubench_tools.results import parse_result
from gpubench_tools.store import free_result_path

H100_DIR = ROOT / "results" / "h100_80gb_hbm3-79gib-sm90-drv580-cuda13.0"
#: The bandwidth run and the compute run of one session (the same card, driver and revision).
BASE_RUNS = ("20261123T081921Z_ba75c8a7ed77.json", "20261123T081340Z_f65bec09d0ff.json")
NODES = [f"n{i:02d}" for i in range(1, 9)]
GPUS = 8
NOISE = 0.01
#: The planted outlier: one GPU's PCIe host-to-device bandwidth at 60 % of the others'.
PLANTED = ("n03", "5", "PCIe host to device", 0.6)
START = dt.datetime(2026, 11, 24, 1, 0, 0, tzinfo=dt.timezone.utc)


# ------------------------------------------------------------------------------ the fixtures

@pytest.fixture(scope="module")
def base_doc() -> dict:
    """The real H100 context and the repetitions of every headline row of the two runs."""
    docs = [json.loads((H100_DIR / name).read_text()) for name in BASE_RUNS]
    rows = set()
    for d in docs:
        rows |= {h.row for h in headlines(parse_result(d))}
    entries = [e for d in docs for e in d["benchmarks"] if e.get("run_type") == "iteration"
               and (e.get("run_name") or e["name"]).removesuffix("/manual_time") in rows]
    doc = {"context": dict(docs[0]["context"]), "benchmarks": entries}
    assert {h.what for h in headlines(parse_result(doc))} >= {
        "DRAM copy", "L2 plateau", "PCIe host to device", "PCIe device to host", "SGEMM",
        "FP16 GEMM"}
    return doc


def row_of(entry: dict) -> str:
    return (entry.get("run_name") or entry["name"]).removesuffix("/manual_time")


def gpu_doc(base: dict, node: str, gpu: str, when: dt.datetime, factors: dict[str, float],
            **context) -> dict:
    """A result of one (node, GPU): the base document with each row's throughput counters
    multiplied by factors[row] and the context naming the node, GPU and start time."""
    doc = json.loads(json.dumps(base))
    doc["context"].update(host_name=node, device_ordinal=gpu,
                          run_started_utc=when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                          date=when.isoformat(), **context)
    for e in doc["benchmarks"]:
        f = factors.get(row_of(e), 1.0)
        for k in THROUGHPUT_COUNTERS:
            if isinstance(e.get(k), (int, float)):
                e[k] *= f
    return doc


def context_of(path: Path) -> tuple[str, str, str]:
    """(host_name, device_ordinal, run_started_utc) of a result file."""
    ctx = json.loads(path.read_text())["context"]
    return ctx["host_name"], ctx["device_ordinal"], ctx["run_started_utc"]


def headline_row(base: dict, what: str) -> str:
    return next(h.row for h in headlines(parse_result(base)) if h.what == what)


def write_result(store: Path, doc: dict) -> Path:
    """Writes a document where gpubench --results-dir would."""
    ctx = doc["context"]
    when = dt.datetime.strptime(ctx["run_started_utc"], "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=dt.timezone.utc)
    path = free_result_path(store, ctx["device_key"], when, ctx["git_revision"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def split_phases(doc: dict, later: dt.timedelta) -> tuple[dict, dict]:
    """A result as gpubench --device=all writes it: the GPU's own rows, then (a phase later)
    the rows of the links it shares (PCIe) in a second result."""
    own, links = json.loads(json.dumps(doc)), json.loads(json.dumps(doc))
    own["benchmarks"] = [e for e in doc["benchmarks"] if "/pcie_" not in row_of(e)]
    links["benchmarks"] = [e for e in doc["benchmarks"] if "/pcie_" in row_of(e)]
    when = dt.datetime.strptime(doc["context"]["run_started_utc"], "%Y-%m-%dT%H:%M:%SZ") + later
    links["context"]["run_started_utc"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    return own, links


def build_store(store: Path, base: dict, nodes=NODES, gpus=GPUS, planted=PLANTED,
                seed: int = 20261124, phased: tuple[str, ...] = ("n08",)) -> Path:
    """One result per (node, GPU), every headline row at 1 +- NOISE (uniform) of the real
    value, the planted outlier's row scaled. The GPUs of the `phased` nodes have two results
    each, as --device=all writes them (split_phases). And an OLDER result of n01:0 with its
    DRAM copy at 30 %, which must be ignored (each GPU's newest value counts)."""
    rng = random.Random(seed)
    rows = sorted({row_of(e) for e in base["benchmarks"]})
    i = 0
    for node in nodes:
        for g in range(gpus):
            factors = {r: 1 + rng.uniform(-NOISE, NOISE) for r in rows}
            if planted and (node, str(g)) == planted[:2]:
                factors[headline_row(base, planted[2])] = planted[3]
            doc = gpu_doc(base, node, str(g), START + dt.timedelta(seconds=i), factors)
            for part in split_phases(doc, dt.timedelta(minutes=5)) if node in phased else [doc]:
                write_result(store, part)
            i += 1
    old = gpu_doc(base, nodes[0], "0", START - dt.timedelta(days=1),
                  {headline_row(base, "DRAM copy"): 0.3})
    write_result(store, old)
    return store


@pytest.fixture(scope="module")
def fleet_store(tmp_path_factory, base_doc) -> Path:
    """8 nodes x 8 GPUs with the planted outlier (read-only: tests copy it to change it)."""
    return build_store(tmp_path_factory.mktemp("fleet") / "store", base_doc)


@pytest.fixture
def store_copy(fleet_store, tmp_path) -> Path:
    """A private copy of the planted store."""
    return Path(shutil.copytree(fleet_store, tmp_path / "store"))


def failure_record(store: Path, node: str, status: int = 2, ended: dt.datetime | None = None,
                   name: str | None = None) -> Path:
    """A failure record as scripts/slurm/gpubench_fleet.sbatch writes it."""
    ended = ended or START + dt.timedelta(hours=1)
    stamp = ended.strftime("%Y-%m-%dT%H:%M:%SZ")
    doc = {"gpubench_failure": 1, "node": node, "job_id": "4242", "task_id": "6",
           "restart_count": "0", "exit_status": status, "started_utc": stamp,
           "ended_utc": stamp, "command": "gpubench --device=all --results-dir=/s",
           "stderr_tail": ["gpubench: --device=all: no NVIDIA driver (libcuda.so.1 not found)"]}
    path = store / "_failed" / (name or f"{node}_4242_6.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def expect_bad_input(args, message: str) -> str:
    """fleet.py with args: exit 2, exactly one stderr line naming the problem, no traceback."""
    code, out, err = cli("fleet.py", *args)
    assert code == 2, (code, out, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fleet.py: error: "), err
    assert message in lines[0], err
    return lines[0]


# ------------------------------------------------------------------------------ statistics

def test_robust_spread_exact_values():
    s = robust_spread([1, 2, 3, 4, 100], min_spread=0)
    assert (s.median, s.mad, s.scale_from) == (3, 1, "MAD")
    assert s.z(100) == pytest.approx(0.6745 * 97)  # Iglewicz and Hoaglin's modified z
    assert robust_spread([1, 2, 3, 4], min_spread=0).median == 2.5
    # MAD 0 (most values equal): the mean absolute deviation, scaled to a standard deviation.
    s = robust_spread([5, 5, 5, 5, 9], min_spread=0)
    assert s.mad == 0 and s.scale_from == "mean absolute deviation"
    assert s.scale == pytest.approx(MEAN_AD_TO_SIGMA * 4 / 5)
    # The floor: a fleet tighter than 0.5 % of its median cannot flag a 1 % deviation.
    s = robust_spread([100.0, 100.001, 99.999, 100.0, 101.0])
    assert s.scale_from == "floor" and s.scale == pytest.approx(0.5)
    assert abs(s.z(101.0)) < 3.5
    # Identical values: nothing divides by zero, nothing is an outlier.
    s = robust_spread([7.0, 7.0, 7.0])
    assert s.z(7.0) == 0 and s.scale == pytest.approx(0.035)
    assert robust_spread([0.0, 0.0, 0.0]).z(0.0) == 0


# ------------------------------------------------------------------------------ the verdicts

def test_the_planted_outlier_is_named_and_nothing_else(fleet_store, tmp_path):
    out_json, out_md, out_png = tmp_path / "f.json", tmp_path / "f.md", tmp_path / "f.png"
    code, out, err = cli("fleet.py", fleet_store, "--json", out_json, "--markdown", out_md,
                         "--png", out_png, "--expect", len(NODES), "--gpus-per-node", GPUS)
    assert code == 1, out + err
    doc = json.loads(out_json.read_text())
    node, gpu, what, factor = PLANTED
    assert [(o["node"], o["gpu"], o["metric"]) for o in doc["outliers"]] == [(node, gpu, what)]
    o = doc["outliers"][0]
    assert o["z"] < -3.5 and o["direction"] == "low"
    assert o["value"] == pytest.approx(factor * o["median"], rel=0.03)
    assert doc["nodes"] == NODES and len(doc["gpus"]) == len(NODES) * GPUS
    # n08's GPUs wrote two results each; and the older n01:0 result
    assert doc["files_read"] == len(NODES) * GPUS + GPUS + 1
    assert doc["failed"] == [] and doc["exit_code"] == 1
    judged = {m["metric"]: m for m in doc["metrics"]}
    assert list(judged)[:3] == ["DRAM copy", "L2 plateau", "PCIe host to device"]
    assert set(judged) >= {"DRAM copy", "L2 plateau", "PCIe host to device", "SGEMM"}
    # Only the newest result of n01:0 counts: its older DRAM copy at 30 % is no outlier.
    assert abs(judged["DRAM copy"]["values"]["n01:0"]["z"]) < 3.5
    for m in judged.values():
        assert m["gpus"] == len(NODES) * GPUS and m["note"] == "" and m["scale_from"] == "MAD"
    report = out_md.read_text()
    assert report == out
    assert f"| {node} | {gpu} | {what} |" in report
    assert "8 nodes, 64 GPUs" in report and "**1 outlier**" in report
    assert err.strip().splitlines() == [line for line in err.strip().splitlines()
                                        if line.startswith("fleet.py: OUTLIER: n03:5: PCIe")]
    assert len(err.strip().splitlines()) == 1


def test_a_clean_fleet_exits_0(tmp_path, base_doc):
    store = build_store(tmp_path / "store", base_doc, nodes=NODES[:4], gpus=2, planted=None)
    code, out, err = cli("fleet.py", store, "--nodes", ",".join(NODES[:4]))
    assert code == 0 and err == "", out + err
    assert "**no outlier, no failed node**" in out and "## Outliers (0)" in out


def test_node_names_match_whatever_their_case(tmp_path, base_doc):
    store = build_store(tmp_path / "store", base_doc, nodes=NODES[:4], gpus=2, planted=None)
    code, out, err = cli("fleet.py", store, "--nodes", ",".join(n.upper() for n in NODES[:4]))
    assert code == 0 and err == "", out + err
    missing = cli("fleet.py", store, "--nodes", ",".join(NODES[:4] + ["N09"]))
    assert missing[0] == 2 and "n09" in missing[2]


def test_the_png_labels_the_outlier(fleet_store, tmp_path):
    png = tmp_path / "fleet.png"
    code, _, err = cli("fleet.py", fleet_store, "--png", png, "--quiet")
    assert code == 1, err
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 800 and height >= 400
    import matplotlib.image as mpimg
    pixels = mpimg.imread(str(png))
    assert pixels.std() > 0.05  # drawn, not blank
    fig = fleet_figure(analyse(fleet_store))
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.texts]
    assert labels == ["n03:5"]
    assert "PCIe host to device" in [t.get_text() for t in ax.get_yticklabels()]


def test_a_failed_node_is_reported_and_exits_1(tmp_path, base_doc):
    store = build_store(tmp_path / "store", base_doc, nodes=NODES[:4], gpus=2, planted=None)
    failure_record(store, "n09", status=2)
    json_out = tmp_path / "f.json"
    code, out, err = cli("fleet.py", store, "--nodes", ",".join(NODES[:4] + ["n09"]),
                         "--json", json_out)
    assert code == 1, out + err
    doc = json.loads(json_out.read_text())
    assert doc["outliers"] == [] and doc["nodes"] == NODES[:4] + ["n09"]
    (failed,) = doc["failed"]
    assert failed["node"] == "n09" and "status 2" in failed["what"]
    assert "no NVIDIA driver" in failed["detail"][0]
    assert "**FAILED** n09: gpubench exited with status 2 (job 4242, task 6)" in out
    assert "no NVIDIA driver" in out and "1 failed node" in out
    assert err.strip() == "fleet.py: FAILED: n09: gpubench exited with status 2 (job 4242, task 6)"


def test_a_store_of_failures_only(tmp_path):
    store = tmp_path / "store"
    failure_record(store, "n01")
    failure_record(store, "n02", status=137)
    png = tmp_path / "f.png"
    code, out, err = cli("fleet.py", store, "--png", png, "--expect", 2)
    assert code == 1, out + err
    assert "**2 failed nodes**" in out and "0 GPUs" in out and png.stat().st_size > 1000
    assert len(err.strip().splitlines()) == 2


def test_a_failure_followed_by_a_newer_result_is_superseded(tmp_path, base_doc):
    store = build_store(tmp_path / "store", base_doc, nodes=NODES[:3], gpus=2, planted=None)
    failure_record(store, "n02", ended=START - dt.timedelta(hours=1))  # before every result
    code, out, err = cli("fleet.py", store)
    assert code == 0, out + err
    assert "Earlier failures, since run again" in out and "## Failed (0)" in out


def test_failed_verification_and_missing_gpus_fail_the_node(tmp_path, base_doc):
    store = build_store(tmp_path / "store", base_doc, nodes=NODES[:3], gpus=2, planted=None)
    doc = gpu_doc(base_doc, "n01", "1", START + dt.timedelta(hours=1), {})
    entry = next(e for e in doc["benchmarks"] if row_of(e).startswith("compute/sgemm/"))
    entry["verified"] = 0
    write_result(store, doc)
    next(p for p in store.rglob("*.json") if context_of(p)[:2] == ("n03", "1")).unlink()
    code, out, err = cli("fleet.py", store, "--gpus-per-node", 2)
    assert code == 1, out + err
    assert "**FAILED** n01:1: verification failed: compute/sgemm/" in out
    assert "**FAILED** n03: 1 of 2 GPUs have a result" in out


def test_too_few_gpus_for_statistics(tmp_path, base_doc):
    store = build_store(tmp_path / "store", base_doc, nodes=NODES[:1], gpus=2, planted=None)
    code, out, err = cli("fleet.py", store)
    assert code == 0, out + err
    assert out.count("too few GPUs for statistics") == len(headlines(parse_result(base_doc)))


def test_nodes_on_different_drivers_are_one_fleet(tmp_path, base_doc):
    store = build_store(tmp_path / "store", base_doc, nodes=NODES[:3], gpus=2, planted=None)
    newer = gpu_doc(base_doc, "n02", "0", START + dt.timedelta(hours=1), {},
                    device_key="h100_80gb_hbm3-79gib-sm90-drv590-cuda13.1",
                    driver_version="590.10 (CUDA 13.1)", runtime_version="13.1")
    write_result(store, newer)
    code, out, err = cli("fleet.py", store)
    assert code == 0, out + err
    assert "versions differ across the fleet" in out and "590.10 (CUDA 13.1)" in out


def test_the_script_runs_as_a_user_would(fleet_store):
    proc = run_script("fleet.py", fleet_store, "--quiet")
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    assert proc.stderr.startswith("fleet.py: OUTLIER: n03:5: PCIe host to device")


# ------------------------------------------------------------------------------ bad input

def test_mixed_cards_are_bad_input(store_copy, base_doc):
    a100 = gpu_doc(base_doc, "n09", "0", START, {}, device_name="NVIDIA A100-SXM4-80GB",
                   device_key="a100_sxm4_80gb-79gib-sm80-drv580-cuda13.0")
    path = write_result(store_copy, a100)
    line = expect_bad_input([store_copy], "more than one card")
    assert "NVIDIA H100 80GB HBM3" in line and "NVIDIA A100-SXM4-80GB" in line and str(path) in line


def test_quick_runs_among_full_ones_are_bad_input(store_copy, base_doc):
    """A node run again with --quick measured smaller sizes under the same metric names (its
    DRAM copy row cache-resident): pooled with full runs it was a false outlier, exit 1."""
    quick = gpu_doc(base_doc, "n02", "1", START + dt.timedelta(hours=2), {}, quick="true")
    write_result(store_copy, quick)
    line = expect_bad_input([store_copy], "the store mixes --quick runs (n02:1) with full ones (n01:0, ")
    assert "run those GPUs again with the fleet's arguments" in line
    # An older quick result that a newer full one replaces is not used, and not refused.
    full = gpu_doc(base_doc, "n02", "1", START + dt.timedelta(hours=3), {})
    write_result(store_copy, full)
    code, out, err = cli("fleet.py", store_copy)
    assert code in (0, 1) and "mixes --quick" not in err, err


def test_a_truncated_file_is_named(store_copy):
    victim = sorted(store_copy.rglob("*.json"))[7]
    victim.write_text(victim.read_text()[: 5000])
    expect_bad_input([store_copy], f"{victim}: not valid JSON (truncated or corrupt?)")


def test_a_truncated_failure_record_is_named(store_copy):
    record = failure_record(store_copy, "n01")
    record.write_text(record.read_text()[:40])
    expect_bad_input([store_copy], f"{record}: failure record is not valid JSON")


def test_an_empty_or_missing_store_is_bad_input(tmp_path):
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    expect_bad_input([tmp_path / "empty"], "empty store")
    expect_bad_input([tmp_path / "nonesuch"], "no such store")


@pytest.mark.parametrize("key", ["host_name", "device_ordinal"])
def test_a_result_without_node_or_gpu_is_bad_input(store_copy, base_doc, key):
    doc = gpu_doc(base_doc, "n01", "0", START + dt.timedelta(hours=2), {})
    del doc["context"][key]
    path = write_result(store_copy, doc)
    expect_bad_input([store_copy], f"{path}: result lacks context key '{key}'")


@pytest.mark.parametrize("host", [".", "..", ".hidden", "n 01", "n\x1b01"])
def test_a_result_whose_host_name_is_no_host_name_is_bad_input(store_copy, base_doc, host):
    """".", ".." and ".x" have no node name before their first "." (all became "": results of
    different machines merged into one node, exit 0); a space or a control character cannot be
    named by --nodes. The same rule as a failure record's node."""
    doc = gpu_doc(base_doc, host, "0", START + dt.timedelta(hours=2), {})
    path = write_result(store_copy, doc)
    expect_bad_input([store_copy], f"{path}: host_name ")
    expect_bad_input([store_copy], "is not a host name")


def test_a_missing_expected_node_is_bad_input(fleet_store):
    expect_bad_input([fleet_store, "--nodes", ",".join(NODES + ["n09", "n10"])],
                     "expected nodes without results or a failure record: n09, n10")
    expect_bad_input([fleet_store, "--expect", "9"], "expected 9 nodes, the store has 8")
    expect_bad_input([fleet_store, "--nodes", "n[01-09]"], "scontrol show hostnames")
    # --nodes given twice: both lists count (the last one alone would drop n09 silently).
    expect_bad_input([fleet_store, "--nodes", "n09", "--nodes", NODES[0]], "n09")


def test_empty_values_are_bad_input(fleet_store):
    expect_bad_input([""], "argument STORE: an empty path")
    expect_bad_input([fleet_store, "--json", ""], "--json has an empty value")


@pytest.mark.parametrize("flag", ["--json", "--png", "--markdown"])
def test_an_existing_output_is_never_overwritten(fleet_store, tmp_path, flag):
    out = tmp_path / "exists"
    out.write_text("an earlier report")
    expect_bad_input([fleet_store, flag, out], f"{out} exists; fleet.py never overwrites")
    assert out.read_text() == "an earlier report"


@pytest.mark.parametrize("args, message", [
    (["--z", "nan"], "--z nan"),
    (["--min-spread", "2"], "--min-spread 2.0"),
    (["--expect", "0"], "--expect 0"),
    (["--nodes", " , "], "no node name"),
    (["--nodes", "n01", "--expect", "1"], "not both"),
    (["--gpus-per-node", "0"], "--gpus-per-node 0"),
    (["--png", "/proc/fleet.png"], "/proc/"),
    (["--json", "{tmp}"], "is a directory"),
    (["--json", "{tmp}/a", "--markdown", "{tmp}/a"], "same file"),
])
def test_hostile_arguments(fleet_store, tmp_path, args, message):
    expect_bad_input([fleet_store, *[a.format(tmp=tmp_path) for a in args]], message)


def test_not_a_failure_record_is_bad_input(store_copy):
    path = store_copy / "_failed" / "notes.json"
    path.parent.mkdir()
    path.write_text('{"hello": 1}')
    expect_bad_input([store_copy], f"{path}: not a gpubench failure record")


def test_analyse_raises_usage_error_on_a_file(tmp_path):
    f = tmp_path / "x.json"
    f.write_text("{}")
    with pytest.raises(UsageError, match="is a file"):
        analyse(f, Rules())


def test_fuzzed_command_lines(tmp_path, base_doc, monkeypatch):
    """Seeded hostile command lines: exit 0, 1 or 2; on 2 one line naming the tool; never a
    traceback (test_fuzz_cli.py's properties, for this script)."""
    monkeypatch.chdir(tmp_path)  # relative outputs land here
    store = build_store(tmp_path / "store", base_doc, nodes=NODES[:3], gpus=1, planted=None)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x.json").write_text("[" * 5000 + "]" * 5000)
    pieces = [str(store), str(bad), "--nodes", "--expect", "--gpus-per-node", "--z",
              "--min-spread", "--json", "--png", "--markdown", "--quiet", "n01", "n01,n02,n03",
              "nan", "-1", "0", "3", "1e309", "out.json", "out.png", "/proc/x", "", "x" * 3000,
              "\u00e9", "--frobnicate"]
    rng = random.Random(20261124)
    for i in range(60):
        args = [rng.choice(pieces) for _ in range(rng.randint(0, 6))]
        code, out, err = cli("fleet.py", *args)
        what = f"invocation {i}: fleet.py {' '.join(a[:40] for a in args)}"
        assert code in (0, 1, 2), f"{what}: exit {code}\n{err}"
        assert "Traceback" not in err, f"{what}\n{err}"
        if code == 2:
            lines = err.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("fleet.py: error: "), f"{what}\n{err}"


# ------------------------------------------------------------------------------ the outputs

@pytest.fixture
def small_store(tmp_path, base_doc) -> Path:
    return build_store(tmp_path / "store", base_doc, nodes=NODES[:3], gpus=1, planted=None)


def test_outputs_get_the_mode_of_the_umask(small_store, tmp_path):
    import os
    import stat
    old = os.umask(0o027)
    try:
        code, _, err = cli("fleet.py", small_store, "--quiet", "--json", tmp_path / "f.json",
                           "--markdown", tmp_path / "f.md", "--png", tmp_path / "f.png")
    finally:
        os.umask(old)
    assert code == 0, err
    for name in ("f.json", "f.md", "f.png"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o640, name  # not mkstemp's 0600
    assert (tmp_path / "f.png").read_bytes().startswith(b"\x89PNG")
    assert json.loads((tmp_path / "f.json").read_text())["exit_code"] == 0


def test_an_unwritable_output_is_named_and_nothing_is_written(small_store, tmp_path):
    ok = tmp_path / "ok.json"
    line = expect_bad_input([small_store, "--quiet", "--json", ok, "--png", "/proc/fleet.png"],
                            "--png /proc/fleet.png: cannot write there")
    assert ".tmp" not in line
    assert not ok.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["store"]


@pytest.mark.parametrize("name", ["fleet.jpg", "fleet", "fleet.svg", "fleet.png.txt"])
def test_a_png_under_another_name_is_refused(small_store, tmp_path, name):
    expect_bad_input([small_store, "--png", tmp_path / name, "--json", tmp_path / "f.json"],
                     "give a name ending in .png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]


def test_out_of_space_names_the_output(fleet_store, tmp_path, monkeypatch):
    import errno

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full)
    out = tmp_path / "f.json"
    line = expect_bad_input([fleet_store, "--json", out, "--quiet"], "No space left on device")
    assert str(out) in line and ".tmp" not in line
    assert list(tmp_path.iterdir()) == []


def test_a_failure_record_with_a_huge_integer_is_bad_input(tmp_path, base_doc):
    # Python's int() refuses 4300+ digits with a ValueError: a traceback before
    store = build_store(tmp_path / "store", base_doc, nodes=NODES[:4], gpus=2, planted=None)
    record = failure_record(store, NODES[0])
    record.write_text(record.read_text().replace('"exit_status": 2', '"exit_status": 1' + "0" * 5000))
    expect_bad_input([store], "not a number")


def test_host_names_with_long_digit_runs_sort_without_converting_them():
    from gpubench_tools.fleet import natural_key

    huge = "n" + "9" * 5000
    names = [huge, "n10", "n2", "n002x", "n" + "0" * 4999 + "1"]
    assert sorted(names, key=natural_key) == ["n" + "0" * 4999 + "1", "n2", "n002x", "n10", huge]


def test_a_fleet_with_a_host_name_of_5000_digits_is_analysed(tmp_path, base_doc):
    nodes = NODES[:3] + ["n" + "7" * 5000]
    store = build_store(tmp_path / "store", base_doc, nodes=nodes, gpus=2, planted=None)
    code, out, err = cli("fleet.py", store)
    assert code in (0, 1, 2) and "Traceback" not in err and "ValueError" not in err, err[-500:]
    assert len(err.splitlines()) <= 1


# ------------------------------------------------------------------ defects of a hostile run

@pytest.mark.parametrize("flag, name", [("--json", "x.json"), ("--png", "x.png"), ("--markdown", "x.md"),
                                        ("--json", "sub/x.json")])
def test_an_output_inside_the_store_is_refused(small_store, flag, name):
    # Written there, the next fleet.py run read x.json as a result and failed on it.
    out = small_store / name
    line = expect_bad_input([small_store, flag, out], "")
    assert line == (f"fleet.py: error: {flag} {out}: is inside the store it reads, {small_store}, where the "
                    f"next run would read it; write it elsewhere")
    assert not out.exists() and not list(small_store.rglob(".*.tmp"))


@pytest.mark.parametrize("field, value, says", [
    ("exit_status", 0, "exit_status 0 is not a failed run's status (an integer from 1 to 255)"),
    ("exit_status", 256, "exit_status 256 is not a failed run's status (an integer from 1 to 255)"),
    ("exit_status", -1, "exit_status -1 is not a failed run's status (an integer from 1 to 255)"),
    ("exit_status", "2", "exit_status \"2\" is not a failed run's status (an integer from 1 to 255)"),
    ("node", ["a"], 'node = ["a"] is not a string'),
    ("node", "", "node '' is not a host name"),
    ("node", "n0\x1b[31m1", "node 'n0\\\\x1b[31m1' is not a host name"),
    ("node", "n01 n02", "node 'n01 n02' is not a host name"),
    ("job_id", 4242, "job_id = 4242 is not a string"),
    ("stderr_tail", "one line", "stderr_tail is not a list of lines"),
    ("stderr_tail", [1], "stderr_tail is not a list of lines"),
    # Compared with results' run_started_utc as text: "0" was superseded by every result, "yesterday" by none.
    ("ended_utc", "0", "ended_utc '0' is not a UTC time as 2026-11-25T07:00:00Z"),
    ("ended_utc", "yesterday", "ended_utc 'yesterday' is not a UTC time as 2026-11-25T07:00:00Z"),
    ("started_utc", "2026-13-01T00:00:00Z", "started_utc '2026-13-01T00:00:00Z' is not a UTC time as"),
])
def test_a_malformed_failure_record_is_bad_input_naming_it(tmp_path, base_doc, field, value, says):
    # status 0 read "FAILED: node09: gpubench exited with status 0"; ["a"] read "FAILED: ['a']: ...".
    # Invalid files in a fleet's store are bad input (exit 2), results and records alike.
    store = build_store(tmp_path / "store", base_doc, nodes=NODES[:3], gpus=1, planted=None)
    record = failure_record(store, "n09")
    doc = json.loads(record.read_text())
    doc[field] = value
    record.write_text(json.dumps(doc))
    line = expect_bad_input([store], "")
    assert line.startswith(f"fleet.py: error: {record}: not a gpubench failure record: {says}"), line


@pytest.mark.parametrize("ordinal", ["-1", "01", "gpu0", ""])
def test_a_result_naming_no_device_ordinal_gpubench_writes_is_bad_input(tmp_path, base_doc, ordinal):
    store = build_store(tmp_path / "store", base_doc, nodes=NODES[:3], gpus=1, planted=None)
    path = sorted(store.rglob("*.json"))[0]
    doc = json.loads(path.read_text())
    doc["context"]["device_ordinal"] = ordinal
    path.write_text(json.dumps(doc))
    line = expect_bad_input([store], "")
    assert line == (f"fleet.py: error: {path}: not a gpubench result: context device_ordinal "
                    f"{json.dumps(ordinal)} is neither a CUDA device number nor 'host'")


def test_a_failure_records_control_characters_are_escaped_in_the_report(tmp_path, base_doc):
    store = build_store(tmp_path / "store", base_doc, nodes=NODES[:3], gpus=1, planted=None)
    record = failure_record(store, "n09")
    doc = json.loads(record.read_text())
    doc["stderr_tail"] = ["gpubench: \x1b[2Jcleared\rthe screen"]
    record.write_text(json.dumps(doc))
    md = tmp_path / "f.md"
    code, out, err = cli("fleet.py", store, "--markdown", md)
    assert code == 1, err
    for text in (out, err, md.read_text()):
        assert "\x1b" not in text and "\r" not in text
    assert "  - `gpubench: \\x1b[2Jcleared\\rthe screen`" in out.splitlines()
    assert md.read_text() == out
