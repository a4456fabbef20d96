"""cards.py (the shared card table) and results.py (loading and validating result files)."""

import csv
import json
import statistics

import pytest

from conftest import ROOT
from fixtures import h100_result, write_json
from gpubench_tools.cards import (CARDS_CSV, find_card, find_card_by_device_name, load_cards,
                                  pcie_GBps_per_direction)
from gpubench_tools.errors import UsageError
from gpubench_tools.results import load_result, parse_size


def test_the_card_table_is_the_harness_csv_row_for_row():
    assert CARDS_CSV == ROOT / "harness" / "model" / "cards.csv"
    rows = list(csv.DictReader(CARDS_CSV.open()))
    cards = load_cards()
    assert [c.key for c in cards] == [r["key"] for r in rows]
    for c, r in zip(cards, rows):
        assert c.dram_GBps == float(r["dram_GBps"])
        assert c.fp32_TFLOPS == float(r["fp32_TFLOPS"])
        assert c.fp16_tensor_TFLOPS == float(r["fp16_tensor_TFLOPS"])
        assert c.bf16_tensor_TFLOPS == float(r["bf16_tensor_TFLOPS"])
        assert c.fp8_tensor_TFLOPS == float(r["fp8_tensor_TFLOPS"])
        assert c.source


@pytest.mark.parametrize("gen,width,want", [(3, 16, 15.7538), (4, 16, 31.5077), (5, 16, 63.0154),
                                            (6, 16, 121.0), (4, 8, 15.7538), (2, 16, 8.0),
                                            (0, 16, 0.0), (4, 0, 0.0)])
def test_pcie_per_direction_matches_the_reference_formula(gen, width, want):
    assert pcie_GBps_per_direction(gen, width) == pytest.approx(want, abs=1e-4)


def test_cards_are_found_by_key_display_name_and_driver_name():
    cards = load_cards()
    assert find_card("h100_sxm", cards).key == "h100_sxm"
    assert find_card("H100 PCIe", cards).key == "h100_pcie"
    assert find_card_by_device_name("NVIDIA H100 80GB HBM3", cards).key == "h100_sxm"
    assert find_card_by_device_name("NVIDIA H200", cards).key == "h200"
    assert find_card_by_device_name("NVIDIA H200 NVL", cards) is None  # negative look-ahead
    assert find_card_by_device_name("NVIDIA GeForce RTX 3090 Ti", cards) is None
    assert find_card_by_device_name("Intel(R) Xeon(R) Processor", cards) is None


def test_an_unknown_card_lists_the_known_ones():
    with pytest.raises(UsageError, match=r"unknown card 'v9000'; known cards: .*h100_sxm.*b200"):
        find_card("v9000", load_cards())


def test_size_tokens():
    assert parse_size("4KiB") == 4096
    assert parse_size("64MiB") == 64 << 20
    assert parse_size("1GiB") == 1 << 30
    assert parse_size("512") == 512
    with pytest.raises(ValueError):
        parse_size("4kb")


def test_a_real_host_run_groups_repetitions_and_aggregates(host_result, host_doc):
    r = load_result(host_result)
    assert r.backend == "host" and r.device_key == host_doc["context"]["device_key"]
    iterations = [e for e in host_doc["benchmarks"] if e.get("run_type") == "iteration"
                  and not e.get("error_occurred")]
    assert sum(len(b.samples) for b in r.benchmarks.values()) == len(iterations)
    unavailable = [b for b in r.benchmarks.values() if b.skipped]
    assert unavailable and all(e.startswith("skipped: not on the host backend: ")
                               for b in unavailable for e in b.errors)
    for b in r.benchmarks.values():
        if b.skipped:  # rows the host does not run (cudaMemcpy, Thrust, the GPU's transfers)
            continue
        raw = [e["GB/s"] for e in iterations if e["run_name"] == b.name + "/manual_time"]
        assert len(raw) == 5, b.name
        assert b.median("GB/s") == statistics.median(raw)
        assert b.aggregates["median"]["GB/s"] == pytest.approx(statistics.median(raw))
        assert b.ok and not b.throttled and not b.verification_failed
    assert all(v is None for v in r.peaks().values())  # "unknown" on the host


def test_errors_and_library_variants_in_a_fixture(tmp_path):
    r = load_result(write_json(h100_result(), tmp_path / "h100.json"))
    gather = r.benchmarks["bandwidth/gather/kernel/bytes:1GiB"]
    assert not gather.ok and gather.verification_failed and "verification failed" in gather.error
    assert r.benchmarks["compute/sgemm/cublas/m:1024,n:1024,k:1024"].is_library
    assert r.benchmarks["bandwidth/copy/memcpy_ce/bytes:1GiB"].is_library
    assert not r.benchmarks["roofline/intensity/fp32/fma:16,bytes:1GiB"].is_library
    assert r.benchmarks["compute/sgemm/kernel/m:1024,n:1024,k:1024"].metric == "TFLOPS"
    assert r.benchmarks["bandwidth/copy/kernel/bytes:1GiB"].metric == "GB/s"
    assert r.peaks()["dram"] == 3350.0 and r.peaks()["pcie_h2d"] == pytest.approx(63.0154)


