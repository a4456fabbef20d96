"""The peer-to-peer bandwidth matrix of a node, from the results of one `gpubench --device=all`
run (one result file per GPU; the run on CUDA device I holds row I of the matrix).

gpubench's peer-to-peer rows (families/p2p: `bandwidth/p2p_ce/{write,read,bidir}/peer:J,bytes:S`,
`bandwidth/p2p_sm/{write,read,bidir}/peer:J,bytes:S`) are recognised by what their label says,
level=p2p, and carry the link to the peer as path= (nvlink, pcie_switch, pcie_host_bridge, ...,
unknown: harness/cuda/peer_topology.h). A result's own GPU is its context's device_ordinal, the
peer the row's `peer` parameter.

matrix_data() builds one Matrix per row kind (p2p_ce/write, ..., p2p_sm/bidir) at the largest
size the results hold: cell (I, J) is the median GB/s over repetitions of the row run on GPU I
towards GPU J (bidir: both directions' bytes, once each), or why there is none (skipped, failed,
not run); to_text() prints them as tables (row: the GPU of the run, column: its peer) and
draw_matrix() draws them as heatmaps, each cell with its GB/s and its link.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UsageError
from .figures import literal_text
from .output import NewFile, visible
from .results import Benchmark, Result, parse_size, to_number

#: The level gpubench's peer-to-peer rows carry in their label.
P2P_LEVEL = "p2p"
#: The row kinds in the order they are shown (kernel/variant).
KINDS = ("p2p_ce/write", "p2p_ce/read", "p2p_ce/bidir", "p2p_sm/write", "p2p_sm/read", "p2p_sm/bidir")
#: What each kind measures, for titles.
KIND_TITLES = {
    "p2p_ce/write": "copy engine, I -> J",
    "p2p_ce/read": "copy engine of I, J -> I",
    "p2p_ce/bidir": "copy engine, both ways (sum)",
    "p2p_sm/write": "SM copy, I writes J",
    "p2p_sm/read": "SM copy, I reads J",
    "p2p_sm/bidir": "SM copy, both ways (sum)",
}
#: Short forms of the links for the heatmap's cells.
PATH_ABBREV = {
    "nvlink": "NVL", "pcie_same_board": "PCIe board", "pcie_switch": "PCIe sw",
    "pcie_switches": "PCIe sws", "pcie_host_bridge": "PCIe HB", "pcie_numa_node": "PCIe node",
    "pcie_cross_socket": "PCIe sys", "unknown": "?",
}

FIGSIZE_PER_PANEL = (4.2, 3.8)
DPI = 100


@dataclass
class Cell:
    """One (GPU, peer) entry of a matrix."""

    gbps: float | None = None  #: median GB/s; None when there is no number
    path: str = "unknown"  #: the link, from the row's label
    why: str = ""  #: when there is no number: "skipped: ...", "failed: ...", "not run"


@dataclass
class Matrix:
    """One row kind over every (GPU, peer) pair of the node."""

    kind: str  #: kernel/variant, e.g. "p2p_ce/write"
    bytes: float  #: the copy size of its rows
    devices: list[int]  #: the GPUs, by CUDA ordinal
    cells: dict[tuple[int, int], Cell] = field(default_factory=dict)  #: (I, J), I != J

    def cell(self, i: int, j: int) -> Cell:
        """The entry of GPU i towards peer j ("not run" when the results lack it)."""
        return self.cells.get((i, j), Cell(why="not run"))


@dataclass
class P2pMatrix:
    """Every matrix of a node's results."""

    host: str
    device_name: str
    matrices: list[Matrix]


def label_path(b: Benchmark) -> str:
    """The link a peer-to-peer row names in its label (path=...), "unknown" when it names none."""
    for e in list(b.samples) + list(b.aggregates.values()):
        label = e.get("label")
        if not isinstance(label, str):
            continue
        for token in label.split():
            key, eq, value = token.partition("=")
            if eq and key == "path" and value:
                return value
    return "unknown"


def p2p_rows(result: Result) -> list[Benchmark]:
    """The result's peer-to-peer rows: level p2p by their label."""
    return [b for b in result.benchmarks.values() if b.level == P2P_LEVEL]


#: CUDA device ordinals a node can have, 0 to MAX_DEVICES - 1: beyond any node (an HGX or DGX
#: board has 8 GPUs, a PCIe-switched chassis some more). A device ordinal or a peer
#: beyond them is a forged file: hundreds of peers printed tens of MB of tables and took minutes
#: to draw.
MAX_DEVICES = 64
#: The most GPUs whose heatmap cells are annotated with their GB/s and link: beyond, the texts
#: would not fit their cells (and thousands of them took minutes to lay out); colours only.
MAX_ANNOTATED_DEVICES = 16


