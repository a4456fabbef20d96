#!/usr/bin/env bash
# The device kit: everything gpubench needs to learn from a lent GPU machine (no internet, a few
# minutes per command, at most 8 files back) in stages that each end well inside 8 minutes.
#
#   scripts/device_kit.sh prepare [BUILD_DIR]  here: build gpubench and gpubench_kernel_check (a
#                                              new build folder: sm_80, sm_90, sm_90a; an existing
#                                              one keeps its settings), fill .kit/ with them, the
#                                              Google Benchmark library they load, what a build
#                                              there needs and the sources' fingerprint; check what
#                                              travels fits (64 MiB)
#   scripts/device_kit.sh STAGE OUTDIR         there (carry .kit): run one stage, leave
#                                              OUTDIR/STAGE.tar.gz (every log, result JSON, CSV)
#                                              and OUTDIR/STAGE.txt (the summary, rewritten after
#                                              every step) - two files a stage
#
# Environment: GPUBENCH_KIT_STAGE_SECONDS (480) a stage's time, GPUBENCH_KIT_DEADLINE (epoch
# seconds) the end of every stage of a chained command, GPUBENCH_KIT_SKIP_WGMMA=1 no wgmma rows
# or profiles, GPUBENCH_KIT_WGMMA_CHECK_SECONDS (60) the wgmma kernel check's limit.
#   scripts/device_kit.sh pack WORKDIR OUTDIR  the packing a stage ends with, on its own
#
# Stages (each samples clocks, power and temperature with nvidia-smi while it runs):
#   smoke      the machine (nvidia-smi, driver, toolkit, libraries), every hand-written kernel
#              once at odd sizes, verified (the Hopper probe of the wgmma GEMM's building blocks,
#              then the wgmma kernels, each in a run of its own), plain and
#              under compute-sanitizer memcheck, racecheck, synccheck and initcheck; gpubench
#              --device=0 --quick over every family, and the same quick bandwidth run under
#              memcheck
#   bandwidth  the full `gpubench --filter=bandwidth` with its wall time, and its roofline PNG
#   compute    the full compute family (the wgmma rows first, on their own), then the roofline
#              family
#   memory     the full memory-management family (allocation, pools, unified memory, overlap,
#              precision) and its plots
#   validate   the acceptance run (gpubench --validate and scripts/validate.py: a verdict per
#              expected band, markdown, JUnit and JSON) with its wall time, then the same
#              through --device=all (every GPU; the peer-to-peer matrix where there are two)
#   ncu        Nsight Compute on copy at 1 GiB, strided at strides 8 and 32, gather at 256 MiB
#              (DRAM bytes against the work model, L2 hit rate), block_set_read at 64 KiB (L1
#              hit rate), the FP16 GEMMs (mma.sync, the
#              Hopper wgmma kernel in 2 x 1 clusters and without, cuBLAS's own kernel) and SGEMM
#              at 4096 and 8192 (pipe utilization, L2 and shared-memory throughput, stall reasons)
#   wgmma      the Hopper GEMM alone, the loop for fixing it: the probe of its
#              building blocks, its checks, then its rows (with and without clusters, TMA or
#              direct stores) and a profile of each and of cuBLAS's kernel at 4096
#
# Exit status: 0 the stage ran (read STAGE.txt for what it found), 2 bad usage or no GPU.
set -euo pipefail
KIT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KIT_DIR="${GPUBENCH_KIT_DIR:-$KIT_ROOT/.kit}"
KIT_LIMIT_MIB="${GPUBENCH_KIT_LIMIT_MIB:-64}"  # the device tool's limit on what travels
KIT_MAX_FILES=8                               # and on the files that come back
# A stage stops starting work once this many seconds have passed, so that it always packs what it
# has before the device tool's 10-minute limit on one command. Stages chained in one command share
# that limit: GPUBENCH_KIT_DEADLINE (seconds since the epoch) ends every stage's work by then.
STAGE_SECONDS="${GPUBENCH_KIT_STAGE_SECONDS:-480}"
DEADLINE="${GPUBENCH_KIT_DEADLINE:-0}"
# GPUBENCH_KIT_SKIP_WGMMA=1: leave the Hopper wgmma rows and profiles out (after a smoke stage
# whose wgmma check hung or failed, so a later stage does not spend its time on them again).
SKIP_WGMMA="${GPUBENCH_KIT_SKIP_WGMMA:-0}"
WGMMA_CHECK_SECONDS="${GPUBENCH_KIT_WGMMA_CHECK_SECONDS:-60}"
# The Hopper wgmma GEMM rows, and every other compute row (together: all of them, each once; a
# test checks it). The wgmma kernels had never run on a GPU when the kit was written: they run on
# their own, so that a hang costs one time limit and no other row's result.
KIT_WGMMA_ROWS='^compute/[^/]+/wgmma'
# Those rows in two runs, the one-block-per-tile kernel first: a hang of the cluster kernel then
# costs the clustered rows only.
KIT_WGMMA_UNCLUSTERED_ROWS='^compute/[^/]+/wgmma_unclustered/'
KIT_WGMMA_CLUSTERED_ROWS='^compute/[^/]+/wgmma(_direct_store)?/'
KIT_OTHER_COMPUTE_ROWS='^compute/(sgemm|hgemm/(kernel|cublas|wmma)|bf16gemm/cublas|fp8gemm|peak_)'
LAST_RC=0   # the exit status of the last timed command
RUNNING=""  # the pid of the timed command running now

