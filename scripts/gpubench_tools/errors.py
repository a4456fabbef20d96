"""The one error type the command-line tools turn into a single line on stderr and exit 2."""


class UsageError(Exception):
    """Bad input (missing file, not a gpubench result, unknown card, too little data).

    The message is one line that names the offending file or value; CLIs print it as
    ``<tool>: error: <message>`` and exit with status 2.
    """


class Interrupted(KeyboardInterrupt):
    """The tool was asked to stop by SIGTERM (Ctrl-C is Python's own KeyboardInterrupt): raised
    where it runs, so that every ``finally`` and ``except BaseException`` cleans up (a
    half-written output's temporary file, a gpubench run still going); run_cli exits 128 + the
    signal."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise_interrupted(signum, _frame):
    raise Interrupted(signum)


def run_cli(tool: str, main, argv=None) -> int:
    """Runs ``main(argv)`` and maps UsageError (and unreadable files) to one stderr line + exit 2.
    SIGTERM is raised as Interrupted while it runs (Python's default would end the process
    without cleaning up); Ctrl-C or SIGTERM exits 130 or 143, with one line."""
    import signal
    import threading

    previous = None
    if threading.current_thread() is threading.main_thread() \
            and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        previous = signal.signal(signal.SIGTERM, _raise_interrupted)
    try:
        return _run(tool, main, argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _run(tool: str, main, argv) -> int:
    import signal
    import sys

    try:
        return int(main(argv) or 0)
    except UsageError as e:
        print(f"{tool}: error: {e}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:  # run outside the virtual environment
        print(f"{tool}: error: Python package '{e.name}' is missing; install the requirements: "
              f"python3 -m pip install -r scripts/requirements.txt", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        signum = getattr(e, "signum", signal.SIGINT)
        print(f"{tool}: interrupted ({signal.Signals(signum).name})", file=sys.stderr)
        return 128 + signum
    except RecursionError:  # JSON nested deeper than the parser's stack
        print(f"{tool}: error: an input is nested too deeply to be a gpubench result", file=sys.stderr)
        return 2
    except OSError as e:  # an output path that cannot be written, a directory for a file, ...
        where = f"{e.filename}: " if e.filename else ""
        print(f"{tool}: error: {where}{e.strerror or e}", file=sys.stderr)
        return 2


def make_parser(prog: str, description: str):
    """An argparse parser whose errors are one line on stderr and exit status 2."""
    import argparse
    import sys

    class _Parser(argparse.ArgumentParser):
        def error(self, message):  # noqa: D401 - argparse's hook
            print(f"{self.prog}: error: {message} (see --help)", file=sys.stderr)
            sys.exit(2)

    return _Parser(prog=prog, description=description,
                   formatter_class=argparse.RawDescriptionHelpFormatter)
