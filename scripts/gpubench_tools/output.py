"""Output files that appear whole or not at all (standard library only: validate.py uses it).

A tool writes each output under a temporary name in the output's own folder (created as
needed), then moves it onto its name: a reader never sees half a file, an interrupted or failed
run leaves no partial file behind (the temporary is removed on any exception, Ctrl-C and, through
errors.run_cli, SIGTERM included), and a rerun is never refused because of one. Creating the
temporary first is also the check that the folder can be written, before any work.

The final file gets the mode any file the user writes gets (0666 less the umask), not the 0600
of a temporary file; without `overwrite` it is hard-linked onto its name, which fails rather
than replace a file that appeared meanwhile. Even with `overwrite`, a symbolic link or anything
but a regular file (a device node, a FIFO) at the output's name is refused, never replaced.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
import unicodedata
from pathlib import Path

from .errors import UsageError


def umask() -> int:
    """The process's umask."""
    mask = os.umask(0o022)  # the only way to read it portably; set back at once
    os.umask(mask)
    return mask


def umask_mode() -> int:
    """The mode a new file gets from open(): 0666 less the process's umask."""
    return 0o666 & ~umask()


def visible(text: str) -> str:
    """`text` on one line, its control characters, line separators and lone surrogates written as
    escapes (\\x1b, \\n, \\u2028): text from an input (a result's error_message, a file name) is
    not trusted to hold none; an ESC recoloured the terminal and a newline split a line in two."""
    return "".join(ascii(c)[1:-1] if unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") else c
                   for c in text)


def markdown_cell(text: str) -> str:
    """`text` for a cell of a markdown table: on one line (visible()), its "|" escaped (it ended
    the cell)."""
    return visible(text).replace("|", "\\|")


def xml_text(text: str) -> str:
    """`text` with every character XML 1.0 forbids (control characters but tab, newline and
    carriage return; lone surrogates; U+FFFE, U+FFFF) made '?': one would make the file
    unreadable."""
    return "".join(c if c in "\t\n\r" or " " <= c <= "\ud7ff" or "\ue000" <= c <= "\ufffd"
                   or c >= "\U00010000" else "?" for c in text)


def make_folders(folder: Path) -> list[Path]:
    """Creates `folder` and its missing parents; returns the ones it created, deepest first
    (for remove_empty()). OSError when they cannot be made (what was made is left)."""
    made = []
    p = folder
    while not (p.exists() or p.is_symlink()) and p.parent != p:
        made.append(p)
        p = p.parent
    folder.mkdir(parents=True, exist_ok=True)
    return made


def remove_empty(made: list[Path]) -> None:
    """Removes folders make_folders() created, deepest first, while they are empty."""
    for d in made:
        try:
            d.rmdir()
        except OSError:
            break


def temporary_prefix(path: Path) -> str:
    """The prefix of an output's temporary in its folder: ".NAME." (mkstemp adds 8 characters and
    ".tmp"), or ".output." when that would exceed the folder's longest name: a legal name of up
    to 255 bytes was refused as "File name too long" because of its temporary's."""
    prefix = f".{path.name}."
    try:
        longest = os.pathconf(path.parent if str(path.parent) else ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        longest = 255
    return prefix if len(os.fsencode(prefix)) + 12 <= longest else ".output."


class NewFile:
    """An output being written: `tmp` is the temporary file to write (created, empty),
    commit() moves it onto `path`, discard() removes it. As a context manager: committed when
    the block ends normally, discarded when it raises.

    `label` names the output in messages (e.g. "--out x.png"; default the path). A folder that
    cannot be written is a UsageError naming it, raised by the constructor, before any work."""

    def __init__(self, path: Path | str, overwrite: bool = False, label: str | None = None):
        self.path = Path(path)
        self.overwrite = overwrite
        self.label = label or str(self.path)
        self.tmp: Path | None = None
        self.made: list[Path] = []  # the folders this output created, deepest first
        check_replaceable(self.path, self.label)
        try:
            self.made = make_folders(self.path.parent)
            fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(self.path), suffix=".tmp",
                                       dir=self.path.parent)
        except OSError as e:
            remove_empty(self.made)
            not_folder = _file_in_the_way(self.path.parent)
            if not_folder is not None:
                raise UsageError(f"{self.label}: cannot write there: {not_folder} is not a "
                                 f"folder") from None
            raise UsageError(f"{self.label}: cannot write there: {e.strerror or e}") from None
        os.close(fd)
        self.tmp = Path(tmp)
        _MADE.extend(d for d in self.made if d not in _MADE)

    @property
    def format(self) -> str:
        """The file's format as its name says: "png", "html", "json", ... (matplotlib's savefig
        cannot tell it from the temporary's name)."""
        return self.path.suffix.lstrip(".").lower()

    def commit(self) -> Path:
        """Moves the finished temporary onto the output's name; UsageError when, without
        overwrite, a file of that name appeared meanwhile (the temporary is removed then)."""
        assert self.tmp is not None, "committed twice"
        try:
            os.chmod(self.tmp, umask_mode())
            if self.overwrite:
                check_replaceable(self.path, self.label)  # (a link made meanwhile)
                os.replace(self.tmp, self.path)
            else:
                _link_new(self.tmp, self.path, self.label)
                self.tmp.unlink(missing_ok=True)  # gone already where it was renamed
        except OSError as e:
            self.discard()
            raise UsageError(f"{self.label}: cannot write: {e.strerror or e}") from None
        except BaseException:
            self.discard()
            raise
        self.tmp = None
        for d in self.made:  # holds the output now: not removed by a later discard
            if d in _MADE:
                _MADE.remove(d)
        return self.path

    def write(self, fill) -> None:
        """Calls fill(tmp) to write the temporary; an OSError there (no space left on the
        device, a quota) is a UsageError naming the output, not the temporary (the temporary
        is removed)."""
        try:
            fill(self.tmp)
        except OSError as e:
            self.discard()
            raise UsageError(f"{self.label}: cannot write: {e.strerror or e}") from None

    def discard(self) -> None:
        """Removes the temporary (nothing is left of this output)."""
        if self.tmp is not None:
            self.tmp.unlink(missing_ok=True)
            self.tmp = None
            # a folder an output created, left empty by a failed or interrupted run, goes too
            # (the folders of every output not yet committed: several may share one)
            for d in sorted(_MADE, key=lambda x: -len(x.parts)):
                try:
                    d.rmdir()
                    _MADE.remove(d)
                except OSError:
                    pass

    def __enter__(self) -> "NewFile":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()


