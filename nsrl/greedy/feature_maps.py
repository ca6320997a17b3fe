"""Feature maps of a domain's coordinates: tile coding and radial basis functions.

scikit-learn transformers, so that the same object serves every consumer: fitted on the
coordinates of a finite model's states it gives a table Phi for :class:`ProjectedGreedy`
(``features=Phi``), :class:`LSTDQ` and the rollout operators with index observations; given
unfitted to LSTDQ or the rollout operators with coordinate observations, it is fitted on the
first batch they see (:func:`nsrl.greedy.features.make_features`).

Two are written here because scikit-learn has no equivalent: :class:`TileCoding` (several
offset tilings of the product grid, Sutton & Barto 2018, section 9.5.4; ``KBinsDiscretizer``
bins each coordinate on its own, so it can only represent sums of functions of one
coordinate) and :class:`RBFGrid` (Gaussian bumps on a grid of centres, section 9.5.5).
``"rff"`` is scikit-learn's own ``RBFSampler`` (random Fourier features of the same Gaussian
kernel) after a ``MinMaxScaler``. :func:`make_feature_map` builds any of them from a kind and
a feature count, :func:`coordinate_features` applies one to a model's coordinates.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Self

import numpy as np
import numpy.typing as npt
from scipy import sparse
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from nsrl.greedy.base import Estimator

KINDS = ("rbf", "tiles", "rff")
DISPLACEMENTS = np.array([1, 3, 5, 7, 11, 13, 17, 19])  # offsets per axis (odd, as advised)


def _per_axis(name: str, value: int | Sequence[int], d: int) -> np.ndarray:
    """An int >= 1, or one per axis, as an int array of length d (else ValueError)."""
    values = np.broadcast_to(np.asarray(value), (d,)) if np.ndim(value) == 0 else \
        np.asarray(value)
    if values.shape != (d,) or not all(isinstance(v, numbers.Integral) and int(v) >= 1
                                       for v in values.tolist()):
        raise ValueError(f"{name} should be an int >= 1 or one per coordinate ({d} here), got "
                         f"{value!r}; e.g. {name}=8.")
    return values.astype(np.int64)


def _bounds(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-coordinate minima and maxima; a coordinate of one value gives zero-width tiles."""
    low, high = X.min(axis=0), X.max(axis=0)
    flat = np.flatnonzero(high <= low)
    if flat.size:
        raise ValueError(f"coordinate {int(flat[0])} takes a single value ({low[flat[0]]:g}) in "
                         f"the data fitted on, which gives tiles (or centre spacings) of width "
                         f"0; drop that column, or fit on data that spans it.")
    return low, high


class TileCoding(TransformerMixin, BaseEstimator):
    """Tile coding: ``n_tilings`` grids of ``n_tiles`` per axis, each offset, one-hot each.

    Tiling k is the grid over the fitted bounding box shifted by ``k / n_tilings`` of a tile
    times an odd displacement per axis (1, 3, 5, ...), with one extra tile per axis to cover
    the shift. A point activates one tile per tiling: ``n_tilings`` ones in
    ``n_tilings * prod(n_tiles + 1)`` columns.

    Args:
        n_tiles: tiles per axis of each tiling (an int or one per coordinate), >= 1.
        n_tilings: number of offset tilings, >= 1.
        sparse_output: return a scipy.sparse CSR matrix instead of a dense array.

    Examples:
        >>> import numpy as np
        >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 0.2]])
        >>> TileCoding(n_tiles=2, n_tilings=3).fit_transform(X).sum(axis=1)
        array([3., 3., 3.])
    """

    def __init__(self, n_tiles: int | Sequence[int] = 8, n_tilings: int = 4,
                 sparse_output: bool = False) -> None:
        self.n_tiles, self.n_tilings, self.sparse_output = n_tiles, n_tilings, sparse_output

    def fit(self, X: npt.ArrayLike, y: object = None) -> Self:
        """Learn the bounding box of X (n_samples, n_coordinates)."""
        X = np.asarray(check_array(X, dtype=np.float64))
        self.n_tiles_ = _per_axis("n_tiles", self.n_tiles, X.shape[1])
        self.n_tilings_ = int(_per_axis("n_tilings", self.n_tilings, 1)[0])
        self.low_, high = _bounds(X)
        self.width_ = (high - self.low_) / self.n_tiles_
        d = X.shape[1]
        shifts = np.arange(self.n_tilings_)[:, None] * DISPLACEMENTS[np.arange(d) % 8][None, :]
        self.shifts_ = (shifts / self.n_tilings_) % 1.0  # (n_tilings, d), in tile widths
        self.n_features_in_ = d
        return self

    @property
    def n_features_out(self) -> int:
        """Columns of the output: n_tilings x prod(n_tiles + 1)."""
        return int(self.n_tilings_ * np.prod(self.n_tiles_ + 1))

    def transform(self, X: npt.ArrayLike) -> np.ndarray | sparse.csr_matrix:
        """The active tiles of each row of X, one per tiling."""
        check_is_fitted(self)
        X = np.asarray(check_array(X, dtype=np.float64))
        u = (X - self.low_) / self.width_  # coordinates in tile widths
        per_tiling = int(np.prod(self.n_tiles_ + 1))
        cols = np.empty((X.shape[0], self.n_tilings_), dtype=np.int64)
        for k, shift in enumerate(self.shifts_):
            idx = np.clip(np.floor(u + shift), 0, self.n_tiles_).astype(np.int64)
            cols[:, k] = k * per_tiling + np.ravel_multi_index(idx.T, tuple(self.n_tiles_ + 1))
        import scipy.sparse as sp

        rows = np.repeat(np.arange(X.shape[0]), self.n_tilings_)
        out = sp.csr_matrix((np.ones(cols.size), (rows, cols.ravel())),
                            shape=(X.shape[0], self.n_features_out))
        return out if self.sparse_output else out.toarray()


