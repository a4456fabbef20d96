"""What a chart draws, read back from its matplotlib figure: the checks the plot tests share.

The drawing functions build their figures in plot_figure() (sweep plots), roofline_figure() and
trend_figure(); draw_*() only save them. The checks here read the figure's artists - each
labelled Line2D, each scatter's offsets, each annotation, the legend - and require that every
series, ceiling and point of the plot's data (PlotData, RooflineData, TrendData, themselves
tested against the JSON) became an artist at its coordinates, under its name, and nothing else.
assert_png() ties a written PNG to such a checked figure: its pixels must be the figure's.
"""

from __future__ import annotations

import io
from collections import Counter

import matplotlib.colors as mcolors
import matplotlib.dates as mdates
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.image import imread
from matplotlib.text import Annotation

from gpubench_tools.plots import PlotData, plot_figure
from gpubench_tools.roofline import CEILING_COLORS, RooflineData, level_name, roofline_figure
from gpubench_tools.trends import TrendData, trend_figure


def render(fig) -> np.ndarray:
    """The figure's pixels as a PNG of it holds them."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi)
    buf.seek(0)
    return imread(buf)


def assert_png(path, size, figure=None):
    """A PNG of `size` pixels was written at `path`; with `figure`, its pixels are exactly that
    figure's (whose artists the caller checked), so the file shows what the checks read."""
    assert path.exists(), path
    img = imread(path)
    assert (img.shape[1], img.shape[0]) == size
    if figure is not None:
        want = render(figure)
        assert img.shape == want.shape and np.array_equal(img, want), \
            f"{path} is not the figure of its data"


def legend_labels(ax) -> list[str]:
    """The legend's entries, in order (long ones are wrapped on the chart: unwrapped here), and
    the legend inside the figure."""
    legend = ax.get_legend()
    assert legend is not None, "the chart has no legend"
    fig = ax.figure
    box = legend.get_window_extent(fig.canvas.get_renderer() if hasattr(fig.canvas, "get_renderer")
                                   else FigureCanvasAgg(fig).get_renderer())
    assert box.x1 <= fig.bbox.x1 + 0.5, f"the legend runs {box.x1 - fig.bbox.x1:.0f} px past the figure's right edge"
    return [t.get_text().replace("\n  ", " ") for t in legend.get_texts()]


def labelled_lines(ax) -> dict:
    """label -> Line2D of every line with a legend label; a label drawn twice fails."""
    labels = [ln.get_label() for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    dup = [k for k, n in Counter(labels).items() if n > 1]
    assert not dup, f"lines drawn twice: {dup}"
    return {ln.get_label(): ln for ln in ax.get_lines() if not ln.get_label().startswith("_")}


def labelled_scatters(ax) -> dict:
    """label -> (n, 2) offsets of every labelled scatter; a label drawn twice fails."""
    cols = [c for c in ax.collections if isinstance(c, PathCollection)
            and not c.get_label().startswith("_")]
    dup = [k for k, n in Counter(c.get_label() for c in cols).items() if n > 1]
    assert not dup, f"scatters drawn twice: {dup}"
    return {c.get_label(): np.asarray(c.get_offsets(), dtype=float) for c in cols}


def xy(line) -> tuple[np.ndarray, np.ndarray]:
    """A line's data as float arrays."""
    return (np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float))


def same_points(got: np.ndarray, want: list[tuple[float, float]], what: str):
    """The same (x, y) points, in any order."""
    got = sorted(map(tuple, np.asarray(got, dtype=float).reshape(-1, 2)))
    want = sorted(want)
    assert len(got) == len(want), f"{what}: {len(got)} points drawn, {len(want)} expected"
    for g, w in zip(got, want):
        assert g == pytest.approx(w, rel=1e-9), f"{what}: drawn at {g}, expected {w}"


# --- sweep plots ----------------------------------------------------------------------------


