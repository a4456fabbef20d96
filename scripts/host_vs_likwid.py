#!/usr/bin/env python3
"""Host copy against likwid-bench, side by side in one run on the same machine.

Runs gpubench's host copy (bandwidth/copy/kernel) and likwid-bench's `copy_avx` (regular
stores) and `copy_mem_avx` (non-temporal stores) in alternating rounds, so drift and
neighbours affect all three alike, and prints the medians and the ratio of gpubench to the
better likwid kernel. Both count bytes read plus bytes written. likwid-bench comes from
Debian's `likwid` package.

usage: scripts/host_vs_likwid.py [--gpubench build/gpubench] [--rounds 5] [--size 1GiB]
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from gpubench_tools.errors import exit_on_signals  # noqa: E402

exit_on_signals("host_vs_likwid.py", __name__)  # a signal while the modules below load: one line

from gpubench_tools.errors import UsageError, make_parser, run_cli  # noqa: E402
SIZES = {"64MiB": 64 << 20, "256MiB": 256 << 20, "1GiB": 1 << 30}


def fail(message):
    raise UsageError(message)


def likwid_GBps(test, working_set_bytes, threads):
    # likwid sizes are decimal; the working set covers both arrays of the copy.
    kb = working_set_bytes // 1000
    proc = subprocess.run(["likwid-bench", "-t", test, "-w", f"N:{kb}kB:{threads}"],
                          capture_output=True, text=True, timeout=600)
    match = re.search(r"^MByte/s:\s+([0-9.]+)", proc.stdout, re.M)
    if proc.returncode != 0 or not match:
        fail(f"likwid-bench -t {test} failed: {(proc.stderr or proc.stdout).strip()[:200]}")
    return float(match.group(1)) / 1000.0


def gpubench_GBps(binary, size_token):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "copy.json"
        proc = subprocess.run([str(binary), "--device=host", f"--filter=^bandwidth/copy/kernel/bytes:{size_token}$",
                               "--benchmark_repetitions=3", f"--out={out}"],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            fail(f"gpubench failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
        doc = json.loads(out.read_text())
        values = [b["GB/s"] for b in doc["benchmarks"] if b.get("run_type") == "iteration"]
        return statistics.median(values), doc["context"]["device_name"], int(doc["context"]["sm_count"])


def main(argv=None):
    parser = make_parser("host_vs_likwid.py", __doc__.splitlines()[0])
    parser.add_argument("--gpubench", default=str(ROOT / "build" / "gpubench"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", default="1GiB", choices=sorted(SIZES), help="copy size (per array)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        fail("--rounds must be at least 1")
    if not Path(args.gpubench).exists():
        fail(f"gpubench not found at {args.gpubench} (build it first)")
    if shutil.which("likwid-bench") is None:
        fail("likwid-bench not found (apt-get install likwid)")
    threads = len(os.sched_getaffinity(0))
    working_set = 2 * SIZES[args.size]
    runs = {"gpubench copy/kernel": [], "likwid copy_avx": [], "likwid copy_mem_avx": []}
    cpu = "?"
    for r in range(args.rounds):
        value, cpu, _ = gpubench_GBps(args.gpubench, args.size)
        runs["gpubench copy/kernel"].append(value)
        runs["likwid copy_avx"].append(likwid_GBps("copy_avx", working_set, threads))
        runs["likwid copy_mem_avx"].append(likwid_GBps("copy_mem_avx", working_set, threads))
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in runs.items()),
              file=sys.stderr)
    medians = {k: statistics.median(v) for k, v in runs.items()}
    print(f"machine: {cpu}, {threads} threads; working set {working_set / 2**20:.0f} MiB "
          f"(two {args.size} arrays); GB/s = 1e9 bytes read + written per second; median of {args.rounds} rounds")
    for k, v in medians.items():
        spread = max(runs[k]) - min(runs[k])
        print(f"  {k:22s} {v:8.2f} GB/s   (spread {spread:.2f})")
    best_name = max(("likwid copy_avx", "likwid copy_mem_avx"), key=medians.get)
    ratio = medians["gpubench copy/kernel"] / medians[best_name]
    print(f"ratio gpubench / {best_name}: {100 * ratio:.1f} %  (target >= 95 %)")


if __name__ == "__main__":
    sys.exit(run_cli("host_vs_likwid.py", main))
