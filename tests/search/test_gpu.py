"""The device path (float64 distances through torch) against the CPU path, per query, bit for bit.

Every test but the last few runs the very code a card runs on torch's CPU device, a stand-in
``Device(("cpu",), reference_block=...)`` whose small reference blocks make every search merge
several blocks' top-k. The tests marked ``cuda`` run the real thing and skip where torch sees no
CUDA device (CI has none).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
from reference import full_ranking

import embedeval
from embedeval._inputs.arrays import prepare
from embedeval._search import Device, DeviceSearcher, FlatSearcher

torch = pytest.importorskip("torch")
HAS_CUDA = torch.cuda.is_available()
cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs torch with a visible CUDA device (CI has none)")
DISTANCES = ["euclidean", "inner_product", "cosine"]
SHALLOW = ["precision@1", "recall@10", "r_precision", "map@r", "cmc@5", "map@10"]
EVERY = [*SHALLOW, "map", "mrr"]


def stand_in(block: int | None = 7) -> Device:
    return Device(("cpu",), reference_block=block)


def hard_case(kind: str, rng, n: int = 240, d: int = 6) -> np.ndarray:
    """Rows that make near-ties: lattice points (exact ties), exact copies, a large offset
    (large float32 error, many float64 near-ties), extreme scales, rows of spread magnitudes."""
    if kind == "lattice":
        return rng.integers(-2, 3, size=(n, d)).astype(np.float32)
    if kind == "copies":
        x = rng.standard_normal((n, d)).astype(np.float32)
        x[n // 2 :] = x[rng.integers(0, n // 2, n - n // 2)]
        return x
    if kind == "offset":
        return (rng.standard_normal((n, d)) * 1e-3 + 1000.0).astype(np.float32)
    if kind == "tiny":  # into_safe_range scales these up by a power of two
        return (rng.integers(-2, 3, size=(n, d)) * 2.0**-60).astype(np.float32)
    if kind == "huge":
        return (rng.integers(-2, 3, size=(n, d)) * 2.0**60).astype(np.float32)
    if kind == "spread":
        return (rng.standard_normal((n, d)) * 2.0 ** rng.integers(-10, 11, size=(n, 1))).astype(np.float32)
    raise ValueError(kind)


KINDS = ["lattice", "copies", "offset", "tiny", "huge", "spread"]


def for_distance(x: np.ndarray, distance: str) -> np.ndarray:
    """Cosine refuses all-zero rows: they become the first non-zero row."""
    if distance == "cosine":
        zero = ~x.any(axis=1)
        x[zero] = x[np.flatnonzero(~zero)[0]]
    return x


def assert_same(got, want, names):
    for name in names:
        np.testing.assert_array_equal(got.per_query[name], want.per_query[name], err_msg=name)


@pytest.mark.parametrize("distance", DISTANCES)
@pytest.mark.parametrize("kind", ["lattice", "copies", "offset"])
@pytest.mark.parametrize("block", [1, 16, None])
def test_device_search_equals_the_float64_full_sort(kind, distance, block):
    """Shallow and deep searches, leave-one-out and not, with one-reference blocks, small ones
    and one block of every reference: the full sort's order, index by index."""
    rng = np.random.default_rng(KINDS.index(kind))
    x = hard_case(kind, rng, n=90, d=3)
    if distance == "cosine":  # +-1 entries scaled by powers of two: normalised exactly, as the reference does
        x = (rng.choice([-1.0, 1.0], size=x.shape) * 2.0 ** rng.integers(0, 3, size=(len(x), 1))).astype(np.float32)
    n = len(x)
    queries = prepare(x[:30], distance)
    on_device = DeviceSearcher(x, distance, stand_in(block))
    exclude = np.arange(30)
    for k in (1, 5, n // 3, n - 1):
        want = np.array([full_ranking(q, x, distance, exclude=i)[:k] for i, q in enumerate(queries)])
        np.testing.assert_array_equal(on_device.search(queries, k, exclude), want, err_msg=f"k={k}")
    want = np.array([full_ranking(q, x, distance) for q in queries])
    np.testing.assert_array_equal(on_device.search(queries, n), want, err_msg="every reference")


def mirrored(seed: int, n_centres: int = 6, pairs: int = 25, d: int = 6):
    """Centres and references mirrored around them, c + v and c - v, shuffled: exact ties.

    The components span 2**-12 to 2**11 and v is a few float32 spacings of c, so c +- v and
    their differences from c are exact and the CPU's formula gives both mirrors the same float64
    distance (ranked by index), while the device's ||r||^2 - 2 q.r rounds the two apart."""
    rng = np.random.default_rng(seed)
    scale = np.float32(2.0) ** rng.integers(-12, 11, size=(n_centres, d))
    centres = (rng.uniform(1, 2, size=(n_centres, d)) * scale).astype(np.float32)
    refs = []
    for c in centres:
        v = (rng.integers(-3, 4, size=(pairs, d)) * np.spacing(c)).astype(np.float32)
        refs += [c + v, c - v]
    refs = np.concatenate(refs)
    return centres, refs[rng.permutation(len(refs))]


@pytest.mark.parametrize("seed", range(4))
def test_ties_the_device_rounds_apart_are_ranked_by_index(seed):
    """The bound at work: with it taken as 0 the device's rounding orders most rows' mirrored
    ties (59 of 60 rows over ten seeds); with it, near-ties go to the CPU formula and the index."""
    centres, refs = mirrored(seed)
    want = np.array([full_ranking(c, refs, "euclidean") for c in centres])
    got = DeviceSearcher(refs, "euclidean", stand_in(None)).search(centres, len(refs))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("distance", DISTANCES)
@pytest.mark.parametrize("kind", KINDS)
def test_evaluate_on_the_device_gives_the_cpu_arrays(kind, distance):
    """Every metric family, classes of one included, through evaluate: identical per-query arrays."""
    rng = np.random.default_rng(10 + KINDS.index(kind))
    x = for_distance(hard_case(kind, rng), distance)
    labels = rng.integers(0, 12, size=len(x))
    labels[:3] = [100, 101, 102]  # classes of one: no relevant item
    on_cpu = embedeval.evaluate(x, labels, metrics=EVERY, distance=distance)
    on_device = embedeval.evaluate(x, labels, metrics=EVERY, distance=distance, device=stand_in())
    assert_same(on_device, on_cpu, EVERY)
    assert on_device.config["search"].startswith("exact: float64 distances on the gpu (torch)")


def test_several_devices_share_the_blocks_and_give_the_cpu_arrays():
    """Two devices (both torch's CPU here), blocks on three threads: each block goes to one of
    them in turn, and the per-query values stay the CPU's."""
    rng = np.random.default_rng(2)
    x = hard_case("offset", rng, n=300)
    labels = rng.integers(0, 5, size=len(x))
    two = Device(("cpu", "cpu"), reference_block=50)
    on_cpu = embedeval.evaluate(x, labels, metrics=EVERY)
    on_two = embedeval.evaluate(x, labels, metrics=EVERY, device=two, block_size=16, n_threads=3)
    assert_same(on_two, on_cpu, EVERY)


def test_rankings_deeper_than_2048_give_the_cpu_arrays():
    """R ~ 2,250 > 2,048 (faiss's GPU limit, and past the CPU's deep switch, where the CPU takes
    its deep ranking and the device path its top-k): identical per-query arrays."""
    rng = np.random.default_rng(3)
    n = 4500
    labels = rng.integers(0, 2, size=n)
    x = (rng.standard_normal((2, 8))[labels] + 2.0 * rng.standard_normal((n, 8))).astype(np.float32)
    x[::7] = x[1::7][: len(x[::7])]  # exact copies
    metrics = ["precision@1", "r_precision", "map@r"]
    on_cpu = embedeval.evaluate(x, labels, metrics=metrics)
    on_device = embedeval.evaluate(x, labels, metrics=metrics, device=stand_in(None))
    assert_same(on_device, on_cpu, metrics)


def test_label_sets_ignore_rules_and_groups_give_the_cpu_arrays():
    """Label sets (relevant: sharing a label), an ignore list, keys ignored alike, groups."""
    rng = np.random.default_rng(5)
    n = 150
    x = hard_case("lattice", rng, n=n, d=4)
    label_sets = [set(rng.choice(6, size=int(rng.integers(1, 3)), replace=False).tolist()) for _ in range(n)]
    keys = rng.integers(0, 10, size=n)
    kwargs = dict(
        metrics=EVERY,
        ignore={i: rng.choice(n, size=3).tolist() for i in range(0, n, 4)},
        ignore_same=(keys, keys),
        groups=rng.choice(["a", "b"], size=n),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what the ignore rule leaves some queries without
        on_cpu = embedeval.evaluate(x, label_sets, **kwargs)
        on_device = embedeval.evaluate(x, label_sets, **kwargs, device=stand_in(5))
    assert_same(on_device, on_cpu, EVERY)
    for name in EVERY:
        np.testing.assert_array_equal(on_device.per_group.values[name], on_cpu.per_group.values[name], name)


@pytest.mark.parametrize("distance", DISTANCES)
def test_judged_retrieval_with_grades_string_ids_and_kept_neighbours(distance):
    """evaluate_retrieval: graded judgements by string ids, a separate corpus with copies, and
    the kept neighbours (ids, distances, grades): all the CPU's."""
    rng = np.random.default_rng(8)
    corpus = for_distance(hard_case("copies", rng, n=200, d=5), distance)
    queries = corpus[rng.integers(0, 200, size=40)] + np.float32(0.01) * rng.standard_normal((40, 5)).astype(np.float32)
    query_ids = [f"q{i}" for i in range(40)]
    corpus_ids = [f"doc-{i:03d}" for i in range(200)]
    qrels = {
        q: {corpus_ids[j]: int(rng.integers(1, 4)) for j in rng.choice(200, size=6, replace=False)} for q in query_ids
    }
    metrics = ["ndcg@10", "map", "recall@20", "mrr", "precision@5"]
    kwargs = dict(query_ids=query_ids, corpus_ids=corpus_ids, metrics=metrics, distance=distance, keep_neighbors=12)
    on_cpu = embedeval.evaluate_retrieval(queries, corpus, qrels, **kwargs)
    on_device = embedeval.evaluate_retrieval(queries, corpus, qrels, **kwargs, device=stand_in(9))
    assert_same(on_device, on_cpu, metrics)
    for field in ("indices", "distances", "grades", "n_relevant"):
        np.testing.assert_array_equal(getattr(on_device.neighbors, field), getattr(on_cpu.neighbors, field), field)


@pytest.mark.parametrize("distance", DISTANCES)
def test_neighbors_on_the_device_are_the_cpus(distance):
    """Indices and reported distances, leave-one-out and against a reference, bit for bit."""
    rng = np.random.default_rng(11)
    x = for_distance(hard_case("copies", rng, n=120, d=4), distance)
    ref = for_distance(hard_case("lattice", rng, n=90, d=4), distance)
    for args in ((x,), (x, ref)):
        on_cpu = embedeval.neighbors(*args, k=15, distance=distance)
        on_device = embedeval.neighbors(*args, k=15, distance=distance, device=stand_in(8))
        np.testing.assert_array_equal(on_device.indices, on_cpu.indices)
        np.testing.assert_array_equal(on_device.distances, on_cpu.distances)


def test_neighbors_refuses_an_unknown_device():
    with pytest.raises(ValueError, match="'device' must be one of 'cpu', 'gpu'; got 'tpu'"):
        embedeval.neighbors(np.eye(3), k=1, device="tpu")


def test_accumulator_computes_on_the_device():
    rng = np.random.default_rng(9)
    cpu, device = embedeval.Accumulator(), embedeval.Accumulator()
    for _ in range(3):
        x = hard_case("lattice", rng, n=60, d=3)
        labels = rng.integers(0, 5, size=60)
        cpu.update(x, labels)
        device.update(x, labels)
    assert_same(device.compute(metrics=EVERY, device=stand_in(4)), cpu.compute(metrics=EVERY), EVERY)


def test_tie_aware_rules_refuse_the_device_with_the_remedy():
    """ties='expected' is a scan of every reference on the CPU: with a device it is refused
    before any work, naming what to drop."""
    with pytest.raises(ValueError, match=r"'ties'='expected' scans every reference exactly in this process \(device"):
        embedeval.evaluate(np.eye(4), [0, 0, 1, 1], ties="expected", device=stand_in())


def test_without_torch_the_error_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    with pytest.raises(ImportError, match=r"through torch, which is not installed: pip install torch"):
        embedeval.evaluate(np.eye(4), [0, 0, 1, 1], device="gpu")


def test_without_torch_the_command_line_says_so_in_one_line(monkeypatch, tmp_path, capsys):
    from embedeval.cli import main

    np.save(tmp_path / "x.npy", np.eye(4, dtype=np.float32))
    np.save(tmp_path / "labels.npy", np.array([0, 0, 1, 1]))
    monkeypatch.setitem(sys.modules, "torch", None)
    assert main(["evaluate", str(tmp_path / "x.npy"), str(tmp_path / "labels.npy"), "--device", "gpu"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("embedeval evaluate: error: 'device' 'gpu' computes on the card through torch")


@pytest.mark.skipif(HAS_CUDA, reason="checks the message given where torch sees no CUDA device")
def test_gpu_without_a_card_says_why_before_any_work():
    with pytest.raises(ValueError, match=r"'device' 'gpu' needs a visible CUDA GPU; torch .* sees none"):
        embedeval.evaluate(np.zeros((3, 2)), [0, 0, 1], device="gpu")


@cuda
@pytest.mark.parametrize("distance", DISTANCES)
@pytest.mark.parametrize("kind", KINDS)
def test_on_the_card_evaluate_gives_the_cpu_arrays(kind, distance):
    rng = np.random.default_rng(20 + KINDS.index(kind))
    x = for_distance(hard_case(kind, rng, n=3000, d=16), distance)
    labels = rng.integers(0, 7, size=len(x))
    on_cpu = embedeval.evaluate(x, labels, metrics=EVERY, distance=distance)
    on_gpu = embedeval.evaluate(x, labels, metrics=EVERY, distance=distance, device="gpu")
    assert_same(on_gpu, on_cpu, EVERY)


@cuda
def test_on_the_card_small_blocks_and_deep_rankings_give_the_cpu_search():
    """Reference blocks far smaller than the ranking's depth on the card, R > 2,048."""
    rng = np.random.default_rng(4)
    x = hard_case("offset", rng, n=6000, d=32)
    queries = x[:200]
    device = Device(("cuda:0",), reference_block=1000)
    on_gpu, on_cpu = DeviceSearcher(x, "euclidean", device), FlatSearcher(x, "euclidean")
    own = np.arange(200)
    for k in (1, 10, 2500, 5999):
        np.testing.assert_array_equal(on_gpu.search(queries, k, own), on_cpu.search(queries, k, own), err_msg=f"k={k}")


@cuda
def test_on_the_card_products_are_float64():
    """The card's float64 product is within the float64 bound of numpy's: no TF32 or float32."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2000, 128)).astype(np.float32)
    q = rng.standard_normal((200, 128)).astype(np.float32)
    on_card = torch.mm(torch.from_numpy(q).cuda().double(), torch.from_numpy(x).cuda().double().T).cpu().numpy()
    exact = q.astype(np.float64) @ x.astype(np.float64).T
    scale = np.linalg.norm(q, axis=1)[:, None] * np.linalg.norm(x, axis=1)[None, :]
    assert (np.abs(on_card - exact) / scale).max() < 2 * 128 * 2.0**-53
