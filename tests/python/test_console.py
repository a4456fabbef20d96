"""What a user sees on the console, from the real gpubench binary on the host backend: a short
header, one line per benchmark grouped by family within 120 columns, the closing summary, no
Google Benchmark banner or DEBUG warning, progress on stderr only when asked (or a terminal), and
Google Benchmark's own formats still available with --benchmark_format."""

import json
import os
import pty
import re
import subprocess

from conftest import BIN, gpubench

FILTER = "--filter=^(bandwidth/copy/(kernel|thrust)/bytes:(4KiB|64KiB)|memory/alloc/pool/bytes:4KiB)"


def test_the_console_is_a_table_with_a_summary(tmp_path):
    out = tmp_path / "r.json"
    proc = gpubench("--device=host", "--quick", FILTER, f"--out={out}")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    lines = text.splitlines()
    assert lines[0].startswith("gpubench ") and "host backend" in lines[0]
    assert "Library was built as DEBUG" not in text + proc.stderr
    assert "Running " not in text and "UserCounters" not in text and "manual_time" not in text
    assert all(len(line) <= 120 for line in lines if not line.startswith("  result: ")), max(lines, key=len)
    # One line per benchmark that ran, under its family's heading; the unavailable one counted.
    rows = [line for line in lines if line.startswith("  bandwidth/") or line.startswith("  memory/")]
    assert [r.split()[0] for r in rows] == ["bandwidth/copy/kernel/bytes:4KiB", "bandwidth/copy/kernel/bytes:64KiB",
                                            "memory/alloc/pool/bytes:4KiB"]
    assert lines.index("bandwidth") < lines.index("memory")
    assert re.search(r"bytes:4KiB\s+\d[\d.]* GB/s", rows[0]), rows[0]
    assert re.search(r"pool/bytes:4KiB\s+\d[\d.]* us ", rows[2]), rows[2]
    # The medians printed are the result file's.
    doc = json.loads(out.read_text())
    gbps = sorted(b["GB/s"] for b in doc["benchmarks"] if b["run_name"].startswith("bandwidth/copy/kernel/bytes:4KiB")
                  and b.get("run_type") == "iteration")
    printed = float(re.search(r"bytes:4KiB\s+([\d.]+) GB/s", rows[0]).group(1))
    assert printed == float(f"{gbps[1]:.3g}") or abs(printed - gbps[1]) / gbps[1] < 0.006
    summary = lines[lines.index("summary"):]
    # 4 KiB and 64 KiB sets sit in a core's L1: no cache plateau (it starts at 1/64 of the
    # last-level cache), as the report and the roofline quote none
    assert not any(line.startswith("  cache plateau") for line in summary), summary
    assert "  (no headline row in this run: see the table)" in summary, summary
    assert any("not on this backend: 2 rows" in line for line in summary), summary
    assert f"  result: {out}" in summary, summary
    assert "[1/" not in proc.stderr, "no progress when stderr is not a terminal"


def test_the_dram_headline_is_the_largest_working_set(tmp_path):
    """The DRAM copy headline is the copy kernel at its largest working set, as the report reads
    it, however much faster a smaller DRAM-level set ran (the stddev and cv aggregates of the
    working set, 0, once made every row look equally large)."""
    out = tmp_path / "r.json"
    proc = gpubench("--device=host", "--benchmark_repetitions=3", "--benchmark_min_time=0.01",
                    "--filter=bandwidth/copy/kernel/bytes:(16|64|256)MiB$", f"--out={out}")
    assert proc.returncode == 0, proc.stderr
    # The DRAM-level rows (which they are depends on this CPU's last-level cache), largest last.
    dram = sorted({(b["working_set_bytes"], b["run_name"].removesuffix("/manual_time"))
                   for b in json.loads(out.read_text())["benchmarks"]
                   if b.get("run_type") == "iteration" and "level=dram" in b.get("label", "")})
    assert dram, "no DRAM-level copy row: the sizes must pass half the last-level cache"
    head = next(line for line in proc.stdout.splitlines() if line.startswith("  DRAM copy"))
    assert head.endswith(f"({dram[-1][1]})"), (head, dram)


def test_without_an_output_the_summary_says_nothing_was_saved():
    proc = gpubench("--device=host", "--quick", "--filter=^memory/alloc/pool/bytes:4KiB")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == \
        "  nothing was saved: give --out=FILE or --results-dir=DIR to keep the result"


def test_progress_when_asked_and_on_a_terminal():
    proc = gpubench("--device=host", "--quick", FILTER, "--progress=on")
    assert proc.returncode == 0, proc.stderr
    steps = re.findall(r"^\[(\d+)/(\d+)\] \d+:\d\d elapsed, ETA \d+:\d\d", proc.stderr, re.M)
    assert [int(n) for n, _ in steps] == list(range(1, 6)) and {t for _, t in steps} == {"5"}, proc.stderr
    off = gpubench("--device=host", "--quick", FILTER, "--progress=off")
    assert "elapsed, ETA" not in off.stderr
    # On a terminal (auto), one line redrawn in place and cleared at the end.
    leader, follower = pty.openpty()
    with subprocess.Popen([str(BIN), "--device=host", "--quick", FILTER], stdout=subprocess.DEVNULL,
                          stderr=follower) as p:
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        assert p.wait(timeout=300) == 0
    os.close(leader)
    tty = seen.decode(errors="replace")
    assert "\r\x1b[K[5/5]" in tty and tty.rstrip("\n").endswith("\r\x1b[K"), repr(tty[-200:])


def test_a_bad_progress_value_is_one_line_and_exit_2():
    proc = gpubench("--progress=sometimes")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == "gpubench: --progress: 'sometimes' is not auto, on or off"


def test_google_benchmarks_own_formats_stay_available():
    proc = gpubench("--device=host", "--quick", "--filter=^memory/alloc/pool/bytes:4KiB", "--benchmark_format=json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["benchmarks"] and "summary" not in proc.stdout
