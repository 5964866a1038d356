"""The input forms without a search: ranked id lists, 2-D id arrays, ``{query: {doc: score}}``
mappings, score matrices and TREC files. Each is reduced to judged items with their ranks (or tie
groups) and meets the same kernels through :mod:`embedeval._forms.graded`.
"""
