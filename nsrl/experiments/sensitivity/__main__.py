"""``python -m nsrl.experiments.sensitivity [DIR [DOC]]``: the study's tables and DOC's blocks.

The tables come from DIR's two stored files (default ``docs/sensitivity``), then DOC's
generated blocks (default ``docs/fidelity.md``) from the tables.
"""

import sys
from pathlib import Path

from nsrl.experiments.sensitivity.analysis import render, tables

folder = sys.argv[1] if len(sys.argv) > 1 else "docs/sensitivity"
for path in tables(folder):
    print(path)
doc = Path(sys.argv[2] if len(sys.argv) > 2 else "docs/fidelity.md")
doc.write_text(render(doc, folder))
print(doc)
