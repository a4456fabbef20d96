"""End to end: the real gpubench binary on the host backend, its result file and its errors."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("GPUBENCH_BIN", ROOT / "build" / "gpubench"))

CONTEXT_KEYS = [
    "gpubench_version", "git_revision", "backend", "device_name", "device_key", "cc", "sm_count",
    "sm_clock_MHz", "mem_clock_MHz", "bus_width_bits", "l2_bytes", "memory_bytes", "peak_dram_GBps",
    "peak_fp32_TFLOPS", "peak_fp16_tensor_TFLOPS", "peak_pcie_h2d_GBps", "peak_pcie_d2h_GBps",
    "peaks_source", "driver_version", "runtime_version", "cache_policy", "byte_convention", "quick",
    "run_started_utc",
]
NAME = re.compile(r"^(bandwidth|compute|roofline|memory)/[a-z0-9_]+/[a-z0-9_]+/[A-Za-z0-9_:,.]+$")


def gpubench(*args, timeout=600):
    assert BIN.exists(), f"gpubench binary not found at {BIN} (build first, or set GPUBENCH_BIN)"
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=timeout)


def has_cuda_device():
    return "running on the host" not in gpubench("--list", "--filter=bandwidth/copy/kernel").stderr


@pytest.fixture(scope="module")
def host_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e") / "host_quick.json"
    proc = gpubench("--device=host", "--quick", "--filter=bandwidth", f"--out={out}")
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(out.read_text()), proc


def test_result_is_google_benchmark_json_with_the_contract_context(host_run):
    _, doc, proc = host_run
    ctx = doc["context"]
    for key in CONTEXT_KEYS:
        assert key in ctx, key
    assert ctx["backend"] == "host"
    assert ctx["quick"] == "true"
    assert ctx["peak_dram_GBps"] == "unknown"  # never invented for the host
    assert re.match(r"^host_[a-z0-9-]+_\d+cpu_\d+GiB$", ctx["device_key"])
    assert "result: " in proc.stderr
    # sizes in bytes are exact integers (a 32 MiB cache read 3.35544e+07, 32 bytes short), and
    # the machine's memory is the same number as the capacity check's
    for key in ("l2_bytes", "memory_bytes"):
        assert re.fullmatch(r"[1-9][0-9]*", ctx[key]), (key, ctx[key])
    assert int(ctx["l2_bytes"]) % 1024 == 0
    assert int(ctx["memory_bytes"]) == int(ctx["memory_total_bytes"])


def test_every_bandwidth_entry_reports_verified_throughput(host_run):
    _, doc, _ = host_run
    entries = [b for b in doc["benchmarks"] if b.get("run_type") == "iteration"
               and not b.get("error_message", "").startswith("skipped: not on the host backend: ")]
    assert len(entries) >= 20
    kernels = set()
    for b in entries:
        name = b["run_name"].removesuffix("/manual_time")
        assert NAME.match(name), name
        assert name.startswith("bandwidth/"), name
        assert not b.get("error_occurred"), (name, b.get("error_message"))
        assert b["GB/s"] > 0, name
        assert b["verified"] == 1, name
        assert "pct_of_peak" not in b, name  # the host has no known peak
        kernels.add(name.split("/")[1])
    assert {"copy", "read", "write", "strided", "gather", "chase"} <= kernels


def test_strided_reports_sector_traffic(host_run):
    _, doc, _ = host_run
    strided = [b for b in doc["benchmarks"] if b.get("run_type") == "iteration" and "/strided/" in b["name"]
               and "stride:8" in b["name"]]
    assert strided
    for b in strided:
        assert b["sector_GB/s"] == pytest.approx(8 * b["GB/s"], rel=1e-9)


def test_chase_reports_latency(host_run):
    _, doc, _ = host_run
    chase = [b for b in doc["benchmarks"] if b.get("run_type") == "iteration" and "/chase/" in b["name"]]
    assert chase and all(b["latency_ns"] > 0 for b in chase)


def test_existing_result_is_never_overwritten(host_run):
    out, _, _ = host_run
    before = out.read_bytes()
    proc = gpubench("--device=host", "--quick", "--filter=bandwidth/copy/kernel", f"--out={out}")
    assert proc.returncode == 2
    assert "never overwritten" in proc.stderr
    assert out.read_bytes() == before


def test_results_dir_stores_by_device_key(tmp_path):
    proc = gpubench("--device=host", "--quick", "--filter=bandwidth/copy/kernel/bytes:4KiB",
                    f"--results-dir={tmp_path}")
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stderr.strip().splitlines()[-1].removeprefix("result: "))
    assert path.exists() and path.parent.parent == tmp_path
    assert re.match(r"^\d{8}T\d{6}Z_[0-9a-f]+(-dirty)?(-\d+)?\.json$", path.name), path.name
    doc = json.loads(path.read_text())
    assert path.parent.name == doc["context"]["device_key"]


def test_list_with_bandwidth_filter_selects_only_bandwidth():
    proc = gpubench("--device=host", "--list", "--filter=bandwidth")
    assert proc.returncode == 0, proc.stderr
    names = proc.stdout.split()
    assert names and all(n.startswith("bandwidth/") for n in names)
    everything = gpubench("--device=host", "--list").stdout.split()
    assert set(names) == {n for n in everything if n.startswith("bandwidth/")}


@pytest.mark.parametrize("args, message", [
    (["--frobnicate"], "unknown flag '--frobnicate'"),
    (["--filter=("], "not a valid regular expression"),
    (["--out=/no/such/dir/r.json"], "does not exist"),
    (["--device=gpu"], "--device"),
    (["--quick", "--device=host", "--filter=^nothing_matches$"], "matches no benchmark"),
    # hostile input: Google Benchmark would abort, print its usage with exit 0, or overflow
    # std::regex's recursion; gpubench says one line first (before any device note), exit 2
    (["--benchmark_repetitions=-1"], "--benchmark_repetitions: '-1'"),
    (["--benchmark_repetitions=0"], "--benchmark_repetitions: '0'"),
    (["--benchmark_format=bogus"], "--benchmark_format"),
    (["--benchmark_time_unit=xs"], "--benchmark_time_unit"),
    (["--benchmark_min_time=-1"], "--benchmark_min_time"),
    (["--benchmark_context=backend=fake"], "'backend' is written by gpubench"),
    # keys gpubench adds at run time and Google Benchmark's own were written twice (readers keep
    # the user's); text that is not UTF-8, or holds control characters, made a file no JSON reader
    # accepts, published with exit 0
    (["--benchmark_context=job=1,row_scope=links"], "'row_scope' is written by gpubench"),
    (["--benchmark_context=validate=true"], "'validate' is written by gpubench"),
    (["--benchmark_context=card_key=h100_sxm"], "'card_key' is written by gpubench"),
    (["--benchmark_context=host_name=evil"], "'host_name' is written by gpubench or Google Benchmark"),
    (["--benchmark_context=date=yesterday"], "'date' is written by gpubench or Google Benchmark"),
    (["--benchmark_context==x"], "empty key"),
    (["--benchmark_context=novalue"], "'novalue' is not key=value"),
    (["--benchmark_context=url=a=b"], "'url=a=b' is not key=value"),
    (["--benchmark_context=a=b,a=c"], "--benchmark_context: 'a' given twice"),
    (["--benchmark_context=k=a\x01b"], "UTF-8 text without control characters"),
    (["--benchmark_context=k=caf\udce9"], "UTF-8 text without control characters"),
    (["--benchmark_min_warmup_time=-1"], "--benchmark_min_warmup_time: '-1'"),
    (["--benchmark_min_warmup_time=nan"], "--benchmark_min_warmup_time: 'nan'"),
    (["--benchmark_min_warmup_time=1e300"], "--benchmark_min_warmup_time: '1e300'"),
    (["--benchmark_color=purple"], "--benchmark_color: 'purple'"),
    (["--benchmark_counters_tabular=maybe"], "--benchmark_counters_tabular: 'maybe'"),
    (["--benchmark_perf_counters=CYCLES"], "--benchmark_perf_counters"),
    (["--benchmark_list_tests=true", "--out=x.json"], "use --list"),
    (["--filter=a", "--filter=b"], "--filter given twice"),
    (["--list", "--out=x.json"], "--list writes no result"),
    (["--filter=" + "(" * 20000 + ")" * 20000], "characters"),
    (["--filter=" + "(" * 60 + "a" + ")" * 60], "nested 60 deep"),
    (["--filter=" + "a" * 100000], "characters"),
    (["--quick", "--filter=bandwidth/copy/kernel", "--out=/proc/x.json"], "cannot write the result"),
    (["--filter=^nothing_matches$"], "matches no benchmark"),  # the error before the 'no GPU' note
])
def test_bad_input_is_one_line_plus_usage_and_exit_2(args, message):
    proc = gpubench(*args)
    assert proc.returncode == 2
    first = proc.stderr.splitlines()[0]
    assert first.startswith("gpubench: ") and message in first, proc.stderr
    assert "usage: gpubench" in proc.stderr


def test_a_run_from_a_folder_whose_name_is_not_utf8_writes_a_result_json_readers_accept(tmp_path):
    """Google Benchmark writes argv[0] into the context ("executable") as it is: from a Latin-1
    folder the result was no JSON a reader accepts, published with exit 0."""
    import shutil
    folder = os.fsencode(str(tmp_path)) + b"/bin\xe9"
    os.mkdir(folder)
    exe = folder + b"/gpubench"
    shutil.copy(os.fsencode(str(BIN)), exe)
    out = tmp_path / "r.json"
    proc = subprocess.run([exe, "--device=host", "--quick", "--filter=bandwidth/copy/kernel/bytes:4KiB$",
                           f"--out={out}"], capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_bytes().decode("utf-8"))
    assert doc["context"]["executable"].endswith("/bin?/gpubench")


@pytest.mark.parametrize("var, value, says", [
    ("BENCHMARK_CONTEXT", "device_key=forged", "environment variable BENCHMARK_CONTEXT: "),
    ("BENCHMARK_CONTEXT", "k=caf\udce9", "environment variable BENCHMARK_CONTEXT: "),
    ("BENCHMARK_REPETITIONS", "0", "environment variable BENCHMARK_REPETITIONS: "),
    ("BENCHMARK_PERF_COUNTERS", "CYCLES", "environment variable BENCHMARK_PERF_COUNTERS: "),
    # gpubench's own: a bad limit silently became 120 s (a sanitizer run's 1e7 was refused unseen).
    ("GPUBENCH_DEVICE_WAIT_SECONDS", "abc", "environment variable GPUBENCH_DEVICE_WAIT_SECONDS: 'abc' "),
    ("GPUBENCH_DEVICE_WAIT_SECONDS", "1e7", "environment variable GPUBENCH_DEVICE_WAIT_SECONDS: '1e7' "),
    # Google Benchmark's --v, read at start-up as V, which gpubench does not take.
    ("V", "3", "environment variable V='3' is Google Benchmark's --v"),
])
def test_google_benchmarks_environment_variables_are_checked_as_its_flags(tmp_path, var, value, says):
    """Google Benchmark reads BENCHMARK_<FLAG> at start-up: read past gpubench, BENCHMARK_CONTEXT
    replaced gpubench's own device_key (and wrote invalid UTF-8), exit 0."""
    env = dict(os.environ, **{var: value})
    out = tmp_path / "x.json"
    proc = subprocess.run([str(BIN), "--device=host", "--quick", "--filter=bandwidth/copy/kernel/bytes:4KiB$",
                           f"--out={out}"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines()[0].startswith("gpubench: " + says), proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("var, value, flag", [("BENCHMARK_MIN_TIME", "-1", "--benchmark_min_time=0.001"),
                                              ("BENCHMARK_REPETITIONS", "abc", "--benchmark_repetitions=2")])
def test_a_bad_environment_variable_is_refused_also_where_its_flag_is_given(tmp_path, var, value, flag):
    """The command line's flag wins over the variable, but a variable no run could take is still
    bad input: it ran to exit 0, with no word (BENCHMARK_MIN_TIME=-1) or only Google Benchmark's."""
    env = dict(os.environ, **{var: value})
    out = tmp_path / "x.json"
    proc = subprocess.run([str(BIN), "--device=host", "--quick", "--filter=bandwidth/copy/kernel/bytes:4KiB$", flag,
                           f"--out={out}"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2, proc.stderr
    ours = [line for line in proc.stderr.splitlines() if line.startswith("gpubench: ")]
    assert len(ours) == 1 and ours[0].startswith(f"gpubench: environment variable {var}: "), proc.stderr
    assert not out.exists()
    # A valid one beside its flag: the flag's value is the one that runs.
    env[var] = "1" if var == "BENCHMARK_REPETITIONS" else "0.002"
    proc = subprocess.run([str(BIN), "--device=host", "--quick", "--filter=bandwidth/copy/kernel/bytes:4KiB$", flag,
                           f"--out={out}"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    reps = [e["repetitions"] for e in json.loads(out.read_text())["benchmarks"] if e["run_type"] == "iteration"]
    assert reps == ([2, 2] if var == "BENCHMARK_REPETITIONS" else [reps[0]] * len(reps)) and reps


def test_min_time_with_a_seconds_suffix_runs(tmp_path):
    """Google Benchmark 1.8's form ("0.01s") is taken whichever version is linked."""
    out = tmp_path / "x.json"
    proc = gpubench("--device=host", "--quick", "--filter=bandwidth/copy/kernel/bytes:4KiB$",
                    "--benchmark_min_time=0.01s", "--benchmark_repetitions=2", f"--out={out}")
    assert proc.returncode == 0, proc.stderr
    assert "LOG(" not in proc.stderr  # no Google Benchmark log line about the form
    rows = [e for e in json.loads(out.read_text())["benchmarks"] if e["run_type"] == "iteration"]
    assert len(rows) == 2 and all(e["verified"] == 1 for e in rows)


def test_benchmark_out_with_a_results_dir_names_the_variable(tmp_path):
    """BENCHMARK_OUT in the environment of a run with --results-dir (as run.sh passes it) said
    "--out and --results-dir are exclusive", naming a flag the user never typed."""
    env = dict(os.environ, BENCHMARK_OUT=str(tmp_path / "env.json"))
    proc = subprocess.run([str(BIN), "--device=host", "--quick", "--filter=bandwidth/copy/kernel/bytes:4KiB$",
                           f"--results-dir={tmp_path / 'store'}"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines()[0] == (
        "gpubench: environment variable BENCHMARK_OUT (Google Benchmark's --benchmark_out) and --results-dir are "
        "exclusive: unset BENCHMARK_OUT or drop --results-dir"), proc.stderr
    assert not (tmp_path / "env.json").exists() and not (tmp_path / "store").exists()


def test_a_google_benchmark_environment_variable_is_taken_as_its_flag(tmp_path):
    env = dict(os.environ, BENCHMARK_CONTEXT="job=42", BENCHMARK_REPETITIONS="2")
    out = tmp_path / "x.json"
    proc = subprocess.run([str(BIN), "--device=host", "--quick", "--filter=bandwidth/copy/kernel/bytes:4KiB$",
                           f"--out={out}"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["context"]["job"] == "42"
    assert [e["repetitions"] for e in doc["benchmarks"] if e["run_type"] == "iteration"] == [2, 2]


def test_benchmark_filter_in_the_environment_is_gpubenchs_filter_and_the_command_line_wins(tmp_path):
    """Google Benchmark read BENCHMARK_FILTER into its default before main and filtered by it again
    over gpubench's own: --filter=copy with BENCHMARK_FILTER=memory matched nothing (exit 2,
    blaming --filter), and a "$"-anchored variable matched no row (Google Benchmark's names end in
    /manual_time)."""
    def run(env_filter, *args):
        env = dict(os.environ, BENCHMARK_FILTER=env_filter)
        out = tmp_path / f"r{len(list(tmp_path.iterdir()))}.json"
        proc = subprocess.run([str(BIN), "--device=host", "--quick", *args, f"--out={out}"],
                              capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return sorted({e["name"] for e in json.loads(out.read_text())["benchmarks"] if e["run_type"] == "iteration"})

    assert run("memory", "--filter=bandwidth/copy/kernel/bytes:4KiB$") == \
        ["bandwidth/copy/kernel/bytes:4KiB/manual_time"]
    assert run("bandwidth/copy/memcpy/bytes:4KiB$") == ["bandwidth/copy/memcpy/bytes:4KiB/manual_time"]


def test_a_leftover_device_all_marker_is_not_a_device_all_run(tmp_path):
    """GPUBENCH_DEVICE_ALL_CHILD left in a shell's environment made a run whose scope held none of
    the rows exit 4 silently (what a GPU of --device=all answers its parent); it names its parent."""
    env = dict(os.environ, GPUBENCH_DEVICE_ALL_CHILD="0")  # no process's parent is pid 0
    proc = subprocess.run([str(BIN), "--device=host", "--quick", "--row-scope=links",
                           "--filter=bandwidth/copy/kernel", f"--out={tmp_path / 'x.json'}"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines()[0].startswith("gpubench: ") and "matches no benchmark" in proc.stderr


@pytest.mark.parametrize("args, says", [
    (["--device=a\nb", "--list"], "gpubench: --device: 'a\\nb' is not auto, host, all or a device number"),
    (["--filter=x\x1b[31m(", "--list"], "gpubench: --filter: 'x\\x1b[31m(' is not a valid regular expression"),
    (["pos\x1bx\t"], "gpubench: unexpected argument 'pos\\x1bx\\t'"),
])
def test_control_characters_of_the_input_are_escaped_in_the_one_line(args, says):
    """A newline in --device made a two-line error, and ESC reached the terminal raw."""
    proc = subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    first, blank = proc.stderr.splitlines()[:2]
    assert first.startswith(says) and blank == "", proc.stderr
    assert "\x1b" not in proc.stderr


def test_a_filter_outside_the_validate_rows_says_so():
    """The memory rows exist; --validate leaves them out, which the line did not say."""
    proc = gpubench("--device=host", "--validate", "--filter=memory", "--list")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == \
        "gpubench: --filter=memory matches no benchmark the host backend runs among --validate's rows (see --list)"


def test_device_index_without_gpu_names_the_cause_and_past_the_last_is_refused():
    if has_cuda_device():
        assert gpubench("--device=0", "--list").returncode == 0
        past = gpubench("--device=999", "--list")
        assert past.returncode == 2 and "CUDA device" in past.stderr
        return
    proc = gpubench("--device=0", "--quick")
    assert proc.returncode == 2
    assert re.search(r"driver|no CUDA device|without CUDA", proc.stderr), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    seven = gpubench("--device=7", "--quick")
    assert seven.returncode == 2 and seven.stderr.strip()


def test_device_all_lists_the_cuda_rows_even_without_a_gpu():
    listed = gpubench("--device=all", "--list", "--filter=compute/hgemm")
    assert listed.returncode == 0, listed.stderr
    names = listed.stdout.split()
    assert names and all(n.startswith("compute/hgemm/") for n in names)
    assert names == gpubench("--device=0", "--list", "--filter=compute/hgemm").stdout.split()


def test_device_all_checks_the_files_it_writes_not_the_out_stem(tmp_path):
    # --device=all writes F's stem + ".deviceN.json", never F: an existing F is no reason to refuse.
    stem = tmp_path / "run.json"
    stem.write_text("{}")
    proc = gpubench("--device=all", f"--out={stem}", "--filter=bandwidth/copy/kernel", "--quick")
    assert "already exists" not in proc.stderr, proc.stderr
    assert stem.read_text() == "{}"
    if not has_cuda_device():
        assert proc.returncode == 2 and "--device=all" in proc.stderr
        return
    # With a GPU, GPU 0's own file existing is refused before anything runs.
    mine = tmp_path / "run.device0.json"
    mine.write_text("{}")
    again = gpubench("--device=all", f"--out={stem}", "--filter=bandwidth/copy/kernel", "--quick")
    assert again.returncode == 2 and "run.device0.json" in again.stderr and "already exists" in again.stderr


def test_auto_falls_back_to_host_with_one_line():
    proc = gpubench("--list", "--filter=bandwidth/copy/kernel")
    assert proc.returncode == 0
    notes = [line for line in proc.stderr.splitlines() if "running on the host" in line]
    assert len(notes) == (0 if has_cuda_device() else 1)


def test_version_and_help():
    v = gpubench("--version")
    assert v.returncode == 0 and re.match(r"^gpubench \d+\.\d+\.\d+ \(", v.stdout)
    h = gpubench("--help")
    assert h.returncode == 0 and "--filter=REGEX" in h.stdout


def test_concurrent_runs_into_one_store_all_land(tmp_path):
    """Four runs finishing in the same second: four results, no temporary file left."""
    import subprocess
    from conftest import BIN
    procs = [subprocess.Popen([str(BIN), "--device=host", "--quick", "--benchmark_repetitions=1",
                               "--filter=bandwidth/write/kernel/bytes:4KiB$", f"--results-dir={tmp_path}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    files = sorted(f.name for f in tmp_path.rglob("*") if f.is_file())
    assert len(files) == 4 and all(f.endswith(".json") and ".tmp." not in f for f in files), files


# SIGUSR1 (Slurm's --signal before a time limit) and SIGXCPU (ulimit -t) ended gpubench at once,
# leaving its temporary result
@pytest.mark.parametrize("sig, code, name", [(2, 130, "SIGINT"), (15, 143, "SIGTERM"), (1, 129, "SIGHUP"),
                                             (3, 131, "SIGQUIT"), (10, 138, "SIGUSR1"), (24, 152, "SIGXCPU")])
def test_a_signal_stops_the_run_and_leaves_nothing(tmp_path, sig, code, name):
    import signal
    import subprocess
    import time
    from conftest import BIN
    out = tmp_path / "r.json"
    p = subprocess.Popen([str(BIN), "--device=host", "--filter=bandwidth/copy/kernel", f"--out={out}"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The console's header: gpubench prints it once its stop handlers are in place (a fixed
    # sleep could end first on a loaded machine, and the default action would kill it).
    assert p.stdout.readline().startswith("gpubench "), "no header"
    time.sleep(0.5)
    p.send_signal(signal.Signals(sig))
    _, err = p.communicate(timeout=60)  # stops after the current sample, not at the end
    assert p.returncode == code, err
    assert f"gpubench: interrupted ({name}); no result written" in err
    assert list(tmp_path.iterdir()) == []  # neither the result nor its temporary file


def test_a_reader_that_goes_away_stops_the_run_and_leaves_nothing(tmp_path):
    """`gpubench ... | head -1`: the first write after the reader has gone raises SIGPIPE, which
    stops the run like SIGINT (its default action would kill gpubench with the result half written)."""
    import subprocess
    from conftest import BIN
    out = tmp_path / "r.json"
    p = subprocess.Popen([str(BIN), "--device=host", "--quick", "--filter=bandwidth/copy/kernel", f"--out={out}"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdout.readline()  # the header line, then the reader goes
    p.stdout.close()
    _, err = p.communicate(timeout=60)
    assert p.returncode == 141, err
    assert "gpubench: interrupted (SIGPIPE); no result written" in err
    assert list(tmp_path.iterdir()) == []


def test_a_hangup_ignored_by_the_parent_stays_ignored(tmp_path):
    """`nohup gpubench ... &`: nohup ignores SIGHUP before gpubench starts, and logging out must
    not stop the run (gpubench keeps a signal its parent ignored ignored)."""
    import signal
    import subprocess
    import time
    from conftest import BIN
    out = tmp_path / "r.json"
    p = subprocess.Popen([str(BIN), "--device=host", "--quick", "--benchmark_repetitions=1",
                          "--filter=bandwidth/copy/kernel/bytes:(4|64)KiB$", f"--out={out}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    time.sleep(1.0)
    p.send_signal(signal.SIGHUP)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert "interrupted" not in err and out.exists()


@pytest.mark.parametrize("store", [False, True])
def test_a_result_that_cannot_be_written_whole_is_not_published(tmp_path, store):
    """A full disk, as a file size limit makes it: Google Benchmark's reporter cannot say its
    writes failed, and a cut (or empty) file was published as the result with exit 0."""
    import resource
    import signal
    import subprocess
    from conftest import BIN

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    where = f"--results-dir={tmp_path}" if store else f"--out={tmp_path / 'r.json'}"
    p = subprocess.run([str(BIN), "--device=host", "--quick", "--benchmark_repetitions=3",
                        "--filter=bandwidth/copy/kernel/bytes:4KiB$", where],
                       capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert p.returncode == 2, p.stderr
    assert "gpubench: the result was not written whole (is the disk full?): " in p.stderr
    assert "nothing published" in p.stderr and "result: " not in p.stderr
    assert [f for f in tmp_path.rglob("*") if f.is_file()] == []


def test_a_file_size_limit_stops_the_run_once_not_as_a_second_signal(tmp_path):
    """`ulimit -f` with SIGXFSZ left to gpubench: every write past the limit raises it again, which
    read as a second signal ("stopped at once by a second signal", though nobody sent one)."""
    import resource
    from conftest import BIN

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))

    p = subprocess.run([str(BIN), "--device=host", "--quick", "--benchmark_repetitions=1",
                        "--benchmark_min_time=0.01", "--filter=bandwidth/copy/kernel/bytes:4KiB$",
                        f"--out={tmp_path / 'r.json'}"],
                       capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert p.returncode == 128 + 25, p.stderr  # SIGXFSZ
    assert "gpubench: interrupted (SIGXFSZ); no result written" in p.stderr
    assert "second signal" not in p.stderr
    assert [f for f in tmp_path.rglob("*") if f.is_file()] == []


def test_a_link_planted_where_the_context_side_file_goes_is_not_written_through(tmp_path):
    """The end-of-run context goes into the result through a side file beside it, whose name is
    the folder and the pid: a link left there had the result written into its target (lost), and
    the published result was that link."""
    from conftest import BIN

    victim = tmp_path / "victim.txt"
    victim.write_text("precious data\n")
    p = subprocess.run(["bash", "-c", 'ln -s victim.txt .gpubench-context.tmp.$$ && exec "$0" "$@"', str(BIN),
                        "--device=host", "--quick", "--benchmark_repetitions=1", "--benchmark_min_time=0.01",
                        "--filter=bandwidth/copy/kernel/bytes:4KiB$", "--out=r.json"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert victim.read_text() == "precious data\n"
    out = tmp_path / "r.json"
    assert out.is_file() and not out.is_symlink()
    assert "the memory at the end of the run is not in the result's context (cannot create" in p.stderr
    assert json.loads(out.read_text())["benchmarks"]


def test_an_out_path_holding_a_dangling_link_is_refused_before_the_run(tmp_path):
    """Publishing onto a symbolic link fails even when its target is missing: refused at once, not
    after the whole run."""
    link = tmp_path / "r.json"
    link.symlink_to(tmp_path / "missing-target.json")
    proc = gpubench("--device=host", "--quick", "--filter=bandwidth/copy/kernel", f"--out={link}", timeout=20)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == f"gpubench: --out: '{link}' already exists (result files are never overwritten)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


@pytest.mark.parametrize("name, says", [
    ("-", "gpubench: --out=-: --out names a file; for the JSON on standard output give --benchmark_format=json"),
    ("new\nline.json", "gpubench: --out: the file name holds a control character (a line break?)"),
])
def test_an_out_name_that_is_not_a_plain_file_name_is_refused(tmp_path, name, says):
    """--out=- made a file named "-" (stdout to many tools), and a line break in the name split
    the "result: PATH" line that run.sh reads."""
    proc = subprocess.run([str(BIN), "--device=host", "--quick", "--filter=bandwidth/copy/kernel/bytes:4KiB$",
                           f"--out={name}"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == says, proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["--list", "--device=host"], ["--list", "--device=0"]])
def test_an_answer_that_cannot_be_written_is_an_error(args):
    """`gpubench --list > names.txt` on a full disk gave an empty list and exit 0: the answer is
    gpubench's output, so a failed write is one line and exit 2 (a reader that stopped early,
    `| head`, is not an error)."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run([str(BIN), *args], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines()[-1] == "gpubench: cannot write the answer to standard output: No space left on device"
    head = subprocess.run(f"'{BIN}' --list --device=host | head -n 1", shell=True, capture_output=True, text=True,
                          timeout=60)
    assert head.returncode == 0 and head.stdout.count("\n") == 1 and head.stderr == "", head.stderr


def test_benchmark_time_unit_sets_the_unit_of_the_times_in_the_file(tmp_path):
    """--benchmark_time_unit was checked, then overridden by the unit every row set (us): the
    file said us whatever was asked. Without it the times are in us."""
    for unit in ("ms", None):
        out = tmp_path / f"{unit}.json"
        args = [f"--benchmark_time_unit={unit}"] if unit else []
        proc = gpubench("--device=host", "--quick", "--filter=bandwidth/copy/kernel/bytes:4KiB$", f"--out={out}", *args)
        assert proc.returncode == 0, proc.stderr
        rows = [e for e in json.loads(out.read_text())["benchmarks"] if e["run_type"] == "iteration"]
        assert rows and {e["time_unit"] for e in rows} == {unit or "us"}
        for e in rows:  # real_time is one operation's time in that unit: bytes / (GB/s)
            seconds = e["real_time"] / {"ms": 1e3, "us": 1e6}[unit or "us"]
            assert seconds * e["GB/s"] * 1e9 == pytest.approx(e["working_set_bytes"], rel=1e-3)


def test_an_out_name_at_the_file_system_limit_is_written_and_one_past_it_refused_at_once(tmp_path):
    """A 255-byte name is a valid file name, but '<name>.tmp.<pid>' is not: such a run used to fail
    at its very end ("File name too long"). It now writes through a short temporary name beside it;
    a name past the limit is refused before the run."""
    most = os.pathconf(tmp_path, "PC_NAME_MAX")  # 255 on ext4, tmpfs, xfs
    at_limit = tmp_path / ("r" * (most - 5) + ".json")
    proc = gpubench("--device=host", "--quick", "--filter=bandwidth/copy/kernel/bytes:4KiB$", f"--out={at_limit}")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(at_limit.read_text())["benchmarks"]
    assert [p.name for p in tmp_path.iterdir()] == [at_limit.name]  # no temporary left beside it
    past = tmp_path / ("s" * (most - 4) + ".json")
    proc = gpubench("--device=host", "--quick", "--filter=bandwidth/copy/kernel", f"--out={past}", timeout=20)
    assert proc.returncode == 2
    assert f"file name is longer than the {most} bytes" in proc.stderr.splitlines()[0], proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == [at_limit.name]


def test_an_out_name_that_leaves_room_for_the_temporary_name_only_keeps_its_leak_check(tmp_path):
    """'<name>.tmp.<pid>' fitted but the side file '<name>.tmp.<pid>.context' did not: the run
    published its result without memory_leak_check (its own naming, not the user's input)."""
    most = os.pathconf(tmp_path, "PC_NAME_MAX")
    temporary_suffix = len(f".tmp.{2 ** 22}")  # the longest pid Linux hands out
    out = tmp_path / ("r" * (most - temporary_suffix - 5) + ".json")
    proc = gpubench("--device=host", "--quick", "--filter=bandwidth/copy/kernel/bytes:4KiB$", f"--out={out}")
    assert proc.returncode == 0, proc.stderr
    assert "not in the result's context" not in proc.stderr, proc.stderr
    assert json.loads(out.read_text())["context"]["memory_leak_check"].startswith("ok: ")
    assert [p.name for p in tmp_path.iterdir()] == [out.name]


def test_a_second_signal_ends_a_run_whose_sample_never_finishes(tmp_path):
    """A hung kernel never finishes its sample, so the first signal's graceful stop never comes:
    the second SIGTERM ends the process at once (gpubench_stuck: tests/e2e/gpubench_stuck.cpp)."""
    import signal
    import subprocess
    import time
    from conftest import E2E_DIR
    stuck = E2E_DIR / "gpubench_stuck"
    assert stuck.exists(), f"{stuck} not found: build the gpubench_stuck target beside gpubench"
    p = subprocess.Popen([str(stuck), "--device=host", "--quick", "--filter=bandwidth/write/kernel/bytes:4KiB$",
                          f"--out={tmp_path / 'r.json'}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    assert p.stdout.readline().startswith("gpubench "), "no header"  # its stop handlers are in place
    time.sleep(2.0)  # in the hanging sample by now
    p.send_signal(signal.SIGTERM)
    time.sleep(1.0)
    assert p.poll() is None, "the first signal waits for the current sample"
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 143, err
    assert "stopped at once by a second signal; no result written" in err
    assert list(tmp_path.iterdir()) == []  # the partial result removed, nothing half written


def test_filters_are_matched_in_linear_time():
    """A pattern std::regex backtracks on for ever is answered at once (RE2 matches the names;
    Google Benchmark never sees the pattern)."""
    proc = gpubench("--device=host", "--list", "--filter=(.*)*Z", timeout=20)
    assert proc.returncode == 2 and "matches no benchmark" in proc.stderr.splitlines()[0]
    proc = gpubench("--device=host", "--list", "--quick", "--filter=^(a|aa)*(a|aa)*(a|aa)*c$|bandwidth/copy/kernel",
                    timeout=20)
    assert proc.returncode == 0 and proc.stdout.split()
    assert all(n.startswith("bandwidth/copy/kernel/") for n in proc.stdout.split())


def test_a_negative_filter_excludes():
    names = gpubench("--device=host", "--list", "--quick", "--filter=-bandwidth").stdout.split()
    assert names and not any(n.startswith("bandwidth/") for n in names)


def test_an_interrupted_first_run_of_a_device_leaves_no_empty_folder_in_the_store(tmp_path):
    import signal
    import time

    store = tmp_path / "store"
    store.mkdir()
    proc = subprocess.Popen([str(BIN), "--device=host", "--quick", "--filter=bandwidth/copy/kernel/bytes:4KiB$",
                             f"--results-dir={store}", "--benchmark_min_warmup_time=20"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any(store.iterdir()):  # the device key's folder: the run is under way
        assert time.monotonic() < deadline and proc.poll() is None, "the run never started"
        time.sleep(0.05)
    # The console's header: printed once the stop handlers are in place (the folder comes first).
    assert proc.stdout.readline().startswith("gpubench "), "no header"
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert list(store.iterdir()) == []
