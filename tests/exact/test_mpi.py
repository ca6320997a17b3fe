"""v* by modified policy iteration against a dense solve, and the honesty of its certificate.

The reference is independent of the backend: brute-force policy iteration on the dense P,
each policy evaluated by ``numpy.linalg.solve`` (the ``dense_v_star`` fixture). Theory says
every certified bound must hold: ``|v - v*|_inf <= bound`` (a recomputed Bellman residual;
MacQueen's midpoint only decides when to certify), so each test checks it against the true
error.
"""

import numpy as np
import pytest

import nsrl
from nsrl.exact import ExactBackend, NotCertifiedError, mpi, operators
from nsrl.exact.mpi import optimal_mpi

MODELS = {
    "garnet b=1": lambda g: nsrl.garnet(150, 4, 1, gamma=g, seed=1),
    "garnet b=2": lambda g: nsrl.garnet(200, 5, 2, gamma=g, seed=2),
    "garnet b=8": lambda g: nsrl.garnet(120, 3, 8, gamma=g, seed=3),
    "gridworld": lambda g: nsrl.gridworld(12, gamma=g, seed=0),
    "mountain car": lambda g: nsrl.mountain_car(12, 12, gamma=g),
}


@pytest.mark.parametrize("gamma", [0.5, 0.99, 0.999])
@pytest.mark.parametrize("name", list(MODELS))
def test_mpi_matches_the_dense_solve_within_its_certified_bound(name, gamma, dense_v_star):
    mdp = MODELS[name](gamma)
    tol = 1e-10 * mdp.r_max / (1 - gamma)
    v, bound, stats = optimal_mpi(mdp, tol)
    error = np.abs(v - dense_v_star(mdp)).max()
    assert 0 < bound <= tol
    assert error <= bound, (error, bound)
    assert stats["greedy"] >= 2  # at least one greedy step and the certifying one


def test_the_krylov_evaluation_gives_the_same_certified_v_star(monkeypatch, dense_v_star):
    mdp = nsrl.mountain_car(12, 12, gamma=0.999)
    tol = 1e-10 * mdp.r_max / (1 - mdp.gamma)
    calls = []
    krylov = mpi._Rows.krylov

    def counted(self, *args):
        calls.append(args[-1])
        return krylov(self, *args)

    monkeypatch.setattr(mpi, "KRYLOV_SETUP", 0.0)  # BiCGSTAB as cheap as can be: always chosen
    monkeypatch.setattr(mpi, "KRYLOV_ITERATION", 1e-9)
    monkeypatch.setattr(mpi._Rows, "krylov", counted)
    v, bound, stats = optimal_mpi(mdp, tol)
    assert calls[0] == mpi.PROBE and len(calls) > 1, calls  # a try, then full solves
    assert stats["krylov"] > 0
    assert np.abs(v - dense_v_star(mdp)).max() <= bound <= tol


def test_a_try_of_bicgstab_that_makes_things_worse_is_undone(monkeypatch, dense_v_star):
    mdp = nsrl.mountain_car(12, 12, gamma=0.999)
    tol = 1e-10 * mdp.r_max / (1 - mdp.gamma)
    seen = []

    def worse(self, gamma, v, span_target, maxiter):
        seen.append(v.copy())
        v += 1e3 * np.sin(np.arange(v.size))  # a try that lands far off
        return maxiter, 1.0, 2.0

    monkeypatch.setattr(mpi, "KRYLOV_SETUP", 0.0)
    monkeypatch.setattr(mpi._Rows, "krylov", worse)
    restored = []
    evaluate = mpi._Chooser.evaluate

    def checked(self, rows, gamma, v, work, target, stable, stats, start=None):
        out = evaluate(self, rows, gamma, v, work, target, stable, stats, start)
        if seen and not restored:
            restored.append(1)
            assert self.krylov_decades is None and self.failed_tries == 1
        return out

    monkeypatch.setattr(mpi._Chooser, "evaluate", checked)
    v, bound, _ = optimal_mpi(mdp, tol)
    assert len(seen) == 1  # tried once: the next try needs a 10x longer evaluation
    assert np.abs(v - dense_v_star(mdp)).max() <= bound <= tol


def test_the_sweeps_leave_t_pi_applied_k_times_in_v_whatever_the_parity():
    from nsrl.exact.sweeps import policy_sweeps

    rng = np.random.default_rng(0)
    n, width, g = 30, 3, 0.9
    nxt = rng.integers(n, size=(n, width))
    p = rng.dirichlet(np.ones(width), size=n)
    r = rng.random(n)
    v0 = rng.random(n)
    for k in (1, 2, 3, 4):
        expected = v0.copy()
        for _ in range(k):
            expected = r + g * (p * expected[nxt]).sum(axis=1)
        v, work = v0.copy(), np.empty(n)
        done, *_ = policy_sweeps(r, nxt, p, g, v, work, -1.0, k)
        assert done == k
        np.testing.assert_allclose(v, expected, rtol=1e-14)


