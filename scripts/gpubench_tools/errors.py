"""The one error type the command-line tools turn into a single line on stderr and exit 2."""


class UsageError(Exception):
    """Bad input (missing file, not a gpubench result, unknown card, too little data).

    The message is one line that names the offending file or value; CLIs print it as
    ``<tool>: error: <message>`` and exit with status 2.
    """


#: Signals whose default action ends the process on the spot (no ``finally`` runs: temporary
#: files and new folders would stay): while a tool runs, each is raised as Interrupted, as Ctrl-C
#: is, where its disposition is the default (one that is ignored, as nohup ignores SIGHUP, stays
#: ignored). SIGXCPU is `ulimit -t`'s; SIGXFSZ and SIGPIPE are not here: Python ignores both, so
#: a write past `ulimit -f` or to a closed pipe fails as an OSError instead.
STOP_SIGNALS = ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGXCPU")


class Interrupted(KeyboardInterrupt):
    """The tool was asked to stop by one of STOP_SIGNALS (Ctrl-C is Python's own
    KeyboardInterrupt): raised where it runs, so that every ``finally`` and ``except
    BaseException`` cleans up (a half-written output's temporary file, a gpubench run still
    going); run_cli exits 128 + the signal."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise_interrupted(signum, _frame):
    raise Interrupted(signum)


def _stop_signals() -> list:
    import signal

    return [getattr(signal, name) for name in STOP_SIGNALS if hasattr(signal, name)]


#: The tool named by the start-up handler (exit_on_signals()).
_starting_tool = ""


def _exit_at_once(signum, _frame):
    """The start-up handler: one line, and the process ends at once (nothing is written yet)."""
    import os
    import signal

    try:
        os.write(2, f"{_starting_tool}: interrupted ({signal.Signals(signum).name})\n".encode())
    except OSError:  # (no terminal any more: SIGHUP)
        pass
    os._exit(128 + signum)


def exit_on_signals(tool: str, module_name: str) -> None:
    """Called by every script first thing, with its __name__ (nothing is done where it is
    imported, not run): until run_cli takes over, Ctrl-C and STOP_SIGNALS end the tool at once
    with one line, "<tool>: interrupted (SIGINT)", and exit 128 + the signal. Without it, a
    Ctrl-C while the script loads its modules (matplotlib takes a while) printed a
    KeyboardInterrupt traceback of the import it stopped. Signals that are ignored stay so. And
    the tool's output streams escape what the locale cannot encode (_encodable_output)."""
    import signal
    import threading

    global _starting_tool
    if module_name != "__main__" or threading.current_thread() is not threading.main_thread():
        return
    _starting_tool = tool
    _encodable_output()
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _exit_at_once)
    for signum in _stop_signals():
        if signal.getsignal(signum) == signal.SIG_DFL:
            signal.signal(signum, _exit_at_once)


