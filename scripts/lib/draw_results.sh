# draw_results LOG PLOTS_ROOT: for every result a gpubench run published ("result: PATH" lines of
# its stderr in LOG; one, or with --device=all one or two per GPU: its own rows and its link rows),
# the roofline PNG, the sweep plots and the HTML report under PLOTS_ROOT/<device key>/, and the
# paths on stdout. Sourced by run.sh, which checks first that LOG names a result; needs
# GPUBENCH_VENV and the repository root as the working directory.
draw_results() {
  local log="$1" plots_root="$2" result key png report sweeps p
  local -a results
  mapfile -t results < <(sed -n 's/^result: //p' "$log" | awk '!seen[$0]++')
  for result in "${results[@]}"; do
    key="$(basename "$(dirname "$result")")"
    mkdir -p "$plots_root/$key"
    png="$plots_root/$key/$(basename "${result%.json}").png"
    report="${png%.png}.html"
    # A result with no row for the roofline (extra arguments that select only the memory family,
    # or a GPU's link rows under --device=all): roofline.py says so in one line; the sweep plots
    # and the report are still drawn.
    if ! "$GPUBENCH_VENV/bin/python" scripts/roofline.py "$result" --out "$png" >/dev/null; then
      png="none (roofline.py said why above)"
    fi
    sweeps="$("$GPUBENCH_VENV/bin/python" scripts/plot.py "$result" --out-dir "$plots_root/$key")"
    "$GPUBENCH_VENV/bin/python" scripts/report.py "$result" --out "$report" >/dev/null
    echo "result JSON:  $result"
    echo "roofline PNG: $png"
    while IFS= read -r p; do [[ -n "$p" ]] && echo "sweep PNG:    $p"; done <<<"$sweeps"
    echo "HTML report:  $report"
  done
}
