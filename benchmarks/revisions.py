"""An earlier revision's package on disk, for the benchmarks that time before and after.

Standard library only, so that the side environments of the peers' benchmarks import it too.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def export(rev: str, folder) -> str:
    """The package of revision ``rev`` written under ``folder`` (git archive): its PYTHONPATH.

    ``envs/`` (installed as ``nsrl.envs``) is moved into the package, as the wheel does.
    """
    old = Path(folder) / "old"
    old.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "nsrl", "envs"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
    (old / "envs").rename(old / "nsrl" / "envs")
    return str(old)