die() {
  printf 'device_kit: %s\n' "$*" >&2
  exit 2
}
usage() { sed -n '2,/^# Exit status/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

# whole_number NAME VALUE MIN MAX: exit 2 naming NAME unless VALUE is a whole number from MIN to
# MAX written without leading zeros (bash reads 08 as a bad octal number, mid-stage).
whole_number() {
  if [[ ! "$2" =~ ^(0|[1-9][0-9]{0,11})$ ]] || (($2 < $3 || $2 > $4)); then
    die "$1=$2 is not a whole number from $3 to $4"
  fi
}

# The settings, checked before any work: a bad one is one line and exit 2, never a default.
check_settings() {
  local name
  for name in GPUBENCH_KIT_DIR GPUBENCH_KIT_LIMIT_MIB GPUBENCH_KIT_STAGE_SECONDS GPUBENCH_KIT_DEADLINE \
    GPUBENCH_KIT_SKIP_WGMMA GPUBENCH_KIT_WGMMA_CHECK_SECONDS; do
    if [[ -n "${!name+set}" && -z "${!name}" ]]; then die "$name is set but empty (unset it for the default)"; fi
  done
  whole_number GPUBENCH_KIT_LIMIT_MIB "$KIT_LIMIT_MIB" 1 1048576
  whole_number GPUBENCH_KIT_STAGE_SECONDS "$STAGE_SECONDS" 1 86400
  whole_number GPUBENCH_KIT_DEADLINE "$DEADLINE" 0 99999999999
  whole_number GPUBENCH_KIT_WGMMA_CHECK_SECONDS "$WGMMA_CHECK_SECONDS" 1 3600
  [[ "$SKIP_WGMMA" == 0 || "$SKIP_WGMMA" == 1 ]] || die "GPUBENCH_KIT_SKIP_WGMMA=$SKIP_WGMMA is not 0 or 1"
  # Absolute: the source fingerprint is taken from the repository's root.
  [[ "$KIT_DIR" == /* ]] || KIT_DIR="$PWD/$KIT_DIR"
}

# --- here: prepare what travels -------------------------------------------------------------

# One hash of the contents of the files .kit/sources.list names (the same here and there: no git
# needed there).
source_fingerprint() {
  (cd "$KIT_ROOT" && tr '\n' '\0' <"$KIT_DIR/sources.list" | xargs -0 -r sha256sum | sha256sum | cut -d' ' -f1)
}

# Bytes of what the device tool sends: tracked files, untracked files git does not ignore, the
# kit folder (carried).
travelling_bytes() {
  local tree kit
  tree="$(cd "$KIT_ROOT" && git ls-files -z --cached --others --exclude-standard |
    xargs -0 -r stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')"
  kit="$(du -sb "$KIT_DIR" 2>/dev/null | cut -f1)"
  echo $((tree + ${kit:-0}))
}

prepare() {
  local build="${1:-$KIT_ROOT/build-kit}"
  command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]] || die "prepare needs the CUDA toolkit (nvcc)"
  # prepare replaces the kit folder whole: never a folder that holds anything but a kit.
  if [[ -L "$KIT_DIR" || (-e "$KIT_DIR" && ! -d "$KIT_DIR") ]]; then
    die "GPUBENCH_KIT_DIR=$KIT_DIR is not a folder; prepare would replace it"
  fi
  if [[ -d "$KIT_DIR" && -n "$(ls -A "$KIT_DIR")" && ! -f "$KIT_DIR/sources.sha256" ]]; then
    die "GPUBENCH_KIT_DIR=$KIT_DIR holds files but no kit (no sources.sha256); prepare replaces the whole folder: name a new or empty one"
  fi
  if [[ ! -f "$build/CMakeCache.txt" ]]; then
    local gen=()
    command -v ninja >/dev/null && gen=(-G Ninja)
    cmake -S "$KIT_ROOT" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DGPUBENCH_TESTS=OFF \
      -DGPUBENCH_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=80;90" >&2 || die "cmake configure failed"
  fi
  cmake --build "$build" --target gpubench gpubench_kernel_check -j "$(nproc)" >&2 || die "build failed"
  rm -rf "$KIT_DIR"
  mkdir -p "$KIT_DIR/bin" "$KIT_DIR/lib" "$KIT_DIR/deps"
  cp "$build/gpubench" "$build/harness/gpubench_kernel_check" "$KIT_DIR/bin/"
  # The Google Benchmark shared library the binaries load (Debian names it libbenchmark.so.1debian);
  # the CUDA runtime and cuBLAS come from the machine's own CUDA 13 toolkit.
  local lib
  while read -r lib; do
    [[ -n "$lib" ]] && cp -L "$lib" "$KIT_DIR/lib/"
  done < <(ldd "$KIT_DIR/bin/gpubench" | awk '/libbenchmark/ {print $3}')
  # For a build there, should the machine's C library be older than this one's: Google
  # Benchmark's headers, library and CMake package, in their usual layout.
  local cfg
  cfg="$(dirname "$(find /usr/lib /usr/local/lib -path '*cmake/benchmark/benchmarkConfig.cmake' 2>/dev/null | head -n 1)")"
  if [[ -d "$cfg" && -d /usr/include/benchmark ]]; then
    local libdir prefix
    libdir="$(dirname "$(dirname "$cfg")")"
    prefix="$(dirname "$(dirname "$libdir")")"
    mkdir -p "$KIT_DIR/deps$libdir/cmake" "$KIT_DIR/deps$prefix/include"
    cp -a "$cfg" "$KIT_DIR/deps$libdir/cmake/"
    cp -a /usr/include/benchmark "$KIT_DIR/deps$prefix/include/"
    cp -a "$libdir"/libbenchmark.so* "$KIT_DIR/deps$libdir/" 2>/dev/null || true
    cp -a "$libdir"/libbenchmark_main.a "$KIT_DIR/deps$libdir/" 2>/dev/null || true
    echo "deps${libdir}/cmake/benchmark" >"$KIT_DIR/benchmark_dir"
  fi
  # RE2 (the --filter matcher), linked statically: its headers and archive for a build there.
  if [[ -f /usr/include/re2/re2.h ]]; then
    local re2lib
    re2lib="$(find /usr/lib /usr/local/lib -name libre2.a 2>/dev/null | head -n 1)"
    if [[ -n "$re2lib" ]]; then
      mkdir -p "$KIT_DIR/deps/re2/include" "$KIT_DIR/deps/re2/lib"
      cp -a /usr/include/re2 "$KIT_DIR/deps/re2/include/"
      cp "$re2lib" "$KIT_DIR/deps/re2/lib/"
    fi
  fi
  (cd "$KIT_ROOT" && git rev-parse --short=12 HEAD 2>/dev/null || echo unknown) >"$KIT_DIR/revision"
  # The sources the binaries were built from, and their fingerprint: a stage there refuses a kit
  # built from other sources (a later edit, a prepare not run again) before spending device time.
  (cd "$KIT_ROOT" && git ls-files -- CMakeLists.txt cmake harness families kernels) >"$KIT_DIR/sources.list"
  source_fingerprint >"$KIT_DIR/sources.sha256"
  local bytes limit
  bytes="$(travelling_bytes)"
  limit=$((KIT_LIMIT_MIB * 1024 * 1024))
  if ((bytes > limit)); then
    die "what travels is $((bytes / 1024 / 1024)) MiB, over the ${KIT_LIMIT_MIB} MiB limit"
  fi
  echo "kit: $KIT_DIR ($(du -sh "$KIT_DIR" | cut -f1)); travelling in all: $((bytes / 1024)) KiB of ${KIT_LIMIT_MIB} MiB"
  echo "carry: .kit   then there: scripts/device_kit.sh smoke \$OUT (bandwidth, compute, memory, validate, ncu)"
}

# --- there: the stages --------------------------------------------------------------------

pack() {
  local work="$1" out="$2" stage
  [[ -d "$work" ]] || die "pack: '$work' is not a directory"
  work="$(cd "$work" && pwd -P)"
  [[ "$work" != / ]] || die "pack: '$1' is the root folder, not a stage's folder"
  mkdir -p "$out" 2>/dev/null || die "pack: cannot create '$out'"
  local out_real
  out_real="$(cd "$out" && pwd -P)"
  [[ "$out_real" != "$work" && "$out_real" != "$work"/* ]] || die "pack: '$out' is inside the stage's folder '$1'"
  stage="$(basename "$work")"
  [[ ! -e "$out/$stage.tar.gz" ]] || die "pack: '$out' already holds $stage.tar.gz; results are never overwritten"
  # Counted before anything is written: files already there, plus the archive and the summary.
  local n
  n=$(($(find "$out" -maxdepth 1 -type f ! -name "$stage.tar.gz" ! -name "$stage.txt" | wc -l) + 1))
  [[ -f "$work/summary.txt" ]] && n=$((n + 1))
  ((n <= KIT_MAX_FILES)) || die "pack: $n files in $out, more than the $KIT_MAX_FILES that come back"
  tar -czf "$out/$stage.tar.gz" -C "$(dirname "$work")" "$stage"
  if [[ -f "$work/summary.txt" ]]; then cp "$work/summary.txt" "$out/$stage.txt"; fi
}

# The binaries to run: the carried build when it loads here, else a build made here from the
# working tree (native architecture) with the carried Google Benchmark.
BIN=""
choose_binaries() {
  export LD_LIBRARY_PATH="$KIT_DIR/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

  if "$KIT_DIR/bin/gpubench" --version >/dev/null 2>&1 &&
    ! ldd "$KIT_DIR/bin/gpubench_kernel_check" 2>&1 | grep -q 'not found'; then
    BIN="$KIT_DIR/bin"
    echo "binaries: carried (built at $(cat "$KIT_DIR/revision" 2>/dev/null || echo '?'))"
    return
  fi
  echo "binaries: the carried build does not load here; building from the working tree"
  ldd "$KIT_DIR/bin/gpubench" 2>&1 | grep -i 'not found' || true
  local bdir="$KIT_ROOT/build-device" bm=()
  [[ -f "$KIT_DIR/benchmark_dir" ]] && bm=("-Dbenchmark_DIR=$KIT_DIR/$(cat "$KIT_DIR/benchmark_dir")")
  [[ -d "$KIT_DIR/deps/re2" ]] && bm+=("-DRE2_ROOT=$KIT_DIR/deps/re2")
  cmake -S "$KIT_ROOT" -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUBENCH_TESTS=OFF -DGPUBENCH_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=native "${bm[@]}" >"$WORK/build.log" 2>&1 &&
    cmake --build "$bdir" --target gpubench gpubench_kernel_check -j "$(nproc)" >>"$WORK/build.log" 2>&1 ||
    die "the build there failed (build.log)"
  ln -sf "$bdir/gpubench" "$bdir/harness/gpubench"  # gpubench sits at the top of the build tree
  BIN="$bdir/harness"
}

TELEMETRY_PID=""
start_telemetry() {
  local reasons=clocks_event_reasons.active
  timeout 20 nvidia-smi --help-query-gpu 2>/dev/null | grep -q "$reasons" || reasons=clocks_throttle_reasons.active
  nvidia-smi --query-gpu="timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,temperature.memory,$reasons,utilization.gpu,memory.used" \
    --format=csv -lms 500 >"$WORK/telemetry.csv" 2>"$WORK/telemetry.err" &
  TELEMETRY_PID=$!
}
stop_telemetry() {
  if [[ -n "$TELEMETRY_PID" ]]; then
    kill "$TELEMETRY_PID" 2>/dev/null || true
    # A sampler stuck in the driver does not end on TERM: KILL after 5 s, so the stage still packs.
    local i
    for i in 1 2 3 4 5; do kill -0 "$TELEMETRY_PID" 2>/dev/null || break; sleep 1; done
    kill -9 "$TELEMETRY_PID" 2>/dev/null || true
    wait "$TELEMETRY_PID" 2>/dev/null || true
  fi
  TELEMETRY_PID=""
  # min / median / max of SM clock, power and temperature over the stage
  python3 - "$WORK/telemetry.csv" >>"$WORK/summary.txt" 2>/dev/null <<'EOF' || true
import csv, statistics, sys
rows = list(csv.reader(open(sys.argv[1])))
if len(rows) < 2:
    sys.exit(0)
head = [h.strip() for h in rows[0]]
def col(i):
    out = []
    for r in rows[1:]:
        try:
            out.append(float(r[i].strip().split()[0]))
        except (ValueError, IndexError):
            pass
    return out
print("telemetry (%d samples, every 0.5 s): min / median / max" % (len(rows) - 1))
for i, h in enumerate(head):
    v = col(i)
    if v and h != "timestamp":
        print("  %-36s %10.1f %10.1f %10.1f" % (h, min(v), statistics.median(v), max(v)))
EOF
}

# timed NAME SECONDS CMD...: runs CMD with a time limit, its output in NAME.log, its exit status and
# wall time in the summary.
timed() {
  local name="$1" limit="$2"
  shift 2
  local t0 t1 rc=0 left
  left=$((STAGE_SECONDS - SECONDS - 25))
  if ((DEADLINE > 0)); then
    local by_deadline=$((DEADLINE - $(date +%s) - 25))
    ((by_deadline < left)) && left=$by_deadline
  fi
  if ((left < 10)); then
    printf '%-28s skipped: the stage ran out of time\n' "$name" >>"$WORK/summary.txt"
    : >"$WORK/$name.log"
    LAST_RC=0
    return 0
  fi
  ((limit > left)) && limit=$left
  t0="$(date +%s.%N)"
  # TERM at the limit (gpubench stops after its current sample), KILL 10 s later (a hung kernel's
  # sample never ends): the stage goes on either way.
  # In the background and waited for, so that a TERM to the stage is handled at once (timeout puts
  # the command in a process group of its own, which the TERM does not reach): see run_stage.
  timeout -k 10 "$limit" "$@" >"$WORK/$name.log" 2>&1 &
  RUNNING=$!
  wait "$RUNNING" || rc=$?
  RUNNING=""
  LAST_RC=$rc
  t1="$(date +%s.%N)"
  printf '%-28s exit %-3s %7.1f s%s\n' "$name" "$rc" "$(awk "BEGIN {print $t1 - $t0}")" \
    "$( ((rc == 124 || rc == 137)) && echo "  (stopped at the ${limit} s limit)")" >>"$WORK/summary.txt"
  save_summary
  return 0
}

# The summary so far into OUTDIR (STAGE.txt), after every step: should the command be killed
# before the stage packs, what it found up to there still comes back.
save_summary() {
  [[ -n "${KIT_OUT:-}" ]] && cp "$WORK/summary.txt" "$KIT_OUT/$(basename "$WORK").txt" 2>/dev/null || true
}

# The result file a gpubench run published (its "result: PATH" line), or nothing.
result_of() { sed -n 's/^result: //p' "$WORK/$1.log" 2>/dev/null | tail -n 1 || true; }

# Per benchmark of a result: name, median GB/s or TFLOPS, % of peak, error.
result_table() {
  python3 - "$@" <<'EOF' || true
import json, statistics, sys
from collections import defaultdict
for path in sys.argv[1:]:
    d = json.load(open(path))
    c = d.get("context", {})
    print(f"{path}: backend {c.get('backend')}, device {c.get('device_name')}")
    by = defaultdict(list)
    errors = {}
    for b in d.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            continue
        name = b.get("run_name", b["name"])
        if b.get("error_occurred"):
            errors[name] = b.get("error_message", "")
            continue
        by[name].append(b)
    for name, runs in by.items():
        def med(k):
            v = [r[k] for r in runs if k in r]
            return statistics.median(v) if v else None
        rate = med("TFLOPS")
        unit = "TFLOPS"
        if rate is None or "GB/s" in runs[0] and not name.startswith(("compute/", "roofline/")):
            rate, unit = med("GB/s"), "GB/s"
        pct = med("pct_of_peak")
        extra = ""
        if med("latency_ns") is not None:
            extra = f"  latency {med('latency_ns'):.1f} ns"
        if med("latency_us") is not None:
            extra = f"  latency {med('latency_us'):.2f} us"
        if med("pct_of_cublas") is not None:
            extra += f"  {med('pct_of_cublas'):.1f} % of cuBLAS"
        capped = sum(1 for r in runs if r.get("power_capped") == 1)
        if capped:
            extra += f"  power-capped {capped}/{len(runs)}"
        if any(r.get("throttled") == 1 for r in runs):
            extra += "  THROTTLED"
        print(f"  {name:64s} {rate if rate is not None else float('nan'):10.2f} {unit:6s}"
              f" {'' if pct is None else f'{pct:6.1f} % of peak'}{extra}")
    for name, msg in errors.items():
        print(f"  {name:64s} ERROR {msg}")
EOF
}

# The Hopper probe's and the wgmma GEMM checks' lines (results and diagnoses; the last
# "checking" line names a check that hung), for a stage's summary.
wgmma_checks_summary() {
  local log
  echo "== Hopper probe (the wgmma GEMM's building blocks)"
  grep -E '^(ok|FAIL|info|[0-9]+ of [0-9]+ kernel checks)' "$WORK/wgmma_probe.log" | head -n 60 || true
  echo "== kernel checks of the wgmma kernels"
  log="$WORK/kernel_check_wgmma.log"
  grep -E '^(ok|FAIL|info|[0-9]+ of [0-9]+ kernel checks)' "$log" | head -n 40 || true
  grep '^checking' "$log" | tail -n 1 || true
}

stage_smoke() {
  {
    echo "== machine"
    uname -r
    timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm,clocks.max.mem,power.limit,ecc.mode.current --format=csv 2>&1
    nvcc --version 2>&1 | tail -n 1 || true
    compute-sanitizer --version 2>&1 | grep -m 1 -i version || true
    ncu --version 2>&1 | tail -n 1 || true
    echo "binaries: $BIN"
  } >>"$WORK/summary.txt" 2>&1
  timeout 20 nvidia-smi -q >"$WORK/nvidia-smi-q.txt" 2>&1 || true
  ldd "$BIN/gpubench" >"$WORK/ldd.txt" 2>&1 || true
  timed kernel_check 120 "$BIN/gpubench_kernel_check" -wgmma
  # The Hopper probe (families/gemm/hopper_probe.h): the wgmma GEMM's building blocks alone, each
  # wait bounded, in a process of its own (a fault there is sticky only there). On a wrong answer
  # its "info" lines say where the hardware put what and which descriptor encoding is right.
  timed wgmma_probe 60 "$BIN/gpubench_kernel_check" wgmma_probe
  # The wgmma kernels' checks on their own (KIT_WGMMA_ROWS): if they do not finish, the rest of
  # the stage leaves them out and says so (the log's last "checking" line names the one that hung).
  timed kernel_check_wgmma "$WGMMA_CHECK_SECONDS" "$BIN/gpubench_kernel_check" hgemm_wgmma
  local checks=() quick=()
  if ((LAST_RC == 124 || LAST_RC == 137)); then
    checks=(-wgmma)
    quick=(--filter=-wgmma)
    echo "wgmma: its kernel check did not finish; left out of the sanitizers and the quick run (later stages: GPUBENCH_KIT_SKIP_WGMMA=1)" >>"$WORK/summary.txt"
  elif ((LAST_RC != 0)); then
    # A wrong result or an error (an illegal address is sticky: every later row of the quick run
    # would be skipped as "device lost").
    checks=(-wgmma)
    quick=(--filter=-wgmma)
    echo "wgmma: its kernel check failed (exit $LAST_RC); left out of the sanitizers and the quick run (later stages: GPUBENCH_KIT_SKIP_WGMMA=1)" >>"$WORK/summary.txt"
  fi
  # The quick run of every family before the sanitizers: it is the stage's measurement (the
  # --quick time, the first rows of every family), and the sanitizers over kernels they have not
  # run before (the wgmma GEMM: TMA, clusters) may take what is left of the stage.
  mkdir -p "$WORK/results"
  timed quick_all 240 "$BIN/gpubench" --device=0 --quick "${quick[@]}" --results-dir="$WORK/results"
  # Where its time went (the measurement-method issue's 10-second goal for --quick), at once: the
  # sanitizers may take the rest of the stage.
  local quick_result
  quick_result="$(result_of quick_all)"
  if [[ -n "$quick_result" ]]; then
    timed run_cost_quick 60 python3 "$KIT_ROOT/scripts/run_cost.py" "$quick_result" --top 10
    { echo "== scripts/run_cost.py (gpubench --quick)"; cat "$WORK/run_cost_quick.log"; } >>"$WORK/summary.txt" 2>&1 || true
    save_summary
  fi
  # The probe's waits give up after a bound meant for the bare GPU; under a sanitizer's
  # instrumentation it could give up on a right answer, so the sanitizers leave it out (the GEMM
  # they check uses the same building blocks).
  if ((${#checks[@]} == 0)); then checks=(-wgmma_probe); fi
  local tool
  for tool in memcheck racecheck synccheck initcheck; do
    local extra=()
    [[ $tool == memcheck ]] && extra=(--leak-check full)
    timed "sanitizer_$tool" 90 compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 9 \
      "$BIN/gpubench_kernel_check" "${checks[@]}"
  done
  timed quick_bandwidth_memcheck 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN/gpubench" \
    --device=0 --quick --filter=bandwidth/ --benchmark_repetitions=1 --benchmark_min_time=0.001 --out="$WORK/memcheck_run.json"
  {
    echo "== kernel checks"
    tail -n 3 "$WORK/kernel_check.log"
    grep FAIL "$WORK/kernel_check.log" || true
    wgmma_checks_summary
    for tool in memcheck racecheck synccheck initcheck; do
      echo "== compute-sanitizer $tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY' "$WORK/sanitizer_$tool.log" | tr '\n' ' ')"
    done
    echo "== memcheck over gpubench --quick --filter=bandwidth/: $(grep -E 'ERROR SUMMARY' "$WORK/quick_bandwidth_memcheck.log" | tr '\n' ' ')"
    echo "== gpubench --quick (every family)"
    grep -E '^(gpubench|result)' "$WORK/quick_all.log" || true
    local r
    r="$(result_of quick_all)"
    if [[ -n "$r" ]]; then result_table "$r"; fi
  } >>"$WORK/summary.txt" 2>&1
}

stage_bandwidth() {
  mkdir -p "$WORK/results"
  timed bandwidth 480 "$BIN/gpubench" --device=0 --filter=bandwidth --results-dir="$WORK/results"
  local r
  r="$(result_of bandwidth)"
  {
    echo "== gpubench --filter=bandwidth"
    grep -E '^(gpubench|result)' "$WORK/bandwidth.log" || true
    if [[ -n "$r" ]]; then result_table "$r"; fi
  } >>"$WORK/summary.txt" 2>&1
  if [[ -n "$r" ]]; then
    # Where the run's wall time went (the measurement-method issue's 60-second goal), beside the
    # newest committed full (not --quick) bandwidth run of this device key with the cost counters.
    local base
    base="$(grep -l '"wall_s"' "$KIT_ROOT/results/$(basename "$(dirname "$r")")"/*.json 2>/dev/null |
      xargs -r grep -l '"bandwidth/copy/kernel/' | xargs -r grep -L '"quick": "true"' | sort | tail -n 1 || true)"
    timed run_cost 60 python3 "$KIT_ROOT/scripts/run_cost.py" "$r" --top 15 ${base:+--baseline "$base"}
    ((LAST_RC == 0)) || timed run_cost 60 python3 "$KIT_ROOT/scripts/run_cost.py" "$r" --top 15
    { echo "== scripts/run_cost.py"; cat "$WORK/run_cost.log"; } >>"$WORK/summary.txt" 2>&1 || true
    timed roofline_png 60 python3 "$KIT_ROOT/scripts/roofline.py" "$r" --out "$WORK/roofline.png"
    timed plots 60 python3 "$KIT_ROOT/scripts/plot.py" "$r" --out-dir "$WORK/plots"
  fi
  # The quick bandwidth run's wall time, into a results folder of its own (the smoke stage's
  # quick_all times --quick over every family).
  mkdir -p "$WORK/results_quick"
  timed bandwidth_quick 60 "$BIN/gpubench" --device=0 --quick --filter=bandwidth --results-dir="$WORK/results_quick"
}

stage_compute() {
  mkdir -p "$WORK/results"
  local runs=(compute roofline)
  if [[ "$SKIP_WGMMA" == 1 ]]; then
    echo "wgmma: left out (GPUBENCH_KIT_SKIP_WGMMA=1)" >>"$WORK/summary.txt"
  else
    wgmma_rows
    runs=(compute_wgmma_unclustered compute_wgmma "${runs[@]}")
  fi
  timed compute 200 "$BIN/gpubench" --device=0 --filter="$KIT_OTHER_COMPUTE_ROWS" --results-dir="$WORK/results"
  timed roofline 90 "$BIN/gpubench" --device=0 --filter=roofline --results-dir="$WORK/results"
  run_tables "${runs[@]}" >>"$WORK/summary.txt" 2>&1
}

# The Hopper GEMM's rows, the one-block-per-tile kernel first (runs compute_wgmma_unclustered and
# compute_wgmma, into $WORK/results).
wgmma_rows() {
  timed compute_wgmma_unclustered 90 "$BIN/gpubench" --device=0 --filter="$KIT_WGMMA_UNCLUSTERED_ROWS" \
    --results-dir="$WORK/results"
  timed compute_wgmma 90 "$BIN/gpubench" --device=0 --filter="$KIT_WGMMA_CLUSTERED_ROWS" --results-dir="$WORK/results"
}

# Each named run's result lines and the table of its result file, for a stage's summary.
run_tables() {
  local name r
  for name in "$@"; do
    echo "== gpubench --filter=$name"
    grep -E '^(gpubench|result)' "$WORK/$name.log" || true
    r="$(result_of "$name")"
    if [[ -n "$r" ]]; then result_table "$r"; fi
  done
}

stage_memory() {
  mkdir -p "$WORK/results"
  timed memory 450 "$BIN/gpubench" --device=0 --filter=memory --results-dir="$WORK/results"
  local r
  r="$(result_of memory)"
  {
    echo "== gpubench --filter=memory"
    grep -E '^(gpubench|result)' "$WORK/memory.log" || true
    if [[ -n "$r" ]]; then result_table "$r"; fi
  } >>"$WORK/summary.txt" 2>&1
  if [[ -n "$r" ]]; then
    (cd "$KIT_ROOT" && timeout 60 python3 scripts/plot.py "$r" --out-dir "$WORK/plots") >"$WORK/plots.log" 2>&1 || true
  fi
}

stage_validate() {
  mkdir -p "$WORK/results" "$WORK/acceptance"
  timed validate 300 python3 "$KIT_ROOT/scripts/validate.py" --gpubench "$BIN/gpubench" --device=0 \
    --results-dir="$WORK/results" --markdown "$WORK/acceptance/device0.md" --junit "$WORK/acceptance/device0.xml" \
    --json "$WORK/acceptance/device0.json"
  timed validate_all 240 python3 "$KIT_ROOT/scripts/validate.py" --gpubench "$BIN/gpubench" --device=all \
    --results-dir="$WORK/results" --markdown "$WORK/acceptance/all.md"
  {
    echo "== scripts/validate.py --device=0"
    grep -vE '^(running|wrote) ' "$WORK/validate.log" | grep -E '^(  |node|[^ ].*GPU)' || true
    echo "== scripts/validate.py --device=all"
    grep -E '^(node|[^ ].*GPU [0-9])' "$WORK/validate_all.log" || true
  } >>"$WORK/summary.txt" 2>&1
}

# One ncu profile: NAME, kernel-name regex, gpubench filter; the first matching launch, with the
# clocks left as they are (--clock-control none) and caches flushed before it (ncu's default).
profile() {
  local name="$1" kernel="$2" filter="$3"
  timed "ncu_$name" 90 ncu --clock-control none -k "regex:$kernel" --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    --section WarpStateStats --section LaunchStats --section Occupancy \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum \
    --print-units base --csv --page raw \
    "$BIN/gpubench" --device=0 "--filter=$filter" --benchmark_repetitions=1 --benchmark_min_time=0.001
}

# The figures of every ncu_*.log of the stage, into its summary.
ncu_summary() {
  python3 - "$WORK" >>"$WORK/summary.txt" 2>&1 <<'EOF' || true
import csv, glob, io, os, sys
want = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct",
        "l1tex__t_sector_hit_rate.pct",
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
        "lts__t_bytes.sum", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"]
for log in sorted(glob.glob(os.path.join(sys.argv[1], "ncu_*.log"))):
    text = open(log).read()
    start = text.find('"ID"')
    print("== " + os.path.basename(log)[:-4])
    if start < 0:
        print("  no profile (see the log)")
        continue
    rows = list(csv.reader(io.StringIO(text[start:])))
    head = rows[0]
    for r in rows[2:3]:
        print("  kernel: " + r[head.index("Kernel Name")][:90] if "Kernel Name" in head else "")
        for w in want:
            if w in head:
                print(f"  {w:80s} {r[head.index(w)]}")
EOF
}

stage_ncu() {
  profile copy_1GiB 'copy_kernel' 'bandwidth/copy/kernel/bytes:1GiB$'
  profile strided_8 'strided_copy_kernel' 'bandwidth/strided/kernel/bytes:256MiB,stride:8$'
  profile strided_32 'strided_copy_kernel' 'bandwidth/strided/kernel/bytes:256MiB,stride:32$'
  profile gather_256MiB 'gather_kernel' 'bandwidth/gather/kernel/bytes:256MiB$'
  profile block_set_read_64KiB 'block_set_read_kernel' 'bandwidth/block_set_read/kernel/bytes:64KiB$'
  profile hgemm_4096 'hgemm_mma_kernel' 'compute/hgemm/kernel/m:4096,n:4096,k:4096$'
  profile hgemm_8192 'hgemm_mma_kernel' 'compute/hgemm/kernel/m:8192,n:8192,k:8192$'
  # The wgmma rows run the kernel in 2 x 1 clusters (B multicast), wgmma_unclustered the same
  # kernel one block per tile: the L2 throughput and tensor-pipe figures of the two side by side;
  # wgmma_direct_store, the threads storing C themselves instead of the TMA.
  if [[ "$SKIP_WGMMA" == 1 ]]; then
    echo "wgmma: profiles left out (GPUBENCH_KIT_SKIP_WGMMA=1)" >>"$WORK/summary.txt"
  else
    profile wgmma_unclustered_4096 'hgemm_wgmma_kernel' 'compute/hgemm/wgmma_unclustered/m:4096,n:4096,k:4096$'
    profile wgmma_unclustered_8192 'hgemm_wgmma_kernel' 'compute/hgemm/wgmma_unclustered/m:8192,n:8192,k:8192$'
    profile wgmma_4096 'hgemm_wgmma_kernel' 'compute/hgemm/wgmma/m:4096,n:4096,k:4096$'
    profile wgmma_8192 'hgemm_wgmma_kernel' 'compute/hgemm/wgmma/m:8192,n:8192,k:8192$'
    profile wgmma_direct_store_4096 'hgemm_wgmma_kernel' 'compute/hgemm/wgmma_direct_store/m:4096,n:4096,k:4096$'
  fi
  cublas_profiles 4096 8192
  profile sgemm_4096 'sgemm_tiled_kernel' 'compute/sgemm/kernel/m:4096,n:4096,k:4096$'
  profile sgemm_8192 'sgemm_tiled_kernel' 'compute/sgemm/kernel/m:8192,n:8192,k:8192$'
  ncu_summary
}

# The Hopper GEMM alone: the loop for fixing it on a GPU (prepare here, carry .kit, run this),
# with nothing of the other families. The probe of its building blocks, the GEMM's own checks,
# and, when they pass, its rows with and without clusters and a profile of each at 4096.
stage_wgmma() {
  timed wgmma_probe 60 "$BIN/gpubench_kernel_check" wgmma_probe
  timed kernel_check_wgmma "$WGMMA_CHECK_SECONDS" "$BIN/gpubench_kernel_check" hgemm_wgmma
  local checked=$LAST_RC
  wgmma_checks_summary >>"$WORK/summary.txt" 2>&1
  if ((checked != 0)); then
    echo "wgmma: its kernel check did not pass (exit $checked); no rows or profiles" >>"$WORK/summary.txt"
    return 0
  fi
  mkdir -p "$WORK/results"
  wgmma_rows
  run_tables compute_wgmma_unclustered compute_wgmma >>"$WORK/summary.txt" 2>&1
  profile wgmma_unclustered_4096 'hgemm_wgmma_kernel' 'compute/hgemm/wgmma_unclustered/m:4096,n:4096,k:4096$'
  profile wgmma_4096 'hgemm_wgmma_kernel' 'compute/hgemm/wgmma/m:4096,n:4096,k:4096$'
  profile wgmma_direct_store_4096 'hgemm_wgmma_kernel' 'compute/hgemm/wgmma_direct_store/m:4096,n:4096,k:4096$'
  cublas_profiles 4096
  ncu_summary
}

# cuBLAS's own FP16 GEMM kernel at each size, profiled as ours are: its name gives its tile, cluster
# and schedule, and its tensor-pipe, L2 and DRAM figures beside the wgmma kernel's say which gap is
# whose. cuBLAS's sm_90 kernels are named nvjet_*, sm90_xmma_* or cutlass*; none of ours is.
cublas_profiles() {
  local size
  for size in "$@"; do
    profile "cublas_hgemm_$size" '^(nvjet|sm90_xmma|cutlass)' "compute/hgemm/cublas/m:$size,n:$size,k:$size\$"
  done
}

# The timed command running now, stopped (its own process group: timeout forwards the TERM).
stop_running() {
  [[ -n "$RUNNING" ]] || return 0
  kill -TERM "$RUNNING" 2>/dev/null || true
  sleep 1
}

# A stage that ends early (a failed step, a build that failed there, the command's TERM): the
# telemetry stopped, what the stage has packed into OUTDIR, and its summary on stderr.
on_stage_exit() {
  local rc=$?
  trap - EXIT
  stop_telemetry
  pack "$WORK" "$KIT_OUT" || true
  ((rc == 0)) || { echo "device_kit: stage ended early (exit $rc); what it had is in $KIT_OUT" >&2; tail -n 20 "$WORK/summary.txt" >&2; }
  [[ ! -f "$KIT_OUT/$(basename "$WORK").tar.gz" ]] || rm -rf "$(dirname "$WORK")"  # packed: the working copy goes
  exit "$rc"
}

run_stage() {
  local stage="$1" out="$2"
  # Bounded, like every nvidia-smi call outside the telemetry: a GPU wedged by an earlier hung
  # kernel can block it, and the command's own limit would then take the whole call.
  command -v nvidia-smi >/dev/null && timeout 20 nvidia-smi -L >/dev/null 2>&1 || die "no GPU here (nvidia-smi finds none)"
  # Before any device time: a kit to run, a deadline still ahead, and an output folder that
  # takes this stage's two files (never over an earlier run's, and within what comes back).
  [[ -e "$KIT_DIR/bin/gpubench" ]] ||
    die "no kit in $KIT_DIR: run scripts/device_kit.sh prepare on the build machine, then carry .kit"
  if ((DEADLINE > 0 && DEADLINE <= $(date +%s))); then
    die "GPUBENCH_KIT_DEADLINE=$DEADLINE is $(($(date +%s) - DEADLINE)) s in the past"
  fi
  mkdir -p "$out" 2>/dev/null && [[ -d "$out" ]] || die "cannot create '$out'"
  local probe
  probe="$(mktemp "$out/.device_kit.XXXXXX" 2>/dev/null)" && rm -f "$probe" || die "cannot write into '$out'"
  [[ ! -e "$out/$stage.tar.gz" && ! -e "$out/$stage.txt" ]] ||
    die "'$out' already holds a $stage stage's files; results are never overwritten: name another folder"
  local files
  files=$(find "$out" -maxdepth 1 -type f | wc -l)
  ((files + 2 <= KIT_MAX_FILES)) || die "'$out' holds $files files: with this stage's 2, more than the $KIT_MAX_FILES that come back"
  SECONDS=0
  WORK="$(mktemp -d)/$stage"
  mkdir -p "$WORK" || die "cannot create a working folder"
  KIT_OUT="$out"
  echo "device kit, stage $stage, $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$WORK/summary.txt"
  # However the stage ends (a failed step under set -e, the command's own TERM), what it has comes
  # back: the telemetry stopped and the stage packed.
  trap on_stage_exit EXIT
  trap 'stop_running; exit 143' TERM
  if [[ -f "$KIT_DIR/sources.sha256" ]] && [[ "$(source_fingerprint)" != "$(cat "$KIT_DIR/sources.sha256")" ]]; then
    echo "the carried kit was built from other sources than this tree's" >>"$WORK/summary.txt"
    die "the carried kit was built from other sources than this tree's: run scripts/device_kit.sh prepare again here, then carry .kit"
  fi
  # (its errors, such as a build there that failed, on stderr as well as in the summary)
  choose_binaries >>"$WORK/summary.txt"
  save_summary
  start_telemetry
  "stage_$stage"
  trap - EXIT
  stop_telemetry
  pack "$WORK" "$out"
  cat "$WORK/summary.txt"
  rm -rf "$(dirname "$WORK")"  # packed into OUTDIR: the working copy goes
}

main() {
  [[ $# -ge 1 ]] || {
    usage >&2
    exit 2
  }
  case "$1" in
    prepare)
      check_settings
      [[ $# -le 2 ]] || die "prepare takes at most a build directory"
      prepare "${2:-}"
      ;;
    pack)
      [[ $# -eq 3 ]] || die "pack needs WORKDIR OUTDIR"
      check_settings
      [[ ! -e "$3/$(basename "$2").txt" ]] || die "pack: '$3' already holds $(basename "$2").txt; results are never overwritten"
      pack "$2" "$3"
      ;;
    smoke | bandwidth | compute | memory | validate | ncu | wgmma)
      [[ $# -eq 2 ]] || die "$1 takes one output folder"
      check_settings
      run_stage "$1" "$2"
      ;;
    -h | --help) usage ;;
    *) die "unknown stage '$1' (prepare, smoke, bandwidth, compute, memory, validate, ncu, wgmma, pack)" ;;
  esac
}

main "$@"
