"""The HTML report (scripts/report.py): its content checked against the JSON it comes from (a
real host run and the synthetic H100 result), its figures pixel for pixel against the checked
roofline and sweep figures, the CLI's refusals, and the page opened in a real headless browser
(Debian's chromium): rendered, not blank, every image decoded, nothing on the console. Each
browser check is shown to fail on a page planted to break it."""

from __future__ import annotations

import base64
import html
import io
import json
import os
import re
import shutil
import statistics
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from conftest import cli, run_script
from fixtures import _reps, entries, h100_result, label, memory_rows, write_json
from gpubench_tools.cards import load_cards
from gpubench_tools.plots import ALL_PLOTS, plot_figure
from gpubench_tools.report import (AcceptanceRow, NOISY_CV_PCT, acceptance_rows, fmt_bytes,
                                   render_figures, render_html, sig3)
from gpubench_tools.results import load_result
from gpubench_tools.roofline import roofline_data, roofline_figure

#: The headline counter of each label metric, as the README's counter table names them.
METRIC_COUNTER = {"GBps": "GB/s", "TFLOPS": "TFLOPS", "latency_ns": "latency_ns",
                  "latency_us": "latency_us"}
#: Hostile strings planted in the synthetic result: the page must show them as text.
HOSTILE_DEVICE = 'NVIDIA H100 <script>alert("x")</script> & <b>80GB</b>'
HOSTILE_ERROR = "verification failed: out[7] = 0 expected 3 </td></tr><img src=x onerror=alert(1)>"

# -------------------------------------------------------------------------- the JSON, read raw


def raw_rows(doc: dict) -> dict[str, dict]:
    """name -> {"label", "iters": per-repetition entries, "errors": messages}, in file order,
    read straight from the entries (not through gpubench_tools)."""
    rows: dict[str, dict] = {}
    for e in doc["benchmarks"]:
        name = re.sub(r"/manual_time$", "", e.get("run_name") or e["name"])
        row = rows.setdefault(name, {"label": "", "iters": [], "errors": []})
        row["label"] = row["label"] or e.get("label", "")
        if e.get("error_occurred"):
            row["errors"].append(e["error_message"])
        elif e.get("run_type") != "aggregate":
            row["iters"].append(e)
    return rows


def raw_metric(row: dict) -> str:
    """The counter of a row's headline, from its label's metric= (GB/s where there is none)."""
    m = re.search(r"\bmetric=(\S+)", row["label"] or "")
    return METRIC_COUNTER[m.group(1)] if m else "GB/s"


def raw_facts(doc: dict) -> dict[str, dict]:
    """Per row, what the page must say: ran, skipped, failed, unverified, noisy, throttled,
    median headline and cv, computed from the raw entries."""
    out = {}
    for name, row in raw_rows(doc).items():
        counter = raw_metric(row)
        vals = [e[counter] for e in row["iters"] if counter in e]
        skipped = bool(row["errors"]) and all(m.startswith("skipped") for m in row["errors"])
        ran = not row["errors"] and bool(vals)
        cv = 100 * statistics.stdev(vals) / statistics.mean(vals) if ran and len(vals) > 1 else None
        out[name] = {
            "ran": ran, "skipped": skipped, "failed": bool(row["errors"]) and not skipped,
            "unverified": not row["errors"] and any(e.get("verified", 1) != 1 for e in row["iters"]),
            "noisy": cv is not None and cv > NOISY_CV_PCT,
            "throttled": any(e.get("throttled", 0) != 0 for e in row["iters"]),
            "median": statistics.median(vals) if ran else None, "cv": cv, "counter": counter,
            "error": row["errors"][0] if row["errors"] else None,
        }
    return out


# ------------------------------------------------------------------------- the page, read back

def page_rows(page: str) -> dict[str, dict]:
    """The benchmark table's rows: name -> {"class", "cells": [text of each cell]}."""
    out = {}
    for cls, body in re.findall(r"<tr class='bench ([^']*)'>(.*?)</tr>", page, re.S):
        cells = [html.unescape(re.sub(r"<[^>]+>", " ", c)).strip()
                 for c in re.findall(r"<td[^>]*>(.*?)</td>", body, re.S)]
        assert cells[0] not in out, f"{cells[0]} twice in the table"
        out[cells[0]] = {"class": cls.strip(), "cells": cells, "marks": re.findall(
            r"<span class=\"mark ([a-z_]+)\"", body)}
    return out


