"""The ``embedeval`` command.

Every problem with the arguments is printed at once, one line each on stderr, and the command
exits with status 2 without a traceback. Tables go to stdout; notes and progress to stderr.

The package: ``_parser`` (commands, arguments, help), ``_commands`` (one function per command),
``_loaders`` (array and label files), ``_output`` (formats, reports, per-class CSV, progress).
"""

from __future__ import annotations

import sys

from ._commands import UsageError
from ._parser import build_parser

__all__ = ["build_parser", "main"]


def main(argv=None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``) and return the exit status.

    Argument problems (:class:`UsageError`, several at once) and bad input (``ValueError``,
    ``TypeError``, ``OSError`` from loading or evaluating) become ``embedeval COMMAND: error:``
    lines on stderr and status 2; argparse's own errors exit 2 as well.
    """
    args = build_parser().parse_args(argv)
    problems = []
    try:
        return args.run(args)
    except UsageError as exc:
        problems = exc.problems
    except (ValueError, TypeError, OSError) as exc:
        problems = [str(exc)]
    for problem in problems:
        print(f"embedeval {args.command}: error: {problem}", file=sys.stderr)
    return 2
