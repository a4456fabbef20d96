"""The peer-to-peer matrix (scripts/gpubench_tools/p2p_matrix.py, scripts/p2p_matrix.py) from
a node's --device=all results, and the other tools on results that hold peer-to-peer rows: the
sweep plots and the roofline leave them out (level p2p is none of theirs), the comparator
compares them on GB/s, the HTML report lists them.

Every number here is SYNTHETIC (no GPU node was run), chosen to exercise the code.
"""

from __future__ import annotations

import copy

import pytest

from conftest import cli
from fixtures import H100_CONTEXT, _reps, entries, error_entry, h100_result, label, write_json
from gpubench_tools.compare import compare
from gpubench_tools.errors import UsageError
from gpubench_tools.p2p_matrix import KINDS, draw_matrix, label_path, matrix_data, to_text
from gpubench_tools.plots import ALL_PLOTS
from gpubench_tools.report import build_report
from gpubench_tools.results import load_result
from gpubench_tools.cards import load_cards
from gpubench_tools.roofline import roofline_data

#: A 3-GPU node: 0-1 over NVLink, 2 behind a host bridge.
PATHS = {(0, 1): "nvlink", (0, 2): "pcie_host_bridge", (1, 2): "pcie_host_bridge"}
MEM = {"verified": 1, "throttled": 0, "ops_per_iteration": 1}


def path_of(i: int, j: int) -> str:
    return PATHS[(min(i, j), max(i, j))]


def gbps(kind: str, i: int, j: int) -> float:
    """A synthetic figure per cell: distinct, so a transposed or misplaced cell is caught."""
    base = 370.0 if path_of(i, j) == "nvlink" else 25.0
    return base * (2 if "bidir" in kind else 1) + 10 * i + j + KINDS.index(kind) / 10


def p2p_label(i: int, j: int) -> str:
    return label("none", "GBps", "p2p", "peer") + f" path={path_of(i, j)}"


def node_result(i: int, devices: int = 3, skip_sm: bool = False, size: str = "256MiB") -> dict:
    """The result of CUDA device i of the node: row i of the matrix."""
    ctx = dict(H100_CONTEXT, device_ordinal=str(i), host_name="node07")
    b = []
    for j in range(devices):
        if j == i:
            continue
        for kind in KINDS:
            name = f"bandwidth/{kind}/peer:{j},bytes:{size}"
            if skip_sm and kind.startswith("p2p_sm"):
                b.append(error_entry(name, "skipped: no peer access between CUDA devices", p2p_label(i, j)))
                continue
            b += entries(name, _reps({**MEM, "GB/s": gbps(kind, i, j), "peer": j,
                                      "peer_access": 0 if skip_sm else 1}, n=3),
                         label=p2p_label(i, j))
    return {"context": ctx, "benchmarks": b}


def write_node(tmp_path, devices=3, **kw):
    return [write_json(node_result(i, devices, **kw), tmp_path / f"r.device{i}.json") for i in range(devices)]


def test_every_cell_of_every_kind_in_its_place(tmp_path):
    d = matrix_data([load_result(p) for p in write_node(tmp_path)])
    assert d.host == "node07"
    assert [m.kind for m in d.matrices] == list(KINDS)
    for m in d.matrices:
        assert m.devices == [0, 1, 2]
        assert m.bytes == 256 * 2**20
        for i in range(3):
            for j in range(3):
                if i == j:
                    assert (i, j) not in m.cells
                    continue
                c = m.cell(i, j)
                assert c.gbps == pytest.approx(gbps(m.kind, i, j)), (m.kind, i, j)
                assert c.path == path_of(i, j)
                assert c.why == ""


