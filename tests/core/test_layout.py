"""The package layout: no import cycle between modules or between packages, and private stages
import only the stages below them. A static scan of every import, at module level and inside
functions (``if TYPE_CHECKING:`` blocks aside), so a new cycle fails here before it fails at import."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "embedeval"

# The private stages, lowest first: a stage imports only stages before it (and itself).
STAGES = ("_core", "_inputs", "_search", "_metrics", "_relevance", "_pipeline", "_setlevel", "_forms", "_embeddings")
STAGES += ("_stats",)  # comparisons of systems: above every stage, below the public modules
# Public modules that private stages build on, with the highest stage each may import (the
# explorer: so that results and comparisons can offer ``explore`` without an import cycle).
LOW_PUBLIC = {"result": "_metrics", "explorer": "_metrics"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for n in ast.walk(node))
    return skipped


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The embedeval modules that module ``name`` imports."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skipped = _type_checking_nodes(tree)
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in modules else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in modules and m != name}


def import_graph() -> dict[str, set[str]]:
    """Module -> the embedeval modules it imports, for every module of the package."""
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def unit(module: str) -> str:
    """The package-level unit of a module: its stage package, ``cli``, ``integrations``, or the
    public module itself (``embedeval`` for the package's ``__init__``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "embedeval"


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


GRAPH = import_graph()


def test_the_scan_sees_the_pipeline():
    """The scan is not vacuous: it finds the imports that the pipeline is made of."""
    assert "embedeval._metrics.kernels" in GRAPH["embedeval._metrics.registry"]
    assert "embedeval._forms.trec.columns" in GRAPH["embedeval._forms.trec.arrow"]
    assert len(GRAPH) > 80 and sum(map(len, GRAPH.values())) > 200


def test_the_scan_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_cycle_between_modules():
    assert cycles(GRAPH) == []


def test_no_cycle_between_packages():
    units: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        units.setdefault(unit(module), set()).update(unit(t) for t in targets if unit(t) != unit(module))
    assert cycles(units) == []


@pytest.mark.parametrize("stage", STAGES)
def test_stages_import_only_the_stages_below(stage):
    level = STAGES.index(stage)
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        if unit(module) == stage
        for target in targets
        if unit(target) != stage and (unit(target) not in STAGES[:level] and unit(target) not in LOW_PUBLIC)
    )
    assert upward == []


@pytest.mark.parametrize("public", sorted(LOW_PUBLIC))
def test_low_public_modules_import_only_low_stages(public):
    allowed = (*STAGES[: STAGES.index(LOW_PUBLIC[public]) + 1], *LOW_PUBLIC)
    modules = [m for m in GRAPH if unit(m) == public]  # a package's every module
    upward = sorted(f"{m} -> {t}" for m in modules for t in GRAPH[m] if unit(t) not in allowed)
    assert upward == []


def test_the_top_level_holds_only_public_modules_and_stage_packages():
    private_files = sorted(p.name for p in PACKAGE.glob("_*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert private_files == []
    assert (PACKAGE / "__main__.py").exists()
    stray = sorted(
        p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name.startswith("_") and p.name != "__pycache__"
    )
    assert set(stray) <= set(STAGES)


def test_no_module_is_over_the_size_rule():
    """Modules named after concepts, split where the concept splits, not to meet a count: the cap
    (600 lines) only catches a module that has grown into several. At 380, cohesive modules were
    cut into mixins and helpers that read other objects' private attributes (issue 54)."""
    long = sorted(
        f"{p.relative_to(PACKAGE)}: {n}" for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 600
    )
    assert long == []
