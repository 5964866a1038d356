"""TREC run and qrels files: read as columns (pyarrow or the exact line reader) and evaluated
with trec_eval's order (score descending, ties by document id descending)."""
