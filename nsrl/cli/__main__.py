"""``python -m nsrl.cli``: the ``nsrl`` command."""

import sys

from nsrl.cli import main

sys.exit(main())
