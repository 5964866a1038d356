"""Sphinx directives that write reference pages from the code, so they cannot drift from it.

Each writes MyST Markdown (the pages that use them are Markdown) and parses it in place.

``metric-reference``
    Every metric family of the registry (:func:`embedeval.list_metrics`): name patterns, input
    forms, definition per form, tie rules, accepted aliases, other tools' names, reference.
``cli-reference``
    Every ``embedeval`` command read off the argparse parser: usage, arguments, defaults, help.

:func:`default_metrics_table` writes the quickstart's table of default metrics, which a test
compares with the page.
"""

from __future__ import annotations

import argparse
import inspect
import logging

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

_PUNCTUATION = set("\\`*_{}[]<>()#+-.!|~$^=:@,;'\"/&%?")


def _literal(text: str) -> str:
    """Inline code in MyST Markdown (a double backquote fence where the text holds one)."""
    if not text:
        return ""
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"


def _escape(text: str) -> str:
    """Plain text in MyST Markdown: every ASCII punctuation character backslash-escaped
    (CommonMark allows it for all of them), so formulas keep their * _ ^ | < >."""
    return "".join(
        "\\" + char if char in _PUNCTUATION else char for char in text
    )


def _cell(text: str) -> str:
    """A table cell: pipes escaped, no newlines."""
    return text.replace("\n", " ").replace("|", "\\|")


class _MarkdownDirective(SphinxDirective):
    """A directive whose content is MyST Markdown written by :meth:`lines`, parsed with
    headings allowed (these directives are used from the Markdown pages)."""

    has_content = False

    def lines(self) -> list[str]:  # pragma: no cover - overridden
        raise NotImplementedError

    def run(self):
        # Generated from the code: reread on every build, even when the page itself is unchanged.
        self.env.note_reread()
        container = nodes.container()
        nested_parse_with_titles(
            self.state,
            StringList(self.lines(), source="<generated>"),
            container,
        )
        return container.children


def _metric_section(row: dict) -> list[str]:
    out = [f"(metric-{row['family']})=", f"### {', '.join(row['names'])}", ""]
    definitions = row["definitions"]
    if len(set(definitions.values())) == 1:
        out += [_escape(row["definition"]), ""]
    else:
        for form, text in definitions.items():
            out += [f"**{form}**: {_escape(text)}", ""]
    if row["at_r_definition"]:
        out += [f"**{row['family']}@r**: {_escape(row['at_r_definition'])}", ""]
    fields = [
        ("kind", row["kind"]),
        ("input forms", ", ".join(row["forms"])),
        (
            "graded",
            "yes: reads the grades"
            if row["graded"]
            else "no: binary relevance",
        ),
        ("without a cutoff it needs", _escape(row["needs_uncut"] or "-")),
        (
            "ties=",
            ", ".join(_literal(rule) for rule in row["ties"])
            or "not applicable (one number for the set)",
        ),
        (
            "accepted names",
            ", ".join(_literal(name) for name in row["accepted_aliases"])
            or "-",
        ),
    ]
    fields += [
        (tool, ", ".join(_literal(name) for name in names))
        for tool, names in row["aliases"].items()
    ]
    fields.append(("reference", _escape(row["reference"])))
    if row.get("no_interval"):
        fields.append(("no bootstrap interval", _escape(row["no_interval"])))
    out += [f"- **{_escape(key)}**: {value}" for key, value in fields]
    return [*out, ""]


class MetricReference(_MarkdownDirective):
    """The metric table, then one section per family."""

    def lines(self) -> list[str]:
        import embedeval

        rows = embedeval.list_metrics()
        # Everything under headings: text outside a section would land after the sections.
        out = [
            "## All metrics",
            "",
            "| names | forms | ties= |",
            "|---|---|---|",
        ]
        for row in rows:
            first = f"{{ref}}`{row['names'][0]} <metric-{row['family']}>`"
            names = ", ".join(
                [first, *(_literal(name) for name in row["names"][1:])]
            )
            rules = (
                "all four"
                if len(row["ties"]) == 4
                else "index"
                if row["ties"]
                else "-"
            )
            out.append(f"| {names} | {', '.join(row['forms'])} | {rules} |")
        out.append("")
        for kind, heading in (
            ("per-query", "Per-query metrics"),
            ("set-level", "Set-level metrics"),
        ):
            out += [f"## {heading}", ""]
            for row in rows:
                if row["kind"] == kind:
                    out += _metric_section(row)
        return out


def _default(action: argparse.Action) -> str:
    if action.default in (None, False, argparse.SUPPRESS) or action.required:
        return ""
    if isinstance(action.default, list | tuple):
        return " ".join(map(str, action.default))
    return str(action.default)


def _listed_choices(action: argparse.Action) -> list:
    """The choices of an option: argparse's, or those a lenient parser spells
    in the metavar (``{a,b}``) and checks itself."""
    if action.choices:
        return list(action.choices)
    metavar = action.metavar
    if isinstance(metavar, str) and metavar.startswith("{"):
        return metavar.strip("{}").split(",")
    return []


