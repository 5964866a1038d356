"""``embedeval neighbors`` (exact ground truth to a file) and ``--explore FILE.html`` on the commands
that evaluate or compare (:mod:`embedeval.explorer`)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .._inputs.arrays import DISTANCES
from .._metrics.registry import EMBEDDINGS
from ._loaders import load_array, load_labels
from ._problems import UsageError, argument_problems, below_one

EXPLORED = ("evaluate", "retrieval", "rankings", "scores", "compare")  # the commands that take --explore
OUT_SUFFIXES = (".npy", ".npz", ".ivecs", ".fvecs")


def add_explorer_commands(sub, **parser_kw) -> None:
    """The ``neighbors`` command, and ``--explore``/``--explore-k``/``--images`` on :data:`EXPLORED`."""
    nb = sub.add_parser("neighbors", help="each query's exact k nearest references, written to a file", **parser_kw)
    nb.add_argument("queries", metavar="QUERIES", help=".npy (memory-mapped), .npz, .parquet, .csv, .tsv, .txt")
    nb.add_argument("--reference", help="the rows to search (default: leave-one-out, each query excluding itself)")
    nb.add_argument("--k", type=int, required=True, help="neighbours per query")
    nb.add_argument("--distance", choices=DISTANCES, default="euclidean", help="(default: euclidean)")
    nb.add_argument("--key", help="array name in .npz / column in .parquet files")
    nb.add_argument(
        "--out",
        metavar="FILE",
        action="append",
        required=True,
        help="repeatable: .npy (ids, int64), .npz (ids and distances), .ivecs (ids, int32 rows prefixed by k), "
        ".fvecs (distances, float32 rows prefixed by k)",
    )
    nb.add_argument("--block-size", type=int, default=None, help="queries per block (default: automatic)")
    nb.set_defaults(run=neighbors_command)
    for name in EXPLORED:
        p = sub.choices[name]
        p.add_argument("--explore", metavar="FILE", help="also write a self-contained .html page to explore the result")
        if name in ("evaluate", "retrieval"):
            p.add_argument(
                "--explore-k", type=int, default=20, help="neighbours kept per query for --explore (default 20)"
            )
            p.add_argument(
                "--images",
                metavar="FILE",
                help="for --explore: a thumbnail path or URL per reference row (corpus row): a text file, one "
                "per line, or a column of a .parquet/.npz file (the labels file itself, say) named by --images-key",
            )
            p.add_argument("--images-key", metavar="COLUMN", help="the column of --images that holds the thumbnails")


KEPT_BYTES = 25  # memory per kept neighbour: its row (int64), distance (float64), relevance, label or grade


def explore_depth(args, n_queries: int) -> int | None:
    """``keep_neighbors`` for the evaluation: --explore-k with --explore (None for Hamming codes).
    Past the page's depth (:data:`embedeval.explorer.MAX_DEPTH`) a warning, before the work, says
    what the page shows and what keeping them costs."""
    if not getattr(args, "explore", None) or getattr(args, "distance", None) not in DISTANCES:
        return None
    if args.explore_k < 1:
        raise UsageError([f"--explore-k must be >= 1; got {args.explore_k}"])
    from ..explorer import MAX_DEPTH

    if args.explore_k > MAX_DEPTH:
        size = args.explore_k * n_queries * KEPT_BYTES
        print(
            f"warning: --explore-k {args.explore_k}: the page shows each query's first {MAX_DEPTH} neighbours "
            f"(curves to k = {MAX_DEPTH}; the rest only give the rank of the first relevant one), and keeping "
            f"{args.explore_k:,} for {n_queries:,} queries holds about {_size(size)} while it evaluates",
            file=sys.stderr,
        )
    return args.explore_k


def _size(n_bytes: int) -> str:
    return f"{n_bytes / 2**30:.1f} GB" if n_bytes >= 2**30 else f"{max(1, round(n_bytes / 2**20))} MB"


def explore_result(result, args, intervals) -> None:
    """Write ``--explore``'s page of an evaluation (with ``--images``' thumbnails), if asked."""
    if not getattr(args, "explore", None):
        return
    from ..explorer import write_page

    images = None
    if getattr(args, "images", None):
        column = load_labels(Path(args.images), getattr(args, "images_key", None), what="images")
        images = [str(v) for v in column.tolist()]
    title = " ".join(getattr(args, "command_line", "embedeval").split()[1:3])
    write_page(result, args.explore, images=images, intervals=intervals, title=title)
    print(f"wrote {args.explore}", file=sys.stderr)


def explore_comparison(comparison, args) -> None:
    if not getattr(args, "explore", None):
        return
    comparison.explore(args.explore, title="embedeval compare: " + ", ".join(comparison.systems))
    print(f"wrote {args.explore}", file=sys.stderr)


def neighbors_command(args) -> int:
    """``embedeval neighbors``: each query's exact top k, written to every ``--out`` file."""
    from .._embeddings.neighbors import neighbors

    problems = argument_problems({"QUERIES": args.queries, "--reference": args.reference}, [], EMBEDDINGS)
    problems += [
        f"--out {out}: the name must end in {', '.join(OUT_SUFFIXES)}"
        for out in args.out
        if Path(out).suffix.lower() not in OUT_SUFFIXES
    ]
    problems += below_one(args, "--k", "--block-size")
    if problems:
        raise UsageError(problems)
    queries = load_array(Path(args.queries), "queries", args.key)
    reference = None if args.reference is None else load_array(Path(args.reference), "reference", args.key)
    found = neighbors(queries, reference, k=args.k, distance=args.distance, block_size=args.block_size)
    for out in args.out:
        write_neighbors(found, Path(out))
        print(f"wrote {out}", file=sys.stderr)
    return 0


def write_neighbors(found, path: Path) -> None:
    """One file of ``found`` in the format its name says (see ``--out``)."""
    suffix = path.suffix.lower()
    if suffix == ".npy":
        np.save(path, found.indices)
    elif suffix == ".npz":
        np.savez(path, indices=found.indices, distances=found.distances)
    else:  # .ivecs / .fvecs: each row is its length (int32) then its values (int32 / float32)
        values = found.indices.astype(np.int32) if suffix == ".ivecs" else found.distances.astype(np.float32)
        rows = np.empty((values.shape[0], values.shape[1] + 1), dtype=np.int32)
        rows[:, 0] = values.shape[1]
        rows[:, 1:] = values.view(np.int32)
        rows.tofile(path)