def test_text_tables_and_links(tmp_path):
    text = to_text(matrix_data([load_result(p) for p in write_node(tmp_path)]))
    assert "bytes counted once per direction" in text
    assert "p2p_ce/write (copy engine, I -> J), 256 MiB: row = the GPU that ran, column = its peer" in text
    # Row 1 of the copy-engine write matrix: to 0 over NVLink, itself, to 2 over PCIe.
    block = text.split("p2p_ce/write")[1].splitlines()
    row1 = next(line for line in block if line.split() and line.split()[0] == "1")
    assert row1.split() == ["1", f"{gbps('p2p_ce/write', 1, 0):.1f}", ".", f"{gbps('p2p_ce/write', 1, 2):.1f}"]
    assert "links (NVML topology): 0-1 nvlink, 0-2 pcie_host_bridge, 1-2 pcie_host_bridge" in text


def test_skipped_sm_rows_are_cells_without_numbers(tmp_path):
    d = matrix_data([load_result(p) for p in write_node(tmp_path, devices=2, skip_sm=True)])
    by_kind = {m.kind: m for m in d.matrices}
    assert by_kind["p2p_ce/write"].cell(0, 1).gbps is not None
    c = by_kind["p2p_sm/read"].cell(1, 0)
    assert c.gbps is None and c.why.startswith("skipped: no peer access")
    assert c.path == "nvlink"  # from the label of the skipped entry
    assert "skip" in to_text(d)


def test_a_missing_gpu_is_not_run(tmp_path):
    paths = write_node(tmp_path)
    d = matrix_data([load_result(p) for p in paths[:2]])  # device 2's run is missing
    m = d.matrices[0]
    assert m.devices == [0, 1, 2]  # the peer is known from the other rows
    assert m.cell(2, 0).why == "not run" and m.cell(2, 0).gbps is None
    assert m.cell(0, 2).gbps is not None


def test_heatmap_png_and_cli(tmp_path):
    paths = write_node(tmp_path)
    out = draw_matrix(matrix_data([load_result(p) for p in paths]), tmp_path / "m.png")
    assert out.exists() and out.stat().st_size > 10000
    png = tmp_path / "cli.png"
    code, stdout, stderr = cli("p2p_matrix.py", *map(str, paths), "--out", str(png))
    assert code == 0, stderr
    assert "p2p_sm/bidir" in stdout and png.exists()
    code, _, stderr = cli("p2p_matrix.py", *map(str, paths), "--out", str(png))
    assert code == 2 and "not overwritten without --force" in stderr
    # An output matplotlib would name otherwise (no or another suffix) is refused, nothing lost.
    keep = tmp_path / "keep.png"
    keep.write_text("precious")
    for out in (tmp_path / "keep", tmp_path / "m.txt", tmp_path / "missing" / "m.png"):
        code, _, stderr = cli("p2p_matrix.py", *map(str, paths), "--out", str(out))
        assert code == 2 and len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr, stderr
    assert keep.read_text() == "precious"


def test_names_from_the_results_are_printed_with_escapes_and_a_linked_output_is_refused_first(tmp_path):
    """Host and device names and link paths come from the result files: an ESC recoloured the
    terminal. An --out that is a link (one pointing nowhere too) was refused only after the
    tables were printed."""
    docs = [node_result(i, devices=2) for i in range(2)]
    for d in docs:
        d["context"]["host_name"] = "node\u001b[31m\n07"
        d["context"]["device_name"] = "H100\u0007"
    paths = [write_json(d, tmp_path / f"e.device{i}.json") for i, d in enumerate(docs)]
    code, out, err = cli("p2p_matrix.py", *map(str, paths))
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert "node\\x1b[31m\\n07: H100\\x07" in out
    link = tmp_path / "m.png"
    link.symlink_to(tmp_path / "nowhere.png")
    code, out, err = cli("p2p_matrix.py", *map(str, paths), "--out", str(link), "--force")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "symbolic link" in err, (out, err)
    assert not (tmp_path / "nowhere.png").exists()


