"""How many iterations make the exact operator's curves flat (the powered family's choice).

One 10^4-state unit of a ``bigger`` domain with the exact operator, the schemes given, K
iterations (one shard, ``compute_shard``); prints the loss of each scheme at a few
iterations. The powered family's criterion (nsrl.experiments.bigger.inference.flatness): the
last 10% of iterations move the loss by < 1% of pi_0's loss.

    python benchmarks/probe_powered_iterations.py car api,psdp 200
"""

from __future__ import annotations

import dataclasses
import sys

import pandas as pd

from nsrl.experiments import load_experiment
from nsrl.experiments.shards import Shard
from nsrl.experiments.worker import compute_shard


def main() -> None:
    dom, schemes, K = sys.argv[1], tuple(sys.argv[2].split(",")), int(sys.argv[3])
    sweep = load_experiment("bigger").sweeps()[f"{dom}-exact"]
    sweep = dataclasses.replace(sweep, n_states=(10000,), n_mdps=1, n_iterations=K,
                                schemes=schemes)
    shard = Shard(10000, sweep.n_actions[0], sweep.branching[0], 0)
    _, cols, cpu, _ = compute_shard(sweep.to_dict(), shard)
    df = pd.DataFrame({k: cols[k] for k in ("scheme", "iteration", "loss")})
    wide = df.pivot_table(index="iteration", columns="scheme", values="loss")
    rows = [k for k in (1, 5, 10, 20, 30, 40, 45, 50, 54, 60, 80, 90, 100, 150, 200) if k <= K]
    print(f"# python benchmarks/probe_powered_iterations.py {dom} {','.join(schemes)} {K}")
    print(f"{dom} cpu {cpu:.1f} s")
    print(wide.loc[rows].round(3).to_string())


if __name__ == "__main__":
    main()
