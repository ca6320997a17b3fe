"""LSTD-Q: exact on exhaustive transitions, consistent from samples, for every target kind;
textbook LSPI on a fixed batch; sample reuse; runs without reset-to-state."""

import gc
import weakref

import gymnasium as gym
import numpy as np
import pytest
import scipy.sparse as sp
from fixtures import CountingEnv, policies

import nsrl
from nsrl.envs import FiniteMDPVectorEnv
from nsrl.greedy import LSTDQ, TransitionStore
from nsrl.greedy.feature_maps import TileCoding
from nsrl.greedy.lstd_system import DenseSystem, IndexSystem
from nsrl.greedy.sampling import Transitions, action_probs
from nsrl.greedy.transitions import take
from nsrl.policies import action_table


def exhaustive(mdp):
    """Every (s, a, s') with P > 0, weighted by P(s' | s, a): the expected LSTD system."""
    s, a, t = np.nonzero(mdp.P > 0)
    data = Transitions(s, s, a, mdp.R[s, a], t, t, np.zeros(len(s), dtype=bool))
    return data, mdp.P[s, a, t]


def action_reward_mdp():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(7), size=(7, 3))
    return nsrl.FiniteMDP(P, rng.uniform(size=(7, 3)), gamma=0.85)


@pytest.mark.parametrize("kind", ["deterministic", "mixture", "loop", "finite", "empty"])
@pytest.mark.parametrize("which", ["state reward", "action reward"])
def test_exhaustive_one_hot_lstdq_is_exact(kind, which):
    mdp = nsrl.garnet(9, 3, 2, gamma=0.9, seed=2) if which == "state reward" else \
        action_reward_mdp()
    target = policies(mdp, seed=4)[kind]
    op = LSTDQ(FiniteMDPVectorEnv(mdp), budget=10, features="onehot", ridge=0.0)
    data, weights = exhaustive(mdp)
    theta = op.solve(target, data, np.random.default_rng(0), weights=weights)
    q = nsrl.q_values(mdp, nsrl.evaluate(mdp, target))
    np.testing.assert_allclose(theta.T, q, rtol=0, atol=1e-9)


@pytest.fixture(scope="module")
def walk():
    """10^6 transitions of uniform walks on a small Garnet, drawn once."""
    mdp = nsrl.garnet(10, 3, 2, gamma=0.9, seed=1)
    op = LSTDQ(FiniteMDPVectorEnv(mdp), budget=1, features="onehot", reuse=False)
    return mdp, op, op.sampler.transitions(10**6, np.random.default_rng(0))


@pytest.mark.parametrize("kind", ["deterministic", "mixture", "loop", "finite"])
def test_q_error_vanishes_as_transitions_grow(walk, kind):
    # The ridge is worth a fixed number of transitions: its bias vanishes with the data,
    # and the error falls like 1 / sqrt(n) (100x the data: about 10x smaller).
    mdp, op, data = walk
    target = policies(mdp, seed=4)[kind]
    q = nsrl.q_values(mdp, nsrl.evaluate(mdp, target))
    rng = np.random.default_rng(0)
    errors = [np.abs(op.solve(target, take(data, slice(0, n)), rng).T - q).max()
              for n in (10**4, 10**5, 10**6)]
    assert errors[0] > errors[1] > errors[2], errors
    assert errors[2] < errors[0] / 5, errors


