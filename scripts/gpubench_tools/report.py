"""The one-page HTML report of a gpubench result: a single self-contained file (every figure
embedded as a base64 PNG, the CSS inline, no script, nothing fetched) that a browser opens from
disk or an e-mail attachment.

What the page holds, top to bottom:
- the title: the device, the run's date, backend, gpubench version and git revision;
- the summary: the headline numbers the result has (headlines(): DRAM copy GB/s and % of peak,
  the cache plateau, PCIe per direction, the best SGEMM and FP16 GEMM kernel with % of peak and
  % of cuBLAS, peak FMA), then the rows that need a look: failed (verification), skipped (grouped
  by reason), noisy (cv of the headline over repetitions above NOISY_CV_PCT) and throttled;
- Acceptance: a verdict per expected band of the card (acceptance_rows(), the same verdicts
  scripts/validate.py gives), each that is not a pass with its likely causes; a card without
  bands is said to have none;
- the figures: the roofline and every sweep plot the result has data for, drawn in memory by the
  same functions roofline.py and plot.py use (so the report never depends on PNG files lying
  around and always shows the result it names);
- every benchmark, grouped by family: size, median headline with its unit, spread, % of peak, %
  of cuBLAS, marks (failed, unverified, skipped, noisy, throttled);
- the context, key by key.

Every string taken from the JSON is HTML-escaped. Rates and percentages are written to three
significant figures, sizes in B/KiB/MiB/GiB. The page carries a Content-Security-Policy that
allows only inline styles and data: images, so a resource or script slipped into it would be
blocked by the browser and reported on its console (the browser test checks the console).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import statistics
from dataclasses import dataclass, field

from .acceptance import PASS, evaluate_gpu, load_bands
from .results import Benchmark, Result, cache_plateau_rows, sustained_transfers, to_number

#: A headline whose coefficient of variation over repetitions exceeds this (percent) is noisy.
NOISY_CV_PCT = 5.0

#: Lists of noisy rows longer than this are folded (a <details> element) under their count.
FOLD_ROWS = 12

#: Display units of the headline metrics (results.RowMeaning.metric -> unit).
METRIC_UNITS = {"GBps": "GB/s", "TFLOPS": "TFLOP/s", "latency_ns": "ns", "latency_us": "us"}

#: Only inline styles and data: images: anything else the page tried to load or run would be
#: blocked and logged on the browser's console.
CONTENT_SECURITY_POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


# ----------------------------------------------------------------------------------- formatting

def sig3(value: float | None) -> str:
    """A number to three significant figures, never in exponent form: 3312.4 -> "3310",
    88.14 -> "88.1", 0.0010466 -> "0.00105", 0 -> "0"; "-" for None or not finite."""
    if value is None or not math.isfinite(value):
        return "-"
    if value == 0:
        return "0"
    decimals = 2 - math.floor(math.log10(abs(value)))
    rounded = round(value, decimals)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) != math.floor(math.log10(abs(value))):
        decimals -= 1  # 999.7 rounds up to 1000: one digit fewer after the point
        rounded = round(value, decimals)
    return f"{rounded:.{max(decimals, 0)}f}"


def fmt_bytes(n: float | None) -> str:
    """A size in binary units to three significant figures, trailing zeros dropped:
    4096 -> "4 KiB", 1.5 * 2**20 -> "1.5 MiB", 512 -> "512 B"; "-" for None."""
    if n is None or not math.isfinite(n):
        return "-"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            text = sig3(n / size)
            return (text.rstrip("0").rstrip(".") if "." in text else text) + f" {unit}"
    return f"{sig3(n)} B"


def _e(value) -> str:
    """HTML-escaped text of any JSON value (strings as they are, other values as JSON)."""
    if not isinstance(value, str):
        value = json.dumps(value)
    return html.escape(value, quote=True)


# ------------------------------------------------------------------------------- the row facts

def cv_pct(b: Benchmark) -> float | None:
    """Coefficient of variation (percent) of the headline metric over repetitions: from the
    samples when there are two or more, else from the `cv` aggregate (files written with
    --benchmark_report_aggregates_only); None when it cannot be known."""
    vals = b.values(b.metric)
    if len(vals) >= 2:
        mean = statistics.mean(vals)
        return 100.0 * statistics.stdev(vals) / mean if mean else None
    agg = b.aggregates.get("cv")
    v = to_number(agg.get(b.metric)) if agg else None
    return 100.0 * v if v is not None else None


def is_noisy(b: Benchmark) -> bool:
    """A row that ran and whose headline varies by more than NOISY_CV_PCT over repetitions."""
    cv = cv_pct(b)
    return b.ok and cv is not None and cv > NOISY_CV_PCT


def repetitions(b: Benchmark) -> int:
    """Repetitions with numbers (the median aggregate's count where only aggregates were
    written)."""
    if b.samples:
        return len(b.samples)
    agg = b.aggregates.get("median")
    return int(to_number(agg.get("repetitions")) or 0) if agg else 0


def marks(b: Benchmark) -> list[tuple[str, str]]:
    """(mark, why) pairs of a row: failed (its error message), unverified (a repetition not
    verified), skipped (the reason), noisy (its cv), throttled, power-capped."""
    out = []
    if b.skipped:
        out.append(("skipped", b.error or ""))
    elif b.errors:
        out.append(("failed", b.error or ""))
    elif b.verification_failed:
        out.append(("unverified", "a repetition reports verified != 1"))
    if is_noisy(b):
        out.append(("noisy", f"cv {cv_pct(b):.1f} % over {repetitions(b)} repetitions "
                              f"(more than {NOISY_CV_PCT:g} %)"))
    if b.throttled:
        out.append(("throttled", "a repetition ran with throttled clocks (throttled=1)"))
    if b.power_capped:
        out.append(("power-capped", "a repetition ran at the software power cap (power_capped=1)"))
    return out


def _trusted(result: Result) -> list[Benchmark]:
    """Rows with numbers that were verified: the only ones a headline may quote."""
    return [b for b in result.benchmarks.values() if b.ok and not b.verification_failed]


def _cache_resident(result: Result, b: Benchmark) -> bool:
    """The row targets the cache (level l2; in legacy files, which do not say: a working set
    below half the L2, gpubench's own rule)."""
    if b.labelled:
        return b.level == "l2"
    l2 = result.ctx_number("l2_bytes")
    size = b.size_bytes()
    return bool(l2 and size and size < l2 / 2)


# ---------------------------------------------------------------------------------- headlines

@dataclass
class Headline:
    """One number of the summary, with the row it comes from."""

    what: str
    value: float
    unit: str
    row: str  #: the benchmark name
    pct_of_peak: float | None = None
    pct_of_cublas: float | None = None
    note: str = ""


def _best(rows: list[Benchmark], counter: str) -> Benchmark | None:
    rows = [b for b in rows if b.median(counter) is not None]
    return max(rows, key=lambda b: b.median(counter)) if rows else None


def _headline(what: str, b: Benchmark, counter: str, unit: str, note: str = "") -> Headline:
    return Headline(what, b.median(counter), unit, b.name, b.median("pct_of_peak"),
                    b.median("pct_of_cublas"), note)


def headlines(result: Result) -> list[Headline]:
    """The summary's numbers, each only when the result has a verified row for it:
    - DRAM copy: gpubench's copy kernel at its largest working set outside the cache;
    - cache plateau: the copy kernel's best GB/s at a cache-resident size (L2 on a GPU, the
      last-level cache on the host) from 1/64 of the cache up (results.cache_plateau_rows; none
      where no set is that large);
    - PCIe H2D / D2H: the best GB/s of the bandwidth family's rows at level pcie measured
      against that direction's peak, of 256 MiB or more (or the largest size that ran); the
      host's rows are memcpy stand-ins and named so;
    - SGEMM / FP16 / BF16 / FP8 GEMM: the best gpubench GEMM kernel (not a library reference) of
      the rows whose ceiling is fp32 / fp16_tensor / bf16_tensor / fp8_tensor and that sweep m,
      with % of peak and % of cuBLAS;
    - peak FMA: each compute kernel that is not a GEMM, its best TFLOP/s.
    Rows are chosen by what they mean (peak, metric, level, sweep), the copy kernel by its key
    in the family table. The roofline's measured DRAM and cache lines are roofs instead, the
    best row or sweep of any kernel at that level (roofline.py's module comment): they may name
    another row than these headlines, which are one kernel's, comparable between runs."""
    ran = _trusted(result)
    out: list[Headline] = []
    copy = [b for b in ran if b.family == "bandwidth" and b.kernel == "copy" and not b.is_library
            and b.metric_kind == "GBps"]
    dram = [b for b in copy if not _cache_resident(result, b) and b.size_bytes()]
    if dram:
        b = max(dram, key=lambda b: b.size_bytes())
        out.append(_headline("DRAM copy", b, "GB/s", "GB/s",
                             f"largest working set, {fmt_bytes(b.size_bytes())}"))
    b = _best(cache_plateau_rows([b for b in copy if _cache_resident(result, b)], result.ctx_number("l2_bytes")),
              "GB/s")
    if b:
        cache = "L2" if result.backend == "cuda" else "last-level cache"
        h = _headline(f"{cache} plateau", b, "GB/s", "GB/s",
                      f"copy kernel, best cache-resident size ({fmt_bytes(b.size_bytes())})")
        h.pct_of_peak = None  # no theoretical cache figure (legacy rows carry a DRAM percentage)
        out.append(h)
    for peak, what in (("pcie_h2d", "PCIe host to device"), ("pcie_d2h", "PCIe device to host")):
        rows = sustained_transfers([b for b in ran if b.family == "bandwidth" and b.level == "pcie"
                                    and b.peak_kind == peak and b.metric_kind == "GBps"])
        if rows:  # a sustained transfer, as the console's summary and the acceptance run read it
            start = min(b.size_bytes() for b in rows)
            b = _best(rows, "GB/s")
            if b:
                if result.backend == "host":  # no link: memcpy between two host buffers
                    what = what.replace("PCIe ", "memcpy stand-in: ")
                out.append(_headline(what, b, "GB/s", "GB/s", f"best row of {fmt_bytes(start)} or more"))
    for peak, what in (("fp32", "SGEMM"), ("fp16_tensor", "FP16 GEMM"), ("bf16_tensor", "BF16 GEMM"),
                       ("fp8_tensor", "FP8 GEMM")):
        b = _best([b for b in ran if b.peak_kind == peak and b.sweep == "m"
                   and b.metric_kind == "TFLOPS" and not b.is_library], "TFLOPS")
        if b:
            out.append(_headline(what, b, "TFLOPS", "TFLOP/s", "best gpubench kernel"))
    fma = [b for b in ran if b.family == "compute" and b.metric_kind == "TFLOPS"
           and b.sweep != "m"]
    for kernel in dict.fromkeys(b.kernel for b in fma):
        b = _best([x for x in fma if x.kernel == kernel], "TFLOPS")
        if b:
            out.append(_headline(f"peak FMA ({kernel})", b, "TFLOPS", "TFLOP/s", "best row"))
    return out


# --------------------------------------------------------------------------------- acceptance

@dataclass
class AcceptanceRow:
    """One expected band of the card and the verdict on the result."""

    what: str  #: e.g. "DRAM copy, 1 GiB"
    row: str  #: the benchmark name the band applies to
    measured: float | None
    unit: str
    low: float | None  #: the band's lower bound (None: unbounded)
    high: float | None  #: its upper bound (None: unbounded)
    verdict: str  #: "pass", "warn", "fail" or "not measured"
    why: str = ""


def acceptance_rows(result: Result) -> list[AcceptanceRow]:
    """The acceptance verdicts of a result against its card's expected bands
    (gpubench_tools.acceptance, harness/model/bands.csv): one row per band, its verdict (pass,
    warn, fail or not measured) with the reason and, for each that is not a pass, the likely
    causes. [] when the card has no bands (or on the host backend): the page says so."""
    gpu = evaluate_gpu(result, load_bands())
    rows = []
    for v in gpu.verdicts:
        why = "; ".join([v.why, *(f"likely cause: {c}" for c in v.causes)]) if v.verdict != PASS else v.why
        rows.append(AcceptanceRow(v.what, v.row or "-", v.value, v.band.unit, v.band.pass_min, v.band.max,
                                  v.verdict.lower(), why))
    return rows


# ------------------------------------------------------------------------------------ figures

@dataclass
class EmbeddedFigure:
    """One PNG of the page: its title (the chart's own), and notes printed under it."""

    title: str
    png: bytes
    notes: list[str] = field(default_factory=list)


def _png(fig, dpi: int) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def render_figures(result: Result) -> list[EmbeddedFigure]:
    """The roofline (roofline.py's chart of this one result, its notes with it) and every
    sweep plot plot.py would write for it, as PNG bytes drawn in memory."""
    from .cards import load_cards
    from .plots import ALL_PLOTS, DPI as PLOT_DPI, plot_figure
    from .roofline import DPI as ROOFLINE_DPI, roofline_data, roofline_figure

    data = roofline_data([result], [], load_cards())
    notes = [n for s in data.series for n in s.notes]
    out = [EmbeddedFigure(data.title, _png(roofline_figure(data), ROOFLINE_DPI), notes)]
    for make in ALL_PLOTS:
        d = make(result)
        if d is not None:
            out.append(EmbeddedFigure(d.title, _png(plot_figure(d), PLOT_DPI)))
    return out


# ------------------------------------------------------------------------------------- the page

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f;
       margin: 0 auto; max-width: 1240px; padding: 16px 24px 48px; background: #fff; }
h1 { font-size: 24px; margin: 8px 0 2px; }
h2 { font-size: 19px; margin: 28px 0 8px; border-bottom: 2px solid #d0d7de; padding-bottom: 3px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.sub { color: #57606a; margin: 0 0 12px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f5f7; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
tr.skipped td { color: #8c959f; }
tr.failed td { background: #ffebe9; }
.mark { display: inline-block; border-radius: 3px; padding: 0 5px; margin: 1px 2px 1px 0;
        font-size: 11px; color: #fff; background: #57606a; }
.mark.failed, .mark.unverified, .mark.fail { background: #cf222e; }
.mark.noisy { background: #9a6700; }
.mark.throttled { background: #8250df; }
.mark.power-capped { background: #6e7781; }
.mark.pass { background: #1a7f37; }
.mark.warn, .mark.not_measured { background: #bc4c00; }
.mark.skipped { background: #8c959f; }
.none { color: #57606a; font-style: italic; }
figure { margin: 12px 0 20px; }
figure img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
figcaption { color: #57606a; font-size: 12px; }
ul.rows { margin: 4px 0 10px; padding-left: 20px; }
ul.rows li { margin: 1px 0; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
details summary { cursor: pointer; }
td.ctx { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px;
         white-space: pre-wrap; word-break: break-word; max-width: 900px; }
"""


def _mark_html(kind: str, why: str) -> str:
    return f'<span class="mark {_e(kind)}" title="{_e(why)}">{_e(kind)}</span>'


def _summary_html(result: Result) -> str:
    parts = ["<h2>Summary</h2>"]
    heads = headlines(result)
    if heads:
        parts.append("<table><thead><tr><th>headline</th><th>median</th><th>% of peak</th>"
                     "<th>% of cuBLAS</th><th>row</th></tr></thead><tbody>")
        for h in heads:
            parts.append(
                f"<tr><td>{_e(h.what)}<br><span class='sub'>{_e(h.note)}</span></td>"
                f"<td class='num'>{sig3(h.value)} {_e(h.unit)}</td>"
                f"<td class='num'>{sig3(h.pct_of_peak)}</td>"
                f"<td class='num'>{sig3(h.pct_of_cublas)}</td>"
                f"<td class='name'>{_e(h.row)}</td></tr>")
        parts.append("</tbody></table>")
    else:
        parts.append("<p class='none'>No verified row of this result gives a headline number "
                     "(DRAM copy, cache plateau, PCIe, GEMM, peak FMA).</p>")
    benches = list(result.benchmarks.values())
    failed = [b for b in benches if b.errors and not b.skipped]
    unverified = [b for b in benches if not b.errors and b.verification_failed]
    skipped = [b for b in benches if b.skipped]
    noisy = [b for b in benches if is_noisy(b)]
    throttled = [b for b in benches if b.throttled]
    ran = sum(1 for b in benches if b.ok)
    parts.append(
        f"<p>{len(benches)} benchmarks: {ran} ran, {len(failed)} failed, "
        f"{len(unverified)} unverified, {len(skipped)} skipped, {len(noisy)} noisy "
        f"(cv over repetitions above {NOISY_CV_PCT:g} %), {len(throttled)} throttled.</p>")

    def listing(title: str, rows: list[Benchmark], why, fold: bool = False) -> None:
        """Each row with why it is listed; a long list (more than FOLD_ROWS) of a kind that
        does not fail a run (noisy) folded under its count."""
        if not rows:
            return
        items = "".join(f"<li><code>{_e(b.name)}</code>: {_e(why(b))}</li>" for b in rows)
        if fold and len(rows) > FOLD_ROWS:
            parts.append(f"<h3>{_e(title)} ({len(rows)})</h3><details><summary>the "
                         f"{len(rows)} rows</summary><ul class='rows'>{items}</ul></details>")
        else:
            parts.append(f"<h3>{_e(title)} ({len(rows)})</h3><ul class='rows'>{items}</ul>")

    listing("Failed", failed, lambda b: b.error or "")
    listing("Unverified", unverified, lambda _: "a repetition reports verified != 1")
    listing("Throttled", throttled, lambda _: "throttled=1 in a repetition")
    listing("Noisy", noisy, lambda b: f"cv {cv_pct(b):.1f} % over {repetitions(b)} repetitions",
            fold=True)
    if skipped:
        by_reason: dict[str, list[Benchmark]] = {}
        for b in skipped:
            by_reason.setdefault(b.error or "", []).append(b)
        parts.append(f"<h3>Skipped ({len(skipped)})</h3><ul class='rows'>")
        for reason, rows in by_reason.items():
            names = "".join(f"<li><code>{_e(b.name)}</code></li>" for b in rows)
            parts.append(f"<li><details><summary>{_e(reason)} ({len(rows)})</summary>"
                         f"<ul class='rows'>{names}</ul></details></li>")
        parts.append("</ul>")
    return "\n".join(parts)


def _acceptance_html(rows: list[AcceptanceRow]) -> str:
    parts = ["<h2>Acceptance</h2>"]
    if not rows:
        parts.append("<p class='none' id='no-bands'>No expected bands for this card: its numbers "
                     "are shown without a verdict (harness/model/bands.csv lists the cards that "
                     "have bands).</p>")
        return "\n".join(parts)
    parts.append("<table><thead><tr><th>what</th><th>measured</th><th>expected</th>"
                 "<th>verdict</th><th>row</th></tr></thead><tbody>")
    for a in rows:
        band = f"{sig3(a.low) if a.low is not None else '...'} to " \
               f"{sig3(a.high) if a.high is not None else '...'} {_e(a.unit)}"
        parts.append(f"<tr><td>{_e(a.what)}</td><td class='num'>{sig3(a.measured)} "
                     f"{_e(a.unit)}</td><td class='num'>{band}</td>"
                     f"<td>{_mark_html(a.verdict.replace(' ', '_'), a.why)} {_e(a.why)}</td>"
                     f"<td class='name'>{_e(a.row)}</td></tr>")
    parts.append("</tbody></table>")
    return "\n".join(parts)


def _figures_html(figures: list[EmbeddedFigure]) -> str:
    parts = ["<h2>Figures</h2>"]
    for f in figures:
        data = base64.b64encode(f.png).decode("ascii")
        notes = "".join(f"<br>note: {_e(n)}" for n in f.notes)
        parts.append(f"<figure><img src=\"data:image/png;base64,{data}\" alt=\"{_e(f.title)}\">"
                     f"<figcaption>{_e(f.title)}{notes}</figcaption></figure>")
    return "\n".join(parts)


def _bench_row(b: Benchmark, cached: bool = False) -> str:
    """One row of the table; `cached`: the row is cache-resident, so no % of a DRAM peak is shown
    (files written before rows carried labels hold one: 212 % for the H100's 4 MiB copy)."""
    unit = METRIC_UNITS.get(b.metric_kind, b.metric_kind)
    pct = b.median("pct_of_peak") if b.ok and not cached else None
    value = b.median(b.metric) if b.ok else None
    cv = cv_pct(b) if b.ok else None
    n = repetitions(b)
    spread = "-" if not b.ok else (f"cv {cv:.1f} % (n={n})" if cv is not None else f"n={n}")
    ms = marks(b)
    cls = "skipped" if b.skipped else ("failed" if b.errors or b.verification_failed else "")
    why = "".join(f"<br><span class='sub'>{_e(w)}</span>" for k, w in ms
                  if k in ("skipped", "failed"))
    return (f"<tr class='bench {cls}'><td class='name'>{_e(b.name)}</td>"
            f"<td class='num'>{fmt_bytes(b.size_bytes())}</td>"
            f"<td class='num'>{sig3(value)} {_e(unit) if value is not None else ''}</td>"
            f"<td class='num'>{spread}</td>"
            f"<td class='num'>{sig3(pct)}</td>"
            f"<td class='num'>{sig3(b.median('pct_of_cublas')) if b.ok else '-'}</td>"
            f"<td>{''.join(_mark_html(k, w) for k, w in ms)}{why}</td></tr>")


def _table_html(result: Result) -> str:
    families: dict[str, list[Benchmark]] = {}
    for b in result.benchmarks.values():
        families.setdefault(b.family, []).append(b)
    parts = ["<h2>Every benchmark</h2>",
             "<p class='sub'>Median over repetitions of each row's headline metric; spread: "
             "coefficient of variation over the n repetitions; size: the bytes parameter of the "
             "name, else the working set; % of peak: against the ceiling the row's label names "
             "(- where it is unknown or the row is cache-resident).</p>"]
    for family, rows in families.items():
        parts.append(f"<h3 id='family-{_e(family)}'>{_e(family)} ({len(rows)})</h3>")
        parts.append("<table><thead><tr><th>benchmark</th><th>size</th><th>median</th>"
                     "<th>spread</th><th>% of peak</th><th>% of cuBLAS</th><th>marks</th>"
                     "</tr></thead><tbody>")
        parts.extend(_bench_row(b, not b.labelled and b.level == "dram" and _cache_resident(result, b))
                     for b in rows)
        parts.append("</tbody></table>")
    return "\n".join(parts)


def _context_html(result: Result) -> str:
    rows = "".join(f"<tr><th>{_e(k)}</th><td class='ctx'>{_e(v)}</td></tr>"
                   for k, v in result.context.items())
    return f"<h2>Context</h2><table><tbody>{rows}</tbody></table>"


def render_html(result: Result, figures: list[EmbeddedFigure],
                acceptance: list[AcceptanceRow] | None = None) -> str:
    """The whole page as a string (acceptance: acceptance_rows(result) when not given)."""
    if acceptance is None:
        acceptance = acceptance_rows(result)
    date = result.ctx("run_started_utc") or result.ctx("date")
    title = f"gpubench report: {result.device_name}"
    sub = (f"{date} | backend {result.backend} | gpubench {result.ctx('gpubench_version')} | "
           f"git {result.ctx('git_revision', '?')} | driver {result.ctx('driver_version', '?')}, "
           f"runtime {result.ctx('runtime_version', '?')} | {result.path.name}")
    return "\n".join([
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        f"<meta http-equiv='Content-Security-Policy' content=\"{CONTENT_SECURITY_POLICY}\">",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p class='sub'>{_e(sub)}</p>",
        _summary_html(result),
        _acceptance_html(acceptance),
        _figures_html(figures),
        _table_html(result),
        _context_html(result),
        "</body></html>",
        "",
    ])


def build_report(result: Result) -> str:
    """The report of a result: its figures drawn in memory, the page around them."""
    return render_html(result, render_figures(result))
