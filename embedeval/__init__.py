"""embedeval: exact, fast retrieval metrics for embedding spaces and ranked lists."""

from importlib.metadata import PackageNotFoundError, version

from ._embeddings.evaluate import evaluate
from ._embeddings.retrieval import evaluate_retrieval
from ._forms.rankings import evaluate_rankings
from ._forms.scores import evaluate_scores
from .accumulator import Accumulator
from .result import EvaluationResult, PerClass, PerGroup

try:
    __version__ = version("embedeval")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0+unknown"

__all__ = [
    "Accumulator",
    "EvaluationResult",
    "PerClass",
    "PerGroup",
    "__version__",
    "evaluate",
    "evaluate_rankings",
    "evaluate_retrieval",
    "evaluate_scores",
]
