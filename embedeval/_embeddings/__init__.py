"""The embedding entry points: :func:`embedeval.evaluate` (class labels, label sets) and
:func:`embedeval.evaluate_retrieval` (queries, a corpus and judgements). They read their inputs
into a relevance, run the pipeline and build the result.
"""
