"""embedeval: exact, fast retrieval metrics for embedding spaces and ranked lists."""

from importlib import import_module as _import_module

# The public functions and classes, each loaded from its module on first use: ``import embedeval``
# then costs no faiss, no BLAS and no matplotlib, so that a command that needs none of them
# (``embedeval trec_eval``, ``embedeval metrics``) starts in a fraction of the time.
_PUBLIC_NAMES = {
    "Accumulator": "accumulator",
    "EvaluationResult": "result",
    "PerClass": "result",
    "PerGroup": "result",
    "evaluate": "_embeddings.evaluate",
    "evaluate_rankings": "_forms.rankings",
    "evaluate_retrieval": "_embeddings.retrieval",
    "evaluate_scores": "_forms.scores",
    "list_metrics": "_metrics.catalogue",
    "neighbors": "_embeddings.neighbors",
    "Neighbors": "_core.neighbors",
}

# The public modules, reachable as attributes of the package (``embedeval.io.read_run``) without
# importing each one: loaded on first use too.
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


def _version() -> str:
    """The installed version (read on first use: importing importlib.metadata is not free)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("embedeval")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
        return "0+unknown"


def __getattr__(name: str):
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    if name in _PUBLIC_NAMES:
        value = getattr(_import_module(f"{__name__}.{_PUBLIC_NAMES[name]}"), name)
        globals()[name] = value  # found directly from now on
        return value
    if name in _PUBLIC_MODULES:
        return _import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """What a user may reach: the public names and modules (no private helper, no import)."""
    return sorted({*__all__, *_PUBLIC_MODULES, *(n for n in globals() if n.startswith("__"))})


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
