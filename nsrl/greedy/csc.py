"""Cost-sensitive classification by a multinomial logistic model on soft labels.

Rollouts + CSC (:mod:`nsrl.greedy.rollout`) turn a state s into one example per action a,
labelled a, of weight w(s, a). scikit-learn's multinomial ``LogisticRegression`` (lbfgs,
newton-cg and newton-cholesky solvers, scikit-learn 1.9) fitted on those weighted rows minimises

    L(B) = (1 / S) sum_(s, a) w(s, a) CE(a, p_B(x_s)) + ||W||^2 / (2 C S),   S = sum w(s, a),

with ``p_B(x) = softmax(W x + b)``, ``CE(a, p) = -log p_a``, the intercepts b unpenalised (the
penalty is scaled by 1 / S since scikit-learn 1.2: the loss is a weighted mean). The rows of
a state add up to ``W_s CE(y_s, p_B(x_s))`` with ``W_s = sum_a w(s, a)`` and the soft label
``y_s = w(s, .) / W_s``: the same objective, at every B, from one row per state
(:class:`SoftmaxCSC`, :meth:`SoftmaxCSC.fit_label_weights`).

The parametrisation is scikit-learn's, so that the minimiser is the same: with K >= 3 classes
one coefficient row per class, all penalised (the symmetric model; the intercepts, defined up
to a common shift, are centred); with two classes the binomial model, one row w with
``p_1 = sigmoid(w x + b)`` and penalty ``||w||^2 / (2 C S)``, which is not the symmetric
model's penalty.

**Solver** (``solver="auto"``, measured by benchmarks/bench_csc_fit.py): Newton's method
(:func:`nsrl.greedy.csc_solvers.newton`) up to :data:`NEWTON_MAX` parameters K(d + 1): the
Hessian (404 x 404 for 4 actions and 100 features) is built with (K - 1) K / 2 products
``X^T diag(c) X``, factorised by Cholesky, a line search makes each step decrease the
objective, and it converges in 4 to 8 steps where L-BFGS takes hundreds of gradients. Beyond,
the Hessian costs more than it saves (or does not fit, as with one-hot features of many
states): scipy's trust-region Newton-CG, which needs Hessian-vector products only, each the
cost of a gradient. L-BFGS ("lbfgs") takes over where Newton meets a numerically singular
Hessian.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator, ClassifierMixin

from nsrl.greedy.csc_solvers import Problem, is_sparse, newton, scipy_solve

# Newton up to this many free parameters K(d + 1), scipy's trust-ncg beyond (solver="auto"):
# on a fit of the 10^4 grid world (8 931 states) with RBF grids of growing size
# (benchmarks/results/bench_csc_fit.txt, shared machine) Newton took 2.8 CPU s against
# trust-ncg's 8.7 at 1 604 parameters, 9.0 against 14.6 at 2 504, 17.9 against 18.7 at 3 604:
# its Hessian, (K - 1) K / 2 products of n (d + 1)^2 and a Cholesky of (K (d + 1))^3 / 3,
# grows faster than trust-ncg's Hessian-vector products. L-BFGS was slower than trust-ncg at
# every size, and on one-hot states (35 728 parameters) trust-ncg took 0.35 s, L-BFGS 3.9.
NEWTON_MAX = 3000
SOLVERS = ("auto", "newton", "trust-ncg", "lbfgs")


def _check_x(x: Any) -> Any:
    x = x.tocsr() if is_sparse(x) else np.asarray(x, dtype=np.float64)
    data = x.data if is_sparse(x) else x
    if x.ndim != 2 or not np.all(np.isfinite(data)):
        raise ValueError(f"SoftmaxCSC needs a finite 2-D feature matrix, got shape "
                         f"{x.shape} with non-finite entries or wrong rank; check the "
                         f"features (NaN, inf?).")
    return x.astype(np.float64) if is_sparse(x) else x


class SoftmaxCSC(ClassifierMixin, BaseEstimator):
    """Multinomial logistic regression fitted on soft labels (see the module docstring).

    It minimises scikit-learn's ``LogisticRegression(C=C)`` objective (l2 penalty) to a tight
    tolerance, by Newton's method (or L-BFGS on large problems), and predicts as it does. Its
    :meth:`fit_label_weights` takes the weights w(s, a) of the cost-sensitive reduction as a
    matrix (one row per state) instead of weighted rows per (state, label).

    Args:
        C: inverse of the l2 penalty's strength, as scikit-learn's.
        tol: the fit stops when the largest entry of the gradient of L (scikit-learn's
            scale) is at most ``tol``.
        max_iter: the most Newton steps (trust-ncg, L-BFGS: iterations).
        solver: "newton", "trust-ncg", "lbfgs" or "auto" (Newton up to :data:`NEWTON_MAX`
            parameters, trust-ncg beyond).
        warm_start: start from the previous fit of this object (mapped onto the new
            classes) when its objective is lower than at zero; RolloutCSC passes the previous
            call's fit. The minimiser is unique, so this changes the time, not the result
            (to ``tol``).

    Attributes:
        classes_, coef_, intercept_, n_features_in_: as scikit-learn's LogisticRegression.
        objective_: L at the solution (scikit-learn's scale).
        n_iter_: Newton steps (or L-BFGS iterations).
        solver_: the solver used.

    Examples:
        >>> import numpy as np
        >>> x = np.array([[0.0], [1.0], [2.0], [3.0]])
        >>> w = np.array([[3.0, 0.0], [2.0, 1.0], [1.0, 2.0], [0.0, 3.0]])  # w(s, a)
        >>> clf = SoftmaxCSC().fit_label_weights(x, w)
        >>> clf.predict(x).tolist(), clf.solver_
        ([0, 0, 1, 1], 'newton')
    """

    classes_: np.ndarray
    coef_: np.ndarray
    intercept_: np.ndarray

    def __init__(self, C: float = 1.0, tol: float = 1e-8, max_iter: int = 1000,
                 solver: str = "auto", warm_start: bool = True) -> None:
        self.C, self.tol, self.max_iter = C, tol, max_iter
        self.solver, self.warm_start = solver, warm_start

    def _check_params(self) -> None:
        if not (isinstance(self.C, numbers.Real) and self.C > 0 and np.isfinite(self.C)):
            raise ValueError(f"SoftmaxCSC's C should be a positive finite number, got "
                             f"{self.C!r}; e.g. C=1.0 (scikit-learn's default).")
        if not (isinstance(self.tol, numbers.Real) and self.tol > 0):
            raise ValueError(f"SoftmaxCSC's tol should be > 0, got {self.tol!r}; e.g. 1e-8.")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, numbers.Integral) \
                or self.max_iter < 1:
            raise ValueError(f"SoftmaxCSC's max_iter should be an int >= 1, got "
                             f"{self.max_iter!r}.")
        if self.solver not in SOLVERS:
            raise ValueError(f"SoftmaxCSC's solver should be one of {SOLVERS}, got "
                             f"{self.solver!r}.")

    def fit(self, X: Any, y: npt.ArrayLike, sample_weight: npt.ArrayLike | None = None,
            ) -> SoftmaxCSC:
        """Fit on labelled rows of weights ``sample_weight`` (scikit-learn's interface)."""
        y = np.asarray(y)
        classes, codes = np.unique(y, return_inverse=True)
        sw = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
        if sw.shape != y.shape or len(y) != X.shape[0]:
            raise ValueError(f"SoftmaxCSC.fit needs len(y) == len(sample_weight) == "
                             f"X.shape[0], got {len(y)}, {sw.shape}, {X.shape[0]}.")
        weights = np.zeros((len(y), len(classes)))
        weights[np.arange(len(y)), codes] = sw
        return self._fit(X, weights, classes)

    def fit_label_weights(self, X: Any, label_weights: npt.ArrayLike,
                          init: SoftmaxCSC | None = None) -> SoftmaxCSC:
        """Fit on ``label_weights[i, a]``, the weight of row i labelled a (classes: columns).

        The objective is that of the weighted rows (i, a) for every positive weight; the
        classes are the columns of positive total weight. ``init`` (a fitted SoftmaxCSC)
        is the warm start; by default this object's own previous fit if ``warm_start``.
        """
        weights = np.asarray(label_weights, dtype=np.float64)
        if weights.ndim != 2 or weights.shape[0] != X.shape[0] \
                or not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError(f"label_weights should be finite, >= 0 and of shape (n_rows, "
                             f"n_labels) with n_rows = {X.shape[0]}, got shape "
                             f"{weights.shape}; they are w(s, a), the weight of row s "
                             f"labelled a.")
        classes = np.flatnonzero(weights.sum(axis=0) > 0)
        return self._fit(X, weights[:, classes], classes, init)

    def _fit(self, X: Any, weights: np.ndarray, classes: np.ndarray,
             init: SoftmaxCSC | None = None) -> SoftmaxCSC:
        self._check_params()
        if len(classes) < 2:
            raise ValueError(f"SoftmaxCSC needs weight on at least 2 classes, got "
                             f"{len(classes)} ({classes.tolist()}); a single class is a "
                             f"constant classifier.")
        x = _check_x(X)
        keep = weights.sum(axis=1) > 0  # rows of no weight do not enter the objective
        prob = Problem(x[keep] if not keep.all() else x, weights[keep], float(self.C))
        if init is None and self.warm_start and hasattr(self, "coef_"):
            init = self
        start = None if init is None else (init.classes_, init.coef_, init.intercept_)
        theta = prob.start(start, classes)
        solver = self.solver
        if solver == "auto":
            solver = "newton" if int(prob.free.sum()) <= NEWTON_MAX else "trust-ncg"
        steps = 0
        if solver == "newton":
            theta, steps, done = newton(prob, theta, self.tol, self.max_iter)
            if not done:  # a Hessian numerically singular: L-BFGS from where Newton stopped
                solver = "newton+lbfgs"
        if solver != "newton":
            method = "trust-ncg" if solver == "trust-ncg" else "lbfgs"
            theta, more = scipy_solve(prob, theta, self.tol, self.max_iter, method)
            steps += more
        if prob.rows > 1:
            theta[:, -1] -= theta[:, -1].mean()
        self.classes_ = classes
        self.coef_, self.intercept_ = theta[:, :-1].copy(), theta[:, -1].copy()
        self.n_features_in_ = x.shape[1]
        self.objective_ = prob.value(theta) / prob.total
        self.n_iter_, self.solver_ = steps, solver
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Scores ``X coef_^T + intercept_``, (n,) for two classes as scikit-learn's."""
        x = _check_x(X)
        if x.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {x.shape[1]} features, SoftmaxCSC was fitted on "
                             f"{self.n_features_in_}.")
        scores = np.asarray(x @ self.coef_.T) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X: Any) -> np.ndarray:
        """The class of the largest score (two classes: classes_[1] where the score > 0)."""
        scores = self.decision_function(X)
        best = (scores > 0).astype(np.int64) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[best]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities of the fitted model, (n, K)."""
        scores = self.decision_function(X)
        z = np.c_[np.zeros(len(scores)), scores] if scores.ndim == 1 else scores
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
