"""Collection rules for the whole repository (tests, doctests of nsrl and envs)."""

import importlib.util

# The SB3 bridge imports torch and stable-baselines3 (the `sb3` extra): without them its
# doctests cannot even be imported, so they are skipped, as tests/test_sb3.py is.
collect_ignore_glob = []
# The example plugin registers its names when imported: it is loaded by the tests that name
# it, never by doctest collection (which would register it in every worker before any test).
collect_ignore_glob.append("tests/plugins/*")
if importlib.util.find_spec("stable_baselines3") is None:
    collect_ignore_glob.append("nsrl/sb3/*")

# One BLAS thread per test process: the tests' matrices are small, and pytest-xdist already
# runs one process per core; threaded BLAS would only contend with it (a 150 x 150 solve
# measured 100x slower with two processes of two threads each on two cores).
from threadpoolctl import threadpool_limits  # noqa: E402

threadpool_limits(limits=1)
