"""Hostile input, round 5 (issue 47): one row per case, the classes they stand for closed.

Rows as in tests/hostile/test_hostile.py: ``(id, action, expected, fragment)``; ``action``
is a callable of the temporary folder (Python) or returns the argv of ``nsrl`` (command
line, run in-process); ``expected`` is the exception, the exit status, or ``HOLDS`` for a
row whose callable asserts a property itself. No row allocates more than a few MiB or runs
for more than a few seconds: paths whose real thresholds are large are forced at small sizes.
"""


import numpy as np
import pytest
from hostile_inputs import HOLDS, check_row
from round5_exact import hard_model_holds
from round5_inputs import (
    append_after_half_line_holds,
    append_whole_lines_holds,
    bad_operator_run,
    batched_memory_refused,
    bounds_progress_holds,
    cached_env_type_holds,
    cli_not_certified_one_line,
    float32_softmax_holds,
    gamma_max_certified_holds,
    inline_dict,
    inline_dict_memory_holds,
    make_inline,
    mixture_weights_holds,
    start_sum_holds,
    stochastic_sum_holds,
    transition_rows_holds,
)

import nsrl
import nsrl.model.memory as memory
from nsrl import FiniteMDP
from nsrl.exact import transform
from nsrl.exact.iterative import NotCertifiedError
from nsrl.experiments.storage import check_folder
from nsrl.greedy import Greedy

FORBIDDEN = ("Traceback",)
GIB = 2**30