def _check_panel(ax, d: PlotData, lines_of_data, hlines, vlines, ylabel):
    """One panel: exactly these lines (each at its xs/ys under its label; dashed exactly when
    the data says; markers without a line exactly when markers_only; in the colour of the line
    color_of names, and every line that names none in a colour no other such line has), peaks
    and marks, each named in the legend; the y label and scale the data says."""
    lines = labelled_lines(ax)
    want = [ln.label for ln in lines_of_data] + [h[1] for h in hlines] + [v[1] for v in vlines]
    assert sorted(lines) == sorted(want), f"{d.kind}: lines {sorted(lines)}, expected {sorted(want)}"
    for ln in lines_of_data:
        drawn = lines[ln.label]
        x, y = xy(drawn)
        assert list(x) == pytest.approx(ln.xs, rel=1e-12), ln.label
        assert list(y) == pytest.approx(ln.ys, rel=1e-12), ln.label
        assert (drawn.get_linestyle() == "--") == ln.dashed, ln.label
        assert (drawn.get_linestyle() == "None") == ln.markers_only, ln.label
        if ln.markers_only:
            assert drawn.get_marker() not in (None, "None", ""), f"{ln.label}: no marker"
        if ln.color_of:
            assert drawn.get_color() == lines[ln.color_of].get_color(), \
                f"{ln.label}: not in the colour of {ln.color_of}"
    own = [lines[ln.label].get_color() for ln in lines_of_data if not ln.color_of]
    assert len(own) == len(set(own)) or len(own) > 10, f"{d.kind}: two series share a colour"
    for value, label in hlines:
        _, y = xy(lines[label])
        assert list(y) == pytest.approx([value, value]), label
    for value, label in vlines:
        x, _ = xy(lines[label])
        assert list(x) == pytest.approx([value, value]), label
    assert sorted(legend_labels(ax)) == sorted(want)
    assert ax.get_ylabel() == ylabel
    assert ax.get_yscale() == ("log" if d.y_log else "linear"), f"{d.kind}: y scale"
    assert ax.get_xscale() == ("log" if d.x_log2 else "linear"), f"{d.kind}: x scale"


def check_plot_figure(d: PlotData):
    """Every Line of d a curve at its xs/ys under its label (dashed, or markers only, exactly
    when d says; in the colour of the line it names), every peak a horizontal line at its value,
    every mark a vertical one at its x, each named in the legend, and no other labelled line;
    with lines2 a second panel below holding exactly those, the x label under it. Returns the
    figure."""
    fig = plot_figure(d)
    assert len(fig.axes) == (2 if d.lines2 else 1), f"{d.kind}: {len(fig.axes)} panels"
    ax = fig.axes[0]
    _check_panel(ax, d, d.lines, d.hlines, d.vlines, d.ylabel)
    if d.lines2:
        _check_panel(fig.axes[1], d, d.lines2, [], [], d.ylabel2)
    assert ax.get_title() == d.title and fig.axes[-1].get_xlabel() == d.xlabel
    return fig


# --- the roofline ---------------------------------------------------------------------------


def _top(values_by_kind: dict, measured: bool):
    """The highest value of a kind (measured or theoretical), else of the other, else None."""
    for kind in (measured, not measured):
        if values_by_kind[kind]:
            return max(values_by_kind[kind])
    return None


def expected_ceiling_ends(s, c, x_range) -> tuple[tuple[float, float], tuple[float, float]]:
    """The two ends of a ceiling's line, worked out here from the series' ceilings alone: a
    diagonal from the left edge until it meets the highest roof of its kind (theoretical or
    measured; the other kind's when it has none; the right edge when there is no roof), a roof
    from its ridge with the highest diagonal of its kind (same fallbacks) to the right edge."""
    x_lo, x_hi = x_range
    roofs = {m: [d.value for d in s.ceilings if not d.diagonal and d.empirical == m]
             for m in (False, True)}
    diagonals = {m: [d.value for d in s.ceilings if d.diagonal and d.empirical == m]
                 for m in (False, True)}
    if c.diagonal:
        roof = _top(roofs, c.empirical)
        x1 = min(x_hi, roof * 1000.0 / c.value) if roof else x_hi
        return (x_lo, c.value * x_lo / 1000.0), (x1, c.value * x1 / 1000.0)
    diag = _top(diagonals, c.empirical)
    x0 = max(x_lo, c.value * 1000.0 / diag) if diag else x_lo
    return (x0, c.value), (x_hi, c.value)


def roofline_texts(ax) -> tuple[Counter, dict]:
    """(Counter of (text, x, y) of the annotations, {(text, y): count} of the plain texts)."""
    notes = Counter((a.get_text(), round(a.xy[0], 12), round(a.xy[1], 15))
                    for a in ax.texts if isinstance(a, Annotation))
    plain = Counter((t.get_text(), round(t.get_position()[1], 9)) for t in ax.texts
                    if not isinstance(t, Annotation))
    return notes, plain


