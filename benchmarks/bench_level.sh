#!/usr/bin/env bash
# "Nothing slower": the quick preset and the sweep's fast path at an earlier revision and at
# the working tree, interleaved in one run on the same machine state.
#
#     bash benchmarks/bench_level.sh [REV] > benchmarks/results/bench_level.txt
#
# REV (default 8e1edd9, the last commit before the toolkit step) is exported with git archive,
# its envs/ folder placed at nsrl/envs so that the old package stands alone on PYTHONPATH (the
# editable install of the working tree is consulted only after PYTHONPATH). Each side first
# computes two shards (numba's cache compiled, files read), then the timed runs. CPU seconds
# (user + sys of the process and its workers) are the figure to compare on a shared machine;
# wall seconds are printed beside them.
set -euo pipefail
rev="${1:-8e1edd9}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
old="$(mktemp -d)"; work="$(mktemp -d)"
trap 'rm -rf "$old" "$work"' EXIT
git -C "$repo" archive "$rev" nsrl envs benchmarks | tar -x -C "$old"
mv "$old/envs" "$old/nsrl/envs"
side() {  # side NAME CMD...: run CMD with the old or the new package
  local name="$1"; shift
  if [ "$name" = old ]; then PYTHONPATH="$old" OPENBLAS_NUM_THREADS=1 "$@"; else
    OPENBLAS_NUM_THREADS=1 "$@"; fi
}
timed() {  # timed NAME LABEL CMD...
  local name="$1" label="$2"; shift 2
  /usr/bin/time -f "$name $label: %e s wall, %U s user + %S s sys" -o "$work/t" \
    bash -c "$(printf '%q ' "$@")" > /dev/null 2> "$work/err" || { cat "$work/err"; exit 1; }
  cat "$work/t"
}
cd "$work"
echo "revision $rev (old) against the working tree (new) of $repo; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for name in old new; do  # warm-up: numba's cache, imports
  side "$name" python -m nsrl.cli reproduce --preset quick --out "warm-$name" --limit 2 \
    --no-plot > /dev/null 2>&1
done
for name in old new old new; do
  rm -rf "quick-$name"
  PYTHONPATH="$([ "$name" = old ] && echo "$old" || true)" timed "$name" "quick preset, --jobs 2" \
    env OPENBLAS_NUM_THREADS=1 python -m nsrl.cli reproduce --preset quick \
    --out "quick-$name" --jobs 2 --no-plot
done
for name in old new old new; do
  src="$([ "$name" = old ] && echo "$old" || echo "$repo")"
  echo "$name bench_sweep --instances mid --baseline-runs 1:"
  side "$name" python "$src/benchmarks/bench_sweep.py" --instances mid --baseline-runs 1 \
    2>/dev/null | grep -E "scheme-iterations/s|fast path :"
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
