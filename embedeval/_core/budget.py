"""Every working-memory budget and chunk size of the package, in one place.

Work is done in blocks so that memory stays bounded whatever the input size; these numbers
decide how big the blocks are. None of them changes a result, only time and memory.
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
# (its distance_compute_blas_threshold); below it, a slower pair-by-pair loop (measured 2x).
FAISS_BLAS_THRESHOLD = 128_000

# float64 elements per recomputation chunk of near-tied candidates (1 MB: stays in cache).
RECOMPUTE_ELEMENTS = 1 << 17
# float64 elements per chunk of cosine normalisation (_inputs.prepare): 4 MB, cache-sized, where one
# float64 copy of a 200,000 x 384 corpus (614 MB) cost 0.3 to 1.2 s in page faults alone.
NORMALISE_ELEMENTS = 1 << 19
# Rankings deeper than this take the deep ranking (embedeval._search.deep) where the searcher
# holds its references in memory, shallower ones faiss's search; deep_from() picks the depth for the
# kernels in use. bench/bench_deep.py --crossover, CPU seconds on one thread (the shared machine's
# wall clock moved by half between runs). With numpy passes (n = 20,000, d = 128, wall clock on a
# quiet machine): deep / faiss = 1.74, 1.43, 1.12, 0.79 at R = 100, 200, 400, 800, crossing near
# R = 550. With the compiled kernels (stop 49), at R = 100, 150, 200: 1.05, 0.87, 0.81 (20,000 x
# 128), 0.88, 0.84, 0.81 (40,000 x 64), 0.83, 0.95, 0.84 (10,000 x 384), 1.11, 1.01, 1.01 (20,000
# x 384), 0.82, 0.71, 0.64 (10,000 x 128): past 150 every measured size is at most 1.01.
# docs/performance.md has the tables.
DEEP_FROM = 512
DEEP_FROM_COMPILED = 150
# Rows x references of one block of the deep ranking: its (rows x R) float64 products of the
# relevant slices, nearest relevant values and ranks are each at most this many elements
# (32 MB); without class codes, so is its (rows x references) float64 product.
DEEP_ELEMENTS = 1 << 22
# Elements of one chunk of the deep ranking's products with the other references, made and
# compared while in cache (4 MB of float64); its float64 relevant slices are made whole.
DEEP_CHUNK_ELEMENTS = 1 << 19
# Rows of one such chunk at most, so that each row's chunk is long (2,048 values or more): a row's
# relevant values, counts and bucket table are read into cache once per chunk, which cost about
# a fifth of the compiled pass with all of a block's rows in every chunk (256 values each).
DEEP_CHUNK_ROWS = 256
# Rows whose sampled others the numpy loop places (about 8 us a row at R ~ 2,000) before the
# deep ranking compiles its merge walk for them (``deep_kernels.reached``, 0.1-0.2 s to compile
# with a cold cache; at once where numba's cache holds it: ``compiled.repaid``).
DEEP_REACHED_COMPILED_FROM = 1 << 14
# Values (rows x references) the deep ranking's numpy passes count (about 8-10 ns a value, products
# included: bench_floor.py's numpy column of row 2) before the compiled deep pass is compiled
# (``deep_kernels.place_chunk`` and the ranks from counts, 1.3 s with a cold cache:
# ``bench_compile.py --place``; at once where numba's cache holds them: ``compiled.repaid``).
DEEP_FUSED_COMPILED_FROM = 1 << 27
# Values (rows x references) the deep pass scans placing each at once (about 2.8 ns a value at
# R ~ 2,000 on one thread: 2^29 of them take about 1.5 s) before it compiles the collected
# placement (``placed_kernels``' radix sort and walk, 0.7 s with a cold cache, and the deep pass's
# collecting variant, 1.2-1.3 s more: ``bench_compile.py --switched``; at once where numba's cache
# holds them: ``compiled.repaid``), which a small evaluation never repays.
DEEP_COLLECTED_COMPILED_FROM = 1 << 29
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

# (query, reference) pairs of one chunk of a Hamming scan (`_search/hamming.py`): about 40 bytes
# each across the distances, their counting keys and the index rule's sort, so ~40 MB a chunk.
HAMMING_PAIRS = 1 << 20
# The longest query block of a Hamming scan: longer blocks only shorten its reference chunks.
HAMMING_BLOCK_ROWS = 256
# (query, reference) pairs of one chunk of the tie-aware scan of float embeddings
# (`_search/tied_scan.py`): a float64 distance, its argsort and the sorted copy, ~32 MB a chunk.
TIED_SCAN_PAIRS = 1 << 20

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
# Columns ahead whose AUROC table cells the compiled tile pass prefetches (0: none); 32 measured
# best of 4 to 128 (bench/bench_verification.py --prefetch).
VERIFICATION_PREFETCH = 32
AUROC_BATCH = 1 << 15


def deep_from() -> int:
    """The depth from which rankings take the deep ranking: :data:`DEEP_FROM_COMPILED` where the
    compiled kernels run (:func:`embedeval._core.compiled.enabled`), :data:`DEEP_FROM` otherwise."""
    return DEEP_FROM_COMPILED if compiled.enabled() else DEEP_FROM