def embedded_pngs(page: str) -> list[bytes]:
    """Every image of the page, decoded (each must be a data: URI)."""
    srcs = re.findall(r"<img\b[^>]*\bsrc=\"([^\"]*)\"", page)
    assert all(s.startswith("data:image/png;base64,") for s in srcs), srcs
    return [base64.b64decode(s.split(",", 1)[1], validate=True) for s in srcs]


def assert_self_contained(page: str) -> None:
    """No URL other than data: images: no http(s), protocol-relative or file references, no
    link/script/iframe/object element, no url() in the CSS."""
    assert not re.search(r"(?i)https?:|file:|\s(src|href)=\"?//", page)
    assert not re.search(r"(?i)<(script|link|iframe|object|embed)\b", page)
    assert "url(" not in page
    assert not re.findall(r"(?i)\b(?:src|href)=\"(?!data:image/png;base64,)", page)


def summary_counts(page: str) -> dict[str, int]:
    m = re.search(r"(\d+) benchmarks: (\d+) ran, (\d+) failed, (\d+) unverified, (\d+) skipped, "
                  r"(\d+) noisy .*?, (\d+) throttled", page)
    assert m, "the summary's counts are missing"
    return dict(zip(("benchmarks", "ran", "failed", "unverified", "skipped", "noisy",
                     "throttled"), map(int, m.groups())))


def render(fig) -> np.ndarray:
    """A figure's pixels as a PNG of it holds them."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi)
    buf.seek(0)
    return imread(buf)


def expected_figures(result) -> list[np.ndarray]:
    """The pixels of the roofline and sweep figures of a result, as the plot tests check them."""
    figs = [roofline_figure(roofline_data([result], [], load_cards()))]
    figs += [plot_figure(d) for d in (make(result) for make in ALL_PLOTS) if d is not None]
    return [render(f) for f in figs]


def check_page_against_json(page: str, doc: dict, result) -> None:
    """Every benchmark of the JSON is one row of the table, under its family (families and
    rows in file order), with its median
    (three significant figures, with its unit), cv, marks; the summary counts them; the
    figures are the result's roofline and sweep plots; every context key is shown."""
    facts = raw_facts(doc)
    rows = page_rows(page)
    families = list(dict.fromkeys(name.split("/")[0] for name in facts))
    assert list(rows) == [n for fam in families for n in facts if n.split("/")[0] == fam]
    headings = re.findall(r"<h3 id='family-([a-z0-9_]+)'>\1 \((\d+)\)</h3>", page)
    assert headings == [(fam, str(sum(n.split("/")[0] == fam for n in facts))) for fam in families]
    for name, f in facts.items():
        cells, marks = rows[name]["cells"], rows[name]["marks"]
        if f["ran"]:
            unit = {"GB/s": "GB/s", "TFLOPS": "TFLOP/s", "latency_ns": "ns",
                    "latency_us": "us"}[f["counter"]]
            assert cells[2] == f"{sig3(f['median'])} {unit}", (name, cells)
            assert cells[3] == f"cv {f['cv']:.1f} % (n={len(raw_rows(doc)[name]['iters'])})"
        else:
            assert cells[2] == "-" and cells[3] == "-", (name, cells)
        assert ("skipped" in marks) == f["skipped"], (name, marks)
        assert ("failed" in marks) == f["failed"], (name, marks)
        assert ("unverified" in marks) == f["unverified"], (name, marks)
        assert ("noisy" in marks) == f["noisy"], (name, marks)
        assert ("throttled" in marks) == f["throttled"], (name, marks)
        if f["error"]:
            assert html.escape(f["error"], quote=True) in page
    assert summary_counts(page) == {
        "benchmarks": len(facts), "ran": sum(f["ran"] for f in facts.values()),
        **{k: sum(f[k] for f in facts.values())
           for k in ("failed", "unverified", "skipped", "noisy", "throttled")}}
    pngs = [imread(io.BytesIO(p)) for p in embedded_pngs(page)]
    want = expected_figures(result)
    assert len(pngs) == len(want)
    for got, exp in zip(pngs, want):
        assert got.shape == exp.shape and np.array_equal(got, exp)
    for key, value in doc["context"].items():
        shown = value if isinstance(value, str) else json.dumps(value)
        assert f"<th>{html.escape(key, quote=True)}</th><td class='ctx'>" \
               f"{html.escape(shown, quote=True)}</td>" in page, key


