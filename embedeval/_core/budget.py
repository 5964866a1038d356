"""Every working-memory budget, chunk size and switch of the package, in one table.

Work is done in blocks so that memory stays bounded whatever the input size, and a compiled
kernel or a faster route takes over from numpy only where it pays; the numbers here decide
both. None of them changes a result, only time and memory: every route they choose between is
exact, and the tests check each against the others. The figures behind them are in
``bench/NOTES.md`` (the section "Figures moved from the code (stop 52)" and the entries it
names), with the commands that measure them; the code keeps only the reason.

Compile switches. A compiled kernel is used once the numpy path has handled ``*_COMPILED_FROM``
units in the process (about what its compilation costs with a cold cache), or at once where
numba's on-disk cache holds it and a call has ``*_CACHED_FROM`` units (default
:data:`embedeval._core.compiled.CACHED_FROM`): :func:`embedeval._core.compiled.repaid`.

================================  ============================  ===============================================
name                              unit                          decides
================================  ============================  ===============================================
``DEEP_FROM``                     ranked depth                  deep ranking past it (numpy passes)
``DEEP_FROM_COMPILED``            ranked depth                  the same with compiled kernels (:func:`deep_from`)
``DEEP_REACHED_COMPILED_FROM``    rows                          compiled merge walk of the sampled others
``DEEP_FUSED_COMPILED_FROM``      values (rows x references)    compiled deep pass (``deep_fused.fuses``)
``EXACT_COMPILED_FROM``           elements (pairs x d)          compiled exact float64 distances
``SORT_COMPILED_FROM``            values sorted                 radix sort of nearest relevant values
``SORT_CACHED_FROM``              values in one call            ... at once from numba's cache
``BOOKS_COMPILED_FROM``           graded pairs                  the tied scan's compiled bookkeeping
``BOOKS_CACHED_FROM``             graded pairs in one call      ... at once from numba's cache
``HITS_COMPILED_FROM``            rank entries                  compiled Hits reductions (``_metrics``)
``DEEP_SEARCH_FROM``              relevant values a row         ``deep_count.at_most``: search, not compare
``SORT_PARTITION_BELOW``          share of a row kept           partition before numpy's sort
``SORT_PARTITION_BELOW_RADIX``    share of a row kept           partition before the radix sort
``MERGED_FROM``                   relevant values a row (J)     deep ranking from the others' side
``MERGED_FROM_WIDE``              J                             the same for vectors wider than ...
``MERGED_NARROW_DIM``             dimensions                    ... this
``MERGED_ROOM``                   others a row                  room beyond the guess before listing again
``WIDEN_COLUMNS``                 columns                       listed others made again in float64
``GUESS_COMPARISONS``             comparisons                   whether the others' side guesses its lists
``CENTRE_FROM``                   share of the largest norm     the flat searcher centres the references
``DEEP_CENTRED_FROM``             share of the largest norm     collapsed references keep faiss's route
``DISTINCT_SHARE``                share of the rows             search the distinct rows instead
================================  ============================  ===============================================
"""

from __future__ import annotations

from . import compiled

# Rows of an input read at once by checks that scan a whole (possibly memory-mapped) array.
SCAN_ROWS = 65536

# Ranked entries per query block of `evaluate` (an entry costs ~40 bytes across faiss's
# output, the tie-rule sort and the hits matrix): 2**22 entries is ~170 MB, shared by the
# blocks in flight.
BLOCK_ENTRIES = 1 << 22
# The longest query block.
MAX_BLOCK_ROWS = 4096
# faiss searches a call of n queries of dimension d with BLAS only when n * d reaches this
# (its distance_compute_blas_threshold); below it, a slower pair-by-pair loop.
FAISS_BLAS_THRESHOLD = 128_000

# float64 elements per recomputation chunk of near-tied candidates (1 MB: stays in cache).
RECOMPUTE_ELEMENTS = 1 << 17
# float64 elements per chunk of cosine normalisation (_inputs.prepare): 4 MB, cache-sized, where a
# whole float64 copy of a large corpus costs its page faults (bench/NOTES.md, stop 52 figures).
NORMALISE_ELEMENTS = 1 << 19

# --- Compile switches and routes (the table above) ---

