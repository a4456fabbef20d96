"""The one error type the command-line tools turn into a single line on stderr and exit 2."""


class UsageError(Exception):
    """Bad input (missing file, not a gpubench result, unknown card, too little data).

    The message is one line that names the offending file or value; CLIs print it as
    ``<tool>: error: <message>`` and exit with status 2.
    """


def run_cli(tool: str, main, argv=None) -> int:
    """Runs ``main(argv)`` and maps UsageError (and unreadable files) to one stderr line + exit 2."""
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
    except KeyboardInterrupt:
        print(f"{tool}: interrupted", file=sys.stderr)
        return 130
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