# ------------------------------------------------------------------------------------ fixtures

@pytest.fixture(scope="module")
def host_report(host_result, tmp_path_factory) -> Path:
    """The report of the real host run, written by the CLI as a user would."""
    out = tmp_path_factory.mktemp("report") / "host.html"
    code, stdout, err = cli("report.py", host_result, "--out", out)
    assert code == 0 and stdout.strip() == str(out), err
    return out


def synthetic_doc() -> dict:
    """The labelled synthetic H100 result with the memory family, and every kind of mark: a
    failed verification with a hostile message, skips, a throttled repetition, a repetition not
    verified, noisy rows (the memory rows' outlier repetition), a hostile device name."""
    doc = h100_result(labelled=True)
    doc["benchmarks"] += memory_rows("cuda")
    doc["context"]["device_name"] = HOSTILE_DEVICE
    for e in doc["benchmarks"]:
        name = e.get("run_name", "")
        if e.get("error_occurred") and name.startswith("bandwidth/gather/"):
            e["error_message"] = HOSTILE_ERROR
        if e.get("run_type") == "iteration" and e.get("repetition_index") == 2:
            if name.startswith("compute/sgemm/kernel/m:4096"):
                e["throttled"] = 1
            if name.startswith("bandwidth/strided/kernel/bytes:1GiB,stride:2/"):
                e["verified"] = 0
    return doc


@pytest.fixture(scope="module")
def synthetic_report(tmp_path_factory) -> tuple[dict, Path, Path]:
    tmp = tmp_path_factory.mktemp("synthetic")
    doc = synthetic_doc()
    src = write_json(doc, tmp / "h100.json")
    out = tmp / "h100.html"
    code, _, err = cli("report.py", src, "--out", out)
    assert code == 0, err
    return doc, src, out


# ------------------------------------------------------------------------------------- content

def test_host_report_shows_every_row_of_the_real_run(host_report, host_doc, host_result):
    page = host_report.read_text(encoding="utf-8")
    device = host_doc["context"]["device_name"]
    assert f"<title>gpubench report: {html.escape(device, quote=True)}</title>" in page
    assert f"<h1>gpubench report: {html.escape(device, quote=True)}</h1>" in page
    check_page_against_json(page, host_doc, load_result(host_result))
    facts = raw_facts(host_doc)
    assert sum(f["ran"] for f in facts.values()) >= 10 and any(f["skipped"] for f in facts.values())
    assert len(embedded_pngs(page)) >= 3  # roofline, bandwidth, strided (and PCIe on the host)
    assert_self_contained(page)
    assert "No expected bands for this card" in page
    # The host knows no peaks: no percentage anywhere in the table.
    assert all(r["cells"][4] == "-" for r in page_rows(page).values())


def test_synthetic_report_marks_and_escapes(synthetic_report):
    doc, src, out = synthetic_report
    page = out.read_text(encoding="utf-8")
    check_page_against_json(page, doc, load_result(src))
    counts = summary_counts(page)
    assert counts["failed"] >= 2 and counts["skipped"] >= 2 and counts["noisy"] >= 10
    assert counts["throttled"] == 1 and counts["unverified"] == 1
    # Hostile strings are text: escaped, never markup.
    assert html.escape(HOSTILE_DEVICE, quote=True) in page
    assert html.escape(HOSTILE_ERROR, quote=True) in page
    assert "<script" not in page and "<img src=x" not in page and "<b>80GB" not in page
    assert_self_contained(page)
    # A failed row has no number, a cache-resident row and the host no % of peak.
    rows = page_rows(page)
    assert rows["bandwidth/gather/kernel/bytes:1GiB"]["cells"][2] == "-"
    assert rows["bandwidth/copy/kernel/bytes:1GiB"]["cells"][4] == sig3(2950.0 / 33.5)
    assert rows["bandwidth/copy/kernel/bytes:4MiB"]["cells"][4] == "-"
    assert rows["compute/sgemm/kernel/m:4096,n:4096,k:4096"]["cells"][5] == sig3(80.0)
    assert rows["compute/sgemm/kernel/m:4096,n:4096,k:4096"]["cells"][1] == "192 MiB"


