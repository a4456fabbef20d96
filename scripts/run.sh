#!/usr/bin/env bash
# The main job. Builds gpubench (Release) if needed, sets up the Python environment, runs
# `gpubench --filter=bandwidth` on the default device (the GPU when one is usable, else the
# host), stores the result JSON under results/<device key>/ and draws its roofline PNG under
# plots/<device key>/ (plus the sweep plots: bandwidth against working set, strided, PCIe) and,
# next to them, the one-page HTML report (scripts/report.py: the figures embedded).
# Extra arguments go to gpubench (e.g. --quick, --device=1).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$GPUBENCH_ROOT"

# The same configuration as the test command (they share build/), building gpubench alone.
ensure_build "$GPUBENCH_ROOT/build" gpubench -DCMAKE_BUILD_TYPE=Release -DGPUBENCH_TESTS=ON
ensure_venv
mkdir -p results plots

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
./build/gpubench --filter=bandwidth --results-dir=results "$@" 2> >(tee "$log" >&2) || status=$?
wait  # let tee finish
result="$(sed -n 's/^result: //p' "$log" | tail -n 1)"
if [[ -z "$result" ]]; then
  echo "error: gpubench wrote no result (exit status $status)" >&2
  exit "$((status == 0 ? 1 : status))"
fi
key="$(basename "$(dirname "$result")")"
mkdir -p "plots/$key"
png="plots/$key/$(basename "${result%.json}").png"
report="${png%.png}.html"
# A result with no row for the roofline (extra arguments that select only the memory family):
# roofline.py says so in one line; the sweep plots and the report are still drawn.
if ! "$GPUBENCH_VENV/bin/python" scripts/roofline.py "$result" --out "$png" >/dev/null; then
  png="none (roofline.py said why above)"
fi
sweeps="$("$GPUBENCH_VENV/bin/python" scripts/plot.py "$result" --out-dir "plots/$key")"
"$GPUBENCH_VENV/bin/python" scripts/report.py "$result" --out "$report" >/dev/null
echo "result JSON:  $result"
echo "roofline PNG: $png"
while IFS= read -r p; do [[ -n "$p" ]] && echo "sweep PNG:    $p"; done <<<"$sweeps"
echo "HTML report:  $report"
exit "$status"
