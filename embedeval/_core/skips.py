"""Why queries were skipped: stable codes, each with the sentence that says it."""

from __future__ import annotations


class Skipped(dict):
    """How many queries were skipped, keyed by a stable code, with each code's sentence.

    Codes: ``"no_relevant"`` (R = 0: nothing relevant in the reference set or judged at the
    threshold; a query's own row, removed by leave-one-out or ``query_in_reference``, is not one),
    ``"relevant_ignored"`` (R = 0 because a rule other than the own row's exclusion ignores every
    relevant reference), ``"not_judged"`` (the query has no judgements), ``"skipped"`` (any other reason).
    ``reasons[code]`` is the sentence said in tables and reports; the sentence also works as a
    key (``skipped["no other embedding shares the query's label (R = 0)"]``), as it did before
    the codes.
    """

    def __init__(self, counts: dict, reasons: dict):
        super().__init__(counts)
        self.reasons = dict(reasons)
        self._by_text = {text: code for code, text in self.reasons.items()}

    def _code(self, key):
        return key if dict.__contains__(self, key) else self._by_text.get(key, key)

    def __getitem__(self, key):
        return dict.__getitem__(self, self._code(key))

    def __contains__(self, key):
        return dict.__contains__(self, self._code(key))

    def get(self, key, default=None):
        return dict.get(self, self._code(key), default)


# The stable code of each skip sentence (every mode's wording of one reason shares its code).
_CODES = (
    ("every relevant", "relevant_ignored"),
    ("no judgements", "not_judged"),
    ("R = 0", "no_relevant"),
)


def skip_code(reason) -> tuple[str, str]:
    """``(code, sentence)`` of a skip reason given as a sentence or as such a pair."""
    if isinstance(reason, tuple):
        return reason
    return next((code for words, code in _CODES if words in reason), "skipped"), reason


# Skip codes of queries that trec_eval scores 0 where embedeval's ranked forms skip them by default.
_ZERO_CODES = ("no_relevant", "relevant_ignored")
ZERO_HINT = "trec_eval counts such a query as 0: empty='zero' (--empty zero)"


def coverage(result) -> str | None:
    """Over how many queries the averages of ``result`` (an EvaluationResult) are, and why the
    others are left out, when that is fewer than were given: ``"2 of 3 queries (1 skipped: no
    judged item reaches the relevance threshold (R = 0); trec_eval counts such a query as 0:
    empty='zero' (--empty zero))"``.

    None when every query is averaged, or the result has no per-query metric. The pointer to
    trec_eval's convention appears where the evaluator has the ``empty`` choice (ranked lists,
    score matrices, retrieval with qrels) and some query has no relevant item.
    """
    if not result.per_query or result.n_evaluated == result.n_queries:
        return None
    parts = [f"{count} skipped: {result.skipped.reasons[code]}" for code, count in result.skipped.items() if count]
    zero = result.conventions.get("queries without relevant items", "").startswith("skipped")
    if zero and any(result.skipped.get(code, 0) for code in _ZERO_CODES):
        parts.append(ZERO_HINT)
    return f"{result.n_evaluated} of {result.n_queries} queries" + (f" ({'; '.join(parts)})" if parts else "")