def _ordinal(result: Result) -> int:
    v = to_number(result.ctx("device_ordinal"))
    if v is None or v < 0 or v != math.floor(v):
        raise UsageError(f"{result.path}: its context names no CUDA device (device_ordinal "
                         f"'{result.ctx('device_ordinal')}'): not a run on one GPU of a node")
    if v >= MAX_DEVICES:
        raise UsageError(f"{result.path}: not a gpubench result: device_ordinal "
                         f"{result.ctx('device_ordinal')[:40]} is beyond any node (0 to "
                         f"{MAX_DEVICES - 1}: none has more than {MAX_DEVICES} GPUs)")
    return int(v)


def _peer(b: Benchmark) -> int | None:
    try:
        return int(b.params.get("peer", ""))
    except ValueError:
        return None


def _check_peers(result: Result, device: int) -> None:
    """UsageError when a peer-to-peer row of `result` (a run of CUDA device `device`) names a
    peer beyond any node, or the GPU itself (gpubench writes no such row; its cell, on the
    diagonal, was left out without a word)."""
    for b in p2p_rows(result):
        j = _peer(b)
        if j is not None and not 0 <= j < MAX_DEVICES:
            raise UsageError(f"{result.path}: not a gpubench result: {b.name} names peer "
                             f"{str(j)[:40]}, beyond any node (0 to {MAX_DEVICES - 1}: none has "
                             f"more than {MAX_DEVICES} GPUs)")
        if j == device:
            raise UsageError(f"{result.path}: not a gpubench result: {b.name} names its own GPU, "
                             f"CUDA device {device}, as its peer")


def _bytes(b: Benchmark) -> float | None:
    try:
        return parse_size(b.params.get("bytes", ""))
    except ValueError:
        return None


def matrix_data(results: list[Result]) -> P2pMatrix:
    """The matrices of one node's results (one file per GPU). UsageError when they are not one
    node's (different hosts), two files are runs of the same GPU, or none has peer-to-peer rows."""
    if not results:
        raise UsageError("no result files given")
    hosts = {r.ctx("host_name") for r in results}
    if len(hosts) > 1:
        raise UsageError(f"the results come from several hosts ({', '.join(sorted(hosts))}): a "
                         f"matrix is one node's")
    # --device=all writes a GPU's own rows and its link rows apart: only the files with
    # peer-to-peer rows count, so that a whole store's files of one run can be given.
    with_rows = [r for r in results if p2p_rows(r)]
    results = with_rows or results
    by_device: dict[int, Result] = {}
    for r in results:
        i = _ordinal(r)
        _check_peers(r, i)
        if i in by_device:
            raise UsageError(f"{by_device[i].path} and {r.path} are both runs of CUDA device {i}; "
                             f"give one run per GPU")
        by_device[i] = r
    rows = [(i, b) for i, r in sorted(by_device.items()) for b in p2p_rows(r)
            if _peer(b) is not None and _bytes(b)]
    if not rows:
        names = ", ".join(str(r.path) for r in results)
        raise UsageError(f"no peer-to-peer rows (level p2p) in {names}: they exist only where "
                         f"gpubench saw two GPUs or more")
    size = max(_bytes(b) for _, b in rows)
    for i, r in sorted(by_device.items()):  # a GPU whose rows stop short would show as "-" silently
        sizes = {_bytes(b) for b in p2p_rows(r) if _peer(b) is not None and _bytes(b)}
        if sizes and size not in sizes:
            raise UsageError(f"{r.path}: its peer-to-peer rows stop at {_size_text(max(sizes))}, the "
                             f"other files' reach {_size_text(size)} (a --quick run among full ones?): "
                             f"give one run of one kind per GPU")
    peers = {_peer(b) for _, b in rows}
    devices = sorted(set(by_device) | peers)
    paths: dict[tuple[int, int], str] = {}
    for i, b in rows:
        p = label_path(b)
        if p != "unknown" or (i, _peer(b)) not in paths:
            paths[(i, _peer(b))] = p
    matrices = []
    for kind in KINDS:
        m = Matrix(kind=kind, bytes=size, devices=devices)
        for i, b in rows:
            if f"{b.kernel}/{b.variant}" != kind or _bytes(b) != size:
                continue
            j = _peer(b)
            c = Cell(path=paths.get((i, j), "unknown"))
            if b.skipped:
                c.why = b.error or "skipped"
            elif b.verification_failed or not b.ok:
                c.why = "failed: " + (b.error or "not verified")
            else:
                c.gbps = b.median(b.metric)
                if c.gbps is None:
                    c.why = "no GB/s"
            m.cells[(i, j)] = c
        if m.cells:
            matrices.append(m)
    first = by_device[min(by_device)]
    return P2pMatrix(host=first.ctx("host_name") or "unknown", device_name=first.device_name,
                     matrices=matrices)