@pytest.mark.parametrize("kind", ["deterministic", "mixture", "loop", "finite", "empty"])
@pytest.mark.parametrize("table", ["onehot", "phi", "sparse tiles"])
def test_count_statistics_equal_per_transition_statistics(kind, table):
    # The index path (counts N(x, a, x')) and the dense path (one feature row per
    # transition) build the same LSTD-Q system; a scipy.sparse table (tile coding) takes
    # the index path's sparse branch.
    mdp = nsrl.garnet(9, 3, 2, n_features=4, gamma=0.9, seed=2)
    target = policies(mdp, seed=4)[kind]
    phi = np.eye(9) if table == "onehot" else mdp.features
    features = phi
    if table == "sparse tiles":  # 2 tilings of 2 x 2 tiles of 2-d coordinates
        coords = np.random.default_rng(3).random((9, 2))
        features = TileCoding(n_tiles=2, n_tilings=2, sparse_output=True).fit_transform(coords)
        phi = features.toarray()
    op = LSTDQ(FiniteMDPVectorEnv(mdp), budget=1, features=features, reuse=False)
    rng = np.random.default_rng(0)
    data = op.sampler.transitions(3000, rng)
    data.done[::50] = True  # terminations: nothing bootstrapped after them

    def probs(pi):
        return action_probs(op.sampler, pi, data.next_states, data.next_obs, rng)
    dense = DenseSystem(phi[data.obs], phi[data.next_obs], data, None, 3, probs)
    np.testing.assert_allclose(op.solve(target, data, rng), op._theta(target, dense),
                               rtol=1e-9, atol=1e-9)


def textbook_lspi(data, n_states, n_actions, gamma, delta, iterations):
    """LSPI (Lagoudakis & Parr 2003, LSTDQ with A = delta I), tabular, from pi_0 = action 0."""
    d, pi, out = n_states * n_actions, np.zeros(n_states, dtype=int), []
    for _ in range(iterations):
        A, b = delta * np.eye(d), np.zeros(d)
        for s, a, r, t in zip(data.states, data.actions, data.rewards, data.next_states,
                              strict=True):
            A[a * n_states + s, a * n_states + s] += 1.0
            A[a * n_states + s, pi[t] * n_states + t] -= gamma
            b[a * n_states + s] += r
        q = np.linalg.solve(A, b).reshape(n_actions, n_states).T
        pi = q.argmax(axis=1)
        out.append(q)
    return out


def test_api_on_one_fixed_batch_is_textbook_lspi():
    mdp = nsrl.garnet(8, 3, 2, gamma=0.9, seed=5)
    env = FiniteMDPVectorEnv(mdp)
    data = LSTDQ(env, budget=1, reuse=False).sampler.transitions(2000, np.random.default_rng(1))
    store = TransitionStore(2000)
    store.add(data)
    assert np.all(store.index_counts(8, 3).visits > 0)  # every pair has data
    op = LSTDQ(env, budget=0, features="onehot", ridge=0.5, store=store)
    h = nsrl.run(nsrl.API(), op, 6, rng=np.random.default_rng(0), keep_outputs=True)
    assert h.samples.tolist() == [0] * 6 and len(store) == 2000
    for pi, q in zip(h.outputs, textbook_lspi(data, 8, 3, 0.9, 0.5, 6), strict=True):
        np.testing.assert_allclose(pi.q, q, rtol=1e-10, atol=1e-10)
        np.testing.assert_array_equal(pi.actions, q.argmax(axis=1))


@pytest.mark.parametrize("observation", ["index", "features"])
def test_reuse_solves_from_every_stored_transition(observation):
    # index: running counts, Phi table; features: running Gram, features of the observations
    mdp = nsrl.garnet(12, 3, 2, seed=0)
    env = CountingEnv(FiniteMDPVectorEnv(mdp, observation=observation))
    op = LSTDQ(env, budget=700, store=1000)
    h = nsrl.run(nsrl.PSDP(), op, 3, rng=np.random.default_rng(0), keep_outputs=True)
    assert h.samples.tolist() == [700, 1400, 2100] and env.count == 2100  # new ones only
    assert len(op.store) == 1000 and op.store.added == 2100  # FIFO: the last 1000
    # the last call's estimate is LSTD-Q on the stored transitions (default features: Phi)
    target = nsrl.NonStationary(h.outputs[1].policies, loop=False)  # sigma_2, its target
    theta = op.solve(target, op.store.transitions(), np.random.default_rng(0))
    greedy = h.outputs[2].policies[0]
    if observation == "index":
        np.testing.assert_allclose(greedy.q, mdp.features @ theta.T, atol=1e-9)
    else:
        np.testing.assert_allclose([r.theta for r in greedy.regressors], theta, atol=1e-9)


