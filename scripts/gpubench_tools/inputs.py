"""Reading an input file the tools were given (a result, the card table, a failure record)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import UsageError


def read_input(path: Path | str, what: str = "result file") -> bytes:
    """The bytes of an input file; UsageError, naming it, when it is missing, a directory, or
    not a regular file: a FIFO would block the read forever, /dev/zero would be read until memory
    runs out. Such a file is never opened for reading without O_NONBLOCK, and what was opened is
    checked again (a regular file swapped for a FIFO meanwhile)."""
    path = Path(path)

    def refuse(mode: int) -> None:
        if stat.S_ISDIR(mode):
            raise UsageError(f"{path}: is a directory, not a {what}")
        if not stat.S_ISREG(mode):
            raise UsageError(f"{path}: not a regular file (a FIFO, device or socket), not a {what}")

    try:
        refuse(os.stat(path).st_mode)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except OSError as e:
        raise UsageError(f"{path}: cannot read ({e.strerror or e})") from None
    with os.fdopen(fd, "rb") as f:
        refuse(os.fstat(fd).st_mode)
        try:
            return f.read()
        except OSError as e:
            raise UsageError(f"{path}: cannot read ({e.strerror or e})") from None