def _size_text(n: float) -> str:
    for unit, s in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= s:
            return f"{n / s:g} {unit}"
    return f"{n:g} B"


def _cell_text(c: Cell) -> str:
    if c.gbps is not None:
        return f"{c.gbps:.1f}"
    return "skip" if c.why.startswith("skipped") else "FAIL" if c.why.startswith("failed") else "-"


def to_text(d: P2pMatrix) -> str:
    """The matrices as plain tables (GB/s; row: the GPU that ran, column: its peer; `skip`,
    `FAIL` or `-` where there is no number), then the link of every pair."""
    # Host, device and link names come from the results: visible() writes their control
    # characters (line breaks too) as escapes.
    out = [f"peer-to-peer bandwidth, {visible(d.host)}: {visible(d.device_name)} (GB/s, bytes counted once per "
           f"direction)"]
    for m in d.matrices:
        out.append("")
        out.append(f"{m.kind} ({KIND_TITLES.get(m.kind, m.kind)}), {_size_text(m.bytes)}: "
                   f"row = the GPU that ran, column = its peer")
        out.append("      " + "".join(f"{j:>9}" for j in m.devices))
        for i in m.devices:
            cells = "".join(f"{'.' if i == j else _cell_text(m.cell(i, j)):>9}" for j in m.devices)
            out.append(f"{i:>6}" + cells)
    if d.matrices:
        m = d.matrices[0]
        out.append("")
        out.append("links (NVML topology): " + ", ".join(
            f"{i}-{j} {visible(m.cell(i, j).path)}" for i in m.devices for j in m.devices if i < j))
    return "\n".join(out) + "\n"


def matrix_figure(d: P2pMatrix):
    """The matplotlib Figure of the matrices (no pyplot state): one heatmap per row kind, two
    rows of panels, each cell annotated with its GB/s (or skip / FAIL) and its link (up to
    MAX_ANNOTATED_DEVICES GPUs)."""
    import numpy as np
    from matplotlib.figure import Figure

    n = len(d.matrices)
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig = Figure(figsize=(FIGSIZE_PER_PANEL[0] * cols, FIGSIZE_PER_PANEL[1] * rows + 0.6), dpi=DPI)
    top = max((m.cell(i, j).gbps or 0) for m in d.matrices for i in m.devices for j in m.devices)
    fig.suptitle(f"Peer-to-peer bandwidth, GB/s: {d.device_name} x {len(d.matrices[0].devices)} "
                 f"on {d.host}", fontsize=11)
    for k, m in enumerate(d.matrices):
        ax = fig.add_subplot(rows, cols, k + 1)
        size = len(m.devices)
        grid = np.full((size, size), np.nan)
        for a, i in enumerate(m.devices):
            for b, j in enumerate(m.devices):
                v = m.cell(i, j).gbps if i != j else None
                if v is not None:
                    grid[a, b] = v
        ax.imshow(grid, cmap="viridis", vmin=0, vmax=top or 1)
        ax.set_title(f"{m.kind}: {KIND_TITLES.get(m.kind, '')}\n{_size_text(m.bytes)}", fontsize=9)
        # every GPU's tick up to 16; beyond, 8 or so (more overlapped)
        step = 1 if size <= MAX_ANNOTATED_DEVICES else -(-size // 8)
        ax.set_xticks(range(0, size, step), [str(j) for j in m.devices[::step]])
        ax.set_yticks(range(0, size, step), [str(i) for i in m.devices[::step]])
        ax.set_xlabel("peer GPU", fontsize=8)
        ax.set_ylabel("GPU that ran", fontsize=8)
        if size > MAX_ANNOTATED_DEVICES:
            continue
        for a, i in enumerate(m.devices):
            for b, j in enumerate(m.devices):
                if i == j:
                    continue
                c = m.cell(i, j)
                # White on the dark end of the colour map; black on its bright end and on the
                # blank cells (no number).
                dark = c.gbps is not None and c.gbps <= 0.6 * (top or 1)
                ax.text(b, a, f"{_cell_text(c)}\n{PATH_ABBREV.get(c.path, c.path)}", ha="center",
                        va="center", fontsize=7, color="white" if dark else "black")
    literal_text(fig)  # (before the layout measures the texts)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    return fig


def draw_matrix(d: P2pMatrix, out_png: Path | str, overwrite: bool = False) -> Path:
    """Writes matrix_figure() as a PNG (or the SVG or PDF its name asks for) and returns its
    path; whole or not at all (output.NewFile), never over an existing file unless
    `overwrite`."""
    with NewFile(out_png, overwrite) as out:
        out.write(lambda tmp: matrix_figure(d).savefig(tmp, format=out.format, dpi=DPI))
    return out.path
