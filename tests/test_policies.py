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


def test_a_folded_mixture_is_the_flattened_mixture():
    """Mixture.fold (O(1) per step) has the table, components and memory of the flat one."""
    from nsrl.policies import Mixture

    mdp = nsrl.garnet(12, 3, 2, seed=1)
    rng = np.random.default_rng(0)
    pis = [nsrl.Deterministic(rng.integers(0, 3, 12)) for _ in range(6)]
    folded, flat = pis[0], [(1.0, pis[0])]
    for pi, a in zip(pis[1:], [0.3, 0.1, 0.5, 0.2, 0.7], strict=True):
        folded = Mixture.fold(folded, pi, a)
        flat = [(w * (1 - a), p) for w, p in flat] + [(a, pi)]
    reference = Mixture(flat)
    np.testing.assert_allclose(folded.table(mdp), reference.table(mdp), rtol=0, atol=1e-15)
    np.testing.assert_allclose(folded.weights, reference.weights, rtol=0, atol=1e-15)
    assert [p for _, p in folded.components] == pis and folded.memory == 6


def test_repeated_policies_are_one_segment_with_the_listed_value():
    """A loop holding pi 40 times (closed form by matrix powers) = the loop listed 40 times."""
    from nsrl.policies import NonStationary

    mdp = nsrl.garnet(15, 2, 2, seed=3)
    rng = np.random.default_rng(1)
    a, b = (nsrl.Deterministic(rng.integers(0, 2, 15)) for _ in range(2))
    listed = NonStationary([a] + [b] * 40, loop=True)
    compact = NonStationary.repeated(b, 41).shifted(a)
    assert len(compact.segments) == 2 and len(compact) == 41 and compact.memory == 41
    assert [compact.at(k) for k in range(83)] == [listed.at(k) for k in range(83)]
    np.testing.assert_allclose(nsrl.evaluate(mdp, compact), nsrl.evaluate(mdp, listed),
                               rtol=0, atol=1e-10)


def test_nspi_with_a_huge_m_stores_one_segment_and_gets_the_limit_value():
    """NSPI(10^9) after k steps loops over pi_k..pi_1 and 10^9 - k copies of pi_0: with
    gamma^(10^9) = 0 its value is T_{pi_k}...T_{pi_1} v_{pi_0}, exactly computable."""
    mdp = nsrl.garnet(20, 2, 2, seed=0)
    h = nsrl.run(nsrl.NSPI(10**9), nsrl.ExactGreedy(mdp), 3, rng=np.random.default_rng(0),
                 keep_outputs=True)
    assert h.memory.tolist() == [10**9] * 3
    out = h.outputs[-1]
    assert len(out.segments) == 4  # pi_3, pi_2, pi_1, then pi_0 once for 10^9 - 3 phases
    v = nsrl.evaluate(mdp, nsrl.constant(0))
    for pi, _ in reversed(out.segments[:3]):
        v = nsrl.q_values(mdp, v)[np.arange(20), pi.actions]
    np.testing.assert_allclose(h.losses[-1], np.mean(nsrl.optimal_value(mdp) - v), atol=1e-9)
