"""``python -m study.sensitivity [DIR] [--add NAME RESULTS]``: the study's tables.

The tables come from DIR's two stored files (default ``docs/sensitivity``); with ``--add``,
the reading NAME computed alone in the results folder RESULTS joins them first
(:func:`study.sensitivity.readings.add_reading`). The pages that quote them
(docs/fidelity.md) are then rendered by ``python -m study.numbers``.
"""

import argparse

from nsrl.experiments.sensitivity.analysis import tables
from study.sensitivity.readings import add_reading

parser = argparse.ArgumentParser(prog="python -m study.sensitivity",
                                 description=__doc__.splitlines()[0])
parser.add_argument("folder", nargs="?", default="docs/sensitivity")
parser.add_argument("--add", nargs=2, metavar=("NAME", "RESULTS"), default=None,
                    help="add reading NAME from its results folder RESULTS first")
args = parser.parse_args()
try:
    written = add_reading(args.folder, *args.add) if args.add else tables(args.folder)
except ValueError as exc:
    parser.error(str(exc))
for path in written:
    print(path)
print("now run `python -m study.numbers` to render the pages that quote them")