def _inode(p: Path) -> tuple[int, int] | None:
    """(device, inode) of the file a path names, following links; None when it names none."""
    try:
        st = os.stat(p)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def check_not_inputs(outputs: list[tuple[str, Path]], inputs: list[Path]) -> None:
    """Refuses, even with --force, an output that is one of the inputs: the same path, or
    another name for the same file (a hard link: same device and inode)."""
    ids = {_inode(p) for p in inputs} - {None}
    resolved = {p.resolve() for p in inputs}
    for flag, p in outputs:
        if p.resolve() in resolved or _inode(p) in ids:
            raise UsageError(f"{flag} {p}: is an input of this comparison")


def check_outside(outputs: list[tuple[str, Path]], folder: Path, what: str) -> None:
    """Refuses an output inside `folder` (after links), a folder of inputs the tool reads
    whole (`what` names it: "the store it reads"): written there, the output would be read as
    an input by the next run (a fleet's --json in its store, refused then as no result). The
    sibling of check_not_inputs(), which refuses only the input files themselves."""
    inside = Path(folder).resolve()
    for flag, p in outputs:
        if Path(p).resolve().is_relative_to(inside):
            raise UsageError(f"{flag} {p}: is inside {what}, {folder}, where the next run would "
                             f"read it; write it elsewhere")


def check_replaceable(path: Path, label: str) -> None:
    """UsageError, even where an existing output may be replaced, when `path` is a symbolic link
    (the link would be replaced by a file, or, read as the user meant it, whatever it points at)
    or exists and is not a regular file (a folder, a device node such as /dev/null, a FIFO):
    no output ever replaces those."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return  # nothing there (or not reachable: creating the output says why)
    if stat.S_ISLNK(mode):
        raise UsageError(f"{label}: is a symbolic link; an output is never written through "
                         f"one nor replaces it, even with --force")
    if stat.S_ISDIR(mode):
        raise UsageError(f"{label}: is a directory, not an output file")
    if not stat.S_ISREG(mode):
        raise UsageError(f"{label}: exists and is not a regular file (a device, FIFO or "
                         f"socket); an output never replaces one, even with --force")
    if is_gpubench_result(path):
        raise UsageError(f"{label}: is a gpubench result (or what is left of one); results are never "
                         f"overwritten, even with --force (name another file)")


#: Files larger than this are not opened to see whether they are a result (none is near it).
_RESULT_SNIFF_LIMIT = 256 << 20


def is_gpubench_result(path: Path) -> bool:
    """Whether `path` holds a gpubench result (Google Benchmark JSON whose context carries
    gpubench_version): a measurement, which no report, plot or copy may replace. A file that
    names gpubench_version in its first MiB but is not whole JSON counts as one: a result cut
    short by a full disk or an interrupted copy is still the only record of its run."""
    try:
        if os.path.getsize(path) > _RESULT_SNIFF_LIMIT:
            return False
        with open(path, "rb") as f:
            if b'"gpubench_version"' not in f.read(1 << 20):
                return False
            f.seek(0)
            try:
                doc = json.load(f)
            except (ValueError, RecursionError):
                return True
    except OSError:
        return False
    return (isinstance(doc, dict) and isinstance(doc.get("context"), dict)
            and "gpubench_version" in doc["context"] and isinstance(doc.get("benchmarks"), list))


def _file_in_the_way(folder: Path) -> Path | None:
    """The nearest of `folder` and its parents that exists and is not a folder (a regular
    file where a folder was asked for); None when there is none."""
    for p in [folder, *folder.parents]:
        if p.is_dir():
            return None
        if p.exists() or p.is_symlink():
            return p
    return None


#: Folders created by outputs not committed yet (NewFile.discard removes them when empty).
_MADE: list[Path] = []


def _link_new(tmp: Path, path: Path, label: str) -> None:
    """Hard-links tmp onto path, which must not exist (atomic: no check-then-write race)."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise UsageError(f"{label} exists; not overwritten") from None
    except OSError as e:
        # A file system without hard links (some network and FUSE mounts): a plain rename,
        # after a last check.
        if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
            raise
        if path.exists() or path.is_symlink():
            raise UsageError(f"{label} exists; not overwritten") from None
        os.rename(tmp, path)


def commit_all(files: list[NewFile]) -> list[Path]:
    """Commits several outputs as one: when one cannot be committed, those already committed
    by this call (new files, never ones they replaced) are removed again, the rest discarded,
    and the error raised. Returns their paths."""
    done: list[NewFile] = []
    try:
        for f in files:
            f.commit()
            done.append(f)
    except BaseException:
        for f in files:
            f.discard()
        for f in done:
            if not f.overwrite:
                f.path.unlink(missing_ok=True)
        raise
    return [f.path for f in files]
