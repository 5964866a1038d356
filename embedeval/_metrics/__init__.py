"""The metric registry and its kernels: what each metric is and needs, and how per-query values
are computed from hits.

Takes metric names (embedeval's own, trec_eval's and pytorch-metric-learning's aliases) and
gives parsed :class:`~embedeval._metrics.registry.Metric` objects with what they need from a
ranking; takes :class:`~embedeval._metrics.kernels.Hits` (or tie groups) and gives per-query
arrays. Nothing here searches or reads files.
"""
