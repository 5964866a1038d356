"""The query/reference pair of every embedding entry point, read, checked and scaled in one place."""

from __future__ import annotations

from .._inputs.arrays import as_embeddings, check_directions
from .._inputs.codes import HAMMING, read_codes
from .._inputs.magnitude import into_safe_range


def read_pair(queries, reference, names: tuple[str, str], distance: str, *, optional: bool = True):
    """``(queries, references, scale)``, checked before any work.

    Parameters
    ----------
    queries, reference : array-like of shape (n_queries, d) and (n_references, d), or binary codes
        ``reference`` None: the queries are their own references (leave-one-out), where
        ``optional``; otherwise None is refused as any array that holds no numbers.
    names : (str, str)
        The arguments' names as the caller's user wrote them, for the error messages.
    distance : str
        ``"hamming"``: packed binary codes (:mod:`embedeval._inputs.codes`) and a scale of 1.0
        (integer distances have no float32 range to keep). Otherwise float arrays of one
        dimension, scaled by one power of two where their magnitudes need it
        (:mod:`embedeval._inputs.magnitude`); with ``"cosine"``, every row is checked to have a
        direction after the rounding to float32 (a tiny row may have become all zeros).
    optional : bool
        Whether the reference may be left out (float arrays; codes always may).

    Queries are not normalised here: they are read (and normalised) block by block, so that
    memory-mapped queries are streamed from disk; each searcher prepares the references itself.
    """
    query_name, reference_name = names
    if distance == HAMMING:
        return (*read_codes(queries, reference, names), 1.0)
    own = reference is None and optional
    q = as_embeddings(queries, query_name, wide=True)
    r = q if own else as_embeddings(reference, reference_name, wide=True)
    if r.shape[1] != q.shape[1]:
        raise ValueError(
            f"'{reference_name}' must have the dimension of '{query_name}' ({q.shape[1]}); got {r.shape[1]}"
        )
    q, r, scale = into_safe_range(q, r, list(names), distance)
    if distance == "cosine":
        check_directions(q, query_name)
        if not own:
            check_directions(r, reference_name)
    return q, r, scale