def _encodable_output() -> None:
    """stdout and stderr write what their encoding cannot hold as escapes (\\xe9, \\udcff):
    under a locale that is not UTF-8 (LC_ALL=C with PYTHONUTF8=0, an ISO-8859-1 locale) a
    result's non-ASCII device or host name, or a file name that is not UTF-8, ended the tool in a
    UnicodeEncodeError traceback, after it had written its files."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _rearm_interruption(unraisable, print_others):
    """sys.unraisablehook while a tool runs. A signal handled while Python runs a weakref callback
    or a __del__ (matplotlib's caches free objects as it draws) raises there, where Python prints
    "Exception ignored in ..." with a traceback and goes on as if no signal had come: the tool
    finished and wrote its outputs. The interruption is raised again in the main flow instead, and
    nothing is printed; any other unraisable exception is printed as before.

    Why a thread: the signal is simulated again (interrupt_main) from a new thread, which runs
    only once the main thread gives up the interpreter (within its 5 ms switch interval), by
    which time the finaliser and this hook have returned. Simulated here in the main thread, the
    handler would run inside this hook, whose own exceptions Python also ignores. A simulated
    signal that lands in another finaliser comes back here and is re-armed again."""
    import _thread
    import signal

    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        signum = getattr(unraisable.exc_value, "signum", signal.SIGINT)
        _thread.start_new_thread(_thread.interrupt_main, (signum,))
    else:
        print_others(unraisable)


def run_cli(tool: str, main, argv=None) -> int:
    """Runs ``main(argv)`` and maps UsageError (and unreadable files) to one stderr line + exit 2.
    STOP_SIGNALS (SIGTERM, SIGHUP, ...) are raised as Interrupted while it runs (their default
    action would end the process without cleaning up), where their disposition is the default
    or exit_on_signals()'s; Ctrl-C or one of them exits 128 + the signal (130 for Ctrl-C, 143
    for SIGTERM, 129 for SIGHUP), with one line."""
    import functools
    import signal
    import sys
    import threading

    previous: list[tuple[int, object]] = []
    previous_hook = sys.unraisablehook
    if threading.current_thread() is threading.main_thread():
        if signal.getsignal(signal.SIGINT) is _exit_at_once:
            previous.append((signal.SIGINT, signal.signal(signal.SIGINT, signal.default_int_handler)))
        for signum in _stop_signals():
            if signal.getsignal(signum) in (signal.SIG_DFL, _exit_at_once):
                previous.append((signum, signal.signal(signum, _raise_interrupted)))
        sys.unraisablehook = functools.partial(_rearm_interruption, print_others=previous_hook)
    try:
        return _run(tool, main, argv)
    finally:
        sys.unraisablehook = previous_hook
        for signum, handler in reversed(previous):
            signal.signal(signum, handler)


def _run(tool: str, main, argv) -> int:
    import signal
    import sys

    try:
        code = int(main(argv) or 0)
        sys.stdout.flush()  # a closed pipe is found here, not at exit, where Python prints it
        return code
    except UsageError as e:
        print(f"{tool}: error: {_visible(str(e))}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:  # run outside the virtual environment
        print(f"{tool}: error: Python package '{e.name}' is missing; install the requirements: "
              f"python3 -m pip install -r scripts/requirements.txt", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        signum = getattr(e, "signum", signal.SIGINT)
        try:
            print(f"{tool}: interrupted ({signal.Signals(signum).name})", file=sys.stderr)
        except OSError:  # (no terminal any more: SIGHUP)
            pass
        return 128 + signum
    except BrokenPipeError:  # the reader of stdout went away (| head): not an error of the tool
        _quiet_stdout()
        return 128 + signal.SIGPIPE
    except RecursionError:  # a safety net: inputs' JSON is refused, naming the file, when read
        print(f"{tool}: error: an input is nested too deeply to be a gpubench result", file=sys.stderr)
        return 2
    except OSError as e:  # an output path that cannot be written, a directory for a file, ...
        where = f"{e.filename}: " if e.filename else ""
        print(f"{tool}: error: {_visible(f'{where}{e.strerror or e}')}", file=sys.stderr)
        return 2


def _visible(text: str) -> str:
    """output.visible(): an error line names files and values from the command line and the
    inputs, which may hold an ESC or a newline (imported here: output imports this module)."""
    from .output import visible

    return visible(text)


def _quiet_stdout() -> None:
    """Points stdout at /dev/null, so that what is left in its buffer is dropped at exit, where
    Python would otherwise print "Exception ignored ... BrokenPipeError"."""
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real stdout (a test's StringIO)
        pass


def make_parser(prog: str, description: str):
    """An argparse parser whose errors are one line on stderr and exit status 2.

    It also refuses, as argparse would not: an option given an empty value ("--out ''" would
    otherwise fall back to the default, or to the current folder through Path('')), and an
    option that stores one value given twice (argparse keeps the last one silently); options
    that collect several values (action="append") may be repeated."""
    import argparse
    import re
    import sys

    class _Parser(argparse.ArgumentParser):
        def error(self, message):  # noqa: D401 - argparse's hook
            print(f"{self.prog}: error: {_visible(message)} (see --help)", file=sys.stderr)
            sys.exit(2)

        def _refuse(self, message):  # bad input, not a misuse of the options: as UsageError's
            print(f"{self.prog}: error: {_visible(message)}", file=sys.stderr)
            sys.exit(2)

        def add_argument(self, *args, **kwargs):
            # A path option's leading "~" is the user's home, as a shell expands it in a word
            # of its own but not in "--out=~/x" nor in quotes: a folder named "~" is never meant
            # (options typed Path, and those of text whose metavar names a file or folder)
            if kwargs.get("type") is Path:
                kwargs["type"] = _user_path
            elif kwargs.get("type") is None and kwargs.get("action") in (None, "store", "append") \
                    and re.fullmatch(r"FILE|DIR|PATH|STORE|CSV|PNG|[A-Z0-9_]+\.[a-z]+",
                                     str(kwargs.get("metavar", ""))):
                kwargs["type"] = _user_text
            return super().add_argument(*args, **kwargs)

        def parse_known_args(self, args=None, namespace=None):
            args = list(sys.argv[1:] if args is None else args)
            self._check_options(args)
            return super().parse_known_args(args, namespace)

        def _action_of(self, token: str):
            """(action, option name, value or None) of an option token; None otherwise."""
            actions = self._option_string_actions
            name, eq, value = token.partition("=") if token.startswith("--") else (token, "", "")
            if name in actions:
                return actions[name], name, value if eq else None
            if token.startswith("--"):  # an unambiguous abbreviation, as argparse allows
                hits = [o for o in actions if o.startswith("--") and o.startswith(name)]
                if len(hits) == 1:
                    return actions[hits[0]], hits[0], value if eq else None
                return None
            if len(token) > 2 and token[:2] in actions and actions[token[:2]].nargs != 0:
                return actions[token[:2]], token[:2], token[2:]  # -oVALUE
            return None

        def _check_options(self, args: list[str]) -> None:
            seen = set()
            i = 0
            while i < len(args):
                token = args[i]
                i += 1
                if token == "--":
                    break
                if not token.startswith("-") or token == "-":
                    continue
                found = self._action_of(token)
                if found is None:
                    continue
                action, name, value = found
                if action.nargs == 0:
                    continue
                if value is None and action.nargs in (None, 1) and i < len(args):
                    value = args[i]
                    i += 1
                if value is not None and not value.strip():
                    self._refuse(f"{name} has an empty value")
                if isinstance(action, argparse._StoreAction):
                    if action.dest in seen:
                        self._refuse(f"{name} given twice")
                    seen.add(action.dest)

    from pathlib import Path

    def _not_empty(text: str) -> str:
        # A positional path given as '' (an unset shell variable): Path('') is the current
        # folder, which a message would then name though the user typed nothing. (Options with
        # an empty value are refused above, before parsing.)
        if not text.strip():
            raise argparse.ArgumentTypeError("an empty path")
        return text

    def _user_path(text: str) -> Path:
        import os

        return Path(os.path.expanduser(_not_empty(text)))

    def _user_text(text: str) -> str:
        import os

        return os.path.expanduser(_not_empty(text))

    _user_path.__name__ = _user_text.__name__ = "path"  # (argparse names the type in messages)

    return _Parser(prog=prog, description=description,
                   formatter_class=argparse.RawDescriptionHelpFormatter)
