#!/usr/bin/env python3
"""The acceptance run: is this node normal?

Runs `gpubench --validate` (the compact row set: DRAM copy, L2 plateau, pinned PCIe both ways,
SGEMM and FP16 GEMM with cuBLAS, peak FMA; under two minutes on an H100) on the chosen GPUs, or
reads result files already written, and judges every number against the card's expected bands
(harness/model/bands.csv, each band with its source): PASS, WARN or FAIL per band, per GPU and
for the node, each verdict that is not a PASS with its likely cause (PCIe link below its maximum
or narrowed upstream, clocks throttled, the wrong NUMA node, ECC errors or remapped rows, other
processes on the GPU, MIG on). A card without bands gets its numbers and no verdict, said plainly.

  python scripts/validate.py [--device=auto|N|all] [--results-dir results]
                             [--junit FILE.xml] [--markdown FILE.md] [--json FILE.json]
  python scripts/validate.py --result FILE.json [--result ...]      (judge files already written)

--results-dir is relative to the current folder (default ./results), as nightly.py's. The options
of a run (--device, --results-dir, --quick, --gpubench, --timeout) are refused with --result.

Exit status: 0 the node passed (or warned, or has no bands: said plainly); 1 a band failed, a
band was not measured (INCOMPLETE), gpubench failed or wrote nothing, or --device=auto found no
usable GPU and ran on the host; 2 bad input. Output files are never overwritten.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpubench_tools.errors import exit_on_signals  # noqa: E402

exit_on_signals("validate.py", __name__)  # a signal while the modules below load: one line

from gpubench_tools.acceptance import FAIL, INCOMPLETE, evaluate, load_bands, node_verdict  # noqa: E402
from gpubench_tools.acceptance_output import as_json, console_lines, junit, markdown  # noqa: E402
from gpubench_tools.errors import UsageError, make_parser, run_cli  # noqa: E402
from gpubench_tools.gpubench_process import (check_results_dir, check_timeout, default_gpubench,  # noqa: E402
                                             executable, new_folders, remove_new_empty, run)
from gpubench_tools.output import NewFile, commit_all, make_folders, remove_empty, visible  # noqa: E402
from gpubench_tools.results import load_result  # noqa: E402

HERE = Path(__file__).resolve().parent


def check_outputs(paths: list[Path | None]) -> None:
    """Refuses, before anything runs (the acceptance run takes minutes), an output that is empty,
    given twice, exists, or whose folder does not exist or cannot be written (a file is created
    and removed there, as each output's temporary will be)."""
    given = [p for p in paths if p is not None]
    if len({p.resolve() for p in given}) != len(given):
        raise UsageError("the same file is given for two outputs")
    for p in given:
        if p.is_symlink():  # also one that points nowhere, which exists() does not see
            raise UsageError(f"{p}: is a symbolic link; an output is never written through one")
        if p.is_dir():
            raise UsageError(f"{p}: is a directory, not an output file")
        if p.exists():
            raise UsageError(f"{p} exists; acceptance reports are not overwritten")
        if visible(str(p)) != str(p):
            raise UsageError(f"{visible(str(p))}: a file name with control characters (a newline, an escape)")
        if not p.parent.is_dir():
            raise UsageError(f"{p}: folder {p.parent} does not exist")
        try:
            fd, probe = tempfile.mkstemp(prefix=".validate.", suffix=".tmp", dir=p.parent)
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise UsageError(f"{p}: cannot write there: {e.strerror or e}") from None


def run_gpubench(binary: Path, device: str, results_dir: Path, quick: bool, timeout: float) -> tuple[int, list[Path]]:
    """Runs the acceptance rows; returns gpubench's exit status and the result files it wrote
    (the "result: PATH" lines; with --device=all one or two per GPU)."""
    if not binary.is_file():
        raise UsageError(f"gpubench not found at {binary}: build it (scripts/run.sh builds) or set GPUBENCH_BIN")
    made = make_folders(results_dir)
    keys_before = new_folders(results_dir)
    files: list[Path] = []
    try:
        status, files = _run_gpubench(binary, device, results_dir, quick, timeout)
    finally:
        if not files:  # no result: the folders made for it go, when empty
            remove_new_empty(results_dir, keys_before)
            remove_empty(made)
    return status, files


def _run_gpubench(binary: Path, device: str, results_dir: Path, quick: bool,
                  timeout: float) -> tuple[int, list[Path]]:
    cmd = [executable(binary), "--validate", f"--device={device}", f"--results-dir={results_dir}", "--progress=off"]
    if quick:
        cmd.append("--quick")
    print("running: " + " ".join(cmd), file=sys.stderr)
    try:
        proc = run(cmd, timeout, [results_dir])  # stopped with SIGTERM first: it cleans up
    except OSError as e:
        raise UsageError(f"{binary}: cannot run gpubench: {e.strerror or e}") from None
    if proc.timed_out:
        sys.stderr.write(proc.stderr)
        print(f"validate.py: gpubench did not finish within {timeout:g} s (a hung GPU?): the node fails",
              file=sys.stderr)
        return 1, []
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    files = [Path(m) for m in re.findall(r"^result: (.+)$", proc.stdout + "\n" + proc.stderr, re.M)]
    return proc.returncode, list(dict.fromkeys(files))


def write_reports(reports: list[tuple[str, Path | None, object]]) -> None:
    """Writes the requested reports ((flag, path, render) each) together or not at all, never
    over an existing file (output.NewFile: each drawn to a temporary file beside it)."""
    pending: list[NewFile] = []
    try:
        for flag, path, render in reports:
            if path is not None:
                f = NewFile(path, label=f"{flag} {path}")
                pending.append(f)
                text = render()
                f.write(lambda tmp: tmp.write_text(text, encoding="utf-8"))
        for path in commit_all(pending):
            print(f"wrote {path}", file=sys.stderr)
    finally:
        for f in pending:
            f.discard()  # a no-op for those committed


def main(argv=None) -> int:
    p = make_parser("validate.py", __doc__)
    p.add_argument("--result", action="append", type=Path, metavar="FILE.json",
                   help="judge this result file (repeatable) instead of running gpubench")
    p.add_argument("--device", help="auto, host, N or all (default auto)")
    p.add_argument("--results-dir", type=Path,
                   help="where gpubench writes its results (default: results, in the current folder)")
    p.add_argument("--quick", action="store_true", help="small sizes (smoke test of the run itself)")
    p.add_argument("--gpubench", type=Path, default=None, help="the gpubench binary (default: GPUBENCH_BIN, "
                   "then beside this script, then build/gpubench)")
    p.add_argument("--junit", type=Path, help="write JUnit XML here")
    p.add_argument("--markdown", type=Path, help="write a markdown report here")
    p.add_argument("--json", type=Path, help="write the verdicts as JSON here")
    p.add_argument("--timeout", type=float, help="seconds gpubench may run (default 3600)")
    a = p.parse_args(argv)
    run_only = [flag for flag, given in (("--device", a.device is not None),
                                         ("--results-dir", a.results_dir is not None),
                                         ("--quick", a.quick), ("--gpubench", a.gpubench is not None),
                                         ("--timeout", a.timeout is not None)) if given]
    if a.result and run_only:  # they would be ignored: the files say which device ran, and how
        raise UsageError(f"{', '.join(run_only)} {'apply' if len(run_only) > 1 else 'applies'} to a run of "
                         f"gpubench, not to --result (files already written): give one or the other")
    a.device = a.device or "auto"
    a.results_dir = Path("results") if a.results_dir is None else a.results_dir
    a.timeout = 3600.0 if a.timeout is None else a.timeout
    if not re.fullmatch(r"auto|host|all|\d{1,4}", a.device):
        raise UsageError(f"--device: {a.device!r} is not auto, host, all or a device number")
    if not str(a.results_dir).strip():  # (the parser refuses "--results-dir ''"; "." is the current folder)
        raise UsageError("--results-dir has an empty value")
    if a.results_dir.exists() and not a.results_dir.is_dir():
        raise UsageError(f"--results-dir {a.results_dir}: not a folder")
    check_results_dir(a.results_dir)
    check_timeout(a.timeout)
    check_outputs([a.junit, a.markdown, a.json])
    bands = load_bands()

    status = 0
    if a.result:
        files = [f.resolve() for f in a.result]  # one given twice is refused (acceptance.check_complementary)
    else:
        status, files = run_gpubench(a.gpubench or default_gpubench(HERE), a.device, a.results_dir, a.quick,
                                     a.timeout)
        if not files:
            print(f"validate.py: gpubench wrote no result (exit status {status}); no verdict: the node fails",
                  file=sys.stderr)
            return 1
    results = [load_result(f) for f in files]
    gpus = evaluate(results, bands)

    print("\n".join(console_lines(gpus)))
    write_reports([("--junit", a.junit, lambda: junit(gpus)), ("--markdown", a.markdown, lambda: markdown(gpus)),
                   ("--json", a.json, lambda: as_json(gpus))])
    if status != 0:
        print(f"validate.py: gpubench exited with status {status} (a wrong result, a lost device or a stopped "
              "run): the node fails", file=sys.stderr)
        return 1
    if not a.result and a.device == "auto" and all(r.backend == "host" for r in results):
        print("validate.py: no usable GPU: the acceptance ran on the host backend, which has no bands; the node "
              "fails (give --device=host to judge the host on purpose)", file=sys.stderr)
        return 1
    return 1 if node_verdict(gpus) in (FAIL, INCOMPLETE) else 0


if __name__ == "__main__":
    sys.exit(run_cli("validate.py", main))