def check_roofline_figure(data: RooflineData):
    """For every series: each ceiling a line under its label (prefixed by the series' label
    when there are several): solid when theoretical, dashed when measured, in its kind's colour
    (one series) or its series' colour (several), between the ends expected_ceiling_ends()
    works out; each tagged diagonal its name and value written on the line; each roof its name
    at the right edge (several series: the theoretical ones); each ridge a hollow mark and its
    label at (ridge, roof); each intensity sweep a curve through its points, each point
    annotated with its label; every other point a scatter marker at its (x, y) in the group of
    its kernel and variant, the group named with its best point in the legend. Nothing else:
    no other line, scatter or text (no memory column, no label of a point that is not drawn);
    the legend names exactly these. Returns the figure."""
    fig = roofline_figure(data)
    ax = fig.axes[0]
    assert not ax.patches, "a shaded patch (the old memory column) is drawn"
    lines, scatters = labelled_lines(ax), labelled_scatters(ax)
    notes, plain = roofline_texts(ax)
    want_lines, want_scatters, want_notes = [], [], Counter()
    several = len(data.series) > 1
    series_colors = []
    for s in data.series:
        prefix = f"{s.label}: " if several else ""
        colors = set()
        for c in s.ceilings:
            label = prefix + c.label
            want_lines.append(label)
            assert label in lines, f"ceiling '{label}' not drawn"
            ln = lines[label]
            (x0, y0), (x1, y1) = expected_ceiling_ends(s, c, data.x_range)
            x, y = xy(ln)
            assert list(x) == pytest.approx([x0, x1], rel=1e-12), f"{label}: drawn over {x}"
            assert list(y) == pytest.approx([y0, y1], rel=1e-12), f"{label}: drawn at {y}"
            if c.diagonal:  # on y = GB/s x intensity / 1000
                assert list(y * 1000.0 / x) == pytest.approx([c.value] * 2, rel=1e-12), label
            assert ln.get_linestyle() == ("--" if c.empirical else "-"), \
                f"{label}: {'measured' if c.empirical else 'theoretical'} but {ln.get_linestyle()}"
            want_color = CEILING_COLORS[c.kind] if not several else None
            if want_color:
                assert mcolors.same_color(ln.get_color(), want_color), f"{label}: colour"
            colors.add(mcolors.to_hex(ln.get_color()))
            twin = next((d for d in s.ceilings if d.kind == c.kind and not d.empirical), None)
            if c.diagonal and (not c.empirical or twin is None):
                tag = f"{level_name(c.kind, s.host)} "
                hits = [a for a in ax.texts if isinstance(a, Annotation)
                        and a.get_text().startswith(tag) and a.xy[0] >= data.x_range[0]
                        and a.xy[1] * 1000.0 / a.xy[0] == pytest.approx(c.value, rel=1e-9)
                        and (a.get_text().endswith("(measured)") == c.empirical)]
                assert len(hits) == 1, f"{label}: no tag on the line"
                want_notes[(hits[0].get_text(), round(hits[0].xy[0], 12),
                            round(hits[0].xy[1], 15))] += 1
            if not c.diagonal and (not several or not c.empirical):
                names = [t for t in ax.texts if not isinstance(t, Annotation)
                         and t.get_text() == c.label.split(" (")[0]
                         and t.get_position()[0] == pytest.approx(data.x_range[1] / 1.05)]
                assert names, f"{label}: no name at the right edge"
        if several:
            assert len(colors) == 1, f"{s.label}: its lines in {colors}"
            series_colors.append(colors.pop())
        for r in s.ridges:
            roof, bw = s.ceiling(r.roof, r.empirical), s.ceiling(r.bandwidth, r.empirical)
            assert r.x == pytest.approx(roof.value * 1000.0 / bw.value, rel=1e-12)
            marks = [ln for ln in ax.get_lines() if ln.get_label().startswith("_")
                     and ln.get_marker() == "o" and len(ln.get_xdata()) == 1
                     and ln.get_xdata()[0] == pytest.approx(r.x)
                     and ln.get_ydata()[0] == pytest.approx(r.y)]
            assert marks, f"ridge {r.label}: no mark at ({r.x:g}, {r.y:g})"
            want_notes[(r.label, round(r.x, 12), round(r.y, 15))] += 1
        sweeps: dict[str, list] = {}
        for p in s.points:
            if p.sweep:
                sweeps.setdefault(p.sweep, []).append(p)
        for sweep, pts in sweeps.items():
            label = f"{prefix}{sweep} sweep (labels: its parameter)"
            want_lines.append(label)
            assert label in lines, f"sweep '{label}' not drawn"
            pts = sorted(pts, key=lambda p: p.x)
            x, y = xy(lines[label])
            assert list(x) == pytest.approx([p.x for p in pts], rel=1e-12), label
            assert list(y) == pytest.approx([p.y for p in pts], rel=1e-12), label
            for p in pts:
                want_notes[(p.label, round(p.x, 12), round(p.y, 15))] += 1
        groups: dict[str, list] = {}
        for p in s.points:
            if not p.sweep:
                assert p.group, f"{p.name}: neither on a sweep nor in a group"
                groups.setdefault(p.group, []).append(p)
        for group, pts in groups.items():
            best = max(pts, key=lambda p: p.y)
            label = (f"{prefix}{group} ({'library' if best.library else 'gpubench'}): best "
                     f"{best.y:.4g} TFLOP/s" + (f" at {best.params}" if best.params else ""))
            want_scatters.append(label)
            assert label in scatters, f"points '{label}' not drawn"
            same_points(scatters[label], [(p.x, p.y) for p in pts], label)
    if several:
        assert len(set(series_colors)) == len(series_colors), "two series share a colour"
    assert sorted(lines) == sorted(want_lines)
    assert sorted(scatters) == sorted(want_scatters)
    assert notes == want_notes, \
        f"annotations: extra {notes - want_notes}, missing {want_notes - notes}"
    roof_names = sum(1 for s in data.series for c in s.ceilings
                     if not c.diagonal and (not several or not c.empirical))
    assert sum(plain.values()) == roof_names, f"texts besides the roof names: {plain}"
    if several:
        # The compact legend: each series, each theoretical ceiling (named by its series where
        # several have some), one entry for the measured ones, each point group and sweep once.
        cards = sum(1 for s in data.series if any(not c.empirical for c in s.ceilings))
        want_legend = [s.label for s in data.series]
        want_legend += [f"{s.label}: {c.label}" if cards > 1 else c.label
                        for s in data.series for c in s.ceilings if not c.empirical]
        if any(c.empirical for s in data.series for c in s.ceilings):
            want_legend.append("measured ceilings, each in its run's colour")
        kinds = {p.group: p.library for s in data.series for p in s.points if p.group}
        want_legend += [f"{g} ({'library' if lib else 'gpubench'})" for g, lib in kinds.items()]
        want_legend += [f"{w} sweep" for w in {p.sweep for s in data.series for p in s.points if p.sweep}]
        assert sorted(legend_labels(ax)) == sorted(want_legend)
    else:
        assert sorted(legend_labels(ax)) == sorted(want_lines + want_scatters)
    assert ax.get_title() == data.title
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlim() == pytest.approx(data.x_range)
    assert ax.get_ylim() == pytest.approx(data.y_range)
    return fig