def test_an_action_without_data_is_not_chosen():
    # Negative rewards: the ridge's Q = 0 of a pair never tried would beat every tried one.
    P = np.zeros((2, 2, 2))
    P[:, :, 0] = 1.0
    mdp = nsrl.FiniteMDP(P, -np.ones((2, 2)), gamma=0.5)
    s = np.array([0, 0, 1, 1])
    a = np.array([0, 0, 0, 1])  # action 1 never tried in state 0
    data = Transitions(s, s, a, -np.ones(4), np.zeros(4, int), np.zeros(4, int),
                       np.zeros(4, bool))
    store = TransitionStore(4)
    store.add(data)
    op = LSTDQ(FiniteMDPVectorEnv(mdp), budget=0, features="onehot", store=store)
    g = op.greedy(nsrl.constant(0), nsrl.Nu(), np.random.default_rng(0))
    assert g.policy.q[0, 1] == 0.0 and g.policy.q[0, 0] < 0  # not identified vs. estimated
    assert g.policy.actions[0] == 0


def test_lstd_value_estimates_nu_v_without_new_transitions():
    mdp = nsrl.garnet(10, 3, 2, gamma=0.9, seed=1)
    env = CountingEnv(FiniteMDPVectorEnv(mdp))
    op = LSTDQ(env, budget=100_000, features="onehot")
    rng = np.random.default_rng(0)
    g = op.greedy(nsrl.constant(0), nsrl.Nu(), rng)
    pi = nsrl.Mixture([(0.6, nsrl.constant(0)), (0.4, g.policy)])
    exact = mdp.start @ nsrl.evaluate(mdp, pi)
    assert abs(op.value(pi, rng) - exact) < 0.1  # Q error ~0.05, nu_hat from 10^4 resets
    assert env.count == op.samples_used == 100_000  # resets are not transitions
    mc = LSTDQ(env, budget=1000, features="onehot", value_estimate="rollouts", value_rollouts=50)
    mc.value(pi, rng)
    assert mc.samples_used > 0


def test_lstdq_from_samples_approaches_the_exact_greedy_policy():
    mdp = nsrl.garnet(10, 2, 2, gamma=0.8, seed=1)
    env = CountingEnv(FiniteMDPVectorEnv(mdp))
    pi = nsrl.constant(0)
    q = nsrl.q_values(mdp, nsrl.evaluate(mdp, pi))
    op = LSTDQ(env, budget=40_000, features="onehot", ridge=1e-8)
    g = op.greedy(pi, nsrl.Nu(), np.random.default_rng(0))
    assert g.samples == env.count == 40_000
    chosen = q[np.arange(10), action_table(g.policy, mdp)]
    gap = mdp.start @ (q.max(axis=1) - chosen)
    assert gap < 0.1 * mdp.start @ np.abs(q[:, 1] - q[:, 0])
    assert abs(g.advantage - mdp.start @ (chosen - q[:, 0])) < 0.1


def test_every_scheme_runs_with_lstdq():
    mdp = nsrl.garnet(20, 3, 2, seed=0)
    env = CountingEnv(FiniteMDPVectorEnv(mdp))
    op = LSTDQ(env, budget=500, value_rollouts=5)
    for name in ("api", "api(0.1)", "cpi", "cpi(0.1)", "cpi+", "psdp", "nspi(3)"):
        h = nsrl.run(nsrl.make_scheme(name), op, 3, rng=np.random.default_rng(0))
        assert np.all(np.isfinite(h.losses)), name
    assert op.samples_used == env.count


class NoResetToState(gym.Wrapper):
    """An env that refuses reset(options=...): LSTD-Q must not need it."""

    def reset(self, *, seed=None, options=None):
        if options:
            raise AssertionError("LSTD-Q asked for reset-to-state")
        return self.env.reset(seed=seed)