class RBFGrid(TransformerMixin, BaseEstimator):
    """Gaussian radial basis functions centred on a grid over the fitted bounding box.

    ``phi_c(x) = exp(-sum_i (x_i - c_i)^2 / (2 (width h_i)^2))`` for every centre c of a grid
    of ``n_centres`` points per axis (ends included), h_i the spacing of axis i.

    Args:
        n_centres: centres per axis (an int or one per coordinate), >= 1 (one centre: h is
            the whole range).
        width: the Gaussian's standard deviation in spacings, > 0.

    Examples:
        >>> import numpy as np
        >>> X = np.array([[0.0, 0.0], [1.0, 1.0]])
        >>> RBFGrid(n_centres=3).fit_transform(X).shape
        (2, 9)
    """

    def __init__(self, n_centres: int | Sequence[int] = 10, width: float = 1.0) -> None:
        self.n_centres, self.width = n_centres, width

    def fit(self, X: npt.ArrayLike, y: object = None) -> Self:
        """Place the centres on X's bounding box (n_samples, n_coordinates)."""
        X = np.asarray(check_array(X, dtype=np.float64))
        self.n_centres_ = _per_axis("n_centres", self.n_centres, X.shape[1])
        if isinstance(self.width, bool) or not isinstance(self.width, numbers.Real) \
                or not np.isfinite(self.width) or self.width <= 0:
            raise ValueError(f"width should be a float > 0 (the Gaussian's standard deviation "
                             f"in centre spacings), got {self.width!r}; e.g. width=1.0.")
        low, high = _bounds(X)
        self.axes_: list[np.ndarray] = [np.linspace(lo, hi, k) for lo, hi, k
                                        in zip(low, high, self.n_centres_, strict=True)]
        spacing = (high - low) / np.maximum(self.n_centres_ - 1, 1)
        self.scale_: np.ndarray = float(self.width) * spacing
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X: npt.ArrayLike) -> np.ndarray | sparse.csr_matrix:
        """The value of every basis function at every row of X, (n_samples, prod(n_centres))."""
        check_is_fitted(self)
        X = np.asarray(check_array(X, dtype=np.float64))
        out = np.ones((X.shape[0], 1))
        for i, axis in enumerate(self.axes_):  # the Gaussian is a product over the axes
            g = np.exp(-0.5 * ((X[:, i:i + 1] - axis[None, :]) / self.scale_[i]) ** 2)
            out = (out[:, :, None] * g[:, None, :]).reshape(X.shape[0], -1)
        return out


def make_feature_map(kind: str = "rbf", n_features: int = 100, n_coordinates: int = 2,
                     random_state: int = 0) -> Estimator:
    """An unfitted transformer of about ``n_features`` features of ``n_coordinates`` coordinates.

    ``"rbf"``: :class:`RBFGrid` with round(n_features^(1/d)) centres per axis; ``"tiles"``:
    :class:`TileCoding` with 4 tilings (fewer when n_features is small) and as many tiles per
    axis as fit; ``"rff"``: ``MinMaxScaler`` then scikit-learn's ``RBFSampler`` (n_features
    random Fourier features, gamma set so the kernel's width is 1/10 of the range).

    Examples:
        >>> import numpy as np
        >>> X = np.random.default_rng(0).random((50, 2))
        >>> [make_feature_map(k, 64).fit_transform(X).shape[1] for k in KINDS]
        [64, 64, 64]
    """
    if kind not in KINDS:
        raise ValueError(f"kind should be one of {KINDS}, got {kind!r}.")
    if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral) \
            or n_features < 1:
        raise ValueError(f"n_features should be an int >= 1, got {n_features!r}; e.g. 100.")
    d = n_coordinates
    if kind == "rbf":
        return RBFGrid(n_centres=max(1, round(n_features ** (1 / d))))
    if kind == "tiles":
        n_tilings = min(4, n_features)
        return TileCoding(n_tiles=max(1, round((n_features / n_tilings) ** (1 / d)) - 1),
                          n_tilings=n_tilings)
    from sklearn.kernel_approximation import RBFSampler
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler

    return make_pipeline(MinMaxScaler(), RBFSampler(gamma=50.0, n_components=int(n_features),
                                                    random_state=random_state))


def coordinate_features(coordinates: npt.ArrayLike, kind: str = "rbf",
                        n_features: int = 100) -> np.ndarray:
    """Phi = a feature map of a model's coordinates (e.g. ``mdp.features`` of a grid world).

    Examples:
        >>> import nsrl
        >>> coordinate_features(nsrl.gridworld(10, seed=0).features, "tiles", 100).shape[1]
        100
    """
    coordinates = np.asarray(coordinates, dtype=np.float64)
    transformer = make_feature_map(kind, n_features, coordinates.shape[1])
    return np.ascontiguousarray(transformer.fit_transform(coordinates), dtype=np.float64)