# Rankings deeper than this take the deep ranking (embedeval._search.deep) where the searcher
# holds its references in memory, shallower ones faiss's search; deep_from() picks the depth for
# the kernels in use: where deep / faiss crosses 1 (``python bench/bench_deep.py --crossover``;
# bench/NOTES.md, stop 52 figures, "The deep ranking's depth").
DEEP_FROM = 512
DEEP_FROM_COMPILED = 150
# Rows whose sampled others the numpy loop places before the deep ranking compiles its merge walk
# for them (``deep_kernels.reached``).
DEEP_REACHED_COMPILED_FROM = 1 << 14
# Values the deep ranking's numpy passes count (products included) before the compiled deep pass
# (``deep_kernels.place_chunk`` and the ranks from counts) is compiled (``bench_compile.py --place``).
DEEP_FUSED_COMPILED_FROM = 1 << 27
# Elements (pairs x d) numpy's gathered passes compute before the compiled exact formula
# (:mod:`embedeval._search.exact_kernels`) is compiled.
EXACT_COMPILED_FROM = 1 << 28
# Values numpy's sort orders in the process before ``deep_count.smallest_sorted`` compiles the
# radix sort (on hosts where numpy's sort is not vectorised); calls this large look in the cache.
SORT_COMPILED_FROM = 1 << 25
SORT_CACHED_FROM = 1 << 16
# smallest_sorted partitions first only when it keeps fewer than this share of a row's values
# (``python bench/bench_search.py --partition``).
SORT_PARTITION_BELOW = 0.7
SORT_PARTITION_BELOW_RADIX = 0.1
# Graded pairs the tied scan's numpy passes handle in the process before its bookkeeping takes the
# compiled loops (tied_group_kernels); calls this large look in the cache.
BOOKS_COMPILED_FROM = 1 << 23
BOOKS_CACHED_FROM = 1 << 12
# Rank entries numpy reduces in the process before the compiled Hits reductions
# (``_metrics/hits_kernels.py``) take over (``python bench/bench_compile.py --switched``). Deep
# classes give (queries x R) ranks.
HITS_COMPILED_FROM = 1 << 25
# ``deep_count.at_most`` compares every value of rows narrower than this in one numpy call, and
# searches wider ones row by row (a row's Python overhead repaid).
DEEP_SEARCH_FROM = 8192
# The deep ranking from the others' side (``_search/deep_merged.py``) takes blocks whose rows rank
# at least MERGED_FROM relevant values (J); below, sorting them costs little beside the others'
# products. Vectors wider than MERGED_NARROW_DIM take it from MERGED_FROM_WIDE: each listed other
# made again in float64 costs more there (bench/NOTES.md, stop 52 figures, "The others' side").
MERGED_FROM = 1024
MERGED_FROM_WIDE = 4096
MERGED_NARROW_DIM = 128
# Others listed per row beyond the sample's generous guess before a row is listed again.
MERGED_ROOM = 256
# Making one listed other again in float64 (with the chunk's references in cache) costs about as
# much as this many columns of the float64 product's extra time over float32's.
WIDEN_COLUMNS = 6.0
# One other listed (its listing, widening, sorting and place in the table) costs about as much as
# this many comparisons of the guess's counting passes.
GUESS_COMPARISONS = 50.0
# The flat searcher centres the references only where their mean's norm exceeds this share of
# their largest norm: below it, centring could shrink the error bound by at most a quarter (inner
# products), and it costs a float32 copy of the references (``bench_retrieval.py --peak``).
CENTRE_FROM = 0.25
# The deep ranking bounds its errors by the uncentred norms and ranks every copy of a row: on
# references that have collapsed (exact copies, or rows close around a far mean) nearly every pair
# is a near-tie there, recomputed one by one. Such references keep faiss's route, which searches
# the centred rows and each distinct row once, at every depth: where the centred norm is below this
# share of the largest norm (the deep ranking's bound at least 16 times the centred one), or at
# most DISTINCT_SHARE of the rows are distinct.
DEEP_CENTRED_FROM = 0.25
# Search the distinct rows instead when they are at most this share of the references.
DISTINCT_SHARE = 0.5

# --- Chunks and blocks ---

