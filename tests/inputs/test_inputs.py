"""Input rules at the public entry points: which labels and array types are accepted, and the messages."""

from __future__ import annotations

import numpy as np
import pytest

import embedeval
from embedeval.testing import check_embeddings

X = np.random.default_rng(0).standard_normal((12, 3)).astype(np.float32)

NAN_LABELS = {
    "float array": np.array([1.0, 2.0, np.nan, 1.0, 2.0, np.nan] * 2),
    "mixed list": [1, 2, np.nan, 1, 2, np.nan] * 2,
    "strings and nan": ["a", "b", float("nan"), "a", "b", float("nan")] * 2,
    "object array of numpy floats": np.array([np.float32(1), np.float32("nan")] * 6, dtype=object),
}


@pytest.mark.parametrize("labels", NAN_LABELS.values(), ids=NAN_LABELS.keys())
def test_nan_is_never_a_label(labels):
    """One rule for every form: NaN names no class, so it is refused, never grouped into one."""
    with pytest.raises(ValueError, match=r"'labels' must not contain NaN .* first at position (1|2)\b"):
        embedeval.evaluate(X, labels)


def test_nan_in_reference_labels_is_refused_naming_them():
    with pytest.raises(ValueError, match="'reference_labels' must not contain NaN"):
        embedeval.evaluate(X, [0, 1] * 6, reference=X, reference_labels=[0, 1] * 5 + [np.nan, 1])


def test_nan_labels_are_refused_by_the_health_check_too():
    with pytest.raises(ValueError, match="'labels' must not contain NaN"):
        check_embeddings(X, NAN_LABELS["mixed list"])


@pytest.mark.parametrize(
    ("labels", "kind"),
    [([{1: 0}, {2: 0}] * 6, "dict"), (np.array([{1: 0}, {2: 0}] * 6, dtype=object), "dict")],
)
def test_unhashable_labels_name_the_argument_and_the_position(labels, kind):
    """Lists and sets per item are label sets (issue #13); other unhashable values are refused."""
    with pytest.raises(TypeError, match=rf"'labels' must hold hashable labels .*; got a {kind} at position 0"):
        embedeval.evaluate(X, labels)


def test_an_unhashable_label_inside_a_label_set_names_the_item():
    with pytest.raises(TypeError, match=r"'labels' item 0 holds an unhashable label"):
        embedeval.evaluate(X, [[[1]], [2]] * 6)


def test_none_and_tuples_are_labels_like_any_hashable_value():
    labels = [None, ("a", 1)] * 6
    assert embedeval.evaluate(X, labels).n_evaluated == 12


torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float64"])
def test_torch_tensors_of_every_float_dtype_are_accepted(dtype):
    """bfloat16 has no numpy dtype: it is widened to float32 exactly, so the numbers are those of the widened array."""
    tensor = torch.from_numpy(X).to(getattr(torch, dtype))
    widened = tensor.to(torch.float64).numpy()
    labels = [0, 1, 2] * 4
    result = embedeval.evaluate(tensor, torch.tensor(labels))
    assert result.summary == embedeval.evaluate(widened, labels).summary
