"""Tetris: the paper's schemes with DPI's and CBMPI's greedy step (docs/tetris_learning.md).

The protocol of Scherrer et al. (JMLR 2015, 6.2) on the small board (10 x 10) and the
standard one (10 x 20): the policy pi_w = argmax_a w . phi(s, a) on the 9 D-T features; CBMPI's
step (``cbmpi``: one m = 5 rollout per state and placement from DU's height-mixed states, the
critic on D-T + 5 height RBFs + a constant, the cost-sensitive fit by the softmax surrogate,
warm-started), B = 8 M rollout placements per iteration on 10 x 10 (16 M on 10 x 20), gamma
= 1. Each unit (``n_mdps``: the board has no random part, a unit is an independent replicate)
runs every scheme once; the units' evaluation games are shared by its schemes (common pieces).

The schemes: API (which is CBMPI with this operator), API(0.1), CPI(0.1), CPI+ with
``alpha_min = 1/8`` (its own step is 0 where gamma = 1), PSDP, NSPI(2) and NSPI(5); the
``dpi`` variant is API with DPI's step (no critic, m = 10). CPI itself stops at its first
step where gamma = 1 and is left out, as the paper leaves it out of its section 5.
"""

from nsrl.experiments.sweep import Sweep

SCHEMES = ("api", "api(0.1)", "cpi(0.1)", {"name": "cpi+", "options": {"alpha_min": 0.125}},
           "psdp", "nspi(2)", "nspi(5)")
CBMPI = {"name": "cbmpi", "options": {"budget": 8_000_000, "m": 5}}
DPI = {"name": "dpi", "options": {"budget": 8_000_000, "m": 10}}

SMALL = Sweep(name="tetris-small", domain="tetris", width=(10,), height=(10,), n_mdps=10,
              n_runs=1, n_iterations=10, schemes=SCHEMES, operator=CBMPI, seed=2013,
              estimate={"games": 200, "final_games": 200})
# CBMPI as the NIPS paper ran it on this board: m = 2, the cost-sensitive loss minimised by
# CMA-ES (population 15 x 9, started afresh at each iteration), API only.
PAPERS = {"name": "cbmpi", "options": {"budget": 8_000_000, "m": 2, "fit": "cmaes",
                                       "warm_start": False}}
# Not the papers': the preset's CBMPI with the critic's value at the cut discounted by 0.7,
# which bounds the critic's horizon near m / (1 - 0.7) placements (it grows by m per call at
# gamma = 1), every scheme of the preset.
DECAY = {"name": "cbmpi", "options": {"budget": 8_000_000, "critic_decay": 0.7}}
SMALL_VARIANTS = {"cbmpi": {}, "dpi": {"operator": DPI, "schemes": ("api",)},
                  "cbmpi-m2-cmaes": {"operator": PAPERS, "schemes": ("api",)},
                  "cbmpi-decay": {"operator": DECAY}}

# The standard board: a policy near 20 M lines plays about 50 M pieces a game, so evaluation
# dominates: 3 games after each iteration, 20 after the last. API (CBMPI) and the small board's
# best schemes but CPI+, whose line search plays 20 games from the empty board per candidate
# step (hours of CPU at these scores): NSPI(5) and NSPI(2), level with CPI+ there. 4 units
# cost the wall time of 3 on 2 workers (a unit is a shard).
LARGE = Sweep(name="tetris-large", domain="tetris", width=(10,), height=(20,), n_mdps=4,
              n_runs=1, n_iterations=6, schemes=("api", "nspi(5)", "nspi(2)"),
              operator={"name": "cbmpi", "options": {"budget": 16_000_000, "m": 5}}, seed=2013,
              estimate={"games": 3, "final_games": 20})

# The same protocol in seconds, on a 6 x 8 board (the tests and a first look).
TINY = SMALL.replace(name="tetris-tiny", width=(6,), height=(8,), n_mdps=2, n_iterations=3,
                     operator={"name": "cbmpi", "options": {
                         "budget": 30_000, "m": 2, "pool_games": 4, "pool_pieces": 2_000,
                         "value_games": 4}},
                     estimate={"games": 6, "final_games": 10})
