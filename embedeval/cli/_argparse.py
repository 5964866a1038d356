"""argparse made to report every problem at once, one line each, without a usage block.

argparse stops at the first bad value (``--ci 95``) and prints the command's usage (9 to 14
lines) before it. Here each option's type conversion and choice check is wrapped so that a bad
value is recorded and parsing goes on; argparse's own errors (a missing argument, an option
without its value) are recorded too. :func:`parse` returns the namespace (None when parsing
could not finish) and the problems, each ``(prog, message)``; the entry point prints them as
``PROG: error: MESSAGE`` lines and exits 2.
"""

from __future__ import annotations

import argparse
import difflib
import sys

# The release in which the deprecated spellings of options go (they work until then, with a
# warning line); docs/changelog.md lists each one.
REMOVED_IN = "0.2"


def confidence_level(text: str) -> float:
    """The value of ``--ci``: a number in (0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), e.g. 0.95; got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), e.g. 0.95; got {text}")
    return value


def deprecated(new: str, convert=None) -> type[argparse.Action]:
    """An action for an old spelling of the option ``new``: it stores its value where ``new``
    does (``convert`` turns it into ``new``'s kind, e.g. one name into a list of names) and says
    on stderr that the spelling is deprecated. Give it ``dest`` (``new``'s) and
    ``help=argparse.SUPPRESS``."""

    class Deprecated(argparse.Action):
        replacement = new

        def __call__(self, parser, namespace, values, option_string=None):
            print(
                f"{parser.prog}: warning: {option_string} is deprecated and goes in {REMOVED_IN}; use {new}",
                file=sys.stderr,
            )
            value = True if self.nargs == 0 else values
            setattr(namespace, self.dest, convert(value) if convert is not None else value)

    return Deprecated


class _Stop(Exception):
    """argparse met an error it cannot parse past."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are recorded (in ``problems``, shared with its commands)."""

    problems: list[tuple[str, str]]

    def error(self, message):
        if message == "the following arguments are required: COMMAND":
            message = f"a command is required: {', '.join(self.commands())}; 'embedeval --help' says what each does"
        self.problems.append((self.prog, message))
        raise _Stop

    def commands(self) -> list[str]:
        """The names of this parser's commands (aliases included)."""
        subparsers = [a for a in self._actions if isinstance(a, argparse._SubParsersAction)]
        return [name for a in subparsers for name in a.choices]


def _lenient(action: argparse.Action, prog: str, problems: list) -> None:
    """Record, instead of raising, a value of ``action`` that its type or choices refuse."""
    convert, choices = action.type, action.choices
    action.given_type, action.given_choices = convert, choices  # what was declared, for the names test
    if choices is not None and action.metavar is None:
        action.metavar = "{" + ",".join(map(str, choices)) + "}"  # the help shows them as before
    action.choices = None

    def read(text):
        name = "/".join(action.option_strings) or action.dest
        try:
            value = convert(text) if convert is not None else text
        except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
            # int and float by name ("invalid float value"); a private converter's name says nothing
            kind = f"{convert.__name__} " if convert in (int, float) else ""
            why = str(exc) if isinstance(exc, argparse.ArgumentTypeError) else f"invalid {kind}value: {text!r}"
            problems.append((prog, f"argument {name}: {why}"))
            return None
        if choices is not None and value not in choices:
            near = difflib.get_close_matches(str(value), list(map(str, choices)), n=1, cutoff=0.5)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            problems.append(
                (prog, f"argument {name}: invalid choice: {text!r} (choose from {', '.join(map(str, choices))}){hint}")
            )
            return None
        return value

    action.type = read


def make_lenient(parser: Parser, problems: list | None = None) -> Parser:
    """Share one problem list over ``parser`` and its commands, and wrap every typed or choice
    option (sub-command names themselves stay argparse's)."""
    problems = [] if problems is None else problems
    parser.problems = problems
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                make_lenient(command, problems)
        elif action.type is not None or action.choices is not None:
            _lenient(action, parser.prog, problems)
    return parser


def parse(parser: Parser, argv) -> tuple[argparse.Namespace | None, list[tuple[str, str]]]:
    """``(namespace or None, problems)`` of ``argv``; unrecognised arguments are a problem too."""
    parser.problems.clear()
    try:
        args, unknown = parser.parse_known_args(argv)
    except _Stop:
        return None, list(parser.problems)
    if unknown:
        prog = getattr(args, "command_parser", parser).prog
        parser.problems.append((prog, f"unrecognized arguments: {' '.join(unknown)}"))
    return args, list(parser.problems)
