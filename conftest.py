"""Collection rules for the whole repository (tests, doctests of nsrl and envs)."""

import importlib.util

# The SB3 bridge imports torch and stable-baselines3 (the `sb3` extra): without them its
# doctests cannot even be imported, so they are skipped, as tests/test_sb3.py is.
collect_ignore_glob = []
if importlib.util.find_spec("stable_baselines3") is None:
    collect_ignore_glob.append("nsrl/sb3/*")
