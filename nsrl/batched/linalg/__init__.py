"""Linear algebra of the batched engines, one responsibility per module.

* :mod:`~nsrl.batched.linalg.state`: the batch state (one MDP's constants for R runs, the
  projected operator's noise, projection, greedy step and the loss);
* :mod:`~nsrl.batched.linalg.sparse`: compiled products over the successor lists;
* :mod:`~nsrl.batched.linalg.solvers`: the exact solves and which method each uses by size
  (:class:`~nsrl.batched.linalg.solvers.Solvers`), on top of the functional-graph solve
  (:mod:`~nsrl.batched.linalg.functional`), certified GMRES (:mod:`~nsrl.batched.linalg.gmres`),
  mixed-precision LU refinement (:mod:`~nsrl.batched.linalg.refine`) and low-rank updates
  (:mod:`~nsrl.batched.linalg.woodbury`), accepted by :mod:`~nsrl.batched.linalg.tolerances`;
* :mod:`~nsrl.batched.linalg.linesearch`: CPI+'s candidates on one shared subspace.

Engines call these; no scheme decision lives here.
"""
