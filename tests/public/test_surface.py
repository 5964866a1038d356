"""The public surface: what ``dir()`` shows is what a user may use, and every listed name resolves."""

from __future__ import annotations

import embedeval


def test_dir_of_the_package_shows_public_names_only():
    shown = [n for n in dir(embedeval) if not n.startswith("__")]
    assert shown == sorted({*embedeval.__all__, *embedeval._PUBLIC_MODULES} - {"__version__"})
    assert "importlib" not in shown and not any(n.startswith("_") for n in shown)


def test_every_public_name_resolves():
    for name in (*embedeval.__all__, *embedeval._PUBLIC_MODULES):
        assert getattr(embedeval, name) is not None, name


def test_one_neighbours_type_for_found_and_kept_neighbours():
    """embedeval.neighbors and keep_neighbors give the same type, with the same rows where no rule
    ignores anything; the kept ones carry relevance too."""
    import numpy as np

    rng = np.random.default_rng(5)
    x = rng.standard_normal((30, 4)).astype(np.float32)
    found = embedeval.neighbors(x, k=5, distance="cosine")
    kept = embedeval.evaluate(x, np.arange(30) % 3, metrics=["map@r"], keep_neighbors=5, distance="cosine").neighbors
    assert type(found) is type(kept) is embedeval.Neighbors
    assert (kept.distance, kept.leave_one_out) == (found.distance, found.leave_one_out) == ("cosine", True)
    np.testing.assert_array_equal(kept.indices, found.indices)
    np.testing.assert_allclose(kept.distances, found.distances, rtol=0, atol=1e-12)
    assert found.relevant is None and kept.relevant.shape == (30, 5)
    assert "with relevance" in repr(kept) and "with relevance" not in repr(found)


def test_every_result_takes_table_fmt_first():
    """EvaluationResult.table(fmt) as the comparisons' table(fmt); the old table(intervals) warns."""
    import warnings

    import numpy as np
    import pytest

    from embedeval import stats

    x = np.random.default_rng(1).standard_normal((40, 4)).astype(np.float32)
    r = embedeval.evaluate(x, np.arange(40) % 4, metrics=["map@r"])
    ivs = stats.bootstrap(r)
    assert r.table() == str(r) and "map@r" in r.table("markdown") and r.table("html").startswith("<div")
    assert str(ivs["map@r"]) in r.table("table", ivs) and str(ivs["map@r"]) in r.table("markdown", intervals=ivs)
    with pytest.warns(DeprecationWarning, match="table\\(fmt, intervals=...\\)"):
        old = r.table(ivs)
    assert old == r.table("table", ivs)
    with pytest.raises(ValueError, match="'fmt' must be one of"):
        r.table("latex")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r.table("table")


def test_per_class_and_per_group_say_to_dict_like_every_result():
    import numpy as np
    import pytest

    x = np.random.default_rng(2).standard_normal((30, 3)).astype(np.float32)
    r = embedeval.evaluate(x, np.arange(30) % 3, metrics=["map@r"], groups=np.arange(30) % 2)
    assert set(r.per_class.to_dict()["map@r"]) == {0, 1, 2}
    assert set(r.per_group.to_dict()) == {0, 1}
    for holder in (r.per_class, r.per_group):
        with pytest.warns(DeprecationWarning, match=r"to_dict\(\)"):
            assert holder.as_dict() == holder.to_dict()


def test_stats_lists_its_public_names_only():
    from embedeval import stats

    assert dir(stats) == sorted(stats.__all__)
    assert not {"check_choice", "format_p_value", "np", "warnings"} & set(dir(stats))
    assert all(getattr(stats, name) is not None for name in stats.__all__)


def test_compare_across_takes_baseline_as_compare_systems_does():
    import pytest

    from embedeval import stats

    scores = {f"d{i}": {"A": 0.5 + 0.01 * i, "B": 0.6, "C": 0.55 - 0.01 * i} for i in range(5)}
    new = stats.compare_across(scores, baseline="A", confidence=None)
    assert {(p["a"], p["b"]) for p in new.pairs} <= {("A", "B"), ("A", "C"), ("B", "A"), ("C", "A")}
    assert len(new.pairs) == 2 and new.settings["baseline"] == "A"
    with pytest.warns(DeprecationWarning, match="baseline="):
        old = stats.compare_across(scores, control="A", confidence=None)
    assert old.pairs == new.pairs