def test_runs_on_envs_without_reset_to_state():
    lake = NoResetToState(gym.make("FrozenLake-v1", is_slippery=True))
    op = LSTDQ(lake, budget=300, gamma=0.9)
    h = nsrl.run(nsrl.NSPI(2), op, 2, rng=np.random.default_rng(0))
    assert h.samples.tolist() == [300, 600] and np.all(np.isnan(h.losses))
    pole = NoResetToState(gym.make("CartPole-v1"))
    op = LSTDQ(pole, budget=200, gamma=0.95, value_rollouts=3)
    g = op.greedy(nsrl.constant(0), nsrl.Nu(), np.random.default_rng(0))
    assert g.policy.act(np.zeros((5, 4))).shape == (5,)
    assert op.value(g.policy, np.random.default_rng(0)) > 0


def test_refusals():
    env = FiniteMDPVectorEnv(nsrl.garnet(5, 2, 2, seed=0))
    with pytest.raises(ValueError, match="budget"):
        LSTDQ(env, budget=-1)
    with pytest.raises(ValueError, match="budget=0 draws no data"):
        LSTDQ(env, budget=0, reuse=False)
    with pytest.raises(ValueError, match="store alone, which is empty"):
        LSTDQ(env, budget=0)
    with pytest.raises(ValueError, match="below one call's budget=500"):
        LSTDQ(env, budget=500, store=100)
    with pytest.raises(ValueError, match="below one call's budget"):
        LSTDQ(env, budget=500, store=TransitionStore(100))
    with pytest.raises(ValueError, match="only used with reuse=True"):
        LSTDQ(env, budget=5, reuse=False, store=100)
    with pytest.raises(ValueError, match=r"ridge >= 0 \(or None\)"):
        LSTDQ(env, budget=5, ridge=-1.0)
    with pytest.raises(ValueError, match="value_estimate='rollouts'"):
        LSTDQ(env, budget=5, reuse=False, value_estimate="lstd")
    with pytest.raises(ValueError, match="'auto', 'lstd' or 'rollouts'"):
        LSTDQ(env, budget=5, value_estimate="exact")
    op = LSTDQ(env, budget=5)
    with pytest.raises(TypeError, match="Mixture and nsrl.NonStationary"):
        op.greedy(np.zeros(5), nsrl.Nu(), np.random.default_rng(0))
    bare = LSTDQ(env, budget=3, features="onehot", ridge=0.0, reuse=False)
    with pytest.raises(ValueError, match="use ridge > 0"):  # 3 transitions: pairs without data
        bare.greedy(nsrl.constant(0), nsrl.Nu(), np.random.default_rng(0))
    with pytest.raises(ValueError, match="gamma"):
        LSTDQ(gym.make("CartPole-v1"), budget=10)
    with pytest.raises(ValueError, match="needs state-index"):
        LSTDQ(gym.make("CartPole-v1"), budget=10, gamma=0.9, features="onehot")
    # the registry's ridge option reaches LSTD-Q, and a negative one is refused
    mdp = nsrl.garnet(5, 2, 2, seed=0)
    assert nsrl.make_operator("lstdq", mdp, budget=5, ridge=0.5).ridge == 0.5
    with pytest.raises(ValueError, match="ridge"):
        nsrl.make_operator("lstdq", mdp, budget=5, ridge=-1.0)


@pytest.mark.parametrize("value", ["lstd", "rollouts"])
def test_same_seeds_same_policies(value):
    mdp = nsrl.garnet(15, 3, 2, seed=0)

    def once(seed):
        op = LSTDQ(FiniteMDPVectorEnv(mdp), budget=600, features="onehot",
                   value_estimate=value, value_rollouts=4)
        h = nsrl.run(nsrl.CPIPlus(), op, 3, rng=np.random.default_rng(seed), keep_outputs=True)
        return h.losses, h.samples

    a, b, c = once(3), once(3), once(4)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


