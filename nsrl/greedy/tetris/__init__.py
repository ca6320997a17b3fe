"""DPI and CBMPI on Tetris: the schemes' policies as engine programs, rollouts, the fit.

* :func:`to_program`: any policy the schemes build from linear Tetris controllers (one of
  them, a mixture, a finite sequence or a loop, nsrl's pi_0) as a
  :class:`nsrl.tetris.programs.Program` the compiled engine plays;
* :class:`TetrisRollouts`: the greedy operator of DPI (``critic="none"``) and CBMPI
  (``critic="linear"``): m-step rollouts of the target from rollout states, a least-squares
  value critic, and a linear scoring policy fitted on the rollouts' cost-sensitive loss;
* :class:`TetrisScore`: a policy's mean lines over a fixed set of games (the quality of a run
  where no model gives a loss).

docs/tetris.md has the protocol and the published figures it is measured against.
"""

from nsrl.greedy.tetris.operator import TetrisRollouts
from nsrl.greedy.tetris.policies import TetrisPolicy, controller_of, tetris_policy, to_program
from nsrl.greedy.tetris.quality import TetrisScore

__all__ = ["TetrisPolicy", "TetrisRollouts", "TetrisScore", "controller_of", "tetris_policy",
           "to_program"]