def test_a_loose_tolerance_is_certified_and_honest(dense_v_star):
    mdp = nsrl.garnet(200, 5, 2, seed=4)
    v, bound, _ = optimal_mpi(mdp, 1e-3)
    assert np.abs(v - dense_v_star(mdp)).max() <= bound <= 1e-3


def test_a_warm_start_at_v_star_needs_one_evaluation():
    mdp = nsrl.garnet(200, 5, 2, seed=4)
    tol = 1e-10 / (1 - mdp.gamma)
    v, _, _ = optimal_mpi(mdp, tol)
    _, bound, stats = optimal_mpi(mdp, tol, v0=v)
    assert bound <= tol and stats["greedy"] <= 3


def test_when_rounding_exceeds_the_tolerance_mpi_refuses_rather_than_returns(monkeypatch):
    mdp = nsrl.garnet(200, 5, 2, seed=4)
    monkeypatch.setattr(mpi, "residual_rounding", lambda *_: 1.0)
    with pytest.raises(NotCertifiedError, match="certified error of"):
        optimal_mpi(mdp, 1e-6)


def test_the_backend_uses_mpi_above_the_dense_size_and_reports_its_bound(monkeypatch, dense_v_star):
    mdp = nsrl.garnet(400, 4, 2, seed=0)
    used = []
    monkeypatch.setattr(mpi, "optimal_mpi",
                        lambda *a, **k: used.append(1) or optimal_mpi(*a, **k))
    b = ExactBackend(mdp)
    v = b.optimal_value()
    assert used and not b.dense
    assert np.abs(v - dense_v_star(mdp)).max() <= b.v_star_bound <= b.value_tol


def test_the_span_test_never_stands_in_for_the_certificate():
    # The certificate is gamma (|T w - w| + delta) / (1 - gamma) of the returned v = fl(T w):
    # so |T v - v| <= gamma |T w - w| <= (1 - gamma) bound, up to rounding.
    mdp = nsrl.garnet(300, 6, 3, seed=5)
    v, bound, _ = optimal_mpi(mdp, 1e-6)
    residual = np.abs(operators.q_values(mdp, v).max(axis=1) - v).max()
    assert residual / (1 - mdp.gamma) <= bound + operators.residual_rounding(mdp, v) / (
        1 - mdp.gamma)


def test_a_greedy_step_keeps_the_current_action_on_a_near_tie_and_takes_a_real_improvement():
    from nsrl.exact.sweeps import greedy_step

    # one state, three actions: a0 and a1 tie exactly, a2 is worse by 1e-9
    nxt = np.zeros((1, 3, 1), dtype=np.int64)
    probs = np.ones((1, 3, 1))
    R = np.array([[1.0, 1.0, 1.0 - 1e-9]])
    v, u = np.zeros(1), np.empty(1)
    rows = (np.empty(1), np.empty((1, 1), dtype=np.int64), np.empty((1, 1)))

    def step(current, tie):
        actions = np.array([current])
        _, _, changed, _ = greedy_step(R, nxt, probs, 0.9, v, u, actions, *rows, tie,
                                       np.empty(0, np.float32), False, False, False)
        return int(actions[0]), changed, float(u[0])

    assert step(-1, 0.0) == (0, 1, 1.0)  # no action yet: the lowest-index best
    assert step(1, 0.0) == (1, 0, 1.0)  # an exact tie: kept
    assert step(2, 0.0) == (0, 1, 1.0)  # 1e-9 worse: changed
    assert step(2, 1e-8) == (2, 0, 1.0)  # within the tie: kept, u is still the best q
    assert rows[0][0] == 1.0 - 1e-9  # the kept action's rows are the policy's


def _dense_value(mdp, actions):
    s = np.arange(mdp.n_states)
    P = mdp.P[s, actions]
    return np.linalg.solve(np.eye(mdp.n_states) - mdp.gamma * P, mdp.R[s, actions])


@pytest.mark.parametrize("warm", [False, True])
def test_a_policy_value_by_sweeps_is_within_its_certified_bound_of_a_dense_solve(warm):
    mdp = nsrl.garnet(400, 5, 2, seed=6)
    rng = np.random.default_rng(0)
    tol = 1e-10 * mdp.r_max / (1 - mdp.gamma)
    previous = None
    for _ in range(3):
        actions = rng.integers(mdp.n_actions, size=mdp.n_states)
        out = mpi.policy_value(mdp, actions, tol, v0=previous if warm else None)
        assert out is not None
        v, bound = out
        assert 0 < bound <= tol
        assert np.abs(v - _dense_value(mdp, actions)).max() <= bound
        previous = v