def test_sparse_tile_coding_psdp_approaches_exact_psdp_as_data_grow():
    # The path of benchmarks/study_bigger_grid_target.py at a small size: LSTD-Q on a
    # scipy.sparse tile-coding table (its sparse branch and default ridge), PSDP on a grid
    # world. Tiles fine enough to tell every cell apart make LSTD-Q consistent, so PSDP's
    # loss curve approaches the exact operator's as the transitions per call grow.
    from nsrl.greedy.feature_maps import make_feature_map

    mdp = nsrl.gridworld(20, gamma=0.95, seed=0)
    tiles = make_feature_map("tiles", 1600, 2).set_params(sparse_output=True)
    phi = tiles.fit_transform(mdp.features)
    exact = nsrl.run("psdp", "exact", 20, rng=np.random.default_rng(0), mdp=mdp).losses
    gaps = []
    for budget in (2000, 200_000):
        op = LSTDQ(FiniteMDPVectorEnv(mdp), budget=budget, features=phi)
        assert op.ridge == 1e-3  # a sparse table gets the one-hot default
        losses = nsrl.run("psdp", op, 20, rng=np.random.default_rng(0), mdp=mdp).losses
        gaps.append(np.abs(losses - exact).max() / nsrl.loss(mdp, nsrl.constant()))
    assert gaps[1] < gaps[0] / 10 and gaps[1] < 0.01, gaps


def test_a_sparse_identity_table_takes_the_one_hot_path():
    # The grid-target study's `cells` feature map: one indicator per state as scipy.sparse
    mdp = nsrl.garnet(9, 3, 2, gamma=0.9, seed=2)
    env = FiniteMDPVectorEnv(mdp)
    data, weights = exhaustive(mdp)
    target = policies(mdp, seed=4)["finite"]
    thetas = []
    for features in ("onehot", sp.identity(9, format="csr")):
        op = LSTDQ(env, budget=10, features=features)
        system = op._system(data, np.random.default_rng(0), weights)
        assert system.one_hot and not system.sparse
        thetas.append(op.solve(target, data, np.random.default_rng(0), weights=weights))
    np.testing.assert_array_equal(thetas[0], thetas[1])


def _grid_tiles(multires):
    """A 12 x 12 grid world with tile coding (4 tilings) or the multi-resolution map of
    benchmarks/bench_lstdq_call.py at a small size (the cells plus 4 tilings)."""
    from nsrl.greedy.feature_maps import make_feature_map

    mdp = nsrl.gridworld(12, gamma=0.99, seed=0)
    tiles = make_feature_map("tiles", 100, 2).set_params(sparse_output=True) \
        .fit_transform(mdp.features)
    if multires:
        tiles = sp.hstack([sp.identity(mdp.n_states, format="csr"), tiles], format="csr")
    return mdp, tiles


@pytest.mark.parametrize("kind", ["deterministic", "mixture", "loop", "finite", "empty"])
@pytest.mark.parametrize("multires", [False, True], ids=["tiles", "multi-resolution"])
def test_sparse_orderings_solve_the_same_system(kind, multires):
    # Every SuperLU column ordering is an exact LU of the same sparse system: the option
    # (MMD on A^T A) equals the default (COLAMD) to 1e-8 relative, for every target
    # kind, on tile coding and on the multi-resolution map (cells + tilings, whose columns
    # are linearly dependent: only the ridge makes its system regular).
    mdp, phi = _grid_tiles(multires)
    env = FiniteMDPVectorEnv(mdp)
    data = LSTDQ(env, budget=1, features=phi, reuse=False).sampler.transitions(
        3000, np.random.default_rng(0))
    target = policies(mdp, seed=4)[kind]
    thetas = {}
    for ordering in ("COLAMD", "MMD_ATA", "MMD_AT_PLUS_A"):
        op = LSTDQ(env, budget=1, features=phi, reuse=False, sparse_ordering=ordering)
        assert op._system(data, np.random.default_rng(0)).sparse
        thetas[ordering] = op.solve(target, data, np.random.default_rng(0))
    ref = thetas["COLAMD"]
    assert np.all(np.isfinite(ref)) and np.abs(ref).max() > 0
    for ordering, theta in thetas.items():
        assert np.linalg.norm(theta - ref) <= 1e-8 * np.linalg.norm(ref), ordering


