"""The paper's protocol (section 5): every default of :class:`~nsrl.experiments.sweep.Sweep`.

n_S in {50, 100, 200}, n_A in {2, 5, 10}, b in {1, 2, 10}; 30 MDPs x 30 runs per instance;
100 iterations of API, API(0.1), CPI+, CPI(0.1), NSPI(5), NSPI(10), NSPI(30), PSDP; the
projected operator with 10% noise; 19 440 000 scheme-iterations.
"""

from nsrl.experiments.sweep import Sweep

SWEEP = Sweep(name="paper")
