"""Running gpubench from a script, and stopping it the way it can clean up after itself
(standard library only: validate.py uses it).

gpubench writes its result to a temporary file beside the final one, `<final>.tmp.<pid>`, and
publishes it when the run ends. The first SIGINT or SIGTERM asks it to stop after the current
sample, removing that file; a second one ends it at once, removing the file too (SIGKILL, which
subprocess.run's timeout sends, gives it no chance: the file stayed in the results store). So a
run that must stop - past its timeout, or because the script itself was interrupted (Ctrl-C,
SIGTERM) - is stopped in three steps:

1. the signal (SIGTERM on a timeout; the script's own signal when interrupted), then GRACE_S
   seconds for the current sample to end;
2. a second SIGTERM (gpubench exits at once), then SECOND_GRACE_S seconds;
3. SIGKILL, after which the temporary files of that run still left are removed: only names of
   gpubench's pattern, `*.json.tmp.<pid>` (`<name>.tmp.<pid>`, or `.gpubench-result.json.tmp.<pid>`
   beside a name too long for that), with the pid of one of the run's processes, in the folders it
   writes to.

gpubench runs in a process group of its own (with --device=all it starts one process per GPU),
so that every step reaches all its processes and a terminal's Ctrl-C reaches the script alone,
which forwards it once (the same Ctrl-C reaching gpubench directly too would count twice).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

#: Seconds gpubench has to end its current sample and stop after the first signal. A sample is
#: milliseconds to about a second (batches are sized to a few ms); what follows it (releasing
#: the workload, the memory check) takes well under a second on a healthy device.
GRACE_S = 5.0
#: Seconds after the second signal (gpubench exits from its signal handler at once).
SECOND_GRACE_S = 2.0
#: The longest --timeout a script takes, in seconds (116 days): longer waits overflow the
#: platform's timers (1e10 s raised OverflowError), and no run is meant to last that long.
MAX_TIMEOUT_S = 1e7


def check_timeout(seconds: float, option: str = "--timeout") -> float:
    """`seconds` when it is a finite number above 0 and at most MAX_TIMEOUT_S; UsageError naming
    the option otherwise."""
    import math

    from .errors import UsageError

    if not (math.isfinite(seconds) and 0 < seconds <= MAX_TIMEOUT_S):
        raise UsageError(f"{option} {seconds:g}: need a finite number of seconds above 0 and at "
                         f"most {MAX_TIMEOUT_S:.0e}".replace("e+0", "e"))
    return seconds


def check_results_dir(folder: Path | str, option: str = "--results-dir") -> None:
    """UsageError, before gpubench runs, when the results folder's name holds a control or line
    separator character: the scripts find the result in gpubench's "result: <path>" line, which
    such a name splits (a newline lost the run, which gpubench had stored)."""
    from .errors import UsageError
    from .output import visible

    text = str(folder)
    if visible(text) != text:
        raise UsageError(f"{option} {visible(text)}: a folder name with a control character cannot be read "
                         f"back from gpubench's output; choose another name")


@dataclass
class Finished:
    """How a gpubench run ended."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False  #: stopped because it ran past its timeout


def default_gpubench(script_dir: Path | str) -> Path:
    """The gpubench a script runs by default: GPUBENCH_BIN, else the gpubench beside the
    script (cmake --install puts both in PREFIX/bin), else the build tree's
    (<repository>/build/gpubench for a script in <repository>/scripts)."""
    if "GPUBENCH_BIN" in os.environ:
        if not os.environ["GPUBENCH_BIN"].strip():  # a mistake, not a request for the default
            from .errors import UsageError

            raise UsageError("GPUBENCH_BIN is set but empty (unset it for the default)")
        return Path(os.environ["GPUBENCH_BIN"])
    script_dir = Path(script_dir).resolve()
    beside = script_dir / "gpubench"
    return beside if beside.is_file() else script_dir.parent / "build" / "gpubench"


def executable(path: Path | str) -> str:
    """gpubench's path as the first word of the command: absolute when it names a file (or a
    path with a folder in it): Path("./gpubench") prints as "gpubench", which the system would
    look up on PATH, not in the current folder. A bare name with no such file in the current
    folder is left to the PATH lookup, as a shell would."""
    text = os.fspath(path)
    if os.sep in text or Path(text).exists():
        return str(Path(text).absolute())
    return text


def new_folders(folder: Path) -> set[Path]:
    """The sub-folders of `folder` now (empty when it does not exist): remove_new_empty() takes
    it to remove those a run created and left empty."""
    try:
        return {p for p in Path(folder).iterdir() if p.is_dir() and not p.is_symlink()}
    except OSError:
        return set()


