"""The prefetch intrinsic's old address, for :mod:`embedeval._search.deep_kernels` alone until it
imports :func:`embedeval._core.intrinsics.prefetch` (its branch, ``collected``, is in flight)."""

from .intrinsics import prefetch as prefetch
