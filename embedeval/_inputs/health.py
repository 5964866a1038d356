"""Health checks of an embedding matrix: non-finite rows, collapse, duplicates, norms, classes.

:func:`check_embeddings` reports; :func:`embedeval.testing.assert_healthy_embeddings` asserts.
Both are public through :mod:`embedeval.testing`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._core.text import aligned_table
from .arrays import _to_numpy, as_labels, encode_labels, row_blocks


@dataclass(frozen=True)
class EmbeddingReport:
    """Health of an embedding matrix; ``problems`` are failures, ``notes`` are for information.

    Attributes
    ----------
    n, dim : int
    nonfinite_rows : int
        Rows with NaN or inf.
    effective_rank : float
        exp of the entropy of the normalised singular values of the centred matrix
        (Roy & Vetterli 2007): 1 for points on a line, ``dim`` for an isotropic cloud.
    duplicate_fraction : float
        Rows that exactly repeat an earlier row, over n.
    zero_rows : int
        All-zero rows (undefined under cosine distance).
    norm_min, norm_median, norm_max : float
        Of the row norms.
    singleton_classes : int
        Labels with one member (their queries are skipped in leave-one-out evaluation).
    """

    n: int
    dim: int
    nonfinite_rows: int
    effective_rank: float
    duplicate_fraction: float
    zero_rows: int
    norm_min: float
    norm_median: float
    norm_max: float
    n_classes: int | None = None
    singleton_classes: int | None = None
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        rows = [
            ["rows x dims", f"{self.n} x {self.dim}"],
            ["non-finite rows", str(self.nonfinite_rows)],
            ["effective rank", f"{self.effective_rank:.2f} of {min(self.n, self.dim)}"],
            ["exact duplicate rows", f"{self.duplicate_fraction:.2%}"],
            ["all-zero rows", str(self.zero_rows)],
            ["norm min / median / max", f"{self.norm_min:.4g} / {self.norm_median:.4g} / {self.norm_max:.4g}"],
        ]
        if self.n_classes is not None:
            rows.append(["classes (of one member)", f"{self.n_classes} ({self.singleton_classes})"])
        text = aligned_table(["check", "value"], rows, rule="columns")
        text += "".join(f"\nPROBLEM: {p}" for p in self.problems) + "".join(f"\nnote: {n}" for n in self.notes)
        return text


def _effective_rank(x: np.ndarray) -> float:
    """From the eigenvalues of the d x d scatter matrix, accumulated in float64 blocks."""
    mean = x.mean(axis=0, dtype=np.float64)
    scatter = np.zeros((x.shape[1], x.shape[1]))
    for _, block in row_blocks(x):
        centred = block.astype(np.float64) - mean
        scatter += centred.T @ centred
    singular = np.sqrt(np.clip(np.linalg.eigvalsh(scatter), 0.0, None))
    total = singular.sum()
    if total <= 1e-12 * max(1.0, float(np.abs(mean).max(initial=0.0))):
        return 0.0  # every row equal: no direction at all
    p = singular[singular > 0] / total
    return float(np.exp(-(p * np.log(p)).sum()))


def check_embeddings(
    embeddings,
    labels=None,
    *,
    min_effective_rank: float = 0.05,
    max_duplicate_fraction: float = 0.05,
) -> EmbeddingReport:
    """The health checks people forget, as a report (nothing is raised for bad embeddings).

    Parameters
    ----------
    embeddings : array-like of shape (n, d)
    labels : array-like of shape (n,), optional
        Adds the class counts and singleton classes.
    min_effective_rank : float
        Below this fraction of min(n, d) (and always below 1.5, a line), the effective rank is
        reported as dimensional collapse.
    max_duplicate_fraction : float
        Above this fraction of exact duplicate rows, duplicates are reported as a problem.

    Returns
    -------
    EmbeddingReport
    """
    x = _to_numpy(embeddings, "embeddings")
    if x.ndim != 2 or x.shape[0] == 0 or x.dtype.kind not in "biuf":
        raise ValueError(f"'embeddings' must be a non-empty 2-D array of numbers; got {x.dtype} {x.shape}")
    finite_rows = np.isfinite(x).all(axis=1)
    problems, notes = [], []
    n_bad = int((~finite_rows).sum())
    if n_bad:
        problems.append(f"{n_bad} row(s) contain NaN or inf (first: row {int(np.flatnonzero(~finite_rows)[0])})")
    good = np.asarray(x[finite_rows], dtype=np.float32)
    norms = np.linalg.norm(good, axis=1) if good.size else np.zeros(1)
    eff = _effective_rank(good) if good.shape[0] else 0.0
    # Points on a line (effective rank ~1) are collapse whatever the dimension.
    limit = max(1.5, min_effective_rank * min(good.shape[0], x.shape[1])) if min(good.shape[0], x.shape[1]) > 1 else 0
    if good.shape[0] > 1 and eff == 0.0:
        problems.append("collapsed: every embedding is the same vector")
    elif good.shape[0] > 1 and eff < limit:
        problems.append(
            f"dimensional collapse: effective rank {eff:.2f} < {limit:.2f} "
            f"(the larger of 1.5 and {min_effective_rank:g} x min(n, d) = {min(good.shape[0], x.shape[1])})"
        )
    _, first = np.unique(good, axis=0, return_index=True) if good.size else (None, np.zeros(0))
    dup = 1.0 - first.size / good.shape[0] if good.shape[0] else 0.0
    if dup > max_duplicate_fraction:
        problems.append(f"{dup:.1%} of rows exactly repeat another row (more than {max_duplicate_fraction:.0%})")
    elif dup > 0:
        notes.append(f"{dup:.2%} of rows exactly repeat another row")
    zero_rows = int((norms == 0).sum())
    if zero_rows:
        notes.append(f"{zero_rows} all-zero row(s): undefined under cosine distance")
    n_classes = singletons = None
    if labels is not None:
        _, (codes,) = encode_labels(as_labels(labels, x.shape[0]))
        counts = np.bincount(codes)
        n_classes, singletons = int(counts.size), int((counts == 1).sum())
        if singletons:
            notes.append(f"{singletons} class(es) with a single member: their queries are skipped (R = 0)")
    return EmbeddingReport(
        n=int(x.shape[0]),
        dim=int(x.shape[1]),
        nonfinite_rows=n_bad,
        effective_rank=eff,
        duplicate_fraction=dup,
        zero_rows=zero_rows,
        norm_min=float(norms.min()) if norms.size else 0.0,
        norm_median=float(np.median(norms)) if norms.size else 0.0,
        norm_max=float(norms.max()) if norms.size else 0.0,
        n_classes=n_classes,
        singleton_classes=singletons,
        problems=problems,
        notes=notes,
    )
