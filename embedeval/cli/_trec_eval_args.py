"""trec_eval 10's command line, read as trec_eval reads it (``getopt_long``): short options may be
joined (``-qc``) and take their value joined or next (``-M100``, ``-M 100``), long options may be
shortened while unambiguous (``--measure=P.5``), and options may follow the two file names.

Every problem is collected, for the command to raise with its own at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# short flag -> (long name, takes a value)
FLAGS = {
    "h": ("help", False),
    "v": ("version", False),
    "q": ("query_eval_wanted", False),
    "m": ("measure", True),
    "c": ("complete_rel_info_wanted", False),
    "l": ("level_for_rel", True),
    "n": ("nosummary", False),
    "D": ("Debug_level", True),
    "J": ("Judged_docs_only", False),
    "N": ("Number_docs_in_coll", True),
    "M": ("Max_retrieved_per_topic", True),
    "R": ("Rel_info_format", True),
    "T": ("Results_format", True),
    "o": ("Output_old_results_format", False),
    "Z": ("Zscore", True),
    "ties": ("ties", True),  # embedeval's own long option (--ties RULE), no short form
}
_LONG = {name: short for short, (name, _) in FLAGS.items()}
REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")  # trec_eval 10's -R


@dataclass
class TrecEvalArgs:
    """The command line of ``embedeval trec_eval``, with trec_eval's defaults."""

    help: bool = False
    version: bool = False
    per_query: bool = False
    measures: list = field(default_factory=list)
    complete: bool = False
    level: int = 1
    summary: bool = True
    judged_only: bool = False
    max_retrieved: int | None = None
    rel_format: str = "qrels"
    results_format: str = "trec_results"
    zscores: str | None = None
    ties: str | None = None
    files: list = field(default_factory=list)


def _integer(flag: str, text: str, low: int, problems: list) -> int:
    try:
        value = int(text)
    except ValueError:
        problems.append(f"-{flag}: must be an integer; got {text!r}")
        return low
    if value < low:
        problems.append(f"-{flag}: must be an integer >= {low}; got {text!r}")
    return value


def _apply(args: TrecEvalArgs, flag: str, value: str | None, problems: list) -> None:
    """One option's effect, as trec_eval 10 gives it; the modes embedeval cannot run are problems."""
    simple = {"h": "help", "v": "version", "q": "per_query", "c": "complete", "J": "judged_only"}
    if flag in simple:
        setattr(args, simple[flag], True)
    elif flag == "n":
        args.summary = False
    elif flag == "m":
        args.measures.append(value)
    elif flag == "l":
        args.level = _integer("l", value, 1, problems)
    elif flag == "M":
        args.max_retrieved = _integer("M", value, 0, problems)
    elif flag == "Z":
        args.zscores = value
    elif flag == "ties":
        args.ties = value
        if value not in ("expected", "optimistic", "pessimistic"):
            problems.append(f"--ties: must be expected, optimistic or pessimistic; got {value!r}")
    elif flag in ("R", "T"):
        _format(args, flag, value, problems)
    elif flag == "D":
        problems.append("-D: trec_eval's debug output is not reproduced")
    # -N (collection size: no measure of all_trec reads it) and -o (obsolete) change nothing


def _format(args: TrecEvalArgs, flag: str, value: str, problems: list) -> None:
    """-R (the judgements' format: qrels, prefs, qrels_prefs, qrels_jg) or -T (the run's)."""
    if flag == "R":
        args.rel_format = value
        if value not in REL_FORMATS:
            problems.append(f"-R {value}: the rel_info format must be one of {', '.join(REL_FORMATS)}")
    elif value != "trec_results":
        problems.append(f"-T {value}: only the results format 'trec_results' is read")


def _long_option(text: str, rest: list, problems: list) -> tuple[str | None, str | None]:
    name, eq, value = text[2:].partition("=")
    matches = [n for n in _LONG if n == name] or [n for n in _LONG if n.startswith(name)]
    if len(matches) != 1:
        what = "ambiguous" if matches else "unrecognized"
        problems.append(f"{what} option '--{name}'")
        return None, None
    short = _LONG[matches[0]]
    if FLAGS[short][1] and not eq:
        if not rest:
            problems.append(f"option '--{matches[0]}' requires an argument")
            return None, None
        value = rest.pop(0)
    return short, value if FLAGS[short][1] else None


def parse(argv: list[str]) -> tuple[TrecEvalArgs, list[str]]:
    """(the options and the two files (rel_info_file, results_file) of ``argv``, its problems)."""
    args, problems, rest = TrecEvalArgs(), [], list(argv)
    while rest:
        item = rest.pop(0)
        if item == "--":
            args.files += rest
            break
        if item.startswith("--"):
            flag, value = _long_option(item, rest, problems)
            if flag:
                _apply(args, flag, value, problems)
            continue
        if not item.startswith("-") or item == "-":
            args.files.append(item)
            continue
        letters = item[1:]
        while letters:
            flag, letters = letters[0], letters[1:]
            if flag not in FLAGS:
                problems.append(f"invalid option -- '{flag}'")
                continue
            value = None
            if FLAGS[flag][1]:
                if not letters and not rest:
                    problems.append(f"option requires an argument -- '{flag}'")
                    break
                value, letters = (letters or rest.pop(0)), ""
            _apply(args, flag, value, problems)
    if not (args.help or args.version) and len(args.files) != 2:
        problems.append(f"needs two files, QRELS (rel_info_file) then RUN (results_file); got {len(args.files)}")
    return args, problems