ROWS = [
    # --- 1. probability inputs: divided by their sums, or refused beyond SUM_TOL ----------
    ("stochastic-sum-1e-5-gamma-0.99999", lambda t: stochastic_sum_holds(0.99999), HOLDS, ""),
    ("stochastic-sum-1e-5-gamma-0.9999", lambda t: stochastic_sum_holds(0.9999), HOLDS, ""),
    ("stochastic-float32-softmax", lambda t: float32_softmax_holds(), HOLDS, ""),
    ("mixture-weights-off-1e-6", lambda t: mixture_weights_holds(), HOLDS, ""),
    ("transitions-successors-1+9e-9", lambda t: transition_rows_holds("successors"), HOLDS, ""),
    ("transitions-dense-1+9e-9", lambda t: transition_rows_holds("dense"), HOLDS, ""),
    ("transitions-sparse-1+9e-9", lambda t: transition_rows_holds("sparse"), HOLDS, ""),
    ("start-sum-off-1e-6", lambda t: start_sum_holds(), HOLDS, ""),
    ("stochastic-sum-1e-3-refused", lambda t: nsrl.Stochastic([[0.5, 0.501]]),
     ValueError, r"within 0\.0001\), but row 0 sums to 1\.001"),
    ("mixture-weights-1e-3-refused", lambda t: nsrl.Mixture([(0.5, nsrl.Constant(0)),
                                                             (0.501, nsrl.Constant(1))]),
     ValueError, r"sum to 1 \(within 0\.0001"),
    ("transitions-1e-3-refused", lambda t: FiniteMDP(np.array([[[0.5, 0.501]], [[1.0, 0]]]),
                                                     [0, 1], 0.9),
     ValueError, r"P\[0, 0, :\] sums to 1\.001, not 1 \(1 rows are off by more than 0\.0001"),
    # --- 2. inline dict models: successor indices checked, no dense P ------------------------
    ("inline-dict-negative-successor", lambda t: make_inline(inline_dict(successor=-1)),
     ValueError, r"mdp \(a dict .*\): next_states\[3, 1, 0\] = -1 is not a state in \[0, 5\)"),
    ("inline-dict-successor-100", lambda t: make_inline(inline_dict(successor=100)),
     ValueError, r"next_states\[3, 1, 0\] = 100 is not a state in \[0, 5\)"),
    ("inline-dict-fractional-successor", lambda t: make_inline(inline_dict(successor=1.5)),
     TypeError, r"mdp \(a dict .*\): next_states should hold integers"),
    ("inline-dict-missing-key", lambda t: make_inline({"format": inline_dict()["format"]}),
     ValueError, r"lacks \['next_states', 'probs', 'R', 'gamma'\]"),
    ("inline-dict-20000-states-no-dense", lambda t: inline_dict_memory_holds(), HOLDS, ""),
    # --- 3. q_values and greedy_actions: one finite value per state --------------------------
    ("q-values-short-vector", lambda t: nsrl.q_values(nsrl.garnet(10, 2, 2, seed=0), np.zeros(9)),
     ValueError, r"shape \(10,\) for FiniteMDP.*got shape \(9,\)"),
    ("greedy-long-vector", lambda t: nsrl.greedy_actions(nsrl.garnet(10, 2, 2, seed=0),
                                                         np.zeros(11)),
     ValueError, r"got shape \(11,\)"),
    ("greedy-nan", lambda t: nsrl.greedy_actions(nsrl.garnet(10, 2, 2, seed=0),
                                                 np.r_[np.zeros(9), np.nan]),
     ValueError, r"v\[9\] = nan is not finite \(1 of 10 entries\)"),
    # item 8: a cached model found by an argument of another type
    ("garnet-env-float-after-int", lambda t: cached_env_type_holds(
        "nsrl:Garnet-v0", "n_states", 10), HOLDS, ""),
    ("gridworld-env-float-after-int", lambda t: cached_env_type_holds(
        "nsrl:GridWorld-v0", "size", 5), HOLDS, ""),
    ("mountain-car-env-float-after-int", lambda t: cached_env_type_holds(
        "nsrl:MountainCarGrid-v0", "n_positions", 10), HOLDS, ""),
    # item 9: logs written whole or not at all; an empty --out refused before any work
    ("sessions-log-efbig-whole-lines", append_whole_lines_holds, HOLDS, ""),
    ("sessions-log-half-line-dropped", append_after_half_line_holds, HOLDS, ""),
    ("check-folder-empty-out", lambda t: check_folder(""), ValueError,
     r"--out: got an empty folder name ''; give a folder"),
    ("reproduce-empty-out", lambda t: ["reproduce", "--preset", "quick", "--out", ""], 2,
     r"empty folder name ''"),
    # item 11: what a plugin operator returns, checked at the boundary, naming its class
    ("operator-returns-none", lambda t: bad_operator_run("API", lambda m: None), TypeError,
     r"^BadOperator\.greedy returned NoneType, expected an nsrl\.greedy\.Greedy"),
    ("operator-returns-string-policy", lambda t: bad_operator_run(
        "CPI", lambda m: Greedy(policy="0")), TypeError,
     r"^BadOperator\.greedy returned a Greedy whose policy is str"),
    ("operator-wrong-shape", lambda t: bad_operator_run(
        "nspi(2)", lambda m: Greedy(nsrl.Deterministic([0] * 9))), ValueError,
     r"^BadOperator\.greedy returned a policy that does not fit its model \(expected 10 "
     r"states"),
    ("operator-action-out-of-range", lambda t: bad_operator_run(
        "PSDP", lambda m: Greedy(nsrl.Deterministic([0] * 9 + [2]))), ValueError,
     r"^BadOperator\.greedy returned .*actions in \[0, 2\)"),
    ("operator-stochastic-wrong-table", lambda t: bad_operator_run(
        "api(0.5)", lambda m: Greedy(nsrl.Stochastic(np.full((10, 3), 1 / 3)))),
     ValueError, r"^BadOperator\.greedy returned Stochastic with a table of shape \(10, 3\)"),
    # item 7: the batched engines' dense (runs, n, n) systems, estimated before allocating
    *[(f"batched-memory-{scheme}", lambda t, s=scheme: batched_memory_refused(s), ValueError,
       r"^the batched engine's \d[\d,]* dense 200 x 200 systems needs about .* pass fewer "
       r"Generators per call to nsrl.run") for scheme in ("api", "api(0.5)", "cpi", "psdp",
                                                           "nspi(3)")],
    # item 5: gamma = GAMMA_MAX certified; a NotCertifiedError in the CLI is one line
    ("gamma-max-garnets-certified", lambda t: gamma_max_certified_holds(), HOLDS, ""),
    ("cli-not-certified-one-line", cli_not_certified_one_line, 2,
     r"^nsrl: error: forced: not certified"),
    # item 6: nsrl bounds shows its progress, on a terminal only
    ("bounds-progress-on-terminal", lambda t: bounds_progress_holds(True), HOLDS, ""),
    ("bounds-no-progress-off-terminal", lambda t: bounds_progress_holds(False), HOLDS, ""),
]

# item 4: easy models the elimination / float32 path never certified, every path forced
HARD_CASES = ("tied", "single", "offset-1e4", "offset-1e6", "scale-1e-40", "scale-1e-50",
              "scale-1e300")
ROWS += [(f"exact-{case}-{path}", lambda t, c=case, p=path: hard_model_holds(c, p), HOLDS, "")
         for case in HARD_CASES for path in ("forced", "mpi", "dense")]


def refuse(*args, **kwargs):
    raise NotCertifiedError("forced: not certified")


@pytest.fixture
def laptop(monkeypatch):
    """4 GiB available, whatever the machine."""
    monkeypatch.setattr(memory, "available_memory", lambda: 4 * GIB)


@pytest.mark.parametrize(("action", "expected", "fragment"),
                         [pytest.param(*row[1:], id=row[0]) for row in ROWS])
def test_round5(action, expected, fragment, tmp_path, capsys, laptop, monkeypatch, request):
    if "not-certified" in request.node.name:  # forced: no model of the rows fails to certify
        monkeypatch.setattr(transform, "solve", refuse)
    check_row(action, expected, fragment, tmp_path, capsys, FORBIDDEN)


def test_rows_are_distinct():
    """One id per row."""
    ids = [row[0] for row in ROWS]
    assert len(ids) == len(set(ids))
