"""Builders of hostile inputs for tests/hostile/test_hostile.py: files, presets, stand-ins.

Every builder is cheap: nothing here allocates more than a few MiB or runs for more than a
fraction of a second, whatever size the input *declares*.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from unittest import mock

import numpy as np

import nsrl
import nsrl.model.memory as memory
from nsrl import FiniteMDP

HOLDS = "holds"  # a row whose action asserts what holds itself


def check_row(action, expected, fragment, tmp_path: Path, capsys, forbidden: tuple) -> None:
    """One row of a hostile table: it holds, exits with ``expected`` or raises ``expected``.

    A command line (an int status) prints one line ``nsrl: error: ...`` for status 2, matching
    ``fragment`` and free of the ``forbidden`` words (a traceback, numpy's own messages).
    """
    import pytest

    from nsrl.cli import main

    if expected is HOLDS:
        action(tmp_path)
    elif isinstance(expected, int):
        status = main(action(tmp_path))
        err = capsys.readouterr().err
        assert status == expected, err
        assert not any(word in err for word in forbidden), err
        if expected == 2:
            assert err.startswith("nsrl: error: ") and err.count("\n") == 1, err
        assert re.search(fragment, err), err
    else:
        with pytest.raises(expected, match=fragment):
            action(tmp_path)


# The small model: two states, one action.
NXT = np.array([[[1, 0]], [[0, 1]]])
PR = np.array([[[0.5, 0.5]], [[1.0, 0.0]]])
R = [0.0, 1.0]
P = np.array([[[0.5, 0.5]], [[1.0, 0.0]]])  # the same model as a dense P[s, a, s']


def model_file(tmp: Path, name: str, **changes) -> str:
    """A saved Garnet(5, 2, 2) whose archive entries are replaced by ``changes`` (None drops)."""
    path = tmp / f"{name}.npz"
    nsrl.garnet(5, 2, 2, seed=0).save(path)
    with np.load(path) as z:
        entries = {k: z[k] for k in z.files}
    for key, value in changes.items():
        if value is None:
            entries.pop(key, None)
        else:
            entries[key] = value
    np.savez(path, **entries)
    return str(path)


def old_complex_file(tmp: Path) -> str:
    """A file of the earlier format (a dense P) whose P is complex."""
    g = nsrl.garnet(5, 2, 2, seed=0)
    return model_file(tmp, "old_complex", P=g.P + 0.3j, next_states=None, probs=None)


def bad_state_file(tmp: Path) -> str:
    """A features_draw recipe naming PCG64 but holding an MT19937 state."""
    recipe = {"bit_generator": "PCG64", "state": {"bit_generator": "MT19937", "state": {}},
              "shape": [5, 3]}
    return model_file(tmp, "bad_state", features=None,
                      features_draw=np.array(json.dumps(recipe)))


def forged_file(tmp: Path, shape=(10**9, 1, 1)) -> str:
    """A ~1 KB .npz whose successor lists *declare* ``shape`` (8 GB each) over 64 bytes."""
    path = tmp / "forged.npz"
    with np.load(model_file(tmp, "base")) as z:
        small = {k: z[k] for k in z.files}
    with zipfile.ZipFile(path, "w") as out:
        for key, value in small.items():
            head = io.BytesIO()
            if key in ("next_states", "probs"):
                np.lib.format.write_array_header_1_0(head, {
                    "descr": "<i8" if key == "next_states" else "<f8",
                    "fortran_order": False, "shape": shape})
                out.writestr(f"{key}.npy", head.getvalue() + bytes(64))
            else:
                np.save(head, value)
                out.writestr(f"{key}.npy", head.getvalue())
    assert path.stat().st_size < 2000
    return str(path)


def preset(tmp: Path, **fields) -> str:
    """A tiny TOML sweep (one shard, one run) with ``fields`` added."""
    body = {"name": "tiny", "n_states": [10], "n_actions": [2], "branching": [2], "n_mdps": 1,
            "n_runs": 1, "n_iterations": 2} | fields
    path = tmp / "tiny.toml"
    path.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in body.items()))
    return str(path)


def with_memory(nbytes: int, fn, *args):
    """``fn(*args)`` on a machine with ``nbytes`` available: a small input meets a full machine,
    which exercises the same estimate as a huge input would (linear in the sizes)."""
    with mock.patch.object(memory, "available_memory", lambda: nbytes):
        return fn(*args)


def viewed_model(n_states: int, n_actions: int, branching: int) -> FiniteMDP:
    """A model of the given sizes whose successor lists are broadcast views (no memory).

    Built through the trusted constructor: what a large model *is* to code that reads its
    sizes and successors, at the cost of its rewards and start only.
    """
    shape = (n_states, n_actions, branching)
    nxt = np.broadcast_to(np.arange(branching, dtype=np.int64), shape)
    probs = np.broadcast_to(np.full(branching, 1.0 / branching), shape)
    return FiniteMDP._from_parts(nxt, probs, np.zeros(n_states), 0.9)


def aliasing_holds():
    """The model copies once: the caller's arrays stay writable and changing them changes
    nothing in the model (issue 30: v* moved by 1.50 through a view of the caller's buffer)."""
    g = nsrl.garnet(20, 2, 3, seed=1)
    n, p = (x.copy() for x in g.successors)
    r, phi, start = g.R.copy(), g.features.copy(), np.full(20, 0.05)
    m = FiniteMDP.from_successors(n, p, r, 0.99, features=phi, start=start)
    v_before = nsrl.optimal_value(m).copy()
    for x in (n, p, r, phi, start):
        assert x.flags.writeable, "the caller's array was made read-only"
    for mine, theirs in zip((*m.successors, m.R, m.features, m.start), (n, p, r, phi, start),
                            strict=True):
        assert not np.shares_memory(mine, theirs)
    p[:, :, 0] += p[:, :, 1]
    p[:, :, 1] = 0.0
    r += 100.0
    assert np.array_equal(nsrl.optimal_value(m), v_before)


def dense_aliasing_holds():
    """The dense constructor too: the caller's P stays writable and is not the model's."""
    mine = P.copy()
    m = FiniteMDP(mine, R, 0.9)
    assert mine.flags.writeable and not np.shares_memory(m.P, mine)
