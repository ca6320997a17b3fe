"""A user's mypy accepts the Python code of README.md and of the quick start, and sees nsrl's types.

mypy runs in a subprocess as it would on a user's machine: its default settings (not --strict,
not the project's [tool.mypy] section, no ``ignore_missing_imports``), and nsrl found as an
installed package. nsrl is laid out as its wheel installs it (nsrl/, and envs/ as nsrl/envs/)
in a temporary folder on mypy's PYTHONPATH, so that mypy takes it as a PEP 561 package. (mypy
finds it neither through the editable install, an import hook mypy does not run, nor through
MYPYPATH=<checkout>, where envs/ is not nsrl.envs and nsrl's own modules are checked as the
user's code, under the user's settings.) Without ``py.typed`` mypy reports ``import-untyped``
and sees nsrl as Any; with it, mypy reads nsrl's annotations and reports no error inside nsrl,
as for any installed package (the library's own check is CI's ``mypy`` with [tool.mypy]).
tests/test_packaging.py checks that the wheel holds ``nsrl/py.typed``.

Every ```python block of a page is checked, in page order in one file (the quick start's second
block uses the first one's names), each at its own line of the page, so that mypy's line
numbers are the page's. The ``no-run:`` blocks (tests/test_doc_code_blocks.py) are checked too:
mypy does not run them. A control file misuses the API, and mypy must report exactly its
errors: the check cannot pass by mypy not finding nsrl, or finding it untyped.

One mypy run, about a minute of CPU on the development machine (55 s), in one test, so that
pytest-xdist's workers do not each run it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from test_doc_code_blocks import blocks

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", REPO / "docs" / "guide" / "quickstart.md"]
ERROR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+): error: (?P<message>.*?)"
                   r"(?:  \[(?P<code>[\w-]+)\])?$", re.M)

# Misuses a user's mypy must catch, each with the error code mypy gives it.
CONTROL = '''\
import numpy as np
import nsrl

mdp = nsrl.garnet("100", 5, 2, seed=0)
loss: str = nsrl.loss(mdp, nsrl.Deterministic(np.zeros(100, dtype=int)))
hist = nsrl.run("api", "exact", 3, mdp=mdp, rng=np.random.default_rng(0))
hist.output.no_such_attribute
'''
CONTROL_ERRORS = {
    (4, "arg-type"),     # garnet's n_states is an int
    (5, "assignment"),   # loss returns a float
    (7, "union-attr"),   # History.output is a policy (or Any), not an object of any type
}


def page_source(page: Path) -> str:
    """The page's python blocks, each body at its own line number of the page."""
    lines: list[str] = []
    for language, _, body, line in blocks(page):
        if language == "python":
            lines += [""] * (line - len(lines))  # the body starts on the line after the fence
            lines += body.splitlines()
    assert lines, f"{page.relative_to(REPO)} has no python block"
    return "\n".join(lines) + "\n"


def installed_nsrl(site: Path) -> None:
    """nsrl as its wheel installs it: nsrl/, py.typed included, and envs/ as nsrl/envs/."""
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO / "nsrl", site / "nsrl", ignore=skip)
    shutil.copytree(REPO / "envs", site / "nsrl" / "envs", ignore=skip)


def test_a_users_mypy_accepts_the_documented_code_and_catches_misuse(tmp_path):
    installed_nsrl(tmp_path / "site")
    files = {}
    for page in PAGES:
        name = page.relative_to(REPO).as_posix()
        files[name] = tmp_path / (page.stem.lower() + "_md.py")
        files[name].write_text(page_source(page), encoding="utf-8")
    control = tmp_path / "control.py"
    control.write_text(CONTROL, encoding="utf-8")
    # A user's defaults: this file names no option, and mypy reads no other configuration.
    (tmp_path / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    env["PYTHONPATH"] = str(tmp_path / "site")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-incremental",
         "--cache-dir", str(tmp_path / "cache"), *(p.name for p in files.values()),
         control.name],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    out = done.stdout + done.stderr
    errors = [m.groupdict() for m in ERROR.finditer(out)]
    for page, file in files.items():
        theirs = [e for e in errors if e["file"] == file.name]
        assert not theirs, (f"mypy reports errors in the code of {page} (line numbers are the "
                            f"page's):\n{out}")
    found = {(int(e["line"]), e["code"]) for e in errors if e["file"] == control.name}
    assert found == CONTROL_ERRORS, f"mypy missed or added errors in the misuse control:\n{out}"
    others = {e["file"] for e in errors} - {control.name}
    assert done.returncode == 1 and not others, f"mypy errors in {others}:\n{out}"
