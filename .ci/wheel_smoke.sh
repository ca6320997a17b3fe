#!/usr/bin/env bash
# The wheel as users install it: built from the checkout, installed non-editable into a clean
# virtual environment, and run from a folder outside the checkout (an editable install would
# hide a package missing from the wheel). Every subcommand runs; every registered experiment
# is checked (`--check` builds its first shard's inputs) and the short ones start a shard.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Built from a copy of what a wheel is made of: a stale build/ folder of an in-place build
# would slip modules that no longer exist into the wheel.
mkdir "$work/src" && cp -r "$repo"/{pyproject.toml,setup.py,README.md,LICENSE,nsrl,envs} "$work/src"
python -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" "$work/src"
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip
"$work/venv/bin/python" -m pip install --quiet "$work"/dist/nsrl-*.whl
mkdir "$work/run" && cd "$work/run"
export PATH="$work/venv/bin:$PATH"
python - "$repo" <<'PY'
import sys, nsrl
assert not nsrl.__file__.startswith(sys.argv[1]), f"imported from the checkout: {nsrl.__file__}"
PY
python - <<'PY'
# The license travels with the wheel (PEP 639): its text in the .dist-info, named in METADATA.
from importlib.metadata import distribution
dist = distribution("nsrl")
meta = dist.metadata
assert meta["License-Expression"] == "MIT", meta["License-Expression"]
assert meta.get_all("License-File") == ["LICENSE"], meta.get_all("License-File")
text = dist.read_text("licenses/LICENSE")
assert text is not None and text.startswith("MIT License"), "LICENSE is not in the wheel"
PY
version="$(nsrl --version)"
echo "wheel smoke: $version from $(python -c 'import nsrl; print(nsrl.__file__)')"
experiments="$(python -c 'from nsrl.experiments.registry import experiment_names; print(*experiment_names())')"
help="$(nsrl reproduce --help)"
for name in $experiments; do
  grep -q "^  $name " <<<"$help" || { echo "nsrl reproduce --help does not list $name"; exit 1; }
  nsrl reproduce --preset "$name" --out "check-$name" --check
done
nsrl reproduce --preset paper --out paper --limit 1 --no-plot
nsrl plot paper > /dev/null
nsrl garnet --states 20 --actions 2 --branching 2 --mdp-seed 0 --out g.npz
nsrl run --scheme 'nspi(3)' --mdp g.npz --iterations 5 --json > /dev/null
nsrl run --scheme api --garnet 20,2,2 --operator lstdq --budget 2000 --iterations 3 --json > /dev/null
nsrl compare --garnet 20,2,2 --schemes api,psdp --operators lstdq,exact --run-budget 20000 --seeds 1 --out cmp > /dev/null
nsrl bounds --garnet 20,2,2 --m 2 > /dev/null
python - <<'PY'
import importlib.util
import gymnasium as gym
import nsrl  # noqa: F401  (registers the ids)
env = gym.make("Garnet-v0")
env.reset(seed=0)
env.step(0)
for study in ("study", "benchmarks"):
    assert importlib.util.find_spec(study) is None, f"{study} is installed with the wheel"
PY
echo "wheel smoke: passed ($(echo $experiments | wc -w) experiments checked)"
