"""``python -m embedeval.cli``: the same as the ``embedeval`` command."""

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
