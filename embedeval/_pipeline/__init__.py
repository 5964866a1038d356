"""Stage: running an embedding evaluation. Takes checked options, the references, the queries
and their relevance; chooses the route (exact search, Hamming scan or tie-aware scan), plans
query blocks within the memory budget, runs them on an executor (sequential, threads, Dask) and
gives per-query metric arrays.
"""
