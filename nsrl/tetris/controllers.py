"""Linear controllers: pi_w(s) = argmax over placements a of w . phi(s, a), and their files.

A controller file is JSON, ``{"features": "<feature set>", "weights": {name: value}}``, with
one weight per feature of the set (no more, no fewer); it is read with :mod:`json`, never
with pickle. The shipped controllers (:data:`SHIPPED`) are the ones the literature reports:

- ``dt-10``, ``dt-20``: Scherrer et al. (JMLR 2015), Table 2, on the 9 D-T features.
- ``dellacherie``: Dellacherie's hand-set weights (MdpTetris's ``dellacherie_initial.dat``).
- ``du``, ``bdu``: MdpTetris's ``record_du.dat`` and ``record_bdu.dat`` (BDU's per-column
  features make it a 10-column controller).

Examples:
    >>> c = SHIPPED["dellacherie"]
    >>> c.vector(10).tolist()
    [-1.0, 1.0, -1.0, -1.0, -4.0, -1.0]
    >>> Controller.from_json(c.to_json()) == c
    True
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nsrl.tetris.features import feature_names

__all__ = ["SHIPPED", "Controller", "load_controller", "parse_weights", "save_controller"]


@dataclass(frozen=True)
class Controller:
    """A linear controller: a feature set and one weight per feature.

    Attributes:
        features: a feature set (see :func:`nsrl.tetris.features.feature_names`).
        weights: feature name -> weight. The score of a placement adds the products in the
            feature set's order, not in this mapping's.
    """

    features: str
    weights: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        feature_names(self.features, 10)  # an unknown set is refused here, whatever the width
        object.__setattr__(self, "weights", {str(k): float(v) for k, v in self.weights.items()})

    def names(self, width: int) -> tuple[str, ...]:
        """The features, in the order the score adds them, on a ``width``-column board."""
        return feature_names(self.features, width)

    def vector(self, width: int) -> np.ndarray:
        """The weights in feature order.

        Raises:
            ValueError: a feature without a weight, or a weight for no feature of the set.
        """
        names = self.names(width)
        missing = [n for n in names if n not in self.weights]
        unknown = [n for n in self.weights if n not in names]
        if missing:
            raise ValueError(f"no weight for {', '.join(missing)} (features {self.features!r} "
                             f"on a {width}-column board); give one weight per feature: "
                             f"{', '.join(names)}.")
        if unknown:
            raise ValueError(f"weights for {', '.join(unknown)}, which features "
                             f"{self.features!r} on a {width}-column board does not have; "
                             f"remove them or name a feature set that has them.")
        vector = np.array([self.weights[n] for n in names], dtype=np.float64)
        if not np.isfinite(vector).all():
            raise ValueError("every weight should be a finite number")
        return vector

    def to_json(self) -> dict:
        """The file's content: ``{"features": ..., "weights": {...}}``."""
        return {"features": self.features, "weights": dict(self.weights)}

    @classmethod
    def from_json(cls, data: object, source: str = "the controller") -> Controller:
        """A controller from the parsed content of its file (ValueError if malformed)."""
        if not isinstance(data, dict) or set(data) != {"features", "weights"}:
            raise ValueError(f"{source} should be a JSON object with exactly the keys "
                             f"'features' and 'weights', e.g. {{\"features\": \"dellacherie\", "
                             f"\"weights\": {{\"landing_height\": -1, ...}}}}")
        weights = data["weights"]
        if not isinstance(data["features"], str) or not isinstance(weights, dict) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in weights.values()):
            raise ValueError(f"{source}: 'features' should be a string and 'weights' an object "
                             f"of numbers")
        return cls(data["features"], weights)


def load_controller(path: str | os.PathLike) -> Controller:
    """Read a controller file (JSON).

    Raises:
        ValueError: the file is not JSON or not a controller.
        FileNotFoundError: no such file.
    """
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON ({exc.msg} at line {exc.lineno}); a controller "
                         f"file is {{\"features\": ..., \"weights\": {{...}}}}") from None
    return Controller.from_json(data, str(path))


def save_controller(controller: Controller, path: str | os.PathLike) -> Path:
    """Write a controller file (JSON, one weight per line); returns its path."""
    path = Path(path)
    path.write_text(json.dumps(controller.to_json(), indent=2) + "\n", encoding="utf-8")
    return path


def parse_weights(text: str) -> dict[str, float]:
    """``"a=1,b=-2.5"`` -> ``{"a": 1.0, "b": -2.5}`` (ValueError naming the bad part).

    Examples:
        >>> parse_weights("holes=-4, landing_height=-1")
        {'holes': -4.0, 'landing_height': -1.0}
    """
    weights: dict[str, float] = {}
    for part in text.split(","):
        name, eq, value = part.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not eq or not name.strip() or not np.isfinite(number):
            raise ValueError(f"weights should be NAME=NUMBER pairs joined by commas, got "
                             f"{part.strip()!r}; e.g. landing_height=-1,holes=-4")
        if name.strip() in weights:
            raise ValueError(f"weight {name.strip()!r} is given twice")
        weights[name.strip()] = number
    return weights


def _named(features: str, values: list[float], width: int = 10) -> Controller:
    return Controller(features, dict(zip(feature_names(features, width), values, strict=True)))


SHIPPED: dict[str, Controller] = {
    "dt-10": _named("dellacherie-thiery",
                    [-2.18, 2.42, -2.17, -3.31, 0.95, -2.22, -0.81, -9.65, 1.27]),
    "dt-20": _named("dellacherie-thiery",
                    [-2.68, 1.38, -2.41, -6.32, 2.03, -2.71, -0.43, -9.48, 0.89]),
    "dellacherie": _named("dellacherie", [-1, 1, -1, -1, -4, -1]),
    "du": _named("du", [-12.629, 6.601974, -9.215815, -19.77356, -13.08335, -10.48747,
                        -1.611863, -24.04087]),
    "bdu": _named("bdu", [
        -13.18725, -7.652075, 7.622007, -9.044294, -1.747279, -7.569865, -5.221819,
        -0.6874555, -6.4831, -16.01383,                                   # 10 column heights
        2.356909, 2.143912, -7.351929, 1.558139, 0.433698, 3.655922, -4.673708, -1.997187,
        9.122675,                                                          # 9 |differences|
        12.36382, -40.64,                                                  # max height, holes
        -43.27153, -1.036039, -36.93346, -81.00232, -41.17906, -13.27585, -75.47524]),
}
"""The controllers the literature reports, by name (see the module's docstring)."""
