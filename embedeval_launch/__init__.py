"""The ``embedeval`` command's entry point, outside the ``embedeval`` package.

Importing ``embedeval`` loads numpy, faiss and the whole package, which takes a noticeable part
of a second; a Ctrl-C in that time would otherwise end in a ``KeyboardInterrupt`` traceback from
the import machinery. This module imports nothing heavy itself, so it can catch that and end as
the command does once loaded: one line on stderr and status 130.
"""

from __future__ import annotations

import sys

INTERRUPTED = 130  # 128 + SIGINT


def main() -> int:
    try:
        from embedeval.cli import main as run
    except KeyboardInterrupt:
        print("\nembedeval: interrupted" if sys.stderr.isatty() else "embedeval: interrupted", file=sys.stderr)
        return INTERRUPTED
    return run()


if __name__ == "__main__":
    sys.exit(main())
