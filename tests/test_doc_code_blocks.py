"""Every code block of README.md and of the user guide runs as written; so does the tutorial.

Python blocks of one page run in page order in one namespace, in a fresh working folder. A
block fenced as ```python no-run: REASON is skipped, and must give its reason there. A block
fenced as ```toml file: NAME (any language) is written to NAME in that folder, for the
commands after it to read. The example plugin of the extending page (tests/plugins/) is on the
path, as its page tells a reader to put it.

Bash blocks: every ``nsrl ...`` command (a line, or one part of an ``&&`` chain) is parsed by
the command line's own parser, so its subcommand and flags exist and its values parse; the cheap
ones then run through ``nsrl.cli.main`` in the page's folder, in page order with the Python
blocks, and must exit 0. What is not run, and why, is decided by :func:`why_not_run`. Other
shell commands (``pip install``, ``python -m pytest``, ``python -m sphinx``, ``python
examples/tutorial.py``) are not run here: installing and the test suite itself cannot run inside
a test, the site is built by CI, and the tutorial has its own test below.

The API reference is checked here too: each public name is listed on one page of docs/api/.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs" / "guide").glob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)
BIG_BUDGET = 20_000  # `nsrl compare` runs when budget x seeds is at most this many transitions


def blocks(page: Path) -> list[tuple[str, str, str, int]]:
    """(language, rest of the info string, body, line) of every fenced block, in page order."""
    text = page.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2).strip(), m.group(3), text.count("\n", 0, m.start()) + 1)
            for m in FENCE.finditer(text)]


def nsrl_commands(script: str) -> list[list[str]]:
    """The argument lists of the ``nsrl`` commands of a bash block (after ``nsrl``)."""
    commands = []
    for line in script.replace("\\\n", " ").splitlines():
        words, part = shlex.split(line, comments=True), []
        for word in [*words, "&&"]:
            if word in ("&&", ";", "||"):
                if part[:1] == ["nsrl"]:
                    commands.append(part[1:])
                part = []
            else:
                part.append(word)
    return commands


def _option(argv: list[str], flag: str, default: str | None = None) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else default


def why_not_run(argv: list[str], folder: Path) -> str | None:
    """Why a parsed ``nsrl`` command is not run here (None: it is cheap, run it)."""
    if "--scheduler" in argv:
        return "it needs a running Dask scheduler at the address it names"
    if argv[0] == "reproduce" and not (folder / str(_option(argv, "--preset", "quick"))).is_file():
        return "a registered preset runs for minutes (quick) to hours (paper)"
    if argv[0] == "plot" and not (folder / argv[1]).is_dir():
        return "it plots the folder of a reproduce command that is not run here"
    if argv[0] == "compare":
        budget = int(_option(argv, "--run-budget", "0")) * int(_option(argv, "--seeds", "3"))
        if budget > BIG_BUDGET:
            return f"{budget} transitions per learner is minutes of work"
    return None


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(REPO).as_posix() for p in PAGES])
def test_the_code_blocks_of_the_page_run_as_written(page, tmp_path, monkeypatch,
                                                    on_workers_path):
    from nsrl.cli import build_parser, main

    on_workers_path(REPO / "tests" / "plugins")  # the sweep's worker processes too
    monkeypatch.chdir(tmp_path)
    # The extending page's blocks are the example plugin's source: run them as that module, so
    # that loading the plugin later registers the same components again (the same code), not
    # another component under the same names (which the registries refuse).
    name = "nsrl_demo_plugin" if page.name == "extending.md" else "__doc_block__"
    namespace: dict = {"__name__": name}
    ran = 0
    for language, info, body, line in blocks(page):
        where = f"{page.relative_to(REPO)}:{line}"
        if info.startswith("file:"):
            (tmp_path / info.partition(":")[2].strip()).write_text(body)
        elif language == "python":
            if info:
                assert re.fullmatch(r"no-run:\s*\S.*", info), (
                    f"{where}: a python block opts out only as ```python no-run: REASON, "
                    f"got {info!r}")
                continue
            exec(compile(body, where, "exec"), namespace)
            ran += 1
        elif language == "bash":
            for argv in nsrl_commands(body):
                build_parser().parse_args(argv)  # the flags exist and the values parse
                if why_not_run(argv, tmp_path) is None:
                    assert main(argv) == 0, f"{where}: `nsrl {shlex.join(argv)}` failed"
                    ran += 1
    if page.name not in ("extending.md", "tutorial.md"):  # the tutorial: its own test below
        assert ran > 0, f"{page.relative_to(REPO)}: no block of this page ran"


def test_the_commands_not_run_are_the_expensive_ones(tmp_path):
    """What :func:`why_not_run` skips in the pages is only reproduce/plot/compare at full size."""
    skipped = {argv[0] for page in PAGES for language, _, body, _ in blocks(page)
               if language == "bash" for argv in nsrl_commands(body)
               if why_not_run(argv, tmp_path)}
    assert skipped <= {"reproduce", "plot", "compare"}


def _tutorial():
    spec = importlib.util.spec_from_file_location("tutorial", REPO / "examples" / "tutorial.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tutorial_compares_the_operators_and_saves_its_figure(tmp_path):
    tutorial = _tutorial()
    out = tmp_path / "tutorial.png"
    losses = tutorial.main(["--out", str(out)])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert set(losses) == {(s, o) for s in tutorial.SCHEMES for o in tutorial.operators()}
    for runs in losses.values():
        assert runs.shape == (tutorial.SEEDS, tutorial.ITERATIONS)
        assert np.all(runs >= -1e-9)  # v* >= v_pi for every policy: a loss is never negative
    exact_api = losses["api", "exact"]
    # API with the exact greedy operator is policy iteration: its values never decrease, and
    # it reaches an optimal policy after finitely many steps (here well within 12).
    assert np.all(np.diff(exact_api, axis=1) <= 1e-9)
    assert np.all(exact_api[:, -1] <= 1e-8)


def _listed() -> set[str]:
    return {line.strip() for page in (REPO / "docs" / "api").glob("*.md")
            for line in page.read_text(encoding="utf-8").splitlines()}


def test_every_public_name_has_its_place_in_the_api_reference():
    import nsrl
    import nsrl.envs
    import nsrl.experiments
    import nsrl.params

    params = {name for name, obj in vars(nsrl.params).items() if not name.startswith("_")
              and getattr(obj, "__module__", None) == "nsrl.params"
              and (inspect.isclass(obj) or inspect.isfunction(obj))}
    public = set(nsrl.__all__) | set(nsrl.envs.__all__) | set(nsrl.experiments.__all__) | params
    documented = _listed() | {"EXPERIMENTS"}  # a dict: described by hand in experiments.md
    missing = sorted(public - documented)
    assert not missing, f"list these names on a page of docs/api/ (the group they belong to): " \
                        f"{missing}"


def test_the_readme_stays_short():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 150