def summary_table(page: str) -> dict[str, list[str]]:
    """The summary's headline rows: what -> [what, note, median, % of peak, % of cuBLAS, row]."""
    table = page.split("<h2>Summary</h2>", 1)[1].split("</table>", 1)[0]
    out = {}
    for body in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]:
        tds = re.findall(r"<td[^>]*>(.*?)</td>", body, re.S)
        what, note = (html.unescape(re.sub(r"<[^>]+>", "", x)).strip()
                      for x in tds[0].split("<br>"))
        out[what] = [what, note] + [html.unescape(re.sub(r"<[^>]+>", "", t)).strip() for t in tds[1:]]
    return out


@pytest.mark.parametrize("labelled", [True, False])
def test_summary_headlines_against_the_card(tmp_path, labelled):
    """The headlines of the synthetic H100 (both file forms), from the raw JSON: DRAM copy at
    its largest set with % of peak, the L2 plateau without one, PCIe H2D best row, SGEMM best
    kernel with % of cuBLAS."""
    doc = h100_result(labelled=labelled)
    src = write_json(doc, tmp_path / "h100.json")
    page = render_html(load_result(src), [])
    facts = raw_facts(doc)
    med = lambda name, counter="GB/s": statistics.median(  # noqa: E731
        e[counter] for e in raw_rows(doc)[name]["iters"])
    s = summary_table(page)
    assert s["DRAM copy"][2:] == [f"{sig3(facts['bandwidth/copy/kernel/bytes:1GiB']['median'])} GB/s",
                                  sig3(med("bandwidth/copy/kernel/bytes:1GiB", "pct_of_peak")),
                                  "-", "bandwidth/copy/kernel/bytes:1GiB"]
    assert s["DRAM copy"][1] == "largest working set, 1 GiB"
    assert s["L2 plateau"][2:] == ["6100 GB/s", "-", "-", "bandwidth/copy/kernel/bytes:4MiB"]
    assert s["PCIe host to device"][2] == "55.0 GB/s"
    assert s["PCIe host to device"][5] == "bandwidth/pcie_h2d/memcpy_ce/bytes:256MiB"
    assert s["SGEMM"][2:] == ["40.0 TFLOP/s", "-", "80.0", "compute/sgemm/kernel/m:4096,n:4096,k:4096"]
    assert "PCIe device to host" not in s and "FP16 GEMM" not in s


def test_pcie_headline_is_a_sustained_transfer_and_the_host_names_its_stand_in(tmp_path, host_result):
    """The PCIe headline is the best row of 256 MiB or more (or of the largest size that ran, as
    --quick stops at 16 MiB), not a small transfer a cache serves; the host's rows are memcpy
    between host buffers, and the summary says so instead of calling them PCIe."""
    doc = h100_result(labelled=True)
    fast_small = "bandwidth/pcie_h2d/memcpy_ce/bytes:64KiB"
    for e in doc["benchmarks"]:
        if e["name"].startswith(fast_small):
            e["GB/s"] = 80.0  # a cache-served size faster than the sustained rate
    s = summary_table(render_html(load_result(write_json(doc, tmp_path / "h100.json")), []))
    assert s["PCIe host to device"][2] == "55.0 GB/s"
    assert s["PCIe host to device"][1] == "best row of 256 MiB or more"

    r = load_result(host_result)
    pcie = [b for b in r.benchmarks.values() if b.kernel == "pcie_h2d" and b.ok]
    largest = max(b.size_bytes() for b in pcie)
    assert largest < 256 * 2**20 and min(b.size_bytes() for b in pcie) < largest  # --quick: sizes below it
    s = summary_table(render_html(r, []))
    assert "PCIe host to device" not in s
    head = s["memcpy stand-in: host to device"]
    assert head[1] == f"best row of {fmt_bytes(largest)} or more"
    assert r.benchmarks[head[5]].size_bytes() == largest


