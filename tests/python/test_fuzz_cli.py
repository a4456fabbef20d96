"""Generated hostile invocations of gpubench and of each script, with a fixed seed (set
GPUBENCH_FUZZ_SEED and GPUBENCH_FUZZ_N to run others or more). Properties: the exit status is
0, 1 or 2; on 2, stderr starts with one line naming the program; never a traceback or a signal;
every invocation ends within its time bound."""

from __future__ import annotations

import os
import random
import subprocess

from conftest import BIN, cli

SEED = int(os.environ.get("GPUBENCH_FUZZ_SEED", "20261123"))
N = int(os.environ.get("GPUBENCH_FUZZ_N", "200"))

# Pieces of arguments: valid, malformed, hostile.
VALUES = ["", "0", "-1", "1", "3", "nan", "inf", "-inf", "1e309", "0.001", "abc", "x" * 3000, "(", ")", "[a-",
          "(.*)*Z", "((((((((((a))))))))))", "-bandwidth", "^bandwidth/copy/kernel/bytes:4KiB$", "bandwidth",
          "/proc/x.json", "/no/such/dir/x.json", "\u00e9\u00e8", "a,b=c", "backend=x", "true", "maybe", "json", "bogus"]
GPUBENCH_FLAGS = ["--filter", "--benchmark_filter", "--device", "--out", "--benchmark_out", "--results-dir",
                  "--benchmark_repetitions", "--benchmark_min_time", "--benchmark_format", "--benchmark_time_unit",
                  "--benchmark_context", "--benchmark_list_tests", "--benchmark_out_format",
                  "--benchmark_display_aggregates_only", "--numa-bind", "--no-numa-bind", "--quick", "--list", "--help", "--version",
                  "--frobnicate", "stray", "-", "--"]


def gpubench_args(rng: random.Random) -> list[str]:
    args = []
    for _ in range(rng.randint(0, 4)):
        flag = rng.choice(GPUBENCH_FLAGS)
        if flag.startswith("--") and flag not in ("--numa-bind", "--no-numa-bind", "--quick", "--list", "--help", "--version", "--") \
                and rng.random() < 0.85:
            args.append(f"{flag}={rng.choice(VALUES)}")
        else:
            args.append(flag)
    # keep runs short: list, or the smallest benchmark once
    if rng.random() < 0.5:
        args.append("--list")
    else:
        args += ["--device=host", "--quick", "--benchmark_repetitions=1", "--benchmark_min_time=0.001"]
        if not any(a.startswith(("--filter", "--benchmark_filter")) for a in args):
            args.append("--filter=^bandwidth/write/kernel/bytes:4KiB$")
    rng.shuffle(args)
    return args


def test_fuzz_gpubench(tmp_path):
    rng = random.Random(SEED)
    for i in range(N):
        args = gpubench_args(rng)
        proc = subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        what = f"invocation {i} (seed {SEED}): gpubench {' '.join(a[:80] for a in args)}"
        assert proc.returncode in (0, 1, 2), f"{what}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
        if proc.returncode == 2:
            first = proc.stderr.splitlines()[0] if proc.stderr else ""
            assert first.startswith("gpubench: "), f"{what}: {proc.stderr[:500]}"
        for f in tmp_path.rglob("*.tmp.*"):
            raise AssertionError(f"{what}: left {f}")


SCRIPT_ARGS = {
    "compare.py": ["{r}", "{r}", "{bad}", "--noise-k", "--alpha", "--min-effect", "--min-samples", "--markdown",
                   "--json", "--junit", "--history", "--last", "--force", "--allow-failures", "--quiet"],
    "roofline.py": ["{r}", "{bad}", "--card", "--out", "--cards-csv", "--list-cards", "h100_sxm", "nonesuch"],
    "plot.py": ["{r}", "{bad}", "--out-dir"],
    "run_cost.py": ["{r}", "{bad}", "--top", "--baseline"],
}


def test_fuzz_scripts(tmp_path, host_result, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative outputs and default plot folders land here, not in the tree
    rng = random.Random(SEED + 1)
    bad = tmp_path / "bad.json"
    bad.write_text(rng.choice(["{", "[]", "{\"context\": {}, \"benchmarks\": 3}", "[" * 5000 + "]" * 5000]))
    for i in range(N * len(SCRIPT_ARGS)):  # N invocations of each script
        tool = sorted(SCRIPT_ARGS)[i % len(SCRIPT_ARGS)]
        args = []
        for _ in range(rng.randint(0, 5)):
            a = rng.choice(SCRIPT_ARGS[tool])
            args.append(a)
            if a.startswith("--") and rng.random() < 0.7:
                args.append(rng.choice(VALUES[:12] + [str(tmp_path / "out" / "x.png"), str(tmp_path), "/proc/x"]))
        args = [a.format(r=host_result, bad=bad) for a in args]
        code, out, err = cli(tool, *args)
        what = f"invocation {i} (seed {SEED + 1}): {tool} {' '.join(a[:80] for a in args)}"
        assert code in (0, 1, 2), f"{what}: exit {code}\n{err[-2000:]}"
        assert "Traceback" not in err, f"{what}: {err[-2000:]}"
        if code == 2:
            assert err.startswith(f"{tool}: ") or err.startswith("usage:"), f"{what}: {err[:500]}"
