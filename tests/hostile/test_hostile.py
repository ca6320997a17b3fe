"""Hostile input, one row per case (issue 30 and the classes it stands for): add rows, not files.

A row is ``(id, action, expected, fragment)``:

* ``action`` is a callable of the temporary folder (Python) or a callable returning the
  argv of ``nsrl`` (command line, run in-process);
* ``expected`` is the exception a Python row must raise, the exit status of a command-line
  row, or ``HOLDS`` for a row whose callable asserts a property itself;
* ``fragment`` is a regular expression the message (or stderr) must contain.

Every command-line error is one line ``nsrl: error: ...`` with status 2, and never carries
numpy's own words (``FORBIDDEN``). The machine has 4 GiB available in every row (pinned), so
the refusals do not depend on where the suite runs, and no row allocates more than a few MiB
or runs for more than a fraction of a second, whatever size the input declares.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hostile_inputs import (
    HOLDS,
    NXT,
    PR,
    P,
    R,
    aliasing_holds,
    bad_state_file,
    check_row,
    dense_aliasing_holds,
    forged_file,
    model_file,
    old_complex_file,
    preset,
    viewed_model,
    with_memory,
)

import nsrl
import nsrl.experiments.checks as checks
import nsrl.model.memory as memory
from nsrl import FiniteMDP

FORBIDDEN = ("Traceback", "only 0-dimensional arrays", "state must be for", "EOF: reading",
             "inhomogeneous", "could not convert", "cannot reshape")
GIB = 2**30


def _vec(**kwargs):
    import gymnasium as gym

    import nsrl.envs  # noqa: F401 - registers the ids

    return gym.make_vec(**kwargs)


def _make(env_id, mdp, observation):
    import gymnasium as gym

    import nsrl.envs  # noqa: F401 - registers the ids

    return gym.make(env_id, mdp=mdp, observation=observation)


def _table(mdp):
    from nsrl.envs import FiniteMDPEnv

    return FiniteMDPEnv(mdp).P  # what gym.make("FiniteMDP-v0", mdp=mdp).unwrapped.P reads


ROWS = [
    # --- complex input is refused, never truncated with a warning ------------------------
    ("complex-probs", lambda t: FiniteMDP.from_successors(NXT, PR + 0.3j, R, 0.9),
     TypeError, "probs holds complex"),
    ("complex-R", lambda t: FiniteMDP.from_successors(NXT, PR, np.array(R) + 1j, 0.9),
     TypeError, "R holds complex"),
    ("complex-start", lambda t: FiniteMDP.from_successors(NXT, PR, R, 0.9,
                                                          start=np.array([0.5, 0.5]) + 0.1j),
     TypeError, "start holds complex"),
    ("complex-features", lambda t: FiniteMDP.from_successors(NXT, PR, R, 0.9,
                                                             features=np.ones((2, 1)) + 1j),
     TypeError, "features holds complex"),
    ("complex-sparse", lambda t: FiniteMDP.from_sparse(sp.csr_matrix(P[:, 0] + 0.5j), R, 0.9),
     TypeError, "P holds complex"),
    ("complex-dense", lambda t: FiniteMDP(P + 0.3j, R, 0.9), TypeError, "P holds complex"),
    ("complex-old-file", lambda t: FiniteMDP.load(old_complex_file(t)),
     ValueError, r"old_complex\.npz: entry 'P' has dtype complex128"),
    ("complex-gamma", lambda t: FiniteMDP(P, R, 0.9 + 0j), TypeError, "gamma should be a float"),
    ("complex-per-action", lambda t: FiniteMDP.from_sparse([P[:, 0] + 1j], R, 0.9),
     TypeError, r"P\[0\] holds complex"),
    ("complex-stochastic", lambda t: nsrl.Stochastic(np.eye(2) + 0.1j),
     TypeError, "table holds complex"),
    # --- other coercions numpy would make quietly ---------------------------------------
    ("object-R", lambda t: FiniteMDP(P, [None, 1.0], 0.9), TypeError, "R should hold numbers"),
    ("float-next-states", lambda t: FiniteMDP.from_successors(NXT + 0.5, PR, R, 0.9),
     TypeError, "next_states should hold integers"),
    ("nan-features", lambda t: FiniteMDP(P, R, 0.9, features=[[1.0], [np.nan]]),
     ValueError, r"features\[1, 0\] = nan is not finite"),
    ("float-actions", lambda t: nsrl.evaluate(nsrl.garnet(30, 2, 2, seed=0),
                                              nsrl.Deterministic(np.array([0.5] * 30))),
     TypeError, "actions should hold integers"),
    ("string-actions", lambda t: nsrl.Deterministic(["a", "b"]), TypeError, "hold numbers"),
    # --- the model copies once and never aliases the caller's arrays -------------------
    ("aliasing-successors", lambda t: aliasing_holds(), HOLDS, ""),
    ("aliasing-dense", lambda t: dense_aliasing_holds(), HOLDS, ""),
    # --- shapes that are not a model --------------------------------------------------
    ("sparse-0-actions", lambda t: FiniteMDP.from_sparse(sp.csr_matrix((0, 3)), np.zeros(3), 0.9),
     ValueError, "n_states, n_actions >= 1"),
    ("sparse-empty-rows", lambda t: FiniteMDP.from_sparse(sp.csr_matrix((3, 3)), np.zeros(3), 0.9),
     ValueError, "0 stored entries for 3 rows"),
    ("ragged-successors", lambda t: FiniteMDP.from_successors([[[1, 0]], [[0]]],
                                                              [[[0.5, 0.5]], [[1.0]]], R, 0.9),
     ValueError, "next_states is a ragged nested list"),
    ("strings-sparse", lambda t: FiniteMDP.from_sparse(["a", "b"], R, 0.9),
     TypeError, r"P\[0\] should hold numbers"),
    ("goals-triples", lambda t: nsrl.gridworld(5, reward="goals", goals=[[0, 0, 0]], seed=0),
     ValueError, r"list of \(row, col\) pairs, got an array of shape \(1, 3\)"),
    ("goals-fraction", lambda t: nsrl.gridworld(5, reward="goals", goals=[(0.5, 1)], seed=0),
     TypeError, r"goals \(cells\) should hold integers"),
    ("save-missing-folder", lambda t: nsrl.garnet(5, 1, 1, seed=0).save(t / "nonexist/sub/x"),
     FileNotFoundError, r"nonexist/sub/x\.npz'.*folder .*nonexist/sub' does not exist"),
    # --- model files: checked at load, named in the message ----------------------------
    ("file-gamma-shape", lambda t: FiniteMDP.load(model_file(t, "g2", gamma=np.ones(2) / 2)),
     ValueError, r"g2\.npz: gamma should be one number"),
    ("file-gamma-complex", lambda t: FiniteMDP.load(model_file(t, "gc", gamma=0.9 + 1j)),
     ValueError, r"gc\.npz: entry 'gamma' has dtype complex"),
    ("file-bad-pcg64-state", lambda t: FiniteMDP.load(bad_state_file(t)),
     ValueError, r"bad_state\.npz does not hold a valid nsrl model .*no valid PCG64 state"),
    ("file-declares-8GB", lambda t: FiniteMDP.load(forged_file(t)),
     ValueError, r"forged\.npz.*declares an array of shape \(1000000000, 1, 1\)"),
    ("file-float-successors", lambda t: FiniteMDP.load(
        model_file(t, "fs", next_states=np.zeros((5, 2, 2)))),
     ValueError, r"fs\.npz does not hold a valid nsrl model \(next_states should hold int"),
    ("file-nan-reward", lambda t: FiniteMDP.load(model_file(t, "nr", R=np.full((5, 2), np.nan))),
     ValueError, r"nr\.npz does not hold a valid nsrl model \(R\[0, 0\] = nan"),
    # --- memory and time estimated before allocating or working ------------------------
    ("bomb-toy-text-table", lambda t: with_memory(64 * 2**20, _table, viewed_model(10**5, 4, 10)),
     ValueError, "toy_text table .* 4,000,000 transitions .* more than the 64 MiB"),
    ("bomb-vector-copies", lambda t: _vec(id="Garnet-v0", num_envs=10**12),
     ValueError, "1,000,000,000,000 copies .* use fewer num_envs"),
    ("bomb-onehot-space", lambda t: _vec(id="FiniteMDP-v0", mdp=viewed_model(10**5, 1, 1),
                                         num_envs=10**5, observation="onehot"),
     ValueError, "100,000 copies with observation='onehot'"),
    ("bomb-onehot-single", lambda t: with_memory(2**20, _make, "FiniteMDP-v0",
                                                 viewed_model(10**6, 1, 1), "onehot"),
     ValueError, "one-hot observation space of 1,000,000 states .* more than the 1 MiB"),
    ("bomb-sparse-conversion", lambda t: FiniteMDP.from_sparse(
        sp.coo_matrix((2 * 10**8, 10**8)), np.zeros(10**8), 0.9),
     ValueError, "0 stored entries for 200000000 rows"),
    ("bomb-sparse-large", lambda t: with_memory(2**20, FiniteMDP.from_sparse,
                                                sp.eye(10**5, format="csr"), np.zeros(10**5), 0.9),
     ValueError, r"converting the sparse P of shape \(100000, 100000\) .* more than the 1 MiB"),
    ("bomb-broadcast-views", lambda t: FiniteMDP.from_successors(
        np.broadcast_to(np.zeros(10, dtype=np.int64), (10**7, 100, 10)),
        np.broadcast_to(np.full(10, 0.1), (10**7, 100, 10)), np.zeros(10**7), 0.9),
     ValueError, r"copying next_states and probs of shape \(10000000, 100, 10\)"),
    ("hang-classic-draw", lambda t: nsrl.garnet(10**6, 1, 1, seed=0, draw="classic"),
     ValueError, r"1e\+12 sort keys, O\(S\^2 A\) time: about 2.17 h .* draw='scalable'"),
    # --- the command line: one line, exit 2, before any work ----------------------------
    ("cli-samples-memory", lambda t: ["run", "--scheme", "api", "--garnet", "20,2,2",
                                      "--operator", "lstdq", "--budget", "100000000000"],
     2, "--budget 100000000000 with lstdq needs about .* lower --budget"),
    ("cli-bounds-size", lambda t: ["bounds", "--garnet", "1000000,10,10"],
     2, "bounds --garnet 1000000,10,10 .* use fewer states"),
    ("cli-nspi-window", lambda t: ["reproduce", "--preset", preset(t, schemes=["nspi(1000000000)"]),
                                   "--out", str(t / "r"), "--no-plot"],
     2, r"'schemes': NSPI\(1000000000\) .* use m <= "),
    ("cli-jobs", lambda t: ["reproduce", "--preset", preset(t), "--out", str(t / "r"),
                            "--jobs", "1000000"],
     2, "--jobs 1000000 is more than 4 local workers per CPU"),
    ("cli-file-gamma-shape", lambda t: ["run", "--scheme", "api", "--mdp",
                                        model_file(t, "g2", gamma=np.ones(2) / 2)],
     2, r"g2\.npz: gamma should be one number"),
    ("cli-file-bad-state", lambda t: ["run", "--scheme", "api", "--operator", "lstdq",
                                      "--mdp", bad_state_file(t)],
     2, r"bad_state\.npz does not hold a valid nsrl model .* write it again"),
    ("cli-file-forged", lambda t: ["run", "--scheme", "api", "--mdp", forged_file(t)],
     2, r"forged\.npz.* the file is damaged or forged"),
    ("cli-file-complex", lambda t: ["run", "--scheme", "api", "--mdp", old_complex_file(t)],
     2, r"old_complex\.npz: entry 'P' has dtype complex128"),
    ("cli-garnet-creates-folders", lambda t: ["garnet", "--states", "5", "--actions", "1",
                                              "--branching", "1", "--mdp-seed", "0",
                                              "--out", str(t / "nonexistent/dir/x")],
     0, r"created the folder .*nonexistent \(missing folders of --out are made\)"),
]


@pytest.fixture
def laptop(monkeypatch):
    """4 GiB available, whatever the machine."""
    monkeypatch.setattr(memory, "available_memory", lambda: 4 * GIB)
    monkeypatch.setattr(checks, "available_memory", lambda: 4 * GIB)


@pytest.mark.parametrize(("action", "expected", "fragment"),
                         [pytest.param(*row[1:], id=row[0]) for row in ROWS])
def test_hostile_input(action, expected, fragment, tmp_path, capsys, laptop):
    with warnings.catch_warnings():  # a quiet cast (complex -> real) fails the row
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        check_row(action, expected, fragment, tmp_path, capsys, FORBIDDEN)


def test_rows_are_distinct():
    """One id per row: a new case is a new row, never a second copy of an old one."""
    ids = [row[0] for row in ROWS]
    assert len(ids) == len(set(ids))
