"""SoftmaxCSC: scikit-learn's multinomial logistic objective on soft labels, minimised exactly.

The reference objective below is written from scikit-learn's definition on weighted rows
(``LogisticRegression``, l2, scikit-learn 1.9: weighted mean of the cross-entropies plus
``||W||^2 / (2 C S)``), independently of nsrl.greedy.csc.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.base import clone, is_classifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.utils.validation import has_fit_parameter

from nsrl.greedy.csc import NEWTON_MAX, SoftmaxCSC
from nsrl.greedy.csc_solvers import Problem
from nsrl.greedy.rollout import label_weights


def rows_objective(x, labels, sw, classes, coef, intercept, C=1.0):
    """scikit-learn's L on weighted rows (x_i, labels_i, sw_i) at (coef, intercept)."""
    z = np.asarray(x @ coef.T) + intercept
    if z.shape[1] == 1:  # binomial: class 0 scores 0
        z = np.hstack([np.zeros_like(z), z])
    logp = z - logsumexp(z, axis=1, keepdims=True)
    idx = np.searchsorted(classes, labels)
    total = sw.sum()
    return float(-(sw * logp[np.arange(len(labels)), idx]).sum() / total
                 + (coef**2).sum() / (2.0 * C * total))


def problem(seed, n, d, k, kind="dense"):
    """Features and the weighted all-pairs label matrix of random Q values."""
    rng = np.random.default_rng(seed)
    if kind == "onehot":  # n states, one-hot rows of d >= n columns
        x = sp.csr_matrix((np.ones(n), (np.arange(n), rng.permutation(d)[:n])), shape=(n, d))
        q = rng.normal(size=(n, k))
    else:
        x = rng.normal(size=(n, d))
        if kind == "sparse":
            x = sp.csr_matrix(x * (rng.random((n, d)) < 0.2))
        q = np.asarray(x @ rng.normal(size=(d, k))) + rng.normal(size=(n, k))
    counts = rng.integers(1, 4, size=n).astype(float)
    return x, label_weights(q, counts)


def as_rows(x, weights):
    rows, labels = np.nonzero(weights > 0)
    return x[rows], labels, weights[rows, labels]


def tight_sklearn(x, weights, C=1.0):
    xr, labels, sw = as_rows(x, weights)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return LogisticRegression(C=C, tol=1e-12, max_iter=20_000).fit(xr, labels,
                                                                       sample_weight=sw)


CASES = [(0, 200, 5, 2, "dense"), (1, 300, 10, 3, "dense"), (2, 400, 20, 4, "dense"),
         (3, 150, 8, 5, "dense"), (4, 300, 30, 4, "sparse"), (5, 60, 80, 3, "onehot"),
         (6, 300, 800, 3, "onehot")]  # beyond NEWTON_MAX parameters: trust-ncg


@pytest.mark.parametrize(("seed", "n", "d", "k", "kind"), CASES)
def test_objective_at_most_sklearns_and_same_minimiser(seed, n, d, k, kind):
    x, weights = problem(seed, n, d, k, kind)
    ours = SoftmaxCSC(tol=1e-10).fit_label_weights(x, weights)
    ref = tight_sklearn(x, weights)
    xr, labels, sw = as_rows(x, weights)
    mine = rows_objective(xr, labels, sw, ours.classes_, ours.coef_, ours.intercept_)
    theirs = rows_objective(xr, labels, sw, ref.classes_, ref.coef_, ref.intercept_)
    assert mine <= theirs + 1e-12 * abs(theirs)
    assert ours.objective_ == pytest.approx(mine, rel=1e-12)
    assert np.array_equal(ours.classes_, ref.classes_)
    assert np.allclose(ours.coef_, ref.coef_, atol=1e-5)
    assert np.array_equal(ours.predict(x), ref.predict(x))  # the same policy


@pytest.mark.parametrize("k", [2, 3, 4])
def test_soft_labels_equal_weighted_rows_at_any_coefficients(k):
    x, weights = problem(10 + k, 100, 6, k)
    xr, labels, sw = as_rows(x, weights)
    rng = np.random.default_rng(k)
    rows = 1 if k == 2 else k
    for C in (0.1, 1.0, 30.0):
        coef, intercept = rng.normal(size=(rows, 6)), rng.normal(size=rows)
        clf = SoftmaxCSC(C=C, max_iter=1).fit_label_weights(x, weights)  # one step: any point
        clf.coef_, clf.intercept_ = coef, intercept
        prob = Problem(x, weights[:, clf.classes_], C)
        soft = prob.value(np.hstack([coef, intercept[:, None]])) / prob.total
        assert soft == pytest.approx(rows_objective(xr, labels, sw, clf.classes_, coef,
                                                    intercept, C), rel=1e-12)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_penalty_scaling_matches_sklearn(scale):
    """The minimiser moves with the weights' scale and C exactly as scikit-learn's does."""
    x, weights = problem(20, 250, 8, 3)
    for C in (0.05, 4.0):
        ours = SoftmaxCSC(C=C, tol=1e-10).fit_label_weights(x, scale * weights)
        ref = tight_sklearn(x, scale * weights, C)
        assert np.allclose(ours.coef_, ref.coef_, atol=1e-5)