def test_a_cache_resident_row_shows_no_percentage_of_the_dram_peak(tmp_path):
    """Files written before rows carried labels hold a DRAM % of peak on cache-resident rows (the
    H100's 4 MiB copy: 212 %); the table shows '-' there, as its caption says, and keeps the DRAM
    row's percentage."""
    doc = h100_result(labelled=False)
    for e in doc["benchmarks"]:
        if e["name"].startswith("bandwidth/copy/kernel/bytes:4MiB"):
            e["pct_of_peak"] = 182.1
    page = render_html(load_result(write_json(doc, tmp_path / "h100.json")), [])
    cells = lambda name: [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(  # noqa: E731
        r"<td[^>]*>(.*?)</td>", re.search(rf"<tr class='bench[^']*'><td class='name'>{re.escape(name)}</td>(.*?)</tr>",
                                          page, re.S).group(0), re.S)]
    assert cells("bandwidth/copy/kernel/bytes:4MiB")[4] == "-"
    assert cells("bandwidth/copy/kernel/bytes:1GiB")[4] not in ("-", "")


@pytest.mark.parametrize("labelled", [True, False])
def test_the_cache_plateau_starts_at_a_sixty_fourth_of_the_cache(tmp_path, labelled):
    """A copy far smaller than the cache (64 KiB, a 128 KiB working set, below L2/64 = 800 KiB) is
    no plateau, however fast: on the host such a row was the L1's, quoted as the last-level
    cache. The summary and the acceptance run read the 4 MiB row."""
    doc = h100_result(labelled=labelled)
    doc["benchmarks"] += entries("bandwidth/copy/kernel/bytes:64KiB",
                                 _reps({"verified": 1, "GB/s": 9000.0, "working_set_bytes": 128 << 10}),
                                 label=label("l2", "GBps", "l2", "bytes") if labelled else None)
    r = load_result(write_json(doc, tmp_path / "h100.json"))
    s = summary_table(render_html(r, []))
    assert s["L2 plateau"][5] == "bandwidth/copy/kernel/bytes:4MiB"
    from gpubench_tools.acceptance import measure
    got, _ = measure("l2_plateau_GBps", r)
    assert got.row.name == "bandwidth/copy/kernel/bytes:4MiB" and got.value == pytest.approx(6100)


def test_acceptance_section(tmp_path, host_result):
    """An H100 gets a verdict per expected band (bands.csv), drawn with its reason and the likely
    cause of what is not a pass; the host has no bands and the page says so plainly."""
    doc = h100_result(labelled=True)
    doc["context"]["pcie_link"] = "Gen4 x16"  # trained below its Gen5 maximum
    doc["context"]["pcie_link_max"] = "Gen5 x16"
    r = load_result(write_json(doc, tmp_path / "h100.json"))
    rows = {a.what: a for a in acceptance_rows(r)}
    assert rows["DRAM copy, % of peak"].verdict == "pass"  # 2950 GB/s = 88 % of 3350
    assert rows["DRAM copy, % of peak"].row == "bandwidth/copy/kernel/bytes:1GiB"
    assert rows["gpubench SGEMM, % of cuBLAS"].verdict == "pass"  # 80 % at 4096
    assert rows["PCIe host to device, pinned"].verdict == "not measured"  # no pinned copy-engine row
    assert rows["cuBLAS FP16 GEMM, % of tensor peak"].verdict == "not measured"
    page = render_html(r, [])
    section = page.split("<h2>Acceptance</h2>", 1)[1].split("<h2>", 1)[0]
    assert 'class="mark pass"' in section and 'class="mark not_measured"' in section
    assert "No expected bands" not in section
    host = load_result(host_result)
    assert acceptance_rows(host) == []
    assert "No expected bands for this card" in render_html(host, [])
    # Rows handed in are drawn as given (the renderer does not judge).
    given = [AcceptanceRow("SGEMM <4096>", "compute/sgemm/kernel/m:4096,n:4096,k:4096", 40.0,
                           "TFLOP/s", 45.0, 60.0, "fail", "below the band")]
    section = render_html(r, [], given).split("<h2>Acceptance</h2>", 1)[1].split("<h2>", 1)[0]
    assert "45.0 to 60.0" in section and 'class="mark fail"' in section
    assert "SGEMM &lt;4096&gt;" in section and "below the band" in section


