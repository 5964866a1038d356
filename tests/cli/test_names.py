"""One word for one thing on the command line (issue 56): every command's parser is read, and a
concept spelled two ways, an option with two types, or judgements and runs taken in two orders
fail here. The vocabulary is docs/conventions.md's "Names on the command line"."""

from __future__ import annotations

import argparse
import re
from collections import defaultdict

from embedeval.cli._argparse import REMOVED_IN
from embedeval.cli._examples import EXAMPLES
from embedeval.cli._parser import build_parser
from embedeval.cli._trec_eval import HELP as TREC_EVAL_HELP

# The one spelling of each concept that more than one command has, and the other spellings it
# replaced: on the right, an old spelling that must never be an option again, or (command, old)
# where the old spelling stays the name of something else (with its own kind) elsewhere. Each old
# spelling still parses, deprecated, until REMOVED_IN.
NAMES = {
    "--metrics": ("--metric",),  # the metrics to compute, always a list (one for leaderboard)
    "--baseline": ("--control",),  # the system the others are compared with
    "--per-query": (),  # a flag: each query's values too (trec_eval's -q)
    "--per-query-values": (("leaderboard", "--per-query"),),  # a file of per-query values
    "--ci": (),  # a level in (0, 1), with --no-ci
    "--max-retrieved": (),  # trec_eval's -M
    "--judged-only": (),  # trec_eval's -J
    "--out-dir": (("reality-check", "--out"),),  # a folder to write into
    "--out": (),  # files to write (neighbors, repeatable)
}
REPLACED = {old: new for new, olds in NAMES.items() for old in olds if isinstance(old, str)}
OVERLOADED = {old: new for new, olds in NAMES.items() for old in olds if isinstance(old, tuple)}


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: p for name, p in sub.choices.items() if name not in ("trec_eval", "trec-eval")}


def _deprecated(action) -> bool:
    return hasattr(type(action), "replacement")


def _kind(action) -> tuple:
    """What an option takes: its action, how many values, their type and choices' kind."""
    convert = getattr(action, "given_type", action.type)
    return (
        type(action).__name__,
        action.nargs,
        getattr(convert, "__name__", None),
        getattr(action, "given_choices", action.choices) is not None,
    )


def _options():
    for command, parser in _commands().items():
        for action in parser._actions:
            if action.option_strings and action.dest != "help":
                yield command, action


def test_every_option_has_one_kind_across_the_commands():
    """--ci was a level with --no-ci on five commands and a float defaulting to 0.95 on
    leaderboard; --per-query a flag on rankings and scores and a file on leaderboard."""
    kinds = defaultdict(lambda: defaultdict(list))
    for command, action in _options():
        if not _deprecated(action):
            for option in action.option_strings:
                kinds[option][_kind(action)].append(command)
    twice = {option: dict(by_kind) for option, by_kind in kinds.items() if len(by_kind) > 1}
    assert twice == {}


def test_no_concept_has_two_spellings():
    """--metric on leaderboard and --metrics elsewhere; --control on leaderboard and --baseline on
    compare. The old spellings are deprecated aliases of the new ones, nothing more."""
    spelled = defaultdict(set)  # dest -> the spellings that store into it
    for command, action in _options():
        for option in action.option_strings:
            if _deprecated(action):
                assert REPLACED.get(option, OVERLOADED.get((command, option))) == type(action).replacement, option
                assert action.help == argparse.SUPPRESS, (command, option)
                continue
            assert option not in REPLACED, f"{command}: {option} is the old spelling of {REPLACED[option]}"
            spelled[action.dest].add(option)
    assert {dest: names for dest, names in spelled.items() if len(names) > 1} == {}
    long_names = {option for names in spelled.values() for option in names if option.startswith("--")}
    plural = {name for name in long_names if name + "s" in long_names}
    assert plural == set(), "a singular and a plural of one word"


def test_each_old_spelling_still_parses_as_the_new_one_with_a_warning(capsys):
    deprecated = [(c, a) for c, a in _options() if _deprecated(a)]
    assert {(c, o) for c, a in deprecated for o in a.option_strings} == {
        *((c, o) for c, a in _options() for o in a.option_strings if o in REPLACED),
        *OVERLOADED,
    }
    for command, action in deprecated:
        parser = _commands()[command]
        old, new = action.option_strings[0], type(action).replacement
        value = [] if action.nargs == 0 else ["x"]
        positional = ["f"] * sum(1 for a in parser._actions if not a.option_strings and a.nargs is None)
        with_old, with_new = (
            parser.parse_args([*positional, old, *value]),
            parser.parse_args([*positional, new, *value]),
        )
        assert getattr(with_old, action.dest) == getattr(with_new, action.dest), (command, old)
        assert f"{old} is deprecated and goes in {REMOVED_IN}; use {new}" in capsys.readouterr().err


def test_judgements_come_before_runs_in_every_command_that_takes_both():
    """rankings took RUN QRELS, trec_eval QRELS RUN, compare RUN1 RUN2 QRELS."""
    rankings = [a.metavar for a in _commands()["rankings"]._actions if not a.option_strings and a.dest != "help"]
    assert rankings == ["QRELS", "RUN"]
    assert re.search(r"\bQRELS RUN\b", TREC_EVAL_HELP)
    compare = next(a for a in _commands()["compare"]._actions if a.dest == "inputs")
    assert "QRELS RUN1 RUN2" in compare.help
    trec = next(a for a in _commands()["leaderboard"]._actions if a.dest == "trec")
    assert "NAME QRELS RUN" in trec.help
    for line in EXAMPLES.splitlines():  # in the examples: a qrels before any run
        words = line.split()
        if "qrels.txt" in words and any(w in ("run.txt", "bm25.txt", "base.txt") for w in words):
            first_run = min(i for i, w in enumerate(words) if w in ("run.txt", "bm25.txt", "base.txt"))
            assert words.index("qrels.txt") < first_run, line


def test_the_help_examples_show_every_command():
    """embedeval --help showed neither explore, leaderboard, neighbors nor trec_eval."""
    shown = {line.split()[1] for line in EXAMPLES.splitlines() if line.startswith("  embedeval ")}
    assert shown >= {*_commands(), "trec_eval"}
    assert "--explore" in EXAMPLES


def test_each_command_help_shows_its_examples_once():
    """embedeval leaderboard --help listed its examples twice: in its description and after its options."""
    for name, command in _commands().items():
        text = command.format_help()
        assert text.count("examples:") <= 1, name
        lines = [line for line in text.splitlines() if line.startswith("  embedeval ")]
        assert len(lines) == len(set(lines)), name
    assert _commands()["leaderboard"].format_help().count("  embedeval leaderboard ") == 4
