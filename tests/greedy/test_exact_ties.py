"""Above the dense size, the exact greedy step does not depend on which solve came first.

Values there are certified within ``value_tol``, not exact, so two solves of one value (from
other warm starts) differ in their last digits. Where two actions tie exactly, plain argmax
would follow those digits; the exact operators break such ties to the lowest index.
"""

import numpy as np

import nsrl
from nsrl.greedy.model_based import ExactGreedy, tie_broken_argmax


def _tied_model(n=400):
    """From every state: a0 -> state 0, a1 -> state 1, a2 -> state 2; 0, 1, 2 absorbing.

    States 0 and 1 pay 1 forever, state 2 pays 0: a0 and a1 tie exactly everywhere.
    """
    nxt = np.zeros((n, 3, 1), dtype=np.int64)
    nxt[:, 1], nxt[:, 2] = 1, 2
    nxt[:3, :, 0] = np.arange(3)[:, None]  # absorbing
    R = np.zeros((n, 3))
    R[0], R[1] = 1.0, 1.0
    return nsrl.FiniteMDP.from_successors(nxt, np.ones((n, 3, 1)), R, 0.9)


def test_exact_ties_go_to_the_lowest_index_whatever_the_last_digits_of_the_value():
    mdp = _tied_model()
    op = ExactGreedy(mdp)
    assert not op._backend.dense
    v = np.array(op._backend.optimal_value())
    rng = np.random.default_rng(0)
    for _ in range(5):  # two solves differ by up to 2 value_tol
        noisy = v + rng.uniform(-1, 1, v.size) * op._backend.value_tol
        result = op._result(nsrl.constant(), np.full(mdp.n_states, 1 / mdp.n_states), noisy)
        np.testing.assert_array_equal(result.policy.actions[3:], 0)
    # plain argmax follows the digits: the same noise picks a1 wherever v[1] came out larger
    noisy = v.copy()
    noisy[1] += op._backend.value_tol
    assert np.argmax(nsrl.exact.q_values(mdp, noisy), axis=1)[5] == 1


def test_dense_models_keep_plain_argmax():
    mdp = nsrl.garnet(50, 3, 2, seed=0)
    assert ExactGreedy(mdp)._tie == 0.0
    q = np.array([[1.0, 1.0 + 1e-13]])
    assert tie_broken_argmax(q, 0.0)[0] == 1 and tie_broken_argmax(q, 1e-12)[0] == 0
