"""Reading an input file the tools were given (a result, the card table, a failure record)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import UsageError

#: The largest input read (1 GiB): a gpubench result is a few MB; a bigger file is not one, and
#: reading it whole could exhaust the memory (a sparse file of a terabyte takes no disk space).
MAX_INPUT_BYTES = 1 << 30


def read_input(path: Path | str, what: str = "result file") -> bytes:
    """The bytes of an input file; UsageError, naming it, when it is missing, a directory, or
    not a regular file: a FIFO would block the read forever, /dev/zero would be read until memory
    runs out. Such a file is never opened for reading without O_NONBLOCK, and what was opened is
    checked again (a regular file swapped for a FIFO meanwhile)."""
    path = Path(path)

    def refuse(st: os.stat_result) -> None:
        if stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{path}: is a directory, not a {what}")
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{path}: not a regular file (a FIFO, device or socket), not a {what}")
        if st.st_size > MAX_INPUT_BYTES:
            raise UsageError(f"{path}: {st.st_size} bytes, too large to be a {what} (the limit "
                             f"is {MAX_INPUT_BYTES >> 30} GiB)")

    try:
        refuse(os.stat(path))
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except OSError as e:
        raise UsageError(f"{path}: cannot read ({e.strerror or e})") from None
    with os.fdopen(fd, "rb") as f:
        refuse(os.fstat(fd))
        try:
            data = f.read(MAX_INPUT_BYTES + 1)  # (a file grown since its size was checked)
        except OSError as e:
            raise UsageError(f"{path}: cannot read ({e.strerror or e})") from None
    if len(data) > MAX_INPUT_BYTES:
        raise UsageError(f"{path}: too large to be a {what} (the limit is "
                             f"{MAX_INPUT_BYTES >> 30} GiB)")
    return data