def _argument_name(action: argparse.Action) -> str:
    """``--metrics NAME ...``, ``--distance CHOICE`` (the choices go to the meaning column)."""
    name = ", ".join(action.option_strings) or action.metavar or action.dest
    if action.option_strings and action.nargs != 0:
        metavar = action.metavar or (
            "CHOICE" if action.choices else action.dest.upper()
        )
        if _listed_choices(action):  # choices spelled as the metavar
            metavar = "CHOICE"
        name += f" {metavar}" + (" ..." if action.nargs in ("+", "*") else "")
    elif not action.option_strings and action.nargs in ("+", "*"):
        name += " ..."
    return name


def _wrapped_command(line: str, width: int = 78) -> list[str]:
    """A shell command cut into lines of at most ``width`` characters with backslashes."""
    lines, current = [], ""
    for word in line.split(" "):
        if current and len(current) + len(word) + 1 > width:
            lines.append(current + " \\")
            current = "    " + word
        else:
            current = f"{current} {word}" if current else word
    return [*lines, current]


def _argument_rows(parser: argparse.ArgumentParser) -> list[str]:
    out = ["| argument | default | meaning |", "|---|---|---|"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        help_text = (action.help or "").replace(
            "%(default)s", str(action.default)
        )
        listed = _listed_choices(action)
        choices = (
            f"one of {', '.join(_literal(str(c)) for c in listed)}. "
            if listed
            else ""
        )
        default = _literal(_default(action))
        out.append(
            f"| {_cell(_literal(_argument_name(action)))} | {_cell(default)} | {_cell(choices + _escape(help_text))} |"
        )
    return [*out, ""]


class CliReference(_MarkdownDirective):
    """Every command of the ``embedeval`` parser."""

    def lines(self) -> list[str]:
        from embedeval.cli import build_parser

        parser = build_parser()
        sub = next(
            a
            for a in parser._actions
            if isinstance(a, argparse._SubParsersAction)
        )
        helps = {choice.dest: choice.help for choice in sub._choices_actions}
        out = []
        for name, command in sub.choices.items():
            out += [
                f"(cli-{name})=",
                f"### embedeval {name}",
                "",
                _escape(helps.get(name, "")),
                "",
            ]
            usage = command.format_usage().removeprefix("usage: ").strip()
            out += ["```text", *usage.splitlines(), "```", ""]
            out += _argument_rows(command)
            if command.epilog:
                out += [
                    "Examples:",
                    "",
                    "```bash",
                    *(
                        part
                        for line in command.epilog.splitlines()[1:]
                        for part in _wrapped_command(line.strip())
                    ),
                    "```",
                    "",
                ]
        return out


def default_metrics_table() -> list[str]:
    """Each entry point's default metrics in Python and on the command line, read from the code,
    as Markdown lines. The quickstart holds the table as plain Markdown (a page on GitHub shows it
    too); tests/docs/test_code_blocks.py checks that it equals these lines."""
    import embedeval
    from embedeval.cli import build_parser

    sub = next(
        a
        for a in build_parser()._actions
        if isinstance(a, argparse._SubParsersAction)
    )
    pairs = [
        ("evaluate", embedeval.evaluate, "evaluate"),
        ("evaluate_retrieval", embedeval.evaluate_retrieval, "retrieval"),
        ("evaluate_rankings", embedeval.evaluate_rankings, None),
        ("io.evaluate_files", embedeval.io.evaluate_files, "rankings"),
        ("evaluate_scores", embedeval.evaluate_scores, "scores"),
    ]
    out = ["| Python | command | default metrics |", "|---|---|---|"]
    for py_name, function, command in pairs:
        default = list(
            inspect.signature(function).parameters["metrics"].default
        )
        if command is not None:
            option = next(
                a for a in sub.choices[command]._actions if a.dest == "metrics"
            )
            if list(option.default) != default:
                raise ValueError(
                    f"{py_name} and 'embedeval {command}' have different default metrics"
                )
        shown = _literal(f"embedeval {command}") if command else "-"
        out.append(
            f"| {_literal('embedeval.' + py_name)} | {shown} | {_literal(' '.join(default))} |"
        )
    return out


class _OptionalGlobs(logging.Filter):
    """Globbed toctrees name pages that other branches add (``integrations/*``, more guides):
    a glob that matches nothing yet is expected, not a warning (Sphinx gives this warning no
    type, so ``suppress_warnings`` cannot name it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "didn't match any documents" not in str(record.msg)


def setup(app):
    logging.getLogger("sphinx.sphinx.directives.other").addFilter(
        _OptionalGlobs()
    )
    app.add_directive("metric-reference", MetricReference)
    app.add_directive("cli-reference", CliReference)
    return {
        "version": "1",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
