"""The ``embedeval`` command.

Every problem with the arguments is printed at once, one line each on stderr, and the command
exits with status 2 without a traceback. Tables go to stdout; notes and progress to stderr.

The package: ``_parser`` (commands, arguments, help), ``_commands`` (one function per command),
``_loaders`` (array and label files), ``_output`` (formats, reports, per-class CSV, progress).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import threading
import warnings

from ._problems import UsageError

TREC_EVAL = ("trec_eval", "trec-eval")  # the drop-in's names (embedeval trec_eval -q QRELS RUN)

__all__ = ["build_parser", "main"]

INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C
BROKEN_PIPE = 141  # 128 + SIGPIPE, what a Unix tool ends with when its reader goes away (| head)


def main(argv=None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``) and return the exit status.

    Argument problems (:class:`UsageError`, several at once), bad input (``ValueError``,
    ``TypeError``, ``OSError`` from loading or evaluating) and a missing optional extra
    (``ImportError`` naming its install, e.g. torch for ``--device gpu``) become ``embedeval COMMAND: error:``
    lines on stderr and status 2; so do argparse's own (a bad choice or number, a missing
    argument), all of them at once and without a usage block (:mod:`embedeval.cli._argparse`).
    Warnings print as ``embedeval COMMAND: warning:`` lines. Ctrl-C prints one line and exits
    130 at once; a closed stdout (``| head``) ends quietly with 141.
    """
    words = list(map(str, sys.argv[1:] if argv is None else argv))
    # Each branch imports only its own commands: the drop-in is run in loops over many files, so
    # its start-up is its speed, and it needs neither faiss nor the other commands' modules.
    if words and words[0] in TREC_EVAL:  # trec_eval's own grammar, not argparse's (see _trec_eval_args)
        from ._trec_eval import trec_eval_command

        args = argparse.Namespace(command="trec_eval", run=lambda _: trec_eval_command(words[1:]))
    else:
        from ._argparse import parse
        from ._parser import build_parser

        args, parse_problems = parse(build_parser(), words)
        if parse_problems:  # every one at once, one line each, no usage block
            for prog, problem in parse_problems:
                print(f"{prog}: error: {problem}", file=sys.stderr)
            return 2
    args.command_line = shlex.join(["embedeval", *words])  # for reports
    prefix = f"embedeval {args.command}"
    problems = []
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _warning_printer(prefix)
            status = args.run(args)
        sys.stdout.flush()  # a closed pipe shows here, not in Python's final flush at exit
        return status
    except UsageError as exc:
        problems = exc.problems
    except BrokenPipeError:
        return _end_quietly_on_broken_pipe()
    except (ValueError, TypeError, OSError, ImportError) as exc:
        problems = [str(exc)]
    except KeyboardInterrupt:
        return _interrupted(prefix)
    for problem in problems:
        print(f"{prefix}: error: {problem}", file=sys.stderr)
    return 2


def __getattr__(name: str):
    if name == "build_parser":  # loaded on first use, as main() does
        from ._parser import build_parser

        return build_parser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _warning_printer(prefix: str):
    """``warnings.showwarning`` for the command: one line, no source file or line of code."""

    def show(message, category, filename, lineno, file=None, line=None):
        print(f"{prefix}: warning: {message}", file=sys.stderr)

    return show


def _interrupted(prefix: str) -> int:
    """One line on stderr and status 130. Blocks still running on threads (a faiss search cannot
    be stopped midway) would hold the interpreter until they finish, so then the process ends
    at once, its output flushed first."""
    start = "\n" if sys.stderr.isatty() else ""  # on a terminal, a line of its own after "^C" or a progress bar
    print(f"{start}{prefix}: interrupted", file=sys.stderr)
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(INTERRUPTED)
    return INTERRUPTED


def _end_quietly_on_broken_pipe() -> int:
    """The reader of stdout went away: say nothing, and keep Python's final flush of stdout from
    failing again (and printing an error) by pointing stdout at /dev/null."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return BROKEN_PIPE
