"""The results store: `<results-dir>/<device_key>/<UTC yyyymmddTHHMMSSZ>_<git revision>.json`.

gpubench itself writes there with --results-dir (atomically, never overwriting); this module
computes the same paths, lists a device key's history in time order (the timestamp leads the
file name, so name order is time order), picks the last N valid results for a baseline, and
writes files the same way gpubench does: to a temporary file in the target directory, then a
hard link to the final name, which fails instead of replacing an existing file.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import tempfile
from pathlib import Path

from .errors import UsageError
from .output import umask_mode
from .results import Result, load_result, result_identity

#: File names in the store: timestamp, underscore, revision (letters, digits, - . +), and
#: "-N" (N >= 2) when several runs started in the same second (gpubench never overwrites).
STORE_NAME_RE = re.compile(r"^(\d{8}T\d{6}Z)_([A-Za-z0-9.+]+(?:-[A-Za-z][A-Za-z0-9.+]*)*)"
                           r"(?:-(\d+))?\.json$")
_KEY_RE = re.compile(r"^[A-Za-z0-9._+-]+$")


def check_device_key(device_key: str, source: Path | str | None = None) -> str:
    """The device key, when it is usable as one folder name (letters, digits, "._+-", not "."
    or ".."): the store and the plots' default folders are named after it, and it comes from
    result files, which may be hostile ("../../x" or "/tmp/x" would lead a path out of its
    folder). UsageError otherwise, naming `source` (the result it came from) when given."""
    if not isinstance(device_key, str) or not _KEY_RE.match(device_key) \
            or device_key in (".", ".."):
        where = f"{source}: " if source is not None else ""
        raise UsageError(f"{where}device key {str(device_key)[:80]!r} is not usable as a folder name "
                         f"(letters, digits and . _ + - only)")
    return device_key


def result_path(results_dir: Path | str, device_key: str, when: _dt.datetime,
                git_revision: str) -> Path:
    """Where a run started at `when` (UTC) from `git_revision` is stored."""
    check_device_key(device_key)
    rev = re.sub(r"[^A-Za-z0-9.+-]", "-", git_revision) or "unknown"
    stamp = when.astimezone(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return Path(results_dir) / device_key / f"{stamp}_{rev}.json"


def free_result_path(results_dir: Path | str, device_key: str, when: _dt.datetime,
                     git_revision: str) -> Path:
    """result_path(), with "-2", "-3", ... appended while the name is taken (as gpubench does)."""
    first = result_path(results_dir, device_key, when, git_revision)
    path, n = first, 2
    while path.exists():
        path = first.with_name(f"{first.stem}-{n}.json")
        n += 1
    return path


def sort_key(path: Path | str) -> tuple[str, int, str]:
    """Time order of store files: timestamp, then the same-second counter."""
    name = Path(path).name
    m = STORE_NAME_RE.match(name)
    if not m:
        return (name, 0, name)
    return (m.group(1), int(m.group(3) or 1), name)


def write_new(path: Path | str, data: bytes) -> Path:
    """Writes `data` to `path` atomically; raises FileExistsError rather than overwrite."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, umask_mode())  # as gpubench's own files, not mkstemp's 0600
        os.link(tmp, path)  # atomic, and fails with FileExistsError if the name is taken
    finally:
        os.unlink(tmp)
    return path


def name_time(name: str) -> _dt.datetime | None:
    """The UTC time a store file name starts with; None when the name is not a store name or
    its timestamp is no real time (month 13, day 99: a file made by hand or damaged)."""
    m = STORE_NAME_RE.match(name)
    if not m:
        return None
    try:
        return _dt.datetime.strptime(m.group(1), "%Y%m%dT%H%M%SZ").replace(
            tzinfo=_dt.timezone.utc)
    except ValueError:
        return None


def history(results_dir: Path | str, device_key: str,
            notes: list[str] | None = None) -> list[Path]:
    """The device key's result files, oldest first (temporary and foreign files ignored). A
    file whose name has the store's pattern but an impossible time (20261199T000000Z_x.json) is
    left out, with a line in `notes`: its place in the history is unknown."""
    d = Path(results_dir) / device_key
    if not d.is_dir():
        return []
    out = []
    for p in d.iterdir():
        if not (p.is_file() and STORE_NAME_RE.match(p.name)):
            continue
        if name_time(p.name) is None:
            if notes is not None:
                notes.append(f"left out of the history: {p}: the time in its name is not a "
                             f"real date and time")
            continue
        out.append(p)
    return sorted(out, key=sort_key)