def test_fit_on_rows_equals_fit_on_the_label_matrix():
    x, weights = problem(30, 200, 7, 4)
    xr, labels, sw = as_rows(x, weights)
    by_rows = SoftmaxCSC(tol=1e-10).fit(xr, labels, sample_weight=sw)
    by_matrix = SoftmaxCSC(tol=1e-10).fit_label_weights(x, weights)
    assert by_rows.objective_ == pytest.approx(by_matrix.objective_, rel=1e-12)
    assert np.allclose(by_rows.coef_, by_matrix.coef_, atol=1e-7)


@pytest.mark.parametrize("kind", ["dense", "onehot"])
def test_the_three_solvers_reach_the_same_minimum(kind):
    x, weights = problem(40, 80, 90 if kind == "onehot" else 12, 3, kind)
    fits = {s: SoftmaxCSC(solver=s, tol=1e-10).fit_label_weights(x, weights)
            for s in ("newton", "trust-ncg", "lbfgs")}
    assert [f.solver_ for f in fits.values()] == list(fits)
    best = fits["newton"].objective_
    for fit in fits.values():
        assert fit.objective_ == pytest.approx(best, rel=1e-9)
        assert best <= fit.objective_ + 1e-14


def test_auto_is_newton_up_to_newton_max_then_trust_ncg():
    x, weights = problem(50, 40, 12, 3)
    assert SoftmaxCSC().fit_label_weights(x, weights).solver_ == "newton"
    d = NEWTON_MAX // 3  # 3 (d + 1) > NEWTON_MAX
    x, weights = problem(50, 40, d, 3, "onehot")
    assert SoftmaxCSC().fit_label_weights(x, weights).solver_ == "trust-ncg"


def test_reproducible_and_warm_start_reaches_the_same_minimum():
    x, weights = problem(60, 300, 10, 4)
    a = SoftmaxCSC().fit_label_weights(x, weights)
    b = SoftmaxCSC().fit_label_weights(x, weights)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
    x2, weights2 = problem(61, 300, 10, 4)
    previous = SoftmaxCSC().fit_label_weights(x2, weights2)
    warm = SoftmaxCSC(tol=1e-10).fit_label_weights(x, weights, init=previous)
    cold = SoftmaxCSC(tol=1e-10, warm_start=False).fit_label_weights(x, weights)
    assert warm.objective_ == pytest.approx(cold.objective_, rel=1e-13)
    assert np.allclose(warm.coef_, cold.coef_, atol=1e-7)
    # a warm start from another class set (2 classes: the binomial model) maps onto this one
    two = weights.copy()
    two[:, 2:] = 0.0
    binary = SoftmaxCSC().fit_label_weights(x, two)
    assert binary.coef_.shape == (1, 10)
    again = SoftmaxCSC(tol=1e-10).fit_label_weights(x, weights, init=binary)
    assert again.objective_ == pytest.approx(cold.objective_, rel=1e-13)


def test_a_scikit_learn_estimator():
    clf = SoftmaxCSC(C=2.0)
    assert is_classifier(clf) and has_fit_parameter(clf, "sample_weight")
    assert clone(clf).get_params() == clf.get_params()
    x, weights = problem(70, 50, 4, 3)
    fitted = clf.fit_label_weights(x, weights)
    assert not hasattr(clone(fitted), "coef_")
    proba = fitted.predict_proba(x)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(fitted.classes_[proba.argmax(axis=1)], fitted.predict(x))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"C": 0.0}, "C should be a positive"), ({"solver": "cg"}, "solver should be one of"),
    ({"max_iter": 0}, "max_iter should be an int"), ({"tol": -1.0}, "tol should be > 0")])
def test_bad_parameters_are_refused(kwargs, match):
    x, weights = problem(80, 20, 3, 3)
    with pytest.raises(ValueError, match=match):
        SoftmaxCSC(**kwargs).fit_label_weights(x, weights)


def test_bad_data_is_refused():
    x, weights = problem(90, 20, 3, 3)
    with pytest.raises(ValueError, match="label_weights should be finite, >= 0"):
        SoftmaxCSC().fit_label_weights(x, -weights)
    with pytest.raises(ValueError, match="at least 2 classes"):
        SoftmaxCSC().fit_label_weights(x, np.c_[np.ones(20), np.zeros(20)])
    bad = x.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="finite 2-D feature matrix"):
        SoftmaxCSC().fit_label_weights(bad, weights)


def test_rollout_csc_learns_the_tight_logistic_policy():
    """One greedy call, the same random numbers: SoftmaxCSC's policy is converged sklearn's."""
    import nsrl
    from nsrl.envs import FiniteMDPVectorEnv
    from nsrl.greedy.rollout import RolloutCSC

    mdp = nsrl.garnet(60, 4, 2, seed=3)
    tight = LogisticRegression(tol=1e-12, max_iter=20_000)
    policies = []
    for clf in (SoftmaxCSC(tol=1e-10), tight):
        op = RolloutCSC(FiniteMDPVectorEnv(mdp, num_envs=1), clf, budget=6000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            g = op.greedy(nsrl.constant(), nsrl.Nu(), np.random.default_rng(5))
        policies.append(g.policy.action_table(mdp))
    assert np.array_equal(*policies)


def test_registry_option_classifier():
    import nsrl
    from nsrl.greedy.registry import make_operator

    mdp = nsrl.garnet(10, 2, 1, seed=0)
    assert isinstance(make_operator("rollout-csc", mdp).estimator, SoftmaxCSC)
    old = make_operator("rollout-csc", mdp, classifier="logistic").estimator
    assert isinstance(old, LogisticRegression) and old.max_iter == 1000
    with pytest.raises(ValueError, match="classifier"):
        make_operator("rollout-csc", mdp, classifier="tree")
