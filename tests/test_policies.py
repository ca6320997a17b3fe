import numpy as np
import pytest

import nsrl
from nsrl.schemes.api import fold_in


def test_mixture_flattens_and_counts_memory():
    a, b = nsrl.Deterministic([0, 1]), nsrl.Deterministic([1, 1])
    mix = fold_in(fold_in(a, b, 0.5), a, 0.5)
    assert mix.memory == 3 and np.isclose(mix.weights.sum(), 1)
    assert fold_in(a, b, 1.0) is b


def test_mixture_acts_with_component_frequencies():
    a, b = nsrl.Deterministic(np.zeros(1, int)), nsrl.Deterministic(np.ones(1, int))
    mix = nsrl.Mixture([(0.3, a), (0.7, b)])
    acts = mix.act(np.zeros(20_000, int), rng=np.random.default_rng(0))
    assert abs(acts.mean() - 0.7) < 0.015


def test_non_stationary_phases():
    pis = [nsrl.Constant(i) for i in range(3)]
    loop = nsrl.NonStationary(pis, loop=True)
    assert loop.act(np.zeros(2, int), phase=4).tolist() == [1, 1]
    assert loop.act(np.zeros(3, int), phase=np.array([0, 1, 5])).tolist() == [0, 1, 2]
    finite = nsrl.NonStationary(pis, loop=False)
    assert finite.horizon == 3 and loop.horizon is None and loop.memory == 3
    with pytest.raises(ValueError, match="past its end"):
        finite.act(np.zeros(1, int), phase=3)


def test_invalid_policies():
    with pytest.raises(ValueError, match="sum to 1"):
        nsrl.Mixture([(0.5, nsrl.Constant(0))])
    with pytest.raises(ValueError, match="1-d"):
        nsrl.Deterministic(np.zeros((2, 2), int))
    with pytest.raises(ValueError, match="rng"):
        nsrl.Mixture([(1.0, nsrl.Constant(0))]).act(np.zeros(1, int))