def test_on_a_slow_mixing_chain_the_sweeps_hand_over_and_the_backend_stops_trying(monkeypatch):
    mdp = nsrl.gridworld(20, gamma=0.999, seed=0)  # above the dense size, slow-mixing
    b = ExactBackend(mdp)
    assert not b.dense
    calls = []
    value = mpi.policy_value
    monkeypatch.setattr(mpi, "policy_value", lambda *a, **k: calls.append(1) or value(*a, **k))
    rng = np.random.default_rng(1)
    for _ in range(2):
        actions = rng.integers(mdp.n_actions, size=mdp.n_states)
        v = b.value(nsrl.Deterministic(actions))
        assert np.abs(v - _dense_value(mdp, actions)).max() <= b.value_tol
    assert calls == [1]  # tried once, handed over, not tried again
    assert value(mdp, actions, b.value_tol) is None


def test_the_backend_values_a_fast_mixing_policy_by_sweeps(monkeypatch):
    mdp = nsrl.garnet(500, 4, 2, seed=7)
    b = ExactBackend(mdp)
    calls = []
    value = mpi.policy_value
    monkeypatch.setattr(mpi, "policy_value", lambda *a, **k: calls.append(1) or value(*a, **k))
    actions = np.random.default_rng(2).integers(mdp.n_actions, size=mdp.n_states)
    v = b.value(nsrl.Deterministic(actions))
    assert calls == [1] and b._sweeps_win
    assert np.abs(v - _dense_value(mdp, actions)).max() <= b.value_tol


@pytest.mark.parametrize("gamma", [0.5, 0.99, 0.999])
@pytest.mark.parametrize("name", list(MODELS))
def test_mixed_precision_sweeps_give_v_star_within_the_certified_bound(name, gamma, monkeypatch,
                                                                       dense_v_star):
    # the float32 correction sweeps of large models (mpi.LARGE_STATES), forced here
    monkeypatch.setattr(mpi, "LARGE_STATES", 0)
    monkeypatch.setattr(mpi, "ELIMINATE_MIN_PAIRS", 0)
    low = []  # ... with the float32 greedy steps before the elimination starts
    monkeypatch.setattr(mpi, "_low_precision", lambda m: low.append(1) or mpi._Low(
        m.successors[0].astype(np.int32), m.successors[1].astype(np.float32),
        np.empty(m.n_states, dtype=np.float32)))
    mdp = MODELS[name](gamma)
    tol = 1e-10 * mdp.r_max / (1 - gamma)
    v, bound, stats = optimal_mpi(mdp, tol)
    assert np.abs(v - dense_v_star(mdp)).max() <= bound <= tol
    assert stats["sweeps"] > 0 and low == [1]


def test_mixed_precision_with_the_krylov_evaluations(monkeypatch, dense_v_star):
    monkeypatch.setattr(mpi, "LARGE_STATES", 0)
    monkeypatch.setattr(mpi, "ELIMINATE_MIN_PAIRS", 0)
    monkeypatch.setattr(mpi, "KRYLOV_SETUP", 0.0)
    monkeypatch.setattr(mpi, "KRYLOV_ITERATION", 1e-9)
    mdp = nsrl.mountain_car(12, 12, gamma=0.999)
    tol = 1e-10 * mdp.r_max / (1 - mdp.gamma)
    v, bound, stats = optimal_mpi(mdp, tol)
    assert stats["krylov"] > 0
    assert np.abs(v - dense_v_star(mdp)).max() <= bound <= tol


def _dense_q_star(mdp, v_star):
    return mdp.R + mdp.gamma * mdp.P @ v_star


@pytest.mark.parametrize("name", ["garnet b=2", "garnet b=8", "gridworld", "mountain car"])
def test_macqueen_elimination_drops_only_suboptimal_actions(name, monkeypatch, dense_v_star):
    mdp = MODELS[name](0.99)
    kept = []
    eliminate = mpi._eliminate

    def recorded(live, gaps, threshold):
        out = eliminate(live, gaps, threshold)
        kept.append((out.ptr.copy(), out.act.copy()))
        return out

    monkeypatch.setattr(mpi, "_eliminate", recorded)
    monkeypatch.setattr(mpi, "ELIMINATE_MIN_PAIRS", 0)  # large models only, forced here
    tol = 1e-10 * mdp.r_max / (1 - mdp.gamma)
    v, bound, stats = optimal_mpi(mdp, tol)
    v_star = dense_v_star(mdp)
    assert np.abs(v - v_star).max() <= bound <= tol
    q = _dense_q_star(mdp, v_star)
    ptr, act = kept[-1]
    assert act.size and stats["eliminated"] == mdp.n_states * mdp.n_actions - act.size > 0
    alive = np.zeros(q.shape, dtype=bool)
    alive[np.repeat(np.arange(mdp.n_states), np.diff(ptr)), act] = True
    # every optimal action survives; every dropped one is worse than v* by more than rounding
    optimal = q >= v_star[:, None] - 1e-9 * mdp.r_max / (1 - mdp.gamma)
    assert alive[optimal].all()
    assert (q[~alive] < v_star[np.nonzero(~alive)[0]]).all()