def remove_new_empty(folder: Path, before: set[Path]) -> None:
    """Removes the sub-folders of `folder` that were not there `before` and are empty (a
    device-key folder gpubench made for a result it never wrote: a failed or stopped run)."""
    for p in new_folders(folder) - before:
        try:
            p.rmdir()
        except OSError:
            pass


def run(cmd: list[str], timeout_s: float, temp_dirs: list[Path],
        grace_s: float | None = None) -> Finished:
    """Runs gpubench (cmd) to its end, its output captured; past `timeout_s` it is stopped
    (see the module comment) and Finished.timed_out is set. When the script is interrupted
    meanwhile (KeyboardInterrupt, errors.Interrupted for SIGTERM), gpubench is stopped the same
    way with the script's own signal, and the interruption raised again.

    `temp_dirs`: the folders gpubench writes its result to (the results store or the --out
    file's folder); leftover temporaries are looked for in them and their sub-folders (the
    store's device keys). Raises OSError (FileNotFoundError, PermissionError) when gpubench
    cannot be started."""
    grace = GRACE_S if grace_s is None else grace_s
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    pids = {proc.pid}
    try:
        out, err = _communicate_within(proc, timeout_s)
        return Finished(proc.returncode, out, err)
    except subprocess.TimeoutExpired:
        out, err = _stop(proc, signal.SIGTERM, grace, pids, temp_dirs)
        return Finished(proc.returncode, out, err, timed_out=True)
    except KeyboardInterrupt as e:
        # gpubench handles SIGINT and SIGTERM (it stops after the current sample); the other
        # signals the script handles (SIGHUP, SIGUSR1, ...) would end it without cleaning up.
        signum = getattr(e, "signum", signal.SIGINT)
        _stop(proc, signum if signum in (signal.SIGINT, signal.SIGTERM) else signal.SIGTERM,
              grace, pids, temp_dirs)
        raise


#: The longest single wait: the poll behind communicate() takes milliseconds as a C int, so a
#: timeout past about 24.8 days raised OverflowError (a traceback for --timeout 1e7).
_LONGEST_WAIT_S = 1_000_000.0


def _communicate_within(proc: subprocess.Popen, timeout_s: float) -> tuple[str, str]:
    """proc.communicate(timeout=timeout_s) for any timeout, in waits of at most _LONGEST_WAIT_S
    (communicate may be called again after its TimeoutExpired: the output read so far is kept)."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        try:
            return proc.communicate(timeout=max(0.0, min(left, _LONGEST_WAIT_S)))
        except subprocess.TimeoutExpired:
            if left <= _LONGEST_WAIT_S:
                raise


def _stop(proc: subprocess.Popen, first: int, grace: float, pids: set[int],
          temp_dirs: list[Path]) -> tuple[str, str]:
    """The three steps; returns what gpubench wrote. A further interruption of the script
    while it waits moves on to the next step at once."""
    out, err = "", ""
    for sig, wait in ((first, grace), (signal.SIGTERM, SECOND_GRACE_S), (signal.SIGKILL, None)):
        pids |= _group_members(proc.pid)
        _signal_group(proc.pid, sig)
        try:
            out, err = proc.communicate(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
        except KeyboardInterrupt:  # interrupted again: do not wait
            continue
    if proc.returncode is None:
        proc.wait()
    remove_leftover_temporaries(pids, temp_dirs)
    return out or "", err or ""


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:  # every process of the run has ended
        pass


def _group_members(pgid: int) -> set[int]:
    """The pids of the processes in a process group (Linux /proc; just the leader elsewhere)."""
    members = {pgid}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended meanwhile
        if len(fields) > 2 and fields[2] == str(pgid):  # state, ppid, pgrp
            members.add(int(name))
    return members


def remove_leftover_temporaries(pids: set[int], temp_dirs: list[Path]) -> list[Path]:
    """Removes gpubench's temporary result files of these processes (`*.json.tmp.<pid>`) from
    the folders and their sub-folders; returns those removed."""
    removed = []
    folders: list[Path] = []
    for d in temp_dirs:
        d = Path(d)
        if d.is_dir():
            folders.append(d)
            try:
                folders += [s for s in d.iterdir() if s.is_dir() and not s.is_symlink()]
            except OSError:
                pass
    for folder in folders:
        for pid in sorted(pids):
            for p in folder.glob(f"*.json.tmp.{pid}"):
                try:
                    p.unlink()
                    removed.append(p)
                except OSError:
                    pass
    return removed
