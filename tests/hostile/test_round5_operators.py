"""Hostile input to the sample-based operators from Python (issue 47's operator items).

* Sizes that cannot fit are refused in one line, before any allocation, by every Python entry
  point (the operators' constructors, ``nsrl.run`` with an ``OperatorSpec``), as the command
  line refuses them. The machine has 4 GiB available in every test (pinned), so the refusals
  do not depend on where the suite runs; nothing here allocates more than a few MiB.
* LSTD-Q's features that are NaN, infinite or so large that its sums overflow are refused
  with a message that names them (not "use ridge > 0").
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import Ridge

import nsrl
import nsrl.model.memory as memory
from nsrl.envs import FiniteMDPVectorEnv
from nsrl.greedy.csc import SoftmaxCSC
from nsrl.greedy.rollout import RolloutCSC, RolloutRegression

GIB = 2**30


@pytest.fixture(autouse=True)
def laptop(monkeypatch):
    """4 GiB available, whatever the machine."""
    monkeypatch.setattr(memory, "available_memory", lambda: 4 * GIB)


def env(n_states=20, n_actions=4):
    return FiniteMDPVectorEnv(nsrl.garnet(n_states, n_actions, 2, seed=0), num_envs=1)


def one_line(error: pytest.ExceptionInfo) -> str:
    text = str(error.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("make", [
    lambda: RolloutCSC(env(), SoftmaxCSC(), budget=10**10, horizon=10**9),
    lambda: RolloutCSC(env(), SoftmaxCSC(), budget=10**10),
    lambda: RolloutRegression(env(), Ridge(), budget=10**11, m=5),
    lambda: RolloutCSC(env(), SoftmaxCSC(), n_states=10**10),
    lambda: nsrl.LSTDQ(env(), budget=10**12),
    lambda: nsrl.LSTDQ(env(), budget=10**8, reuse=False),
], ids=["csc-budget-horizon", "csc-budget", "reg-budget", "csc-n-states", "lstdq-budget",
        "lstdq-no-reuse"])
def test_operators_refuse_what_cannot_fit(make):
    with pytest.raises(ValueError) as error:
        make()
    text = one_line(error)
    assert "of memory, more than the 4 GiB available" in text
    assert "lower the budget" in text


@pytest.mark.parametrize("spec", [nsrl.OperatorSpec("lstdq", budget=10**12),
                                  nsrl.OperatorSpec("rollout-csc", budget=10**10),
                                  nsrl.OperatorSpec("rollout-reg", budget=10**10)],
                         ids=["lstdq", "rollout-csc", "rollout-reg"])
def test_run_refuses_before_the_first_call(spec):
    mdp = nsrl.garnet(20, 4, 2, seed=0)
    with pytest.raises(ValueError) as error:
        nsrl.run("api", spec, 2, rng=np.random.default_rng(0), mdp=mdp)
    assert "of memory, more than the 4 GiB available" in one_line(error)


def test_budgets_that_fit_are_taken():
    RolloutCSC(env(), SoftmaxCSC(), budget=10**6)  # ~0.1 GiB
    nsrl.LSTDQ(env(), budget=10**6)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 1e200])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_lstdq_refuses_bad_feature_tables(value, sparse):
    table = np.random.default_rng(0).random((20, 3))
    table[7, 2] = value
    features = sp.csr_matrix(table) if sparse else table
    with pytest.raises(ValueError) as error:
        nsrl.LSTDQ(env(), budget=500, features=features, ridge=1.0)
    text = one_line(error)
    assert "feature table should be finite" in text and "(7, 2)" in text
    assert repr(float(value)) in text and "ridge" not in text


@pytest.mark.parametrize("value", [np.nan, 1e200])
def test_lstdq_refuses_bad_features_of_a_map(value):
    """Features computed from the observations (a transformer) are checked at each solve."""
    from sklearn.preprocessing import FunctionTransformer

    def bad(x):
        out = np.hstack([x, np.ones((len(x), 1))])
        out[x[:, 0] == 3, 0] = value
        return out

    op = nsrl.LSTDQ(env(), budget=2000, features=FunctionTransformer(bad), ridge=1.0)
    with pytest.raises(ValueError) as error:
        op.greedy(nsrl.constant(), nsrl.Nu(), np.random.default_rng(0))
    text = one_line(error)
    assert "features of the stored" in text and "ridge" not in text
