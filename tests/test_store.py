"""TransitionStore: FIFO within its bound; its running statistics equal those of what it holds."""

import numpy as np
import pytest

import nsrl.greedy.transitions as store_module
from nsrl.greedy.sampling import Transitions
from nsrl.greedy.transitions import IndexCounts, TransitionStore, concat, take


def batch(first: int, n: int, n_index: int = 6, n_actions: int = 2, seed: int = 0):
    """n transitions whose rewards are their serial numbers first, first + 1, ..."""
    rng = np.random.default_rng(seed + first)
    s, t = rng.integers(n_index, size=n), rng.integers(n_index, size=n)
    rewards = np.arange(first, first + n, dtype=float)
    return Transitions(s, s, rng.integers(n_actions, size=n), rewards, t, t, rng.random(n) < 0.1)


def assert_same_counts(a: IndexCounts, b: IndexCounts):
    np.testing.assert_allclose(a.visits, b.visits, atol=1e-12)
    np.testing.assert_allclose(a.rewards, b.rewards, atol=1e-9)
    np.testing.assert_allclose(a.states, b.states, atol=1e-12)
    np.testing.assert_allclose(a.next_matrix().toarray(), b.next_matrix().toarray(), atol=1e-12)


def test_fifo_keeps_the_last_max_size_transitions_in_order():
    store = TransitionStore(max_size=10)
    for first, n in ((0, 4), (4, 5), (9, 3), (12, 7)):
        store.add(batch(first, n))
    assert len(store) == 10 and store.added == 19
    np.testing.assert_array_equal(store.transitions().rewards, np.arange(9, 19))
    store.add(batch(19, 10))  # a batch of exactly max_size replaces everything
    np.testing.assert_array_equal(store.transitions().rewards, np.arange(19, 29))


@pytest.mark.parametrize("dense", [True, False])
def test_running_counts_equal_the_counts_of_what_is_stored(dense, monkeypatch):
    if not dense:
        monkeypatch.setattr(store_module, "DENSE_COUNTS", 0)
    store = TransitionStore(max_size=50)
    store.add(batch(0, 20))
    counts = store.index_counts(6, 2)  # built from what is stored, then kept up to date
    assert counts.dense is dense
    for first, n in ((20, 17), (37, 30), (67, 9)):
        store.add(batch(first, n))
        assert_same_counts(counts, IndexCounts.of(store.transitions(), 6, 2))
    held = store.transitions()
    assert counts.visits.sum() == len(held.rewards) == 50
    np.testing.assert_allclose(counts.rewards.sum(), held.rewards.sum())
    live = ~held.done
    assert counts.next_matrix().sum() == live.sum()


def test_fused_pass_equals_bincounts(monkeypatch):
    data = batch(0, 500)
    weights = np.random.default_rng(1).random(500)
    fused = IndexCounts.of(data, 6, 2, weights)
    monkeypatch.setattr(store_module, "FUSED", False)
    assert_same_counts(fused, IndexCounts.of(data, 6, 2, weights))


def test_counts_by_hand():
    data = Transitions(np.array([0, 0, 1]), np.array([0, 0, 1]), np.array([1, 1, 0]),
                       np.array([1.0, 2.0, 5.0]), np.array([1, 1, 0]), np.array([1, 1, 0]),
                       np.array([False, False, True]))
    c = IndexCounts.of(data, n_index=2, n_actions=2)
    # pairs are numbered a * n_index + x: (x=0, a=1) is 2, (x=1, a=0) is 1
    np.testing.assert_array_equal(c.visits, [0, 1, 2, 0])
    np.testing.assert_array_equal(c.rewards, [0, 5, 3, 0])
    np.testing.assert_array_equal(c.next_matrix().toarray(), [[0, 0], [0, 0], [0, 2], [0, 0]])


def test_take_and_concat_round_trip():
    data = batch(0, 9)
    again = concat([take(data, slice(0, 4)), take(data, slice(4, 9))])
    for a, b in zip(vars(data).values(), vars(again).values(), strict=True):
        np.testing.assert_array_equal(a, b)


def test_clear_forgets_everything():
    store = TransitionStore(5)
    store.add(batch(0, 5))
    counts = store.index_counts(6, 2)
    store.clear()
    assert len(store) == 0 and store.added == 0
    assert store.index_counts(6, 2) is not counts
    with pytest.raises(ValueError, match="empty"):
        store.transitions()


def test_refusals():
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="max_size"):
            TransitionStore(bad)
    store = TransitionStore(5)
    with pytest.raises(ValueError, match="max_size >= 6"):
        store.add(batch(0, 6))
    store.add(batch(0, 3))
    vectors = Transitions(np.zeros(2, int), np.zeros((2, 4)), np.zeros(2, int), np.zeros(2),
                          np.zeros(2, int), np.zeros((2, 4)), np.zeros(2, bool))
    with pytest.raises(ValueError, match="one environment"):
        store.add(vectors)
    with pytest.raises(ValueError, match=r"indices in \[0, 3\)"):
        store.index_counts(3, 2)
    store.add(Transitions(*(np.ones(1, int),) * 3, np.ones(1), *(np.ones(1, int),) * 2,
                          np.zeros(1, bool)))  # action 1
    with pytest.raises(ValueError, match=r"actions should be in \[0, 1\)"):
        store.index_counts(6, 1)
