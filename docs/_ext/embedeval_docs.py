"""Sphinx directives that write reference pages from the code, so they cannot drift from it.

``metric-reference``
    Every metric family of the registry (:func:`embedeval.list_metrics`): name patterns, input
    forms, definition per form, tie rules, accepted aliases, other tools' names, reference.
``cli-reference``
    Every ``embedeval`` command read off the argparse parser: usage, arguments, defaults, help.
``default-metrics``
    The default metric list of each entry point, read from the functions' signatures and the
    parser, side by side.
"""

from __future__ import annotations

import argparse
import inspect
import logging

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles


def _literal(text: str) -> str:
    """Inline literal in RST, safe for backquotes."""
    return "``" + text.replace("`", "'") + "``" if text else ""


def _escape(text: str) -> str:
    """Plain text in RST: characters with a meaning in inline markup escaped."""
    for char in ("\\", "*", "`", "|", "_"):
        text = text.replace(char, "\\" + char)
    return text


class _RstDirective(SphinxDirective):
    """A directive whose content is RST written by :meth:`lines`."""

    has_content = False

    def lines(self) -> list[str]:  # pragma: no cover - overridden
        raise NotImplementedError

    def run(self):
        container = nodes.container()
        nested_parse_with_titles(self.state, StringList(self.lines(), source="<generated>"), container)
        return container.children


def _metric_section(row: dict) -> list[str]:
    title = ", ".join(row["names"])
    out = [f".. _metric-{row['family']}:", "", title, "~" * (len(title) + 4), ""]
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
        ("graded", "yes: reads the grades" if row["graded"] else "no: binary relevance"),
        ("without a cutoff it needs", row["needs_uncut"] or "-"),
        ("ties=", ", ".join(_literal(rule) for rule in row["ties"]) or "not applicable (one number for the set)"),
        ("accepted names", ", ".join(_literal(name) for name in row["accepted_aliases"]) or "-"),
    ]
    for tool, names in row["aliases"].items():
        fields.append((f"{tool}", ", ".join(_literal(name) for name in names)))
    fields.append(("reference", _escape(row["reference"])))
    if row.get("no_interval"):
        fields.append(("no bootstrap interval", _escape(row["no_interval"])))
    for key, value in fields:
        out.append(f":{_escape(key)}: {value}")
    return [*out, ""]


class MetricReference(_RstDirective):
    """The metric table, one section per family."""

    def lines(self) -> list[str]:
        import embedeval

        rows = embedeval.list_metrics()
        out = [".. list-table::", "   :header-rows: 1", "   :widths: 40 30 30", "", "   * - names", "     - forms"]
        out += ["     - ties="]
        for row in rows:
            names = ", ".join(f":ref:`{name} <metric-{row['family']}>`" for name in row["names"][:1])
            more = ", ".join(_literal(name) for name in row["names"][1:])
            out += [f"   * - {names}{', ' + more if more else ''}", f"     - {', '.join(row['forms'])}"]
            out += [f"     - {'all four rules' if len(row['ties']) == 4 else 'index' if row['ties'] else '-'}"]
        out.append("")
        for kind, heading in (("per-query", "Per-query metrics"), ("set-level", "Set-level metrics")):
            out += [heading, "-" * len(heading), ""]
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


def _argument_rows(parser: argparse.ArgumentParser) -> list[str]:
    out = [".. list-table::", "   :header-rows: 1", "   :widths: 30 20 50", "", "   * - argument", "     - default"]
    out += ["     - meaning"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        name = ", ".join(action.option_strings) or action.metavar or action.dest
        if action.option_strings and action.nargs != 0:
            metavar = action.metavar or (
                "{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest.upper()
            )
            name += f" {metavar}" + (" ..." if action.nargs in ("+", "*") else "")
        elif not action.option_strings and action.nargs in ("+", "*"):
            name += " ..."
        help_text = (action.help or "").replace("%(default)s", str(action.default))
        out += [f"   * - {_literal(name)}", f"     - {_literal(_default(action))}", f"     - {_escape(help_text)}"]
    return [*out, ""]


class CliReference(_RstDirective):
    """Every command of the ``embedeval`` parser."""

    def lines(self) -> list[str]:
        from embedeval.cli import build_parser

        parser = build_parser()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        helps = {choice.dest: choice.help for choice in sub._choices_actions}
        out = []
        for name, command in sub.choices.items():
            title = f"embedeval {name}"
            out += [f".. _cli-{name}:", "", title, "-" * len(title), "", _escape(helps.get(name, "")), ""]
            usage = command.format_usage().removeprefix("usage: ").strip()
            out += ["::", "", *("   " + line for line in usage.splitlines()), ""]
            out += _argument_rows(command)
            if command.epilog:
                out += ["Examples::", "", *("   " + line.strip() for line in command.epilog.splitlines()[1:]), ""]
        return out


class DefaultMetrics(_RstDirective):
    """Each entry point's default metrics in Python and on the command line, read from the code."""

    def lines(self) -> list[str]:
        import embedeval
        from embedeval.cli import build_parser

        sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
        pairs = [
            ("evaluate", embedeval.evaluate, "evaluate"),
            ("evaluate_retrieval", embedeval.evaluate_retrieval, "retrieval"),
            ("evaluate_rankings", embedeval.evaluate_rankings, None),
            ("io.evaluate_files", embedeval.io.evaluate_files, "rankings"),
            ("evaluate_scores", embedeval.evaluate_scores, "scores"),
        ]
        out = [".. list-table::", "   :header-rows: 1", "", "   * - Python", "     - command", "     - default metrics"]
        for py_name, function, command in pairs:
            default = list(inspect.signature(function).parameters["metrics"].default)
            if command is not None:
                option = next(a for a in sub.choices[command]._actions if a.dest == "metrics")
                if list(option.default) != default:
                    raise ValueError(f"{py_name} and 'embedeval {command}' have different default metrics")
            shown = f"``embedeval {command}``" if command else "-"
            out += [f"   * - ``embedeval.{py_name}``", f"     - {shown}", f"     - {_literal(' '.join(default))}"]
        return [*out, ""]


class _OptionalGlobs(logging.Filter):
    """Globbed toctrees name pages that other branches add (``integrations/*``, more guides):
    a glob that matches nothing yet is expected, not a warning (Sphinx gives this warning no
    type, so ``suppress_warnings`` cannot name it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "didn't match any documents" not in str(record.msg)


def setup(app):
    logging.getLogger("sphinx.sphinx.directives.other").addFilter(_OptionalGlobs())
    app.add_directive("metric-reference", MetricReference)
    app.add_directive("cli-reference", CliReference)
    app.add_directive("default-metrics", DefaultMetrics)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