# Rows x references of one block of the deep ranking: its (rows x R) float64 products of the
# relevant slices, nearest relevant values and ranks are each at most this many elements
# (32 MB); without class codes, so is its (rows x references) float64 product.
DEEP_ELEMENTS = 1 << 22
# Elements of one chunk of the deep ranking's products with the other references, made and
# compared while in cache (4 MB of float64); its float64 relevant slices are made whole.
DEEP_CHUNK_ELEMENTS = 1 << 19
# Rows of one such chunk at most, so that each row's chunk is long (2,048 values or more): a row's
# relevant values, counts and bucket table are then read into cache once per chunk instead of with
# all of a block's rows in every chunk (256 values each).
DEEP_CHUNK_ROWS = 256
# References sampled to place the deep ranking's thresholds (at most 1/16 of them), and how
# many standard deviations of the sampled count a threshold aims above the depth (a row whose
# threshold proves too tight is counted again with a looser one).
DEEP_SAMPLE_COLUMNS = 1024
DEEP_SAMPLE_SIGMAS = 2.0
# Recomputing one float32 near-tie in float64 costs about as much time as this many columns of
# the extra time of a float64 product over a float32 one, whatever d (bench/bench_deep.py --pieces).
DEEP_TIE_COLUMNS = 40.0
# Bytes of one reference shard when sharding is implied (streaming, Dask) but no size is given.
DEFAULT_SHARD_BYTES = 256 << 20
# faiss indexes of reference shards cached per Dask worker process.
CACHED_SHARDS = 8
# 32-bit words hashed at a time by the duplicate-row check (8 MB of uint64 products).
HASH_BLOCK = 1 << 20

# (query, reference) pairs of one chunk of a Hamming scan (`_search/hamming.py`): about 40 bytes
# each across the distances, their counting keys and the index rule's sort, so ~40 MB a chunk.
HAMMING_PAIRS = 1 << 20
# The longest query block of a Hamming scan: longer blocks only shorten its reference chunks.
HAMMING_BLOCK_ROWS = 256
# (query, reference) pairs of one chunk of the tie-aware scan of float embeddings
# (`_search/tied_scan.py`): a float64 distance, its argsort and the sorted copy, ~32 MB a chunk.
TIED_SCAN_PAIRS = 1 << 20
# The tie-aware scan's compiled window pass places most values with a table of buckets (this many
# per window, at most TIED_MAX_BUCKETS per query: int16, 4 MB for 256 queries) instead of a
# binary search.
TIED_BUCKETS_PER_WINDOW = 16
TIED_MAX_BUCKETS = 1 << 13

# Comparisons (ranked x judged, or items) per block when evaluating rankings and score matrices
# (16 MB of booleans).
RANKING_ELEMENTS = 1 << 24
# Replicate x item signs held at once by the randomization test and permutations by the
# randomised Tukey HSD.
RESAMPLE_ELEMENTS = 1 << 24
# Replicate x query weights held at once by the bootstrap (8 MB of float64): a default interval
# costs at most ~20% more peak memory than --no-ci at any size (bench/bench_interval_memory.py).
BOOTSTRAP_ELEMENTS = 1 << 20

# Clustering quality: terms of the expected-mutual-information sum evaluated at once (float64
# temporaries, ~100 MB), and cells of a contingency table counted densely with one bincount
# (larger tables are counted sparsely).
EMI_TERMS = 1 << 20
DENSE_CONTINGENCY_CELLS = 1 << 22
# Self-reference check: float32 rows hashed or compared at once, in elements (8 MB of uint64 bits).
SELF_CHECK_ELEMENTS = 1 << 20
# Geometry: float64 elements of one block of centred rows (32 MB).
SCATTER_ELEMENTS = 1 << 22

# Pair verification (defaults of `_verification.Budgets`, see there): rows of a tile of pair
# distances, histogram bins, positive distances held at once, pairs collected around the
# thresholds, cells of the positives' lookup table; random pairs that place the grid; slow-path
# negatives expanded at once.
VERIFICATION_TILE_ROWS = 384
VERIFICATION_BINS = 1 << 16
VERIFICATION_HELD = 1 << 22
VERIFICATION_COLLECTED = 1 << 22
VERIFICATION_CELLS = 1 << 23
VERIFICATION_SAMPLE = 1 << 17
# Columns ahead whose AUROC table cells the compiled tile pass prefetches (0: none): the best of
# those measured (``python bench/bench_verification.py --prefetch``).
VERIFICATION_PREFETCH = 32
AUROC_BATCH = 1 << 15


def deep_from() -> int:
    """The depth from which rankings take the deep ranking: :data:`DEEP_FROM_COMPILED` where the
    compiled kernels run (:func:`embedeval._core.compiled.enabled`), :data:`DEEP_FROM` otherwise."""
    return DEEP_FROM_COMPILED if compiled.enabled() else DEEP_FROM
