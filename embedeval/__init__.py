"""embedeval: exact, fast retrieval metrics for embedding spaces and ranked lists."""

from importlib.metadata import PackageNotFoundError, version

from ._embeddings.evaluate import evaluate
from ._embeddings.neighbors import Neighbors, neighbors
from ._embeddings.retrieval import evaluate_retrieval
from ._forms.rankings import evaluate_rankings
from ._forms.scores import evaluate_scores
from ._metrics.catalogue import list_metrics
from .accumulator import Accumulator
from .result import EvaluationResult, PerClass, PerGroup

try:
    __version__ = version("embedeval")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0+unknown"

# The public modules, reachable as attributes of the package (``embedeval.io.read_run``) without
# importing each one: loaded on first use, so ``import embedeval`` stays as light as before.
_PUBLIC_MODULES = (
    "confidence",
    "distributed",
    "hashing",
    "io",
    "plotting",
    "protocols",
    "reality_check",
    "report",
    "stats",
    "testing",
)


def __getattr__(name: str):
    if name in _PUBLIC_MODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC_MODULES})


__all__ = [
    "Accumulator",
    "EvaluationResult",
    "Neighbors",
    "PerClass",
    "PerGroup",
    "__version__",
    "evaluate",
    "evaluate_rankings",
    "evaluate_retrieval",
    "evaluate_scores",
    "list_metrics",
    "neighbors",
]
