#!/usr/bin/env bash
# The main job. Builds gpubench (Release) if needed, sets up the Python environment, runs
# `gpubench --filter=bandwidth` on the default device (the GPU when one is usable, else the
# host), stores the result JSON under results/<device key>/ and draws its roofline PNG under
# plots/<device key>/ (plus the sweep plots: bandwidth against working set, strided, PCIe) and,
# next to them, the one-page HTML report (scripts/report.py: the figures embedded). plots/ is
# the results folder's sibling, as for nightly.py's reports: the repository's own for the default
# results/, <DIR>/../plots for --results-dir=DIR (a run into another store leaves the checkout
# as it was).
# Extra arguments go to gpubench (e.g. --quick, --device=1); --filter and --results-dir (with "="
# or a space) replace the defaults (bandwidth, results/), once each (a relative --results-dir is
# the caller's); --help,
# --version and --list are gpubench's own answers.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/draw_results.sh"
caller_dir="$PWD"  # a relative --results-dir is the caller's, as it is for gpubench itself
cd "$GPUBENCH_ROOT"

# "--filter X" and "--results-dir DIR" as the Python scripts take them: joined into the "=" form
# that gpubench reads (a bare one at the end is left for gpubench to refuse in its words).
args=()
while (($#)); do
  if [[ ("$1" == --filter || "$1" == --benchmark_filter || "$1" == --results-dir) && $# -ge 2 ]]; then
    # "--filter --quick" is a forgotten value, not a filter: taken as one it would match every
    # row and run the whole suite at full size
    [[ "$2" != --* ]] || { echo "error: run.sh: $1 needs a value (got the flag $2)" >&2; exit 2; }
    args+=("$1=$2")
    shift 2
  else
    args+=("$1")
    shift
  fi
done
set -- ${args[@]+"${args[@]}"}

filter="--filter=bandwidth"
store="$GPUBENCH_ROOT/results"
passthrough=()
answer_only=0
filter_given=0
store_given=0
for a in "$@"; do
  case "$a" in
    --filter=* | --benchmark_filter=*)
      # given twice, gpubench would refuse it; here the second would silently replace the first
      ((filter_given++)) && { echo "error: run.sh: --filter given twice" >&2; exit 2; }
      filter="$a"
      ;;
    --results-dir=*)
      ((store_given++)) && { echo "error: run.sh: --results-dir given twice" >&2; exit 2; }
      store="${a#--results-dir=}"
      [[ -n "$store" ]] || { echo "error: run.sh: --results-dir has an empty value" >&2; exit 2; }
      # "~/x" after "=" is not expanded by the shell: meant is the home folder, not a folder "~"
      [[ "$store" == "~" || "$store" == "~/"* ]] && store="$HOME${store#\~}"
      [[ "$store" == /* ]] || store="$caller_dir/$store"
      store="$(realpath -s -m -- "$store")"  # no "." or ".." left: plots/ goes beside the store itself
      ;;
    --out | --out=*)
      echo "error: run.sh keeps every result in its store (--results-dir=DIR, default results/); --out is gpubench's own flag" >&2
      exit 2
      ;;
    --help | -h | --version | --list) answer_only=1 ;;
  esac
  [[ "$a" == --filter=* || "$a" == --benchmark_filter=* || "$a" == --results-dir=* ]] || passthrough+=("$a")
done

if [[ -e "$store" && ! -d "$store" ]]; then
  echo "error: run.sh: --results-dir $store: not a folder" >&2
  exit 2
fi
plots_root="$(dirname "$store")/plots"
if [[ -e "$plots_root" && ! -d "$plots_root" ]]; then
  echo "error: run.sh: $plots_root: not a folder (the plots go beside --results-dir $store)" >&2
  exit 2
fi
# Where the result and the plots go must take them, before the build (minutes on a fresh clone):
# the nearest folder that exists on each path takes a new file.
writable_under() {
  local d="$1" probe
  while [[ ! -e "$d" && "$d" != / && "$d" != . ]]; do d="$(dirname "$d")"; done
  [[ -d "$d" ]] && probe="$(mktemp "$d/.run_sh.XXXXXX" 2>/dev/null)" && rm -f "$probe"
}
if ((!answer_only)); then
  writable_under "$store" || { echo "error: run.sh: --results-dir $store: cannot create it or write there" >&2; exit 2; }
  writable_under "$plots_root" ||
    { echo "error: run.sh: cannot create $plots_root or write there (the plots go beside --results-dir $store)" >&2; exit 2; }
fi

# The same configuration as the test command (they share build/), building gpubench alone.
ensure_build "$GPUBENCH_ROOT/build" gpubench -DCMAKE_BUILD_TYPE=Release -DGPUBENCH_TESTS=ON
if ((answer_only)); then
  exec ./build/gpubench "$filter" "${passthrough[@]}"
fi
ensure_venv
mkdir -p "$store" 2>/dev/null || { echo "error: run.sh: --results-dir $store: cannot create it" >&2; exit 2; }
mkdir -p "$plots_root" 2>/dev/null || { echo "error: run.sh: cannot create $plots_root (the plots go beside --results-dir $store)" >&2; exit 2; }

# gpubench's stderr goes through tee (to find the result's path), so it is no terminal: ask for
# the progress line when run.sh's own stderr is one.
progress=()
[[ -t 2 && " ${passthrough[*]-} " != *" --progress="* ]] && progress=(--progress=on)
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# gpubench runs in the background so that a signal to run.sh reaches it: it then stops after the
# sample in progress, removes its temporary result and says so (a background job of a script
# ignores SIGINT and SIGQUIT, so each stop signal is passed on as SIGTERM), and run.sh exits
# 128 + its own signal. Without this, a TERM or HUP ended run.sh and left gpubench running on.
stopped_by=0
stop_gpubench() {
  stopped_by=$1
  kill -s TERM "$gpubench_pid" 2>/dev/null || true
}
status=0
./build/gpubench "$filter" --results-dir="$store" "${progress[@]}" "${passthrough[@]}" 2> >(tee "$log" >&2) &
gpubench_pid=$!
trap 'stop_gpubench 2' INT
trap 'stop_gpubench 15' TERM
trap 'stop_gpubench 1' HUP
trap 'stop_gpubench 3' QUIT
wait "$gpubench_pid" || status=$?
while kill -0 "$gpubench_pid" 2>/dev/null; do  # a trapped signal ends `wait` early
  status=0
  wait "$gpubench_pid" || status=$?
done
trap - INT TERM HUP QUIT
wait  # let tee finish
((stopped_by)) && exit "$((128 + stopped_by))"  # gpubench said what it did with the run
if ! grep -q '^result: ' "$log"; then
  # exit 2 is bad usage, which gpubench has said in its own line
  ((status == 2)) || echo "error: gpubench wrote no result (exit status $status)" >&2
  exit "$((status == 0 ? 1 : status))"
fi
draw_results "$log" "$plots_root"  # (not in a condition: set -e stops at a plot that fails)
exit "$status"
