"""``embedeval trec_eval`` prints what trec_eval 10 prints, byte for byte, on generated files
(bench/trec_differential.py's cases: mixed-width and unicode ids, ties, one-sided queries,
random flags), where a trec_eval binary is at hand: ``TREC_EVAL`` (or ``TREC_EVAL_BINARY``)
names it, else /work/trec_eval_src/trec_eval; skipped without one. A difference passes only
as one of trec_eval's own failures, checked against trec_eval on the repaired files."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from runner import TREC_EVAL

ROOT = Path(__file__).resolve().parents[2]
BINARY = TREC_EVAL  # runner.py: $TREC_EVAL, $TREC_EVAL_BINARY or beside the checkout


def _differential():
    spec = importlib.util.spec_from_file_location("trec_differential", ROOT / "bench" / "trec_differential.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not Path(BINARY).is_file(), reason="no trec_eval 10 binary (TREC_EVAL)")
@pytest.mark.parametrize("reader", ["numpy", "pyarrow", "line"])
@pytest.mark.parametrize("seed", range(20))
def test_trec_eval_prints_the_same_bytes_or_fails_in_its_own_known_way(tmp_path, seed, reader):
    """Each reader of embedeval (numpy's and pyarrow's in batches of 512 bytes, the line reader) on
    one case."""
    bench = _differential()
    rng = np.random.default_rng([12345, seed])
    trial = bench.write(rng, tmp_path)
    run, qrels = trial.files
    flags = bench.random_flags(rng)
    words = [*flags, str(qrels), str(run)]
    theirs = bench.run_trec_eval(BINARY, words)
    ours = bench.run_embedeval(words, in_process=True, reader=reader, batch=512)
    rerun = lambda r, q: bench.run_trec_eval(BINARY, [*flags, str(q), str(r)])  # noqa: E731
    verdict = bench.classify(trial, flags, theirs, ours, rerun)
    assert verdict != "unexplained", bench.first_difference(theirs, ours)
