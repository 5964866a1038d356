"""Input rules at the public entry points: which labels and array types are accepted, and the messages."""

from __future__ import annotations

import numpy as np
import pytest

import embedeval

X = np.random.default_rng(0).standard_normal((12, 3)).astype(np.float32)

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float64"])
def test_torch_tensors_of_every_float_dtype_are_accepted(dtype):
    """bfloat16 has no numpy dtype: it is widened to float32 exactly, so the numbers are those of the widened array."""
    tensor = torch.from_numpy(X).to(getattr(torch, dtype))
    widened = tensor.to(torch.float64).numpy()
    labels = [0, 1, 2] * 4
    result = embedeval.evaluate(tensor, torch.tensor(labels))
    assert result.summary == embedeval.evaluate(widened, labels).summary
