"""Feature names and the registered feature sets, by name (``FEATURE_SETS``).

Every feature is read on the afterstate of a placement, once full lines are removed, except
``landing_height`` and ``eroded_piece_cells``, which describe the placement itself. The
definitions are in docs/tetris.md and, as readable code, in :mod:`nsrl.tetris.reference`.

A feature set is named by a registered name, a single feature's name, or several of them
joined by ``+`` (``"dellacherie-thiery+rbf-heights"``); its features come in that order, which
is also the order a controller adds up ``w . phi``. The per-column features of Bertsekas and
Ioffe (``height_0`` ... and ``height_diff_0`` ...) depend on the board's width.

Examples:
    >>> feature_names("dellacherie", 10)
    ('landing_height', 'eroded_piece_cells', 'row_transitions', 'column_transitions', \
'holes', 'dellacherie_wells')
    >>> len(feature_names("bertsekas", 10)), len(feature_names("du+rbf-heights", 10))
    (22, 13)
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["FEATURE_SETS", "SCALAR_FEATURES", "feature_index", "feature_names"]

SCALAR_FEATURES = (
    "landing_height",      # MdpTetris id 1
    "eroded_piece_cells",  # 2
    "row_transitions",     # 3
    "column_transitions",  # 4
    "holes",               # 5
    "board_wells",         # -6: the cheaper wells of the D-T features
    "hole_depth",          # -1
    "rows_with_holes",     # -2
    "pattern_diversity",   # -14
    "dellacherie_wells",   # 6: Dellacherie's own wells
    "max_height",          # 7: the height of the highest column ("wall height")
    "constant",            # 0
    "rbf_0", "rbf_1", "rbf_2", "rbf_3", "rbf_4",  # the JMLR paper's height RBFs
)
"""Features that do not depend on the width, in the kernels' order (their index there)."""

N_SCALAR = len(SCALAR_FEATURES)
_DELLACHERIE = SCALAR_FEATURES[:5] + ("dellacherie_wells",)
_DT = SCALAR_FEATURES[:9]


def _heights(width: int) -> tuple[str, ...]:
    return tuple(f"height_{j}" for j in range(width))


def _diffs(width: int) -> tuple[str, ...]:
    return tuple(f"height_diff_{j}" for j in range(width - 1))


FEATURE_SETS: dict[str, Callable[[int], tuple[str, ...]]] = {
    # Dellacherie's controller: MdpTetris's dellacherie_initial.dat, ids 1-6.
    "dellacherie": lambda w: _DELLACHERIE,
    # Thiery and Scherrer's 9 (the D-T features of the JMLR 2015 paper), in its order.
    "dellacherie-thiery": lambda w: _DT,
    # DU: Dellacherie's 6 + hole depth + rows with holes (MdpTetris's record_du.dat order).
    "du": lambda w: _DELLACHERIE + ("hole_depth", "rows_with_holes"),
    # Bertsekas and Ioffe: constant, w heights, w - 1 |differences|, max height, holes (2w + 2).
    "bertsekas": lambda w: ("constant", *_heights(w), *_diffs(w), "max_height", "holes"),
    # BDU: Bertsekas's without the constant, then DU's others (record_bdu.dat order).
    "bdu": lambda w: (*_heights(w), *_diffs(w), "max_height", "holes", *_DELLACHERIE[:4],
                      "dellacherie_wells", "hole_depth", "rows_with_holes"),
    # Five Gaussian bumps of the mean column height, for value functions (JMLR 2015).
    "rbf-heights": lambda w: SCALAR_FEATURES[12:17],
}


def _single_names(width: int) -> tuple[str, ...]:
    return SCALAR_FEATURES + _heights(width) + _diffs(width)


def feature_names(spec: str, width: int) -> tuple[str, ...]:
    """The features of ``spec`` on a board ``width`` columns wide, in order.

    Args:
        spec: a registered set, a feature's name, or several joined by ``+``.
        width: the board's width (the per-column features depend on it).

    Raises:
        ValueError: an unknown name, or a feature named twice.

    Examples:
        >>> feature_names("constant+holes", 10)
        ('constant', 'holes')
    """
    singles = set(_single_names(width))
    names: list[str] = []
    for part in str(spec).split("+"):
        part = part.strip()
        if part in FEATURE_SETS:
            names.extend(FEATURE_SETS[part](width))
        elif part in singles:
            names.append(part)
        else:
            raise ValueError(
                f"unknown feature set or feature {part!r} in {spec!r}; use one of the sets "
                f"{', '.join(FEATURE_SETS)} or a feature name ({', '.join(SCALAR_FEATURES[:4])}, "
                f"..., height_0..height_{width - 1}), joined by '+'.")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"feature set {spec!r} names {', '.join(twice)} twice; name each "
                         f"feature once.")
    return tuple(names)


def feature_index(names: tuple[str, ...], width: int) -> list[int]:
    """Where each feature sits in the kernels' vector: scalars, then heights, then differences.

    Examples:
        >>> feature_index(("holes", "height_0", "height_diff_0"), 10)
        [4, 17, 27]
    """
    every = _single_names(width)
    position = {name: k for k, name in enumerate(every)}
    return [position[n] for n in names]


def n_kernel_features(width: int) -> int:
    """Length of the kernels' feature vector on a board ``width`` columns wide."""
    return N_SCALAR + 2 * width - 1
