#!/usr/bin/env bash
# The dependency floors, tested: a second environment with exactly the versions of
# .ci/floors.txt (the floors declared in pyproject.toml) runs the core of the test suite:
# the model, the exact backend, the schemes and operators, the engines, the envs and the
# runner (sweeps, storage, resume).
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
. "$work/venv/bin/activate"
python -m pip install --quiet --upgrade pip
# The test tools without the type checker's pinned stubs (they follow the newest releases).
python -m pip install --quiet -c .ci/floors.txt -e . pytest pytest-xdist hypothesis
python - <<'PY'
from importlib.metadata import version
pins = dict(line.split("==") for line in open(".ci/floors.txt")
            if line.strip() and not line.startswith("#"))
got = {name: version(name) for name in pins}
assert got == {k: v.strip() for k, v in pins.items()}, got
print("floors:", ", ".join(f"{k} {v}" for k, v in got.items()))
PY
python -m pytest -n 2 -q -p no:cacheprovider -W ignore::DeprecationWarning \
    tests/model tests/exact tests/schemes tests/greedy tests/experiments/test_runner.py \
    tests/test_envs.py tests/test_envs_vector.py tests/test_engine.py
