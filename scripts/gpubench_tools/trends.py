"""Trend plots: one benchmark's history in the results store, night after night.

For each stored run of the device key: the median of the benchmark's headline metric with
its min-max over repetitions. The band is the current baseline (median of the last N valid runs
before the newest, pooled) +- the comparator's SLOWER bound (max of the minimum effect and
noise_k x the baseline noise). Every run is judged against the N valid runs before it with the
same comparator, and the runs found SLOWER are marked with a red cross (the newest run's mark
follows the nightly verdict after its confirmation re-run).
"""

from __future__ import annotations

import datetime as _dt
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from .compare import Thresholds, judge, robust_noise
from .figures import literal_text
from .output import NewFile
from .results import Result
from .store import name_time


@dataclass
class TrendPoint:
    """One stored run of the benchmark."""

    when: _dt.datetime
    path: str
    median: float
    lo: float
    hi: float
    verdict: str = ""  #: against the runs before it ("" when there were too few)


@dataclass
class TrendData:
    """A benchmark's history and the current baseline band."""

    name: str
    metric: str
    points: list[TrendPoint] = field(default_factory=list)
    band: tuple[float, float, float] | None = None  #: (low, median, high)


def run_time(r: Result) -> _dt.datetime:
    """When a run started: the store file name's timestamp, else the context's date."""
    when = name_time(r.path.name)  # None for an impossible time in the name, too
    if when is not None:
        return when
    for key in ("run_started_utc", "date"):
        try:
            return _dt.datetime.fromisoformat(r.ctx(key).replace("Z", "+00:00"))
        except (ValueError, OverflowError):
            continue
    return _dt.datetime.fromtimestamp(0, _dt.timezone.utc)


def _valid(r: Result, name: str):
    b = r.benchmarks.get(name)
    if b is None or not b.ok or b.verification_failed or b.throttled:
        return None
    return b


def trend_data(history: list[Result], name: str, last_n: int, t: Thresholds,
               final_verdict: str | None = None) -> TrendData | None:
    """The history of `name` over `history` (oldest first); None when it never ran validly.

    The newest valid run's row says the headline metric and its direction (as in the
    comparator), and every run is read on that counter, so a history that spans the switch to
    labelled rows stays on one scale."""
    valid = [(r, b) for r in history if (b := _valid(r, name)) is not None]
    if not valid:
        return None
    newest = valid[-1][1]
    metric, higher = newest.metric, newest.higher_is_better
    runs = [(r, (metric, vals)) for r, b in valid if (vals := b.values(metric))]
    if not runs:
        return None
    d = TrendData(name, metric)
    for i, (r, (_, vals)) in enumerate(runs):
        p = TrendPoint(run_time(r), str(r.path), statistics.median(vals), min(vals), max(vals))
        prev = [v for _, (_, pv) in runs[max(0, i - last_n):i] for v in pv]
        if prev:
            p.verdict = judge(name, d.metric, vals, prev, t, higher).verdict
        d.points.append(p)
    if final_verdict is not None:
        d.points[-1].verdict = final_verdict
    base = [v for _, (_, pv) in runs[-last_n - 1:-1] for v in pv]
    if base:
        med = statistics.median(base)
        half = med * max(t.min_effect, t.noise_k * robust_noise(base))
        d.band = (med - half, med, med + half)
    return d


def file_name(name: str) -> str:
    """A benchmark name as a file name: bandwidth__copy__kernel__bytes-64MiB.png."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", name.replace("/", "__")) + ".png"


def trend_figure(d: TrendData):
    """The matplotlib Figure of a trend (900 x 450 pixels; no pyplot state): the medians at
    their run times with min-max error bars, the baseline band and its median line when known,
    and a red cross on every run judged SLOWER, each named in the legend. draw_trend() writes
    it; the tests read its artists."""
    import matplotlib.dates as mdates
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.0, 4.5), dpi=100)
    ax = fig.add_axes((0.09, 0.2, 0.66, 0.7))
    xs = [p.when for p in d.points]
    ys = [p.median for p in d.points]
    err = [[p.median - p.lo for p in d.points], [p.hi - p.median for p in d.points]]
    ax.errorbar(xs, ys, yerr=err, marker="o", markersize=4, capsize=2, color="tab:blue",
                label="median (min-max over repetitions)")
    if d.band:
        lo, med, hi = d.band
        ax.axhspan(lo, hi, color="tab:green", alpha=0.15, label="baseline median +- SLOWER bound")
        ax.axhline(med, color="tab:green", linewidth=1, label="baseline median")
    bad = [p for p in d.points if p.verdict == "SLOWER"]
    if bad:
        ax.scatter([p.when for p in bad], [p.median for p in bad], marker="x", s=90,
                   color="red", zorder=5, linewidths=2, label="SLOWER")
    ax.set_title(d.name, fontsize=9)
    ax.set_ylabel(d.metric)
    ax.grid(True, alpha=0.3)
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%Y-%m-%d\n%H:%M:%S"))
    ax.tick_params(axis="x", labelrotation=30, labelsize=7)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7, frameon=False,
              borderaxespad=0.0)
    literal_text(fig)
    return fig


def draw_trend(d: TrendData, out_png: Path | str, label: str | None = None) -> Path:
    """Writes the trend plot (trend_figure(), 900 x 450 pixels); whole or not at all
    (output.NewFile, `label` naming it in messages), never over an existing file (each night
    has a folder of its own)."""
    with NewFile(out_png, label=label) as out:
        out.write(lambda tmp: trend_figure(d).savefig(tmp, format=out.format, dpi=100))
    return out.path
