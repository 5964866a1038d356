"""The docstrings' ``Examples`` sections run as doctests, so the API reference shows real output.

Every module of the package is imported and its doctests are run (ELLIPSIS and
NORMALIZE_WHITESPACE, as the docstrings are written for people); an example that needs what a
test machine lacks says ``# doctest: +SKIP`` on its line. The integration adapters are left out
where their framework is not installed (their import error says so, with the install command).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import embedeval

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(embedeval.__path__, prefix="embedeval.")
    if not info.name.endswith("__main__")
)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _examples(name: str) -> list[doctest.DocTest]:
    try:
        module = importlib.import_module(name)
    except ImportError as error:
        # an adapter whose framework is not installed (`pip install -e ".[test]"` has none of them)
        if name.startswith("embedeval.integrations.") and "embedeval[integrations]" in str(error):
            return []
        raise
    tests = doctest.DocTestFinder(exclude_empty=True).find(module, name)
    return [t for t in tests if t.examples]


def test_the_public_entry_points_have_examples():
    names = {t.name for name in MODULES for t in _examples(name)}
    for function in ("evaluate", "evaluate_rankings", "evaluate_retrieval", "evaluate_scores", "list_metrics"):
        assert any(n.endswith(f".{function}") for n in names), f"{function} has no doctested example"


@pytest.mark.parametrize("name", [name for name in MODULES if _examples(name)])
def test_docstring_examples_run(name):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in _examples(name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples failed in {name} (see above)"