def _bad_inputs(tmp_path, host_result):
    real = host_result.read_text()
    doc = json.loads(real)
    not_ours = json.loads(real)
    del not_ours["context"]["gpubench_version"]
    no_key = json.loads(real)
    no_key["context"]["device_key"] = ""
    bad_name = json.loads(real)
    bad_name["benchmarks"][0]["run_name"] = "BM_Foo/8"
    files = {
        "missing": (tmp_path / "nope.json", "no such file"),
        "directory": (tmp_path, "is a directory"),
        "empty": (tmp_path / "empty.json", "empty file"),
        "truncated": (tmp_path / "truncated.json", "not valid JSON"),
        "text": (tmp_path / "text.json", "not valid JSON"),
        "list": (tmp_path / "list.json", "not a gpubench result"),
        "google_benchmark": (tmp_path / "gb.json", "no 'gpubench_version'"),
        "no_device_key": (tmp_path / "nokey.json", "lacks context keys: device_key"),
        "bad_name": (tmp_path / "badname.json", "not family/kernel/variant/params"),
    }
    files["empty"][0].write_text("")
    files["truncated"][0].write_text(real[: len(real) // 2])
    files["text"][0].write_text("benchmark done\n")
    files["list"][0].write_text(json.dumps([doc["context"]]))
    files["google_benchmark"][0].write_text(json.dumps(not_ours))
    files["no_device_key"][0].write_text(json.dumps(no_key))
    files["bad_name"][0].write_text(json.dumps(bad_name))
    return files


def test_every_bad_input_is_one_line_naming_the_file(tmp_path, host_result):
    for what, (path, words) in _bad_inputs(tmp_path, host_result).items():
        with pytest.raises(UsageError) as e:
            load_result(path)
        msg = str(e.value)
        assert str(path) in msg and words in msg and "\n" not in msg, (what, msg)


_H100_ROW = "h100_sxm,H100 SXM,H100 SXM,9.0,132,66.9,989,989,1979,3350,50,5,16,datasheet".split(",")


@pytest.mark.parametrize("column, value, words", [
    ("fp32_TFLOPS", "1e308", "fp32_TFLOPS = 1e+308 is out of range (a peak is from 0.001 to 1e9"),
    ("fp32_TFLOPS", "inf", "fp32_TFLOPS = inf is not a finite number"),
    ("fp16_tensor_TFLOPS", "nan", "fp16_tensor_TFLOPS = nan is not a finite number"),
    ("bf16_tensor_TFLOPS", "-1", "bf16_tensor_TFLOPS = -1 is out of range"),
    ("dram_GBps", "0", "dram_GBps = 0 is out of range"),
    ("fp8_tensor_TFLOPS", "-0.5", "fp8_tensor_TFLOPS = -0.5 is out of range"),
    ("l2_MiB", "0", "l2_MiB = 0 is out of range"),
    ("sm_count", "0", "sm_count = 0 is out of range"),
    ("sm_count", "1e3", "sm_count = '1e3' is not an integer"),
    ("sm_count", "9" * 40, "is out of range (an SM count is an integer from 1 to 100000)"),
    ("cc", "nan", "cc = nan is not a finite number"),
    ("pcie_gen", "9", "pcie_gen = 9 is out of range"),
    ("pcie_width", "-16", "pcie_width = -16 is out of range"),
    ("dram_GBps", "fast", "dram_GBps = 'fast' is not a number"),
    ("match", "(", "column match = '(' is not a regular expression"),
])
def test_a_card_table_value_out_of_range_is_refused_naming_line_and_column(tmp_path, column, value, words):
    """A peak of 1e308 overflowed the roofline's arithmetic, nan was drawn as "nan TFLOP/s", -1
    dropped a roof silently, 0 DRAM was taken as a peak: refused like a result's context peaks."""
    header = CARDS_CSV.read_text().splitlines()[0]
    row = list(_H100_ROW)
    row[header.split(",").index(column)] = value
    path = tmp_path / "cards.csv"
    path.write_text(header + "\n" + ",".join(_H100_ROW) + "\n" + ",".join(row) + "\n")
    with pytest.raises(UsageError) as e:
        load_cards(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}:3: column {column} ") and words in msg and "\n" not in msg, msg


def test_a_card_key_given_twice_or_no_card_is_refused(tmp_path):
    """A key on two rows was accepted ("known cards: h100_sxm, h100_sxm"), which row won being
    undefined; a header alone gave "unknown card ...; known cards: " with an empty list."""
    header = CARDS_CSV.read_text().splitlines()[0]
    path = tmp_path / "cards.csv"
    path.write_text(header + "\n" + ",".join(_H100_ROW) + "\n" + ",".join(_H100_ROW) + "\n")
    with pytest.raises(UsageError) as e:
        load_cards(path)
    assert str(e.value) == f"{path}:3: card key '{_H100_ROW[0]}' is already defined on line 2"
    path.write_text(header + "\n")
    with pytest.raises(UsageError) as e:
        load_cards(path)
    assert str(e.value) == f"{path}: the card table is empty (a header and no card)"


def test_the_zeros_the_card_table_means_are_accepted(tmp_path):
    """0 FP8 (no FP8 tensor cores, as A100 and RTX 3090 have it) and an unknown PCIe link (0)."""
    header = CARDS_CSV.read_text().splitlines()[0]
    row = list(_H100_ROW)
    row[8] = row[11] = row[12] = "0"
    path = tmp_path / "cards.csv"
    path.write_text(header + "\n" + ",".join(row) + "\n")
    card = load_cards(path)[0]
    assert card.fp8_tensor_TFLOPS == 0 and card.pcie_GBps == 0 and card.dram_GBps == 3350