def test_number_and_size_formats():
    assert [sig3(v) for v in (3312.4, 88.14, 0.0010466, 0, 999.7, 0.0009996, 55.0, 1.5e6,
                              -12.345, None, float("nan"))] == \
        ["3310", "88.1", "0.00105", "0", "1000", "0.00100", "55.0", "1500000", "-12.3", "-", "-"]
    assert [fmt_bytes(n) for n in (512, 4096, 1.5 * 2**20, 2**30, 1000 * 2**10, 192 * 2**20,
                                   None)] == \
        ["512 B", "4 KiB", "1.5 MiB", "1 GiB", "1000 KiB", "192 MiB", "-"]


# ------------------------------------------------------------------------------------------ CLI

def test_default_output_is_next_to_the_pngs(host_result, host_doc, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("report.py", host_result)
    want = Path("plots") / host_doc["context"]["device_key"] / f"{host_result.stem}.html"
    assert code == 0 and out.strip() == str(want) and (tmp_path / want).is_file(), err
    assert not list((tmp_path / want.parent).glob(".*.tmp"))


def test_an_existing_report_is_not_overwritten_without_force(host_result, tmp_path):
    out = tmp_path / "r.html"
    out.write_text("an earlier report")
    code, stdout, err = cli("report.py", host_result, "--out", out)
    assert code == 2 and not stdout
    assert err.strip() == f"report.py: error: {out} exists; reports are not overwritten without --force"
    assert out.read_text() == "an earlier report"
    code, stdout, err = cli("report.py", host_result, "--out", out, "--force")
    assert code == 0 and out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>"), err
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("case, message", [
    ("missing", "no such file"),
    ("truncated", "not valid JSON (truncated or corrupt?)"),
    ("not_gpubench", "not a gpubench result"),
    ("directory", "is a directory"),
    ("deep", "nested too deeply"),
    ("nan", "not a measured number"),
    ("out_dir", "is a directory"),
    ("out_suffix", "must end in .html"),
    ("out_unwritable", "--out /proc/x.html"),
])
def test_bad_input_is_one_line_and_exit_2(case, message, host_result, host_doc, tmp_path):
    text = host_result.read_text()
    src, out = tmp_path / "in.json", tmp_path / "r.html"
    if case == "missing":
        src = tmp_path / "nonesuch.json"
    elif case == "truncated":
        src.write_text(text[: len(text) // 2])
    elif case == "not_gpubench":
        doc = json.loads(text)
        del doc["context"]["gpubench_version"]
        src.write_text(json.dumps(doc))
    elif case == "directory":
        src = tmp_path
    elif case == "deep":
        src.write_text("[" * 100000 + "]" * 100000)
    elif case == "nan":
        doc = json.loads(text)
        entry = next(e for e in doc["benchmarks"]
                     if "GB/s" in e and e.get("run_type") != "aggregate")
        entry["GB/s"] = float("nan")
        src.write_text(json.dumps(doc))
    else:
        src = host_result
        out = {"out_dir": tmp_path, "out_suffix": tmp_path / "r.png",
               "out_unwritable": Path("/proc/x.html")}[case]
    code, stdout, err = cli("report.py", src, "--out", out)
    assert code == 2 and not stdout and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("report.py: error: ") and message in lines[0], err
    assert not out.is_file() and not list(tmp_path.glob("*.html")) and not list(tmp_path.glob(".*.tmp"))


def test_a_full_disk_names_the_report(host_result, tmp_path, monkeypatch):
    """The page was written straight to its temporary: a full disk said only "report.py: error:
    No space left on device", naming no file."""
    import errno

    real = Path.write_text

    def full(path, *args, **kwargs):
        if path.name.endswith(".tmp"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    out = tmp_path / "r.html"
    code, stdout, err = cli("report.py", host_result, "--out", out)
    assert (code, stdout) == (2, "") and err.count("\n") == 1, err
    assert err == f"report.py: error: --out {out}: cannot write: No space left on device\n"
    assert list(tmp_path.iterdir()) == []


def test_truncated_result_as_a_real_process(host_result, tmp_path):
    """The script itself (a new interpreter, as run.sh runs it): one line, exit 2."""
    src = tmp_path / "cut.json"
    src.write_text(host_result.read_text()[:5000])
    proc = run_script("report.py", src, "--out", tmp_path / "r.html")
    assert proc.returncode == 2 and not proc.stdout
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("report.py: error: ")
    assert not (tmp_path / "r.html").exists()


# -------------------------------------------------------------------------------- the browser

#: The browser window; the screenshot has exactly this size.
WINDOW = (1280, 2000)
#: Console lines of the page in Chromium's log (--enable-logging=stderr): every console
#: message, whatever its level, is logged as "...:INFO:CONSOLE:<line>] "<text>", source: <url>"
#: (older versions: "CONSOLE(<line>)"). The report runs no script, so any is an error: an
#: exception, a console call, or a resource the page's Content-Security-Policy blocked.
CONSOLE_LINE = re.compile(r":CONSOLE[:(]|Uncaught")


def chromium() -> str:
    """Debian's chromium (GPUBENCH_CHROMIUM names another binary). Missing, the test fails:
    scripts/test.sh installs it, and a browser test must never be skipped unseen."""
    exe = os.environ.get("GPUBENCH_CHROMIUM", "chromium")
    path = shutil.which(exe)
    if path is None:
        pytest.fail(f"'{exe}' not found: the HTML report is tested in a headless Chromium; "
                    f"install Debian's chromium (apt-get install chromium; scripts/test.sh does "
                    f"it as root) or set GPUBENCH_CHROMIUM to a Chromium binary")
    return path


def run_chromium(tmp: Path, page: Path, *mode: str) -> subprocess.CompletedProcess:
    """Headless Chromium on a file:// page, logging to stderr, its own profile."""
    profile = tmp / f"profile-{page.stem}-{mode[0].lstrip('-').split('=')[0]}"
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--force-device-scale-factor=1", f"--user-data-dir={profile}",
           f"--window-size={WINDOW[0]},{WINDOW[1]}", "--enable-logging=stderr", "--v=0",
           *mode, page.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, f"chromium exit {proc.returncode}:\n{proc.stderr[-3000:]}"
    return proc


def screenshot(tmp: Path, page: Path) -> tuple[np.ndarray, list[str]]:
    """The page's screenshot (pixels) and its console lines."""
    png = tmp / f"{page.stem}.png"
    png.unlink(missing_ok=True)
    proc = run_chromium(tmp, page, f"--screenshot={png}")
    assert png.is_file(), f"chromium wrote no screenshot:\n{proc.stderr[-3000:]}"
    return imread(png), console_lines(proc.stderr)


def console_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if CONSOLE_LINE.search(ln)]


def ink(img: np.ndarray) -> tuple[float, int]:
    """(fraction of pixels that are not white, number of distinct colours) of a screenshot."""
    rgb = (img[..., :3] * 255).round().astype(np.uint8) if img.dtype != np.uint8 else img[..., :3]
    not_white = (rgb < 245).any(axis=2).mean()
    colours = len(np.unique(rgb.reshape(-1, 3), axis=0))
    return float(not_white), colours


def assert_not_blank(img: np.ndarray) -> None:
    assert (img.shape[1], img.shape[0]) == WINDOW, img.shape
    not_white, colours = ink(img)
    assert not_white > 0.03 and colours > 64, f"blank screenshot: {not_white:.4f} inked, {colours} colours"


#: Appended to a copy of the page (its CSP removed so that it may run): after the load event,
#: writes what the browser made of the page into <body data-probe="...">, which --dump-dom shows.
PROBE = """<script>window.addEventListener("load", () => {
  const imgs = [...document.images];
  document.body.setAttribute("data-probe", JSON.stringify({
    images: imgs.length,
    decoded: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
    rows: document.querySelectorAll("tr.bench").length,
    h1: document.querySelector("h1") ? document.querySelector("h1").textContent : null,
    scripts: document.scripts.length,
  }));
});</script>"""


def dom_probe(tmp: Path, page: Path) -> dict:
    """What the browser parsed: images and how many decoded, benchmark rows, the title's text,
    script elements (the probe's own counts 1)."""
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"<meta http-equiv='Content-Security-Policy'[^>]*>", "", text)
    probed = tmp / f"{page.stem}_probe.html"
    probed.write_text(text.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    proc = run_chromium(tmp, probed, "--dump-dom")
    m = re.search(r'data-probe="([^"]*)"', proc.stdout)
    assert m, f"the probe did not run:\n{proc.stdout[:2000]}\n{proc.stderr[-2000:]}"
    return json.loads(html.unescape(m.group(1)))


def test_host_report_in_chromium(host_report, host_doc, tmp_path):
    img, console = screenshot(tmp_path, host_report)
    assert console == [], console
    assert_not_blank(img)
    page = host_report.read_text(encoding="utf-8")
    dom = dom_probe(tmp_path, host_report)
    n_images = len(embedded_pngs(page))
    assert dom == {"images": n_images, "decoded": n_images, "rows": len(raw_rows(host_doc)),
                   "h1": f"gpubench report: {host_doc['context']['device_name']}", "scripts": 1}


def test_hostile_strings_stay_text_in_chromium(synthetic_report, tmp_path):
    doc, _, out = synthetic_report
    img, console = screenshot(tmp_path, out)
    assert console == [], console
    assert_not_blank(img)
    dom = dom_probe(tmp_path, out)
    assert dom["h1"] == f"gpubench report: {HOSTILE_DEVICE}"  # shown literally, not run
    assert dom["scripts"] == 1 and dom["rows"] == len(raw_rows(doc))
    assert dom["images"] == dom["decoded"] == len(embedded_pngs(out.read_text(encoding="utf-8")))


def test_browser_checks_catch_broken_pages(host_report, tmp_path):
    """Each check fails on a page planted to break it: a script error and a console call, an
    external image the report's Content-Security-Policy blocks, a blank page, a corrupt image."""
    good = host_report.read_text(encoding="utf-8")
    broken = tmp_path / "script_error.html"
    broken.write_text("<!DOCTYPE html><html><body><h1>x</h1><script>console.error('planted');"
                      "undefinedFunction();</script></body></html>")
    _, console = screenshot(tmp_path, broken)
    assert any("planted" in ln for ln in console) and any("Uncaught ReferenceError" in ln
                                                          for ln in console), console

    external = tmp_path / "external.html"
    external.write_text(good.replace("<h2>Summary</h2>", "<h2>Summary</h2><img src="
                                     "\"https://example.invalid/x.png\">"), encoding="utf-8")
    _, console = screenshot(tmp_path, external)
    assert any("example.invalid" in ln and "Content Security Policy" in ln for ln in console), \
        console

    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><head><title>blank</title></head><body></body></html>")
    img, console = screenshot(tmp_path, blank)
    assert console == []
    with pytest.raises(AssertionError, match="blank screenshot"):
        assert_not_blank(img)

    corrupt = tmp_path / "corrupt.html"
    first = re.search(r"data:image/png;base64,([A-Za-z0-9+/=]{200})", good)
    corrupt.write_text(good.replace(first.group(1), "A" * 200, 1), encoding="utf-8")
    dom = dom_probe(tmp_path, corrupt)
    assert dom["decoded"] == dom["images"] - 1, dom


def test_render_figures_are_the_checked_figures(host_result):
    """render_figures() draws the roofline (with its notes) and every sweep plot of the result,
    pixel for pixel the figures roofline.py and plot.py write."""
    r = load_result(host_result)
    figs = render_figures(r)
    want = expected_figures(r)
    assert len(figs) == len(want) >= 3
    for f, exp in zip(figs, want):
        got = imread(io.BytesIO(f.png))
        assert got.shape == exp.shape and np.array_equal(got, exp), f.title
    data = roofline_data([r], [], load_cards())
    assert figs[0].title == data.title and figs[0].notes == [n for s in data.series for n in s.notes]
