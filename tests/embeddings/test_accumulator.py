"""embedeval.Accumulator: batches in a training loop, on one process and under torch.distributed."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import embedeval
from embedeval import Accumulator

METRICS = ["precision@1", "recall@5", "map@r"]


def data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 7, n)
    x = (rng.standard_normal((7, 8))[labels] + 0.8 * rng.standard_normal((n, 8))).astype(np.float32)
    return x, labels


def test_batches_give_the_numbers_of_one_evaluation():
    x, y = data()
    acc = Accumulator()
    for start in range(0, len(x), 32):
        acc.update(x[start : start + 32], y[start : start + 32])
    assert len(acc) == len(x)
    got, expected = acc.compute(metrics=METRICS), embedeval.evaluate(x, y, metrics=METRICS)
    for m in METRICS:
        np.testing.assert_array_equal(got.per_query[m], expected.per_query[m])


def test_indices_remove_repeats_and_restore_the_order():
    """A DistributedSampler-like order with the first rows repeated at the end."""
    x, y = data()
    order = np.concatenate([np.random.default_rng(1).permutation(len(x)), [0, 1, 2]])
    acc = Accumulator()
    for start in range(0, len(order), 25):
        rows = order[start : start + 25]
        acc.update(x[rows], y[rows], indices=rows)
    got, expected = acc.compute(metrics=METRICS), embedeval.evaluate(x, y, metrics=METRICS)
    for m in METRICS:
        np.testing.assert_array_equal(got.per_query[m], expected.per_query[m])


def test_reset_starts_again_and_the_caller_may_reuse_its_buffer():
    x, y = data()
    acc = Accumulator()
    acc.update(np.zeros((3, 8)), [0, 0, 1])
    acc.reset()
    buffer = x[:60].copy()
    acc.update(buffer, y[:60])
    buffer[:] = 0  # the accumulator kept a copy
    acc.update(x[60:], y[60:])
    assert acc.compute(metrics=["map@r"]).summary == embedeval.evaluate(x, y, metrics=["map@r"]).summary


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (dict(embeddings=np.zeros((2, 5)), labels=[1, 2]), "must keep the dimension of earlier batches \\(8\\); got 5"),
        (dict(embeddings=np.zeros((2, 8)), labels=[1]), "one label per row of 'embeddings of the batch' \\(2\\)"),
        (dict(embeddings=np.zeros((2, 8)), labels=[1, 2], indices=[0, 1]), "with every batch or with none"),
        (dict(embeddings=np.zeros(8), labels=[1]), "must be a 2-D array of numbers"),
    ],
)
def test_batches_that_do_not_fit_together_are_refused(second, message):
    acc = Accumulator()
    acc.update(np.zeros((2, 8)), [0, 1])
    with pytest.raises(ValueError, match=message):
        acc.update(**second)


GROUPS = np.array(["en", "de", "fr"])


def test_groups_per_batch_give_the_per_group_values_of_one_evaluation():
    x, y = data()
    groups = GROUPS[np.arange(len(x)) % 3]
    order = np.concatenate([np.random.default_rng(2).permutation(len(x)), [5, 6]])  # padded repeats
    acc = Accumulator()
    for start in range(0, len(order), 25):
        rows = order[start : start + 25]
        acc.update(x[rows], y[rows], indices=rows, groups=groups[rows])
    got = acc.compute(metrics=METRICS)
    expected = embedeval.evaluate(x, y, metrics=METRICS, groups=groups)
    assert got.per_group.to_dict() == expected.per_group.to_dict()
    assert set(got.to_dict(names="safe")) == set(expected.to_dict(names="safe"))
    with pytest.raises(ValueError, match="given per batch, to update"):
        acc.compute(metrics=METRICS, groups=groups)
    acc.reset()
    acc.update(x[:4], y[:4], groups=groups[:4])
    with pytest.raises(ValueError, match="'groups' must be given with every batch or with none"):
        acc.update(x[4:8], y[4:8])


def test_compute_of_nothing_says_so():
    with pytest.raises(ValueError, match="the accumulator is empty"):
        Accumulator().compute()


def test_torch_tensors_with_grad_are_accepted():
    torch = pytest.importorskip("torch")
    x, y = data()
    acc = Accumulator()
    acc.update(torch.from_numpy(x).requires_grad_(), torch.from_numpy(y))
    assert acc.compute(metrics=["map@r"]).summary == embedeval.evaluate(x, y, metrics=["map@r"]).summary


def _rank_main(rank, world, init_file, out_dir):
    """One process of the distributed test: a padded DistributedSampler shard, batch by batch."""
    import torch
    import torch.distributed as dist
    from torch.utils.data import DistributedSampler

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    x, y = data(n=101)  # 101 rows over 2 ranks: the sampler pads one repeated row
    rows = np.array(list(DistributedSampler(range(len(x)), num_replicas=world, rank=rank, shuffle=True, seed=3)))
    acc = Accumulator()
    for start in range(0, len(rows), 16):
        r = rows[start : start + 16]
        acc.update(torch.from_numpy(x[r]), torch.from_numpy(y[r]), indices=torch.from_numpy(r), groups=GROUPS[r % 3])
    result = acc.compute(metrics=METRICS)
    with open(f"{out_dir}/rank{rank}.pkl", "wb") as f:
        pickle.dump((len(rows), result.per_query, result.per_group.to_dict()), f)
    dist.destroy_process_group()


def test_two_gloo_processes_gather_deduplicate_and_agree(tmp_path):
    """Under torch.distributed each rank sees half the rows (plus padding); every rank gets the
    single-process numbers."""
    pytest.importorskip("torch")
    import torch.multiprocessing as mp

    mp.spawn(_rank_main, args=(2, str(tmp_path / "init"), str(tmp_path)), nprocs=2, join=True)
    x, y = data(n=101)
    one = embedeval.evaluate(x, y, metrics=METRICS, groups=GROUPS[np.arange(len(x)) % 3])
    expected = one.per_query
    sizes = []
    for rank in range(2):
        with open(tmp_path / f"rank{rank}.pkl", "rb") as f:
            size, per_query, per_group = pickle.load(f)
        sizes.append(size)
        for m in METRICS:
            np.testing.assert_array_equal(per_query[m], expected[m], err_msg=f"rank {rank} {m}")
        assert per_group == one.per_group.to_dict()
    assert sum(sizes) == 102  # one padded repeat was removed
