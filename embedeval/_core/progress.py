"""Progress bars: ``progress=True`` picks one, a callable is used as it is.

The evaluators call ``progress(done, total)`` with query counts after each block. ``True``
draws tqdm's ``tqdm.auto`` bar where tqdm is installed (a widget in Jupyter, text on a
terminal), else :class:`TerminalBar`; the command line draws :class:`TerminalBar`.
"""

from __future__ import annotations

import sys
import time


class TerminalBar:
    """A one-line progress bar on stderr, drawn only on a terminal and only after 2 seconds.

    Called as ``progress(done, total)`` by the evaluator after each block of queries.
    """

    def __init__(self, enabled: bool = True):
        self.enabled = enabled and sys.stderr.isatty()
        self.start = time.perf_counter()
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        elapsed = time.perf_counter() - self.start
        if not self.enabled or elapsed < 2 or total == 0:
            return
        width = 30
        filled = int(width * done / total)
        eta = elapsed * (total - done) / max(done, 1)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} queries, {eta:.0f} s left ")
        sys.stderr.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")


class TqdmBar:
    """tqdm's ``tqdm.auto`` bar (a notebook widget in Jupyter), opened at the first report and
    closed when every query is done."""

    def __init__(self, tqdm):
        self.tqdm = tqdm
        self.bar = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = self.tqdm(total=total, unit="query", desc="embedeval")
        self.bar.update(done - self.bar.n)
        if done >= total:
            self.bar.close()


def reporter(progress):
    """The callable behind an evaluator's ``progress`` argument (None for none).

    ``None``/``False``: none; ``True``: :class:`TqdmBar` where tqdm is installed, else
    :class:`TerminalBar`; a callable: itself. Anything else: ValueError naming the argument."""
    if progress is None or progress is False:
        return None
    if progress is True:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return TerminalBar()
        return TqdmBar(tqdm)
    if callable(progress):
        return progress
    raise ValueError(f"'progress' must be True, False, None or a callable progress(done, total); got {progress!r}")