def test_the_default_ordering_is_colamd_and_a_wrong_one_is_refused():
    mdp, phi = _grid_tiles(False)
    env = FiniteMDPVectorEnv(mdp)
    assert LSTDQ(env, budget=10, features=phi).sparse_ordering == "COLAMD"
    with pytest.raises(ValueError, match="sparse_ordering should be one of"):
        LSTDQ(env, budget=10, features=phi, sparse_ordering="AMD")


def test_the_store_system_is_kept_while_the_store_is_unchanged():
    # CPI+'s value estimates reuse the greedy call's LSTD statistics: the same system object
    # while no transition is added, a new one after an add or a clear, and the same values
    # as a system built afresh.
    mdp, phi = _grid_tiles(False)
    op = LSTDQ(FiniteMDPVectorEnv(mdp), budget=500, features=phi)
    rng = np.random.default_rng(0)
    nsrl.run("cpi+", op, 3, rng=rng, mdp=mdp)
    first = op._system(None, rng)
    assert op._system(None, rng) is first
    fresh = IndexSystem(op._stored.index_counts(mdp.n_states, mdp.n_actions), op._table,
                        op._row_probs(rng))
    np.testing.assert_array_equal(op._theta(nsrl.constant(), first),
                                  op._theta(nsrl.constant(), fresh))
    op.store.add(op.sampler.transitions(10, rng))
    assert op._system(None, rng) is not first
    added = op.store.added
    op.store.clear()
    op.store.add(op.sampler.transitions(added, rng))
    assert op.store.added == added and op._system(None, rng) is not first


def _dense_systems(seed=2):
    """An IndexSystem on a dense Phi table and a DenseSystem of the same 3000 transitions
    (terminations included), each with a factory of fresh copies (nothing kept)."""
    mdp = nsrl.garnet(30, 3, 2, n_features=5, gamma=0.9, seed=seed)
    op = LSTDQ(FiniteMDPVectorEnv(mdp), budget=1, features=mdp.features, reuse=False)
    rng = np.random.default_rng(0)
    data = op.sampler.transitions(3000, rng)
    data.done[::50] = True
    phi = mdp.features

    def probs(pi):
        return action_probs(op.sampler, pi, data.next_states, data.next_obs, rng)

    def index():
        return op._system(data, rng)

    def dense():
        return DenseSystem(phi[data.obs], phi[data.next_obs], data, None, 3, probs)
    return mdp, data, {"index": index, "dense": dense}


def _near(pi, states):
    """pi with another action at ``states``: a policy that differs at exactly those states."""
    table = np.array(pi.actions)
    table[states] = (table[states] + 1) % 3
    return nsrl.Deterministic(table)


@pytest.mark.parametrize("kind", ["index", "dense"])
def test_kept_cross_products_equal_products_from_scratch(kind):
    # X_pi is linear in pi's table: the memo derives X of a policy from a kept one by the
    # rows where they differ, and CPI+'s folded candidates from X_pi and X_new. Each must
    # equal X computed from scratch on a fresh system, and a close policy must cost only
    # its changed rows.
    mdp, data, make = _dense_systems()
    p0 = nsrl.Deterministic(np.random.default_rng(5).integers(0, 3, mdp.n_states))
    p1 = _near(p0, [1, 4, 9])
    p2 = _near(p1, [20])
    mix = nsrl.Mixture([(0.6, p0), (0.4, p2)])
    fold = nsrl.Mixture.fold
    sequence = [p0, p1, p2, p0, mix, fold(mix, p1, 0.25), fold(mix, p1, 0.5), fold(p0, p2, 0.3)]
    system = make[kind]()
    rows, add = [], system._add_cross

    def counted(out, weights):  # the rows (next states or transitions) each product reads
        rows.append(int(np.count_nonzero(np.any(weights, axis=1))))
        add(out, weights)
    system._add_cross = counted  # what the system passes its memo at each call
    for pi in sequence:
        np.testing.assert_allclose(system.cross(pi), make[kind]().cross(pi), rtol=1e-12,
                                   atol=1e-12)
    # p0 from scratch (every row it reaches), p1 and p2 by their changed next states only
    # (the dense system: the transitions into them), p0 kept, mix from scratch, both
    # candidates folded from mix's X and p1's kept X: nothing more; fold(p0, p2): none
    assert len(rows) == 4, rows
    live = ~np.asarray(data.done)
    into = [int(np.count_nonzero(live & np.isin(data.next_states, s))) for s in ([1, 4, 9], [20])]
    assert rows[1:3] == ([3, 1] if kind == "index" else into), (rows, into)
    assert system.cross(p0) is system.cross(p0)  # kept: returned again, not recomputed
    assert not system.cross(p0).flags.writeable