def test_exact_ties_survive_the_elimination(monkeypatch, dense_v_star):
    monkeypatch.setattr(mpi, "ELIMINATE_MIN_PAIRS", 0)
    # every action twice: each pair ties exactly, so neither copy of an optimal one may go
    base = nsrl.garnet(100, 4, 2, gamma=0.99, seed=5)
    nxt, probs = base.successors
    mdp = nsrl.FiniteMDP.from_successors(np.concatenate([nxt, nxt], axis=1),
                                         np.concatenate([probs, probs], axis=1),
                                         np.concatenate([base.R, base.R], axis=1), 0.99)
    tol = 1e-10 * mdp.r_max / (1 - mdp.gamma)
    v, bound, stats = optimal_mpi(mdp, tol)
    assert np.abs(v - dense_v_star(base)).max() <= bound
    assert stats["eliminated"] % 2 == 0  # copies go together (their gaps are equal)


@pytest.mark.parametrize("apart", [False, True])
def test_the_rows_kernel_equals_the_full_kernel_on_every_action(apart):
    from nsrl.exact.sweeps import greedy_rows, greedy_step, policy_rows, policy_rows_of

    mdp = nsrl.garnet(300, 6, 3, seed=4)
    (nxt, probs), R = mdp.successors, mdp.R
    every = mpi._every_action(mdp)
    full = mpi._ActionRows(*mpi.keep_rows(*every, np.zeros(R.size, np.float32), np.inf, R.size))
    v = np.random.default_rng(0).normal(size=mdp.n_states)
    out = []
    for rows_of in (None, full):
        u, actions = np.empty(mdp.n_states), np.full(mdp.n_states, 2, dtype=np.int64)
        rows = mpi._Rows(mdp.n_states, nxt.shape[2])
        gaps = np.empty(R.size, np.float32)
        args = (mdp.gamma, v, u, actions, rows.r, rows.nxt, rows.p, 1e-3, gaps, True)
        res = (greedy_step(R, nxt, probs, *args, True, apart) if rows_of is None
               else greedy_rows(*rows_of, *args, apart))
        if apart:  # the caller copies the policy's rows
            if rows_of is None:
                policy_rows(R, nxt, probs, actions, rows.r, rows.nxt, rows.p)
            else:
                policy_rows_of(*rows_of, actions, rows.r, rows.nxt, rows.p)
        out.append((res, u, actions, rows.r, rows.nxt, rows.p, gaps))
    for a, b in zip(*out, strict=True):
        assert np.array_equal(a, b)


def test_values_beyond_float32_keep_to_float64(monkeypatch, dense_v_star):
    # values of scale 1e39 overflow float32 (3.4e38): the float32 paths must stand aside
    monkeypatch.setattr(mpi, "LARGE_STATES", 0)
    monkeypatch.setattr(mpi, "ELIMINATE_MIN_PAIRS", 0)
    base = nsrl.garnet(150, 4, 2, gamma=0.99, seed=1)
    mdp = nsrl.FiniteMDP.from_successors(*base.successors, base.R * 1e37, 0.99)
    assert mpi._low_precision(mdp) is None
    tol = 1e-10 * mdp.r_max / (1 - mdp.gamma)
    v, bound, _ = optimal_mpi(mdp, tol)
    assert np.abs(v - dense_v_star(mdp)).max() <= bound <= tol


def test_short_memory_skips_the_optional_copies(monkeypatch, dense_v_star):
    # the rows left by the elimination and the float32 copies are optimisations: with too
    # little memory for them the solve goes on without them (it used to raise)
    monkeypatch.setattr(mpi, "LARGE_STATES", 0)
    monkeypatch.setattr(mpi, "ELIMINATE_MIN_PAIRS", 0)
    monkeypatch.setattr(mpi, "available_memory", lambda: 1000)
    mdp = MODELS["garnet b=2"](0.99)
    assert mpi._low_precision(mdp) is None
    tol = 1e-10 * mdp.r_max / (1 - mdp.gamma)
    v, bound, stats = optimal_mpi(mdp, tol)
    assert np.abs(v - dense_v_star(mdp)).max() <= bound <= tol
    assert stats["eliminated"] == 0  # none dropped from the greedy steps without the copy
