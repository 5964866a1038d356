"""Comparing systems: paired tests, corrections, bootstrap intervals and ranks, over per-query values.

Takes per-query arrays (one per system, metric and run, the queries in one order) and gives
plain numbers: each system's value and interval, each pair's difference, p-values before and
after correction, effect sizes, win/tie/loss counts, randomised Tukey HSD and rank intervals.
It knows nothing of searches or files; :func:`embedeval.stats.compare_systems` is its front.
"""