@pytest.mark.parametrize("kind", ["index", "dense"])
@pytest.mark.parametrize("policy", ["deterministic", "mixture"])
def test_the_matrix_free_product_equals_the_matrix_product(kind, policy):
    # PSDP's backward regressions need X_pi theta only: O(n A p) without forming X_pi.
    mdp, _, make = _dense_systems(seed=3)
    pi = policies(mdp, seed=4)[policy]
    system = make[kind]()
    theta = np.random.default_rng(1).normal(size=system.d)
    np.testing.assert_allclose(system.cross_mv(pi, theta), system.cross(pi) @ theta,
                               rtol=1e-11, atol=1e-11)


def test_the_memo_keeps_what_its_memory_allows(monkeypatch):
    # Each kept pair holds a copy of the weights (n, A): a dense system of 10^6 transitions
    # keeps fewer of them than an index system of a few thousand states.
    import nsrl.greedy.lstd_system as ls
    mdp, _, make = _dense_systems()
    system = make["dense"]()
    rng = np.random.default_rng(0)
    pis = [nsrl.Deterministic(rng.integers(0, 3, mdp.n_states)) for _ in range(10)]
    for pi in pis:
        system.cross(pi)
    assert len(system._memo.kept) == 8  # the default count: these weights are small
    weights, x = system._memo.kept[-1]
    monkeypatch.setattr(ls, "MEMO_BYTES", 3 * (weights.nbytes + x.nbytes))
    system = make["dense"]()
    for pi in pis:
        system.cross(pi)
    assert len(system._memo.kept) == 3
    monkeypatch.setattr(ls, "MEMO_BYTES", 1)
    system = make["dense"]()
    for pi in pis:
        system.cross(pi)
    assert len(system._memo.kept) == 2  # never fewer than the latest two


