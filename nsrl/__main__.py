"""``python -m nsrl``: the ``nsrl`` command (as the console script)."""

import sys

from nsrl.cli import main

if __name__ == "__main__":
    sys.exit(main())
