"""The acceptance run (scripts/validate.py, gpubench_tools/acceptance.py): verdicts against the
expected bands of harness/model/bands.csv, the likely causes of what is not a pass, the outputs
(console, markdown, JUnit, JSON), exit statuses, and the whole run on the host backend."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from conftest import BIN
from fixtures import entries, label, write_json, _reps, H100_CONTEXT  # noqa: E402
from gpubench_tools.acceptance import (BANDS_CSV, FAIL, INCOMPLETE, PASS, WARN, bands_for,  # noqa: E402
                                       evaluate, judge, load_bands, node_verdict)
from gpubench_tools.errors import UsageError  # noqa: E402
from gpubench_tools.results import load_result, parse_result  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
VALIDATE = ROOT / "scripts" / "validate.py"

MEM = {"verified": 1, "throttled": 0, "sm_clock_MHz": 1980, "sm_clock_min_MHz": 1980, "mem_clock_MHz": 2619}


def healthy_h100(gpu: str = "0") -> dict:
    """An H100 SXM acceptance result that sits inside every band (figures of the order gpubench
    measured on one; synthetic)."""
    ctx = {**copy.deepcopy(H100_CONTEXT), "card_key": "h100_sxm", "device_ordinal": gpu,
           "pcie_link": "Gen5 x16", "pcie_link_max": "Gen5 x16", "pcie_link_warning": "none",
           "gpu_numa_node": "0", "bench_cpu_numa_node": "0", "nvml_max_clocks_MHz": "sm 1980, mem 2619",
           "ecc_mode": "on", "ecc_errors_uncorrected_volatile": "0", "remapped_rows_uncorrectable": "0",
           "row_remap_failure": "no", "row_remap_pending": "no", "other_gpu_processes": "0", "mig_mode": "off"}
    b = []
    for tok, ws, gbps, level in (("4MiB", 8 << 20, 7000.0, "l2"), ("1GiB", 2 << 30, 2850.0, "dram")):
        pct = {} if level == "l2" else {"pct_of_peak": 100 * gbps / 3350}
        b += entries(f"bandwidth/copy/kernel/bytes:{tok}", _reps({**MEM, "GB/s": gbps, **pct, "working_set_bytes": ws}),
                     label=label(level, "GBps", level, "bytes"))
    for kernel, gbps in (("pcie_h2d", 55.1), ("pcie_d2h", 54.2)):
        b += entries(f"bandwidth/{kernel}/pinned_ce/bytes:256MiB",
                     _reps({**MEM, "GB/s": gbps, "pct_of_peak": 100 * gbps / 63, "working_set_bytes": 256 << 20}),
                     label=label(kernel, "GBps", "pcie", "bytes"))
    shape = "m:4096,n:4096,k:4096"
    for kernel, peak, kernel_tf, cublas_tf, kind in (("sgemm", 66.9, 41.7, 52.0, "fp32"),
                                                      ("hgemm", 989, 343.0, 726.0, "fp16_tensor")):
        b += entries(f"compute/{kernel}/kernel/{shape}",
                     _reps({**MEM, "TFLOPS": kernel_tf, "pct_of_peak": 100 * kernel_tf / peak,
                            "pct_of_cublas": 100 * kernel_tf / cublas_tf}), label=label(kind, "TFLOPS", "none", "m"))
        b += entries(f"compute/{kernel}/cublas/{shape}",
                     _reps({**MEM, "TFLOPS": cublas_tf, "pct_of_peak": 100 * cublas_tf / peak}),
                     label=label(kind, "TFLOPS", "none", "m"))
    b += entries("compute/peak_fp32_fma/kernel/fma:4096,bytes:256MiB",
                 _reps({**MEM, "TFLOPS": 66.2, "pct_of_peak": 98.9}), label=label("fp32", "TFLOPS", "none", "fma"))
    return {"context": ctx, "benchmarks": b}


def set_counter(doc: dict, name: str, **values) -> dict:
    """Sets counters on every entry of one benchmark."""
    hits = [e for e in doc["benchmarks"] if e["name"].split("/manual_time")[0] == name]
    assert hits, name
    for e in hits:
        e.update(values)
    return doc


def verdicts(doc: dict) -> dict:
    gpu = evaluate([parse_result(doc)], load_bands())[0]
    return {v.check: v for v in gpu.verdicts}


def run(*args, cwd=None, env=None):
    import os

    p = subprocess.run([sys.executable, str(VALIDATE), *map(str, args)], capture_output=True, text=True,
                       cwd=cwd, check=False, timeout=600, env={**os.environ, **(env or {})})
    return p.returncode, p.stdout, p.stderr


# ------------------------------------------------------------------------------------- bands

def test_the_table_has_a_band_for_every_check_of_an_h100_and_the_link_rows():
    bands = load_bands()
    checks = {b.check for b in bands_for("h100_sxm", "gen5x16", bands)}
    assert checks == {"dram_copy_pct_of_peak", "l2_plateau_GBps", "pcie_h2d_GBps", "pcie_d2h_GBps",
                      "cublas_sgemm_pct_of_peak", "cublas_hgemm_pct_of_peak", "sgemm_pct_of_cublas",
                      "hgemm_pct_of_cublas", "fp32_fma_pct_of_peak"}
    assert all(b.source for b in bands)
    assert {b.card for b in bands_for("", "gen4x16", bands)} == {"*"}
    assert bands_for("", "", bands) == []


@pytest.mark.parametrize("row, says", [
    ("h100_sxm,dram_copy,,87,78,70,100,%,x", "unknown check"),
    ("h100_sxm,dram_copy_pct_of_peak,,87,70,78,100,%,x", "warn_min is above pass_min"),
    ("h100_sxm,pcie_h2d_GBps,,55,49,44,,GB/s,x", "link"),
    ("h100_sxm,dram_copy_pct_of_peak,,eighty,78,70,100,%,x", "not a number"),
    ("h100_sxm,dram_copy_pct_of_peak,,87,78,70,100,%,", "no source"),
])
def test_a_broken_table_is_refused_naming_its_line(tmp_path, row, says):
    f = tmp_path / "bands.csv"
    f.write_text(BANDS_CSV.read_text().splitlines()[0] + "\n" + row + "\n")
    with pytest.raises(UsageError, match=f"line 2: .*{says}"):
        load_bands(f)


def test_judge_at_the_edges_of_a_band():
    band = next(b for b in load_bands() if b.card == "h100_sxm" and b.check == "dram_copy_pct_of_peak")
    assert judge(band.pass_min, band)[0] == PASS
    assert judge(band.pass_min - 0.01, band)[0] == WARN
    assert judge(band.warn_min, band)[0] == WARN
    assert judge(band.warn_min - 0.01, band)[0] == FAIL
    verdict, why = judge(130.0, band)  # above the peak: not "very good" but implausible
    assert verdict == WARN and "above what this card can do" in why


# ---------------------------------------------------------------------------------- verdicts

def test_a_healthy_h100_passes_every_band():
    got = verdicts(healthy_h100())
    assert len(got) == 9
    assert {v.verdict for v in got.values()} == {PASS}, {k: v.why for k, v in got.items()}
    assert got["dram_copy_pct_of_peak"].row == "bandwidth/copy/kernel/bytes:1GiB"
    assert got["l2_plateau_GBps"].row == "bandwidth/copy/kernel/bytes:4MiB"


def test_a_link_trained_below_its_maximum_fails_pcie_and_says_why():
    doc = healthy_h100()
    doc["context"]["pcie_link"] = "Gen4 x16"
    for kernel in ("pcie_h2d", "pcie_d2h"):
        set_counter(doc, f"bandwidth/{kernel}/pinned_ce/bytes:256MiB", **{"GB/s": 26.0})
    got = verdicts(doc)
    assert got["pcie_h2d_GBps"].verdict == FAIL
    assert any("trained at Gen4 x16, below its maximum Gen5 x16" in c for c in got["pcie_h2d_GBps"].causes)
    assert got["dram_copy_pct_of_peak"].verdict == PASS  # the link says nothing about the rest


def test_pcie_is_judged_at_a_sustained_size_not_at_a_faster_small_one():
    """The PCIe bands were read at 256 MiB - 1 GiB: a slow link whose 16 MiB row reads fast
    (a burst a buffer can absorb, a row the report of the same run would not quote) fails. The
    best of any size judged this node healthy."""
    doc = healthy_h100()
    set_counter(doc, "bandwidth/pcie_h2d/pinned_ce/bytes:256MiB", **{"GB/s": 30.0})
    doc["benchmarks"] += entries("bandwidth/pcie_h2d/pinned_ce/bytes:16MiB",
                                 _reps({**MEM, "GB/s": 55.0, "working_set_bytes": 16 << 20}),
                                 label=label("pcie_h2d", "GBps", "pcie", "bytes"))
    v = verdicts(doc)["pcie_h2d_GBps"]
    assert v.verdict == FAIL and v.row == "bandwidth/pcie_h2d/pinned_ce/bytes:256MiB"
    assert v.value == pytest.approx(30.0)


def test_wrong_numa_node_is_named_for_a_slow_transfer():
    doc = healthy_h100()
    doc["context"]["bench_cpu_numa_node"] = "1"
    doc["context"]["numa_bind"] = "off (--no-numa-bind)"
    set_counter(doc, "bandwidth/pcie_h2d/pinned_ce/bytes:256MiB", **{"GB/s": 46.0})
    v = verdicts(doc)["pcie_h2d_GBps"]
    assert v.verdict == WARN
    assert any("NUMA node 1, the GPU sits on node 0 (numa_bind: off (--no-numa-bind);" in c for c in v.causes)


def test_throttled_clocks_ecc_errors_other_processes_and_mig_are_named():
    doc = healthy_h100()
    doc["context"].update({"ecc_errors_uncorrected_volatile": "2", "row_remap_pending": "yes",
                           "other_gpu_processes": "1 (pids 4242)", "mig_mode": "on"})
    set_counter(doc, "bandwidth/copy/kernel/bytes:1GiB", pct_of_peak=60.0, **{"GB/s": 2010.0})
    set_counter(doc, "compute/peak_fp32_fma/kernel/fma:4096,bytes:256MiB", pct_of_peak=70.0, throttled=1,
                sm_clock_min_MHz=1400)
    got = verdicts(doc)
    dram, fma = got["dram_copy_pct_of_peak"], got["fp32_fma_pct_of_peak"]
    assert dram.verdict == FAIL and fma.verdict == FAIL
    text = " | ".join(dram.causes)
    for want in ("uncorrectable ECC errors since the driver loaded: 2", "row remapping is pending",
                 "other processes were using the GPU: 1 (pids 4242)", "MIG is on"):
        assert want in text
    assert any("clocks were throttled during compute/peak_fp32_fma" in c for c in fma.causes)
    assert any("fell to 1400 MHz during the row (maximum 1980 MHz)" in c for c in fma.causes)
    assert not any("power cap" in c for c in fma.causes)
    set_counter(doc, "compute/peak_fp32_fma/kernel/fma:4096,bytes:256MiB", pct_of_peak=70.0, throttled=0,
                power_capped=1, sm_clock_min_MHz=1400)
    capped = verdicts(doc)["fp32_fma_pct_of_peak"].causes
    assert any("the software power cap held the clocks during compute/peak_fp32_fma" in c for c in capped)
    assert not any("throttled" in c for c in capped)
    assert not any("ECC" in c for c in fma.causes)  # memory causes stay with memory checks


def test_a_row_that_failed_verification_fails_its_band():
    doc = healthy_h100()
    doc["benchmarks"] = [e for e in doc["benchmarks"] if "sgemm/kernel" not in e["name"]]
    doc["benchmarks"].append({"name": "compute/sgemm/kernel/m:4096,n:4096,k:4096/manual_time", "run_type": "iteration",
                              "error_occurred": True, "error_message": "verification failed: C[7] = 1 expected 2",
                              "label": label("fp32", "TFLOPS", "none", "m")})
    v = verdicts(doc)["sgemm_pct_of_cublas"]
    assert v.verdict == FAIL and "failed verification" in v.why


def test_a_band_no_row_measured_leaves_the_acceptance_incomplete(tmp_path):
    doc = healthy_h100()
    doc["benchmarks"] = [e for e in doc["benchmarks"] if "pcie" not in e["name"]]
    gpu = evaluate([parse_result(doc)], load_bands())[0]
    assert gpu.verdict == INCOMPLETE
    code, out, err = run("--result", write_json(doc, tmp_path / "r.json"))
    assert code == 1, err
    assert "GPU 0 (NVIDIA H100 80GB HBM3): INCOMPLETE" in out and "NOT MEASURED PCIe host to device" in out
    assert out.rstrip().endswith("node: INCOMPLETE")


def test_checks_without_a_band_are_named_not_dropped():
    doc = healthy_h100()
    doc["context"].update({"pcie_link": "unknown", "pcie_link_max": "unknown"})
    gpu = evaluate([parse_result(doc)], load_bands())[0]
    assert any(u.startswith("PCIe host to device, pinned: the PCIe link is unknown") for u in gpu.unjudged)
    doc["context"].update({"device_name": "Tesla V100-SXM2-16GB", "card_key": "none",
                           "pcie_link": "Gen3 x16", "pcie_link_max": "Gen3 x16"})
    gpu = evaluate([parse_result(doc)], load_bands())[0]
    assert {v.check for v in gpu.verdicts} == {"pcie_h2d_GBps", "pcie_d2h_GBps"}
    assert "DRAM copy, % of peak: Tesla V100-SXM2-16GB is not in the card table" in gpu.unjudged


def test_a_card_without_bands_gets_no_verdict_said_plainly():
    doc = healthy_h100()
    doc["context"].update({"device_name": "Tesla T4", "card_key": "none", "pcie_link": "unknown",
                           "pcie_link_max": "unknown"})
    gpu = evaluate([parse_result(doc)], load_bands())[0]
    assert gpu.verdicts == [] and gpu.verdict == "NO BANDS"
    assert "no expected bands for Tesla T4" in gpu.note


def test_a_gpus_two_files_are_judged_together_and_the_node_is_its_worst_gpu():
    good = healthy_h100("0")
    links = {"context": good["context"], "benchmarks": [e for e in good["benchmarks"] if "pcie" in e["name"]]}
    local = {"context": good["context"], "benchmarks": [e for e in good["benchmarks"] if "pcie" not in e["name"]]}
    bad = set_counter(healthy_h100("1"), "bandwidth/copy/kernel/bytes:1GiB", pct_of_peak=50.0)
    gpus = evaluate([parse_result(local), parse_result(links), parse_result(bad)], load_bands())
    assert [(g.gpu, g.verdict) for g in gpus] == [("0", PASS), ("1", FAIL)]
    assert node_verdict(gpus) == FAIL


# --------------------------------------------------------------------------------------- CLI

def test_validate_writes_markdown_junit_and_json_and_exits_1_on_a_fail(tmp_path):
    good = write_json(healthy_h100("0"), tmp_path / "gpu0.json")
    bad = write_json(set_counter(healthy_h100("1"), "bandwidth/copy/kernel/bytes:1GiB", pct_of_peak=50.0),
                     tmp_path / "gpu1.json")
    md, xml, js = tmp_path / "a.md", tmp_path / "a.xml", tmp_path / "a.json"
    code, out, err = run("--result", good, "--result", bad, "--markdown", md, "--junit", xml, "--json", js)
    assert code == 1, err
    assert "fixture GPU 1 (NVIDIA H100 80GB HBM3): FAIL" in out and out.rstrip().endswith("node: FAIL")
    assert "FAIL  DRAM copy, % of peak" in out
    suites = ET.parse(xml).getroot()
    assert [s.get("failures") for s in suites] == ["0", "1"]
    assert suites[1].find("testcase/failure").get("message").startswith("50 % is below 69.6 %")
    doc = json.loads(js.read_text())
    assert doc["node_verdict"] == FAIL and doc["gpus"][0]["verdict"] == PASS
    assert all(c["band"]["source"] for g in doc["gpus"] for c in g["checks"])
    text = md.read_text()
    assert text.startswith("# gpubench acceptance: FAIL") and "| DRAM copy, % of peak | **FAIL** |" in text
    assert "Where the bands come from" in text and "BabelStream" in text
    # Nothing is overwritten: the same outputs again are refused before anything is judged.
    code, out, err = run("--result", good, "--markdown", md)
    assert code == 2 and "exists" in err and len(err.strip().splitlines()) == 1
    code, out, err = run("--result", good, "--junit", tmp_path / "same", "--json", tmp_path / "same")
    assert code == 2 and "same file is given for two outputs" in err and not (tmp_path / "same").exists()


@pytest.mark.parametrize("option", ["--junit", "--markdown", "--json"])
def test_an_output_folder_that_cannot_be_written_is_refused_before_the_run(tmp_path, option):
    """The folder exists but takes no file (/proc, even for root): refused at once, in one line,
    not after the acceptance run (minutes on a GPU node) whose verdict would then be lost."""
    store = tmp_path / "store"
    code, out, err = run("--gpubench", BIN, "--device", "host", "--quick", "--results-dir", store,
                         option, "/proc/acceptance.out")
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and "/proc/acceptance.out: cannot write there" in err, err
    assert "running:" not in out and not store.exists()


def test_junit_stays_valid_xml_with_control_characters(tmp_path):
    doc = set_counter(healthy_h100(), "bandwidth/copy/kernel/bytes:1GiB", pct_of_peak=50.0)
    doc["context"]["host_name"] = "n<&\"]]>\x01\nx"
    xml = tmp_path / "j.xml"
    code, out, err = run("--result", write_json(doc, tmp_path / "r.json"), "--junit", xml)
    assert code == 1, err
    assert ET.parse(xml).getroot()[0].get("failures") == "1"


def write_fake_gpubench(tmp_path: Path, result: Path, status: int) -> Path:
    """A stand-in gpubench that says it wrote `result` and exits with `status`."""
    fake = tmp_path / "fake_gpubench"
    fake.write_text(f"#!/bin/sh\necho 'result: {result}' >&2\nexit {status}\n")
    fake.chmod(0o755)
    return fake


@pytest.mark.parametrize("status", [1, 130, 143])
def test_a_gpubench_that_failed_fails_the_node_however_good_its_numbers(tmp_path, status):
    good = write_json(healthy_h100(), tmp_path / "r.json")
    code, out, err = run("--gpubench", write_fake_gpubench(tmp_path, good, status), "--device", "0",
                         "--results-dir", tmp_path / "store")
    assert code == 1 and f"gpubench exited with status {status}" in err
    assert "node: PASS" in out  # the numbers are still shown


def test_an_acceptance_that_fell_back_to_the_host_fails(tmp_path):
    host = healthy_h100()
    host["context"].update({"backend": "host", "device_name": "Some CPU", "card_key": "none"})
    fake = write_fake_gpubench(tmp_path, write_json(host, tmp_path / "h.json"), 0)
    code, out, err = run("--gpubench", fake, "--results-dir", tmp_path / "store")  # --device=auto
    assert code == 1 and "no usable GPU" in err
    code, out, err = run("--gpubench", fake, "--device", "host", "--results-dir", tmp_path / "store")
    assert code == 0 and "NO BANDS" in out


def test_validate_passes_a_healthy_node(tmp_path):
    code, out, err = run("--result", write_json(healthy_h100(), tmp_path / "r.json"))
    assert code == 0, err
    assert out.rstrip().endswith("node: PASS")


@pytest.mark.parametrize("args, says", [
    (["--result", "/nonexistent.json"], "nonexistent"),
    (["--device", "gpu0"], "--device"),
    (["--junit", "/nonexistent-dir/a.xml"], "does not exist"),
    (["--junit", ""], "empty value"),
    (["--results-dir", ""], "empty value"),
    (["--results-dir", "/etc/hostname"], "not a folder"),
])
def test_validate_bad_input_is_one_line_and_exit_2(args, says):
    code, out, err = run(*args)
    assert code == 2 and says in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("order", [0, 1])
def test_results_of_two_devices_under_one_host_and_ordinal_are_refused(tmp_path, host_result, order):
    """Files without device_ordinal (older ones) of one machine name: an H100 run and a host run
    were merged as one GPU, judged with the other's rows (exit 0 in one order, a false FAIL in
    the other)."""
    h100 = healthy_h100()
    host = json.loads(Path(host_result).read_text())
    for doc in (h100, host):
        doc["context"]["host_name"] = "vm"
        doc["context"].pop("device_ordinal", None)
    files = [write_json(h100, tmp_path / "h100.json"), write_json(host, tmp_path / "host.json")]
    if order:
        files.reverse()
    code, out, err = run("--result", files[0], "--result", files[1])
    assert code == 2 and out == ""
    assert err.splitlines()[0].startswith("validate.py: error: ") and "are runs of different devices" in err
    assert len(err.splitlines()) == 1, err


@pytest.mark.parametrize("name", ["r\ns", "r\x1bs"])
def test_a_results_dir_with_a_control_character_is_refused_before_gpubench_runs(tmp_path, name):
    """validate.py reads the "result: <path>" lines, which a newline in the folder's name split:
    the run was stored but not judged."""
    fake = tmp_path / "fake_gpubench"
    fake.write_text(f"#!/bin/sh\ntouch {tmp_path}/ran\nexit 0\n")
    fake.chmod(0o755)
    code, out, err = run("--gpubench", fake, "--device", "0", "--results-dir", tmp_path / name)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("validate.py: error: --results-dir ") and "control character" in err
    assert not (tmp_path / "ran").exists()


def test_validate_refuses_a_truncated_result(tmp_path):
    f = tmp_path / "cut.json"
    f.write_text(json.dumps(healthy_h100())[:500])
    code, out, err = run("--result", f)
    assert code == 2 and "cut.json" in err and "Traceback" not in err


def test_validate_runs_gpubench_validate_on_the_host(tmp_path):
    """The whole run for real: gpubench --validate on the host backend into a results store,
    then the verdict, which on the host is "no bands" (exit 0)."""
    store = tmp_path / "store"
    assert BIN.exists(), f"gpubench not found at {BIN}"
    env_bin = ["--gpubench", BIN]
    code, out, err = run(*env_bin, "--device", "host", "--quick", "--results-dir", store)
    assert code == 0, err
    files = list(store.glob("*/*.json"))
    assert len(files) == 1
    r = load_result(files[0])
    kernels = {(b.kernel, b.variant) for b in r.benchmarks.values()}
    assert ("copy", "kernel") in kernels and ("peak_fp32_fma", "kernel") in kernels
    assert not any(k.startswith("strided") or k.startswith("chase") for k, _ in kernels)  # the compact set
    assert "no expected bands on the host backend" in out and "node: NO BANDS" in out
    assert r.ctx("expected_bands") == "none (host backend)"
    assert r.ctx("device_ordinal") == "host" and r.ctx("host_name")


def test_gpubench_lists_the_acceptance_rows_of_a_gpu_without_one():
    """`--list --validate --device=0` on a machine without a GPU: the compact CUDA row set."""
    assert BIN.exists(), f"gpubench not found at {BIN}"
    p = subprocess.run([str(BIN), "--list", "--validate", "--device=0"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    names = p.stdout.split()
    assert "bandwidth/pcie_h2d/pinned_ce/bytes:256MiB" in names
    assert "compute/hgemm/cublas/m:4096,n:4096,k:4096" in names
    allowed = ("bandwidth/copy/kernel/", "bandwidth/pcie_h2d/pinned_ce/", "bandwidth/pcie_d2h/pinned_ce/",
               "compute/sgemm/kernel/m:4096,", "compute/sgemm/cublas/m:4096,", "compute/hgemm/kernel/m:4096,",
               "compute/hgemm/cublas/m:4096,", "compute/peak_fp32_fma/")
    assert all(n.startswith(allowed) for n in names), [n for n in names if not n.startswith(allowed)]
    assert len(names) < 40


@pytest.mark.parametrize("flag", [["--device=0"], ["--device", "auto"], ["--results-dir", "store"], ["--quick"],
                                  ["--gpubench", "/bin/true"], ["--timeout", "60"]])
def test_options_of_a_run_are_refused_with_result(tmp_path, flag):
    # They would be silently ignored: the files say which device ran, and how.
    code, out, err = run("--result", write_json(healthy_h100(), tmp_path / "r.json"), *flag)
    assert code == 2 and out == "", err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("validate.py: error: ") and "Traceback" not in err
    assert flag[0].split("=")[0] in lines[0] and "--result" in lines[0]


def test_the_default_results_dir_is_results_in_the_current_folder(tmp_path, monkeypatch):
    # As the README's [--results-dir results] and nightly.py's default: not the results/ of the
    # tree the script sits in (an installed tree's PREFIX/results).
    good = write_json(healthy_h100(), tmp_path / "r.json")
    fake = tmp_path / "fake_gpubench"
    fake.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path / 'args'}\necho 'result: {good}' >&2\n")
    fake.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code, out, err = run("--gpubench", fake, "--device", "0")
    assert code == 0, err
    assert "--results-dir=results " in (tmp_path / "args").read_text()
    assert (work / "results").is_dir()


def test_reports_are_written_together_or_not_at_all(tmp_path, monkeypatch):
    import validate
    from conftest import cli

    def interrupted(_gpus):
        raise KeyboardInterrupt

    monkeypatch.setattr(validate, "markdown", interrupted)  # the second of three reports
    good = write_json(healthy_h100(), tmp_path / "r.json")
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = cli("validate.py", "--result", good, "--junit", out / "a.xml", "--markdown", out / "a.md",
                       "--json", out / "a.json")  # in this process, where markdown() is replaced
    assert code == 130, err
    assert list(out.iterdir()) == []  # no JUnit file without its siblings, no temporary file
    monkeypatch.undo()
    code, _, err = run("--result", good, "--junit", out / "a.xml", "--markdown", out / "a.md", "--json", out / "a.json")
    assert code == 0 and sorted(p.name for p in out.iterdir()) == ["a.json", "a.md", "a.xml"], err


@pytest.mark.parametrize("key", ["other_gpu_processes", "ecc_errors_uncorrected_volatile",
                                 "remapped_rows_uncorrectable"])
def test_a_count_of_5000_digits_is_unknown_not_a_traceback(tmp_path, key):
    # int() refuses more than 4300 digits (ValueError): the count is read as unknown
    from gpubench_tools.acceptance import _count, _general_causes, _memory_causes

    assert _count("1" * 5000) is None and _count("2 (pids 1,2)") == 2
    doc = healthy_h100()
    doc["context"][key] = "1" * 5000
    result = parse_result(doc)
    assert _general_causes(result) == [] or "other processes" in _general_causes(result)[0]
    _memory_causes(result)
    # a band that fails asks for its causes, which read every count
    slow = set_counter(doc, next(e["name"].split("/manual_time")[0] for e in doc["benchmarks"]
                                 if "GB/s" in e), **{"GB/s": 1.0})
    code, out, err = run("--result", write_json(slow, tmp_path / "r.json"))
    assert code == 1 and "Traceback" not in err, err


def test_gpubench_given_relative_to_the_current_folder_runs(tmp_path):
    # "./gpubench" printed as "gpubench" through Path, which the system looked up on PATH
    good = write_json(healthy_h100(), tmp_path / "r.json")
    write_fake_gpubench(tmp_path, good, 0)
    code, out, err = run("--gpubench", "./fake_gpubench", "--device", "0", "--results-dir", "s",
                         cwd=tmp_path)
    assert code == 0, err
    code, out, err = run("--device", "0", "--results-dir", "s", cwd=tmp_path,
                         env={"GPUBENCH_BIN": "./fake_gpubench"})
    assert code == 0, err


def test_a_tilde_in_a_path_option_is_the_home_folder(tmp_path):
    good = write_json(healthy_h100(), tmp_path / "r.json")
    fake = write_fake_gpubench(tmp_path, good, 0)
    (tmp_path / "home").mkdir()
    code, out, err = run("--gpubench", fake, "--device", "0", "--results-dir=~/store",
                         "--markdown", "~/v.md", cwd=tmp_path, env={"HOME": str(tmp_path / "home")})
    assert code == 0, err
    assert not (tmp_path / "~").exists()
    assert (tmp_path / "home" / "store").is_dir() and (tmp_path / "home" / "v.md").is_file()


def test_a_run_without_a_result_leaves_no_empty_folders(tmp_path):
    fake = tmp_path / "fake_gpubench"
    # gpubench makes the device key's folder before it fails (a filter matching nothing)
    fake.write_text(f"#!/bin/sh\nmkdir -p {tmp_path}/ns2/store/key\nexit 2\n")
    fake.chmod(0o755)
    (tmp_path / "ns2").mkdir()
    code, out, err = run("--gpubench", fake, "--device", "0", "--results-dir", tmp_path / "ns2/store")
    assert code == 1 and "wrote no result" in err, err
    assert list((tmp_path / "ns2").iterdir()) == []  # ns2 was the user's: kept


# ------------------------------------------------------------------ defects of a hostile run

@pytest.mark.parametrize("order", [0, 1])
def test_two_runs_of_one_gpu_measuring_one_row_are_refused(tmp_path, order):
    """Two full runs of one GPU were merged, the later file's rows replacing the earlier's: the
    verdict depended on the order of the files."""
    good = write_json(healthy_h100("0"), tmp_path / "good.json")
    bad = write_json(set_counter(healthy_h100("0"), "bandwidth/copy/kernel/bytes:1GiB", pct_of_peak=50.0),
                     tmp_path / "bad.json")
    first, second = (good, bad) if order == 0 else (bad, good)
    shared = healthy_h100()["benchmarks"][0]["run_name"].removesuffix("/manual_time")
    code, out, err = run("--result", first, "--result", second)
    assert (code, out) == (2, "")
    assert err == (f"validate.py: error: {first} and {second} are two runs of one GPU (fixture GPU 0) that both "
                   f"measure {shared}: give one run per GPU (a --device=all run's local and links halves "
                   f"measure different rows)\n")


def test_one_file_given_twice_or_a_copy_is_refused(tmp_path):
    good = write_json(healthy_h100("0"), tmp_path / "good.json")
    code, out, err = run("--result", good, "--result", good)
    assert (code, out, err) == (2, "", f"validate.py: error: {good} is given twice\n")
    copy_ = tmp_path / "copy.json"
    copy_.write_bytes(good.read_bytes())
    code, out, err = run("--result", good, "--result", copy_)
    assert code == 2 and out == "" and err.startswith(f"validate.py: error: {good} and {copy_} are two runs of one GPU")
    assert len(err.splitlines()) == 1


def test_the_local_and_links_halves_of_one_gpu_are_still_judged_as_one(tmp_path):
    good = healthy_h100("0")
    links = {"context": good["context"], "benchmarks": [e for e in good["benchmarks"] if "pcie" in e["name"]]}
    local = {"context": good["context"], "benchmarks": [e for e in good["benchmarks"] if "pcie" not in e["name"]]}
    code, out, err = run("--result", write_json(local, tmp_path / "local.json"),
                         "--result", write_json(links, tmp_path / "links.json"))
    assert code == 0 and "fixture GPU 0 (NVIDIA H100 80GB HBM3): PASS" in out, err