@pytest.mark.parametrize("kind", ["deterministic", "mixture"])
def test_an_index_system_of_few_transitions_equals_the_per_transition_system(kind):
    # A call's transitions visit few pairs and reach few next states (10^5 transitions on
    # the 10^5-state car: ~5% per action): the dense index system runs its products over
    # those only. G, b, X_pi, X_pi theta and the solution must equal the per-transition
    # system's, which has no such shortcut.
    mdp = nsrl.garnet(300, 3, 2, n_features=6, gamma=0.9, seed=8)
    op = LSTDQ(FiniteMDPVectorEnv(mdp), budget=1, features=mdp.features, reuse=False)
    rng = np.random.default_rng(0)
    data = op.sampler.transitions(120, rng)
    data.done[::7] = True
    phi, target = mdp.features, policies(mdp, seed=4)[kind]

    def probs(pi):
        return action_probs(op.sampler, pi, data.next_states, data.next_obs, rng)
    index = op._system(data, rng)
    dense = DenseSystem(phi[data.obs], phi[data.next_obs], data, None, 3, probs)
    assert 0 < len(index.support) < mdp.n_states / 2  # the shortcut is taken
    np.testing.assert_allclose(index.gram, dense.gram, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(index.b, dense.b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(index.cross(target), dense.cross(target), rtol=1e-12,
                               atol=1e-12)
    theta = np.random.default_rng(1).normal(size=index.d)
    np.testing.assert_allclose(index.cross_mv(target, theta), dense.cross(target) @ theta,
                               rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(op.solve(target, data, rng), op._theta(target, dense),
                               rtol=1e-9, atol=1e-9)


def test_a_system_is_freed_when_dropped_not_at_the_cyclic_collector_s_leisure():
    # Each system of a call (hundreds of MB at 10^5 states) must go as soon as the call
    # drops it. A memo that kept its system's bound method made a reference cycle, and a
    # 10^5-state LSTD-Q shard grew by ~300 MB per call until the cyclic collector ran
    # (12 GB at 100 iterations, killed by the OOM killer).
    mdp = nsrl.garnet(60, 3, 2, n_features=6, gamma=0.9, seed=8)
    op = LSTDQ(FiniteMDPVectorEnv(mdp), budget=1, features=mdp.features, reuse=False)
    rng = np.random.default_rng(0)
    data = op.sampler.transitions(200, rng)
    target = policies(mdp, seed=4)["deterministic"]

    def probs(pi):
        return action_probs(op.sampler, pi, data.next_states, data.next_obs, rng)
    makers = [lambda: op._system(data, rng),  # the dense index system, and the other
              lambda: DenseSystem(mdp.features[data.obs], mdp.features[data.next_obs], data,
                                  None, 3, probs)]
    gc.disable()
    try:
        for make in makers:
            system = make()
            system.cross(target)  # fills its memo
            assert system._memo.kept
            ref = weakref.ref(system)
            del system
            assert ref() is None  # freed by reference counting, no collector needed
    finally:
        gc.enable()


@pytest.mark.parametrize("kind", ["deterministic", "mixture", "loop", "finite"])
def test_running_sparse_sums_equal_the_from_scratch_products_bit_for_bit(kind):
    # Issue 46: with a store and a sparse integer table (tile coding), the products Phi^T
    # diag N_a Phi and Phi^T N_a are running sums the store updates at each add and
    # eviction. Their sums are integers: equal to the products formed from the counts
    # afresh, bit for bit and pattern for pattern, after evictions too (a store of 2500
    # transitions, 4 calls of 1000), and so are the weights and the greedy policy.
    mdp, phi = _grid_tiles(False)
    env = FiniteMDPVectorEnv(mdp)
    op = LSTDQ(env, budget=1000, features=phi, store=2500)
    rng = np.random.default_rng(0)
    target = policies(mdp, seed=4)[kind]
    for _ in range(4):
        out = op.greedy(target, nsrl.Nu(), rng)
        system = op._system(None, rng)
        assert system.sums is not None  # the running path
        counts = op.store.index_counts(mdp.n_states, mdp.n_actions)
        fresh = IndexSystem(counts, phi, system.probs)
        for ours, theirs in [(system.gram, fresh.gram), *zip(system._left, fresh._left,
                                                            strict=True)]:
            ours, theirs = ours.tocsr(), theirs.tocsr()
            ours.sort_indices()
            theirs.sort_indices()
            np.testing.assert_array_equal(ours.indptr, theirs.indptr)
            np.testing.assert_array_equal(ours.indices, theirs.indices)
            np.testing.assert_array_equal(ours.data, theirs.data)
        np.testing.assert_array_equal(system.b, fresh.b)
        theta = op._theta(target, system)
        np.testing.assert_array_equal(theta, op._theta(target, fresh))
        q = phi @ theta.T
        if kind != "loop":
            np.testing.assert_array_equal(out.policy.q, q)
    assert op.store.added == 4000 and len(op.store) == 2500


def test_running_sparse_sums_are_kept_for_integer_tables_only():
    # A table of non-integer entries would sum in another order than the from-scratch
    # products (other rounding): its store system is formed from the counts, as before.
    mdp, phi = _grid_tiles(False)
    env = FiniteMDPVectorEnv(mdp)
    rng = np.random.default_rng(0)
    for table, running in ((phi, True), (phi * 0.3, False)):
        op = LSTDQ(env, budget=500, features=table)
        op.greedy(nsrl.constant(), nsrl.Nu(), rng)
        assert (op._system(None, rng).sums is not None) is running
