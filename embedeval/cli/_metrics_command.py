"""``embedeval metrics``: every metric the registry knows, as ``trec_eval -h -m all`` lists its
measures: name patterns, input forms, tie rules, other tools' names and the definition."""

from __future__ import annotations

import difflib
import json
import re
import textwrap

from .._metrics.catalogue import list_metrics
from .._metrics.families import EMBEDDINGS, RANKINGS
from ._problems import UsageError

METRIC_FORMATS = ("table", "json", "markdown")
_WIDTH = 100


def _family_of(name: str, known: set[str]) -> tuple[str | None, str]:
    """(the family ``name`` means: a family, a metric name or another tool's name for one;
    else None, and "did you mean 'x'? " where a name is close)."""
    from .._metrics.registry import parse_metrics

    if name.lower() in known:
        return name.lower(), ""
    hints = []
    for form in (RANKINGS, EMBEDDINGS):
        try:
            return parse_metrics([name], form)[0].family, ""
        except ValueError as exc:
            hints += re.findall(r"did you mean (.*?\?)", str(exc))
    near = difflib.get_close_matches(name.lower(), sorted(known), n=1, cutoff=0.6)
    hints += [f"{near[0]!r}?"] if near else []
    return None, f"did you mean {hints[0]} " if hints else ""


def _selected(args) -> list[dict]:
    rows = list_metrics()
    if args.form:
        rows = [row for row in rows if args.form in row["forms"]]
    if args.names:
        known = {row["family"] for row in list_metrics()}
        wanted = {name: _family_of(name, known) for name in args.names}
        problems = [
            f"FAMILY: unknown metric family {name!r}; {hint}known: {', '.join(sorted(known))}"
            for name, (family, hint) in wanted.items()
            if family is None
        ]
        if problems:
            raise UsageError(problems)
        rows = [row for row in rows if row["family"] in {family for family, _ in wanted.values()}]
    return rows


def _aliases(row: dict) -> str:
    return "; ".join(f"{tool}: {', '.join(names)}" for tool, names in row["aliases"].items())


def _wrap(text: str, label: str = "") -> list[str]:
    return textwrap.wrap(label + text, _WIDTH, initial_indent="    ", subsequent_indent="      ")


def _text(rows: list[dict]) -> str:
    blocks = []
    for row in rows:
        head = "  ".join(row["names"])
        lines = [head, f"    kind: {row['kind']}; forms: {', '.join(row['forms'])}"]
        if row["ties"]:
            lines.append(f"    ties=: {', '.join(row['ties'])}")
        if row["accepted_aliases"]:
            lines += _wrap(", ".join(row["accepted_aliases"]), "accepted names: ")
        if row["aliases"]:
            lines += _wrap(_aliases(row), "elsewhere: ")
        definitions = row["definitions"]
        for form, definition in definitions.items() if len(set(definitions.values())) > 1 else []:
            lines += _wrap(definition, f"{form}: ")
        if len(set(definitions.values())) == 1:
            lines += _wrap(row["definition"])
        if row["at_r_definition"]:
            lines += _wrap(row["at_r_definition"])
        lines += _wrap(row["reference"], "reference: ")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _markdown(rows: list[dict]) -> str:
    lines = ["| names | forms | definition |", "|---|---|---|"]
    for row in rows:
        names = ", ".join(f"`{name}`" for name in row["names"])
        definition = row["definition"].replace("|", "\\|")
        lines.append(f"| {names} | {', '.join(row['forms'])} | {definition} |")
    return "\n".join(lines)


def metrics_command(args) -> int:
    """Print the metric table on stdout; 0."""
    rows = _selected(args)
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    elif args.format == "markdown":
        print(_markdown(rows))
    else:
        print(_text(rows))
    return 0


def add_metrics_command(sub, **kw) -> None:
    """The ``metrics`` subcommand on the parser's subparsers."""
    mp = sub.add_parser("metrics", help="list every metric: names, forms, definitions, other tools' names", **kw)
    mp.add_argument(
        "names",
        nargs="*",
        metavar="FAMILY",
        help="only these families (e.g. map ndcg) or metrics by any accepted name (P@10); default: all",
    )
    mp.add_argument(
        "--form",
        choices=("embeddings", "rankings", "preferences", "judgement_groups"),
        help="only the metrics of this input form",
    )
    mp.add_argument("--format", choices=METRIC_FORMATS, default="table", help="output on stdout (default: table)")
    mp.set_defaults(run=metrics_command)