def failed_verification(result: Result) -> list[tuple[str, str]]:
    """(name, message) of each benchmark of a result that failed verification (or errored);
    rows the harness skipped ("skipped: ...") are not failures."""
    return [(b.name, b.error or "not verified") for b in result.benchmarks.values()
            if b.verification_failed]


def too_few_repetitions(result: Result, min_samples: int) -> str:
    """Why a result has too little data to compare ("" when it has enough): no measured
    benchmark has `min_samples` per-repetition samples (gpubench run with fewer
    --benchmark_repetitions, or only the aggregates written). Results in which nothing was
    measured pass here (they have no rows to compare at all)."""
    measured = [b for b in result.benchmarks.values() if b.ok]
    if not measured:
        return ""
    most = max(len(b.samples) for b in measured)
    if most >= min_samples:
        return ""
    if most == 0:
        return f"holds only aggregates, no per-repetition samples; need {min_samples}"
    return f"has at most {most} per-repetition sample(s) per benchmark; need {min_samples}"


def is_valid_baseline(result: Result, allow_failures: bool = False) -> bool:
    """A result can serve as a baseline when at least one benchmark ran, verified and
    unthrottled, and none failed verification (a run that produced wrong output measured
    broken code; allow_failures keeps it, its failed benchmarks left out by the comparator).
    Skipped rows do not count against it."""
    if not allow_failures and failed_verification(result):
        return False
    return any(b.ok and not b.verification_failed and not b.throttled
               for b in result.benchmarks.values())


def last_valid(results_dir: Path | str, device_key: str, n: int,
               exclude: Path | str | None = None, before: Path | str | None = None,
               notes: list[str] | None = None, allow_failures: bool = False,
               min_samples: int = 0) -> list[Result]:
    """The last `n` valid results of a device key (is_valid_baseline), oldest first.

    `exclude` (the new result itself) is skipped; with `before`, only files whose names sort
    before it count. Unreadable or invalid files, files in which a benchmark failed
    verification (unless allow_failures) and files with fewer than `min_samples` repetitions
    (too_few_repetitions()) are skipped with a line appended to `notes`, and so is a copy of
    `exclude` or of a later candidate (the same result under another name, result_identity): one
    run counted twice would weigh double in the baseline, and a copy of the new result would
    compare it with itself.
    """
    excl = Path(exclude).resolve() if exclude else None
    seen: dict[str, Path] = {}  # result_identity -> the file that had it
    if excl is not None:
        try:
            seen[result_identity(load_result(excl))] = excl
        except (UsageError, OSError):
            pass  # the caller has read it already, or reports it
    out: list[Result] = []
    for p in reversed(history(results_dir, device_key, notes)):
        if excl is not None and p.resolve() == excl:
            continue
        if before is not None and sort_key(p) >= sort_key(before):
            continue
        try:
            r = load_result(p)
        except UsageError as e:
            if notes is not None:
                notes.append(f"skipped baseline candidate: {e}")
            continue
        if r.device_key != device_key:
            if notes is not None:
                notes.append(f"skipped baseline candidate {p}: device key {r.device_key}")
            continue
        identity = result_identity(r)
        if identity in seen:
            if notes is not None:
                notes.append(f"skipped baseline candidate {p}: the same result as {seen[identity]}")
            continue
        seen[identity] = p
        failed = failed_verification(r)
        if failed and not allow_failures:
            if notes is not None:
                notes.append(f"skipped baseline candidate {p}: failed verification: "
                             + ", ".join(f"{n} ({m})" for n, m in failed))
            continue
        if not is_valid_baseline(r, allow_failures):
            if notes is not None:
                notes.append(f"skipped baseline candidate {p}: no valid benchmark in it")
            continue
        few = too_few_repetitions(r, min_samples)
        if few:
            if notes is not None:
                notes.append(f"skipped baseline candidate {p}: {few}")
            continue
        out.append(r)
        if len(out) == n:
            break
    return list(reversed(out))
