"""Batched NSPI(m) (nsrl.schemes.nspi): the loop of the last m policies, by certified GMRES."""

from __future__ import annotations

import numpy as np

from nsrl.batched.api import api, start_actions
from nsrl.batched.linalg.state import Batch
from nsrl.batched.registry import register
from nsrl.model.memory import check_memory
from nsrl.schemes import NSPI, rules


@register(NSPI)
def nspi(b: Batch, scheme, U, out) -> None:
    """NSPI(m): window[r, 0] is the newest policy, which acts first.

    The loop's value comes from certified GMRES warm-started at the previous value
    (:meth:`Batch.loop_krylov`): m sparse products per Krylov step, no dense matrix.
    """
    m = scheme.m
    if m == 1:  # NSPI(1) is API (section 2)
        return api(b, scheme, U, out)
    check_memory(8.0 * U.shape[0] * m * b.n, f"NSPI({m})'s window of {U.shape[0]} runs",
                 "lower m (or run it with nsrl.run, which keeps m copies of pi_0 as one)")
    window = np.repeat(start_actions(b, U.shape[0])[:, None], m, axis=1)  # m copies of pi_0
    v = b.policy_values(window[:, 0])  # the loop of pi_0 m times has pi_0's value
    for k in range(U.shape[1]):
        acts = b.greedy_nu(v, U[:, k])
        window = np.concatenate([acts[:, None], window[:, :-1]], axis=1)
        v = b.loop_krylov(window, b.apply(acts, v))  # the new policy, then the old loop
        out["loss"][:, k], out["memory"][:, k] = b.loss(v), rules.memory_after(scheme, m)