def test_a_gpus_own_rows_file_beside_its_link_rows_file_is_left_aside(tmp_path):
    """--device=all writes a GPU's own rows and its link rows apart: given both (a whole run's
    files from the store), the matrix reads the files with peer-to-peer rows."""
    paths = write_node(tmp_path, devices=2)
    local = h100_result(labelled=True)
    local["context"].update(device_ordinal="0", host_name="node07")
    d = matrix_data([load_result(p) for p in paths] + [load_result(write_json(local, tmp_path / "local0.json"))])
    assert d.matrices and len(d.matrices[0].devices) == 2


@pytest.mark.parametrize("case", ["two_runs_of_one_gpu", "two_hosts", "no_p2p_rows", "no_ordinal",
                                  "huge_ordinal", "ordinal_64", "huge_peer", "peer_64", "quick_among_full",
                                  "own_gpu_as_peer"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, case):
    paths = write_node(tmp_path, devices=2)
    if case == "quick_among_full":
        # a --quick run's 16 MiB rows among 256 MiB ones: its GPU's row of the matrix was "-"
        quick = write_json(node_result(1, 2, size="16MiB"), tmp_path / "quick1.json")
        args = [paths[0], quick]
        want = f"{quick}: its peer-to-peer rows stop at 16 MiB, the other files' reach 256 MiB"
    elif case == "two_runs_of_one_gpu":
        args = [paths[0], write_json(node_result(0, 2), tmp_path / "again.json")]
        want = "both runs of CUDA device 0"
    elif case == "two_hosts":
        other = node_result(1, 2)
        other["context"]["host_name"] = "node08"
        args = [paths[0], write_json(other, tmp_path / "other.json")]
        want = "several hosts"
    elif case == "no_p2p_rows":
        one = h100_result(labelled=True)
        one["context"]["device_ordinal"] = "0"
        args = [write_json(one, tmp_path / "one_gpu.json")]
        want = "no peer-to-peer rows"
    elif case in ("huge_ordinal", "ordinal_64"):
        # an ordinal beyond any node (a matrix of 10^17 rows would never be printed)
        far = node_result(1, 2)
        far["context"]["device_ordinal"] = "100000000000000000" if case == "huge_ordinal" else "64"
        args = [paths[0], write_json(far, tmp_path / "far.json")]
        want = "device_ordinal"
    elif case == "own_gpu_as_peer":
        # device 1's rows naming device 1: their cell, on the diagonal, was dropped without a word
        own = node_result(1, 2)
        for e in own["benchmarks"]:
            for k in ("name", "run_name"):
                if k in e:
                    e[k] = e[k].replace("peer:0,", "peer:1,")
        args = [paths[0], write_json(own, tmp_path / "own.json")]
        want = "names its own GPU, CUDA device 1, as its peer"
    elif case in ("huge_peer", "peer_64"):
        # peers beyond any node: thousands of them printed hundreds of MB of tables (hundreds
        # took minutes to draw)
        far = node_result(0, 2)
        peer = 3000 if case == "huge_peer" else 64
        for e in far["benchmarks"]:
            for k in ("name", "run_name"):
                if k in e:
                    e[k] = e[k].replace("peer:1,", f"peer:{peer},")
        args = [write_json(far, tmp_path / "far.json"), paths[1]]
        want = f"peer {peer}, beyond any node (0 to 63: none has more than 64 GPUs)"
    else:
        bare = node_result(0, 2)
        del bare["context"]["device_ordinal"]
        args = [write_json(bare, tmp_path / "bare.json")]
        want = "names no CUDA device"
    code, stdout, stderr = cli("p2p_matrix.py", *map(str, args))
    assert code == 2 and stdout == ""
    assert len(stderr.strip().splitlines()) == 1 and want in stderr, stderr
    with pytest.raises(UsageError):
        matrix_data([load_result(p) for p in args])


def test_a_large_matrix_is_drawn_without_cell_texts(tmp_path, monkeypatch):
    """Each cell's GB/s and link fit a cell up to 16 GPUs; beyond, thousands of texts took
    minutes to lay out and overlapped: the heatmap keeps its colours only."""
    from gpubench_tools.p2p_matrix import matrix_figure

    small = matrix_data([load_result(p) for p in write_node(tmp_path, devices=3)])
    monkeypatch.setitem(globals(), "PATHS", {(i, j): "nvlink" for i in range(17) for j in range(17)})
    big = matrix_data([load_result(p) for p in write_node(tmp_path, devices=17)])
    assert len(big.matrices[0].devices) == 17
    assert all(not ax.texts for ax in matrix_figure(big).axes)
    assert all(len(ax.texts) == 6 for ax in matrix_figure(small).axes)


def test_label_path_is_read_from_the_entries(tmp_path):
    r = load_result(write_node(tmp_path, devices=2)[0])
    b = r.benchmarks["bandwidth/p2p_ce/write/peer:1,bytes:256MiB"]
    assert b.level == "p2p" and b.peak_kind == "none" and b.metric == "GB/s" and b.sweep == "peer"
    assert label_path(b) == "nvlink"
    # A row without path= (every other family's).
    h = load_result(write_json(h100_result(labelled=True), tmp_path / "h.json"))
    assert label_path(next(iter(h.benchmarks.values()))) == "unknown"


def test_the_other_tools_leave_p2p_rows_alone_or_take_them_as_rows(tmp_path):
    doc = h100_result(labelled=True)
    doc["context"]["device_ordinal"] = "0"
    doc["benchmarks"] += node_result(0)["benchmarks"]
    r = load_result(write_json(doc, tmp_path / "mixed.json"))
    plain = load_result(write_json(h100_result(labelled=True), tmp_path / "plain.json"))
    # The sweep plots and the roofline draw exactly what they drew without the p2p rows.
    for make in ALL_PLOTS:
        a, b = make(r), make(plain)
        assert (a is None) == (b is None), make.__name__
        if a is not None:
            assert [(ln.label, ln.xs, ln.ys) for ln in a.lines] == [(ln.label, ln.xs, ln.ys) for ln in b.lines]
    cards = load_cards()

    def ceilings(res):
        return [(c.kind, c.value, c.empirical) for s in roofline_data([res], [], cards).series for c in s.ceilings]

    assert ceilings(r) == ceilings(plain)
    # The comparator compares them on GB/s like any row.
    base = node_result(0)
    slower = copy.deepcopy(base)
    for e in slower["benchmarks"]:
        if "/p2p_ce/write/peer:1" in e["name"] and isinstance(e.get("GB/s"), (int, float)):
            e["GB/s"] *= 0.8
    c = compare(load_result(write_json(slower, tmp_path / "slower.json")),
                [load_result(write_json(base, tmp_path / "base.json"))])
    verdicts = {row.name: row.verdict for row in c.rows}
    assert verdicts["bandwidth/p2p_ce/write/peer:1,bytes:256MiB"] in ("SLOWER", "NOISY")
    assert verdicts["bandwidth/p2p_sm/read/peer:2,bytes:256MiB"] == "SAME"
    # The report lists them.
    html = build_report(r)
    assert "bandwidth/p2p_sm/bidir/peer:2,bytes:256MiB" in html


def test_a_link_label_with_dollar_signs_is_drawn_as_written(tmp_path):
    """matplotlib read "$...$" in a cell's link name (path=... in a hostile label) as mathtext
    and failed to draw; the text is drawn as written."""
    docs = [node_result(i, 2) for i in range(2)]
    for d in docs:
        d["context"]["device_name"] = "GPU $\\frac{$"
        for e in d["benchmarks"]:
            e["label"] = e["label"].replace("path=nvlink", "path=$\\frac{$")
    paths = [write_json(d, tmp_path / f"r.device{i}.json") for i, d in enumerate(docs)]
    code, out, err = cli("p2p_matrix.py", *paths, "--out", tmp_path / "m.png")
    assert code == 0 and "Traceback" not in err, err
    assert "$\\frac{$" in out and (tmp_path / "m.png").stat().st_size > 10000
