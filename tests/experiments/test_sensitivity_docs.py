"""docs/fidelity.md's sensitivity tables are rendered from committed result files, and the
committed tables follow from the two stored files (per_mdp.csv, reference_losses.csv)."""

import shutil
from pathlib import Path

import pandas as pd

from nsrl.experiments.sensitivity.analysis import render, tables

ROOT = Path(__file__).resolve().parents[2]
DOC, FOLDER = ROOT / "docs" / "fidelity.md", ROOT / "docs" / "sensitivity"


def test_the_tables_of_fidelity_md_are_those_of_the_committed_files():
    assert render(DOC, FOLDER) == DOC.read_text(), (
        "docs/fidelity.md differs from its result files: run `python -m "
        "nsrl.experiments.sensitivity docs/sensitivity docs/fidelity.md`")


def test_a_figure_edited_by_hand_is_caught(tmp_path):
    text = DOC.read_text()
    start = text.index("<!-- sensitivity:means -->")
    row = text.index("| default |", start)
    cell = text.index(" | ", row + len("| default |")) + 3  # API's final mean
    edited = text[:cell] + "1" + text[cell:]
    (tmp_path / "fidelity.md").write_text(edited)
    assert render(tmp_path / "fidelity.md", FOLDER) == text


def test_the_committed_tables_follow_from_the_stored_files(tmp_path):
    for name in ("per_mdp.csv", "reference_losses.csv"):
        shutil.copy(FOLDER / name, tmp_path / name)
    tables(tmp_path)
    for name in ("sensitivity.csv", "robustness.csv", "observations.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / name), pd.read_csv(FOLDER / name))