# --- trend plots ----------------------------------------------------------------------------


def check_trend_figure(d: TrendData):
    """The medians at their run times with error bars from each run's min to its max, the
    baseline band from its low to its high bound and a line at its median when the data has a
    band, a red cross on exactly the runs judged SLOWER, each named in the legend. Returns the
    figure."""
    fig = trend_figure(d)
    ax = fig.axes[0]
    when = [mdates.date2num(p.when) for p in d.points]
    (bars,) = ax.containers
    assert bars.get_label() == "median (min-max over repetitions)"
    x = np.asarray(mdates.date2num(list(bars.lines[0].get_xdata())), dtype=float)
    y = np.asarray(bars.lines[0].get_ydata(), dtype=float)
    assert list(x) == pytest.approx(when) and list(y) == pytest.approx([p.median for p in d.points])
    (segments,) = bars.lines[2]
    got = np.array(sorted((s[0][0], min(s[0][1], s[1][1]), max(s[0][1], s[1][1]))
                          for s in segments.get_segments()))
    want = np.array(sorted(zip(when, [p.lo for p in d.points], [p.hi for p in d.points])))
    assert got.shape == want.shape and np.allclose(got, want, rtol=1e-9, atol=0), \
        "error bars not from each run's min to its max"
    lines, scatters = labelled_lines(ax), labelled_scatters(ax)
    want = ["median (min-max over repetitions)"]
    bands = [p for p in ax.patches if p.get_label() == "baseline median +- SLOWER bound"]
    if d.band:
        lo, med, hi = d.band
        want += ["baseline median +- SLOWER bound", "baseline median"]
        assert len(bands) == 1, "no baseline band"
        ys = bands[0].get_patch_transform().transform(bands[0].get_path().vertices)[:, 1]
        assert (ys.min(), ys.max()) == pytest.approx((lo, hi)), "band not at the baseline bound"
        assert list(xy(lines["baseline median"])[1]) == pytest.approx([med, med])
    else:
        assert not bands and "baseline median" not in lines
    bad = [(w, p.median) for w, p in zip(when, d.points) if p.verdict == "SLOWER"]
    if bad:
        want.append("SLOWER")
        same_points(scatters["SLOWER"], bad, "SLOWER marks")
    assert sorted(set(lines) | set(scatters)) == sorted(set(want) - {"median (min-max over repetitions)",
                                                                     "baseline median +- SLOWER bound"})
    assert sorted(legend_labels(ax)) == sorted(want)
    assert ax.get_title() == d.name and ax.get_ylabel() == d.metric
    return fig
