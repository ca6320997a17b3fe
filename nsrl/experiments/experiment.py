"""An experiment: one question, the sweeps that answer it and its analysis (bsuite's unit).

Each experiment is a folder of :mod:`nsrl.experiments` (``paper/``, ``quick/``,
``sensitivity/``, ``sampled/``) holding its sweep as data (``sweep.py``) and, where it has
one beyond the report every results folder gets (:mod:`nsrl.experiments.report`: statistics,
figures, section 5's observations), its analysis (``analysis.py``). One registry
(:mod:`nsrl.experiments.registry`) lists them for the command line and the Python API alike.

An experiment is a base protocol (a :class:`~nsrl.experiments.sweep.Sweep`) and, for a study
that compares readings or operators, named *variants*, each changing a few fields: every
variant is an ordinary resumable results folder ``OUT/<variant>/``, and the analysis writes
the combined table in ``OUT``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nsrl.experiments.sweep import Sweep


@dataclass(frozen=True)
class Experiment:
    """An experiment of nsrl (module docstring).

    Attributes:
        name: the name ``nsrl reproduce --preset`` and :func:`load_experiment` take.
        base: its protocol.
        variants: variant name -> the fields it changes; empty: the base sweep alone.
        question: what it answers, one line (the title of its table).
        analysis: ``analysis(out, experiment) -> [written paths]``, run once every sweep is
            complete (None: the per-folder report is the whole analysis).
        analysis_reads: files of ``out`` that an earlier analysis wrote and a later one
            reads back (a cache of values costly to recompute): copied into the folder the
            analysis runs in, beside the variants' folders.
    """

    name: str
    base: Sweep
    variants: dict = field(default_factory=dict)
    question: str = ""
    analysis: Callable | None = None
    analysis_reads: tuple[str, ...] = ()

    def sweeps(self) -> dict[str, Sweep]:
        """Variant -> sweep (one sweep named ``""`` for an experiment without variants).

        Each variant's sweep is built (and so checked) once, the first time it is asked for.
        """
        return dict(self._sweeps)

    @functools.cached_property
    def _sweeps(self) -> dict[str, Sweep]:
        if not self.variants:
            return {"": self.base}
        return {name: self.base.replace(name=f"{self.name}-{name}", **change)
                for name, change in self.variants.items()}

    def folder(self, out, variant: str) -> Path:
        """Where ``variant``'s results go: ``out`` itself, or ``out/<variant>``.

        Raises:
            ValueError: ``out`` is an empty or blank string (not the current folder).
        """
        from nsrl.experiments.storage import check_named

        check_named(out)
        return Path(out) / variant if variant else Path(out)

    def holds(self, out) -> bool:
        """Whether ``out`` is (or has begun to be) a results folder of this experiment."""
        return any((self.folder(out, v) / "manifest.json").exists() for v in self.sweeps())
