"""docs/fidelity.md's sensitivity tables are rendered from committed result files, and the
committed tables follow from the two stored files (per_mdp.csv, reference_losses.csv)."""

import shutil
from pathlib import Path

import pandas as pd

from nsrl.docs.render import check_pages
from nsrl.experiments.sensitivity.analysis import tables

ROOT = Path(__file__).resolve().parents[2]
DOC, FOLDER = ROOT / "docs" / "fidelity.md", ROOT / "docs" / "sensitivity"


def _copy(tmp_path):
    for rel in ("docs", "README.md"):
        src = ROOT / rel
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / rel)
    return tmp_path


def test_the_tables_of_fidelity_md_are_those_of_the_committed_files():
    stale = [f for f in check_pages(ROOT) if "fidelity" in str(f)]
    assert stale == [], "run `python -m nsrl.docs` to render docs/fidelity.md from its files"


def test_a_figure_edited_by_hand_is_caught(tmp_path):
    root = _copy(tmp_path)
    text = DOC.read_text()
    start = text.index("<!-- BEGIN generated: fidelity-means -->")
    row = text.index("| default |", start)
    cell = text.index(" | ", row + len("| default |")) + 3  # API's final mean
    (root / "docs" / "fidelity.md").write_text(text[:cell] + "1" + text[cell:])
    found = [str(f) for f in check_pages(root)]
    assert any("fidelity-means" in f and "stale" in f for f in found), found


def test_the_committed_tables_follow_from_the_stored_files(tmp_path):
    for name in ("per_mdp.csv", "reference_losses.csv"):
        shutil.copy(FOLDER / name, tmp_path / name)
    tables(tmp_path)
    for name in ("sensitivity.csv", "robustness.csv", "observations.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / name), pd.read_csv(FOLDER / name))
