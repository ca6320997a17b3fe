"""docs/fidelity.md's sensitivity tables are rendered from committed result files, and the
committed tables follow from the two stored files (per_mdp.csv, reference_losses.csv)."""

import shutil
from pathlib import Path

import pandas as pd

from nsrl.experiments.sensitivity.analysis import tables
from study.numbers.render import check_pages

ROOT = Path(__file__).resolve().parents[2]
DOC, FOLDER = ROOT / "docs" / "fidelity.md", ROOT / "docs" / "sensitivity"


def _copy(tmp_path):
    for rel in ("docs", "README.md"):
        src = ROOT / rel
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / rel)
    return tmp_path


def test_the_tables_of_fidelity_md_are_those_of_the_committed_files():
    stale = [f for f in check_pages(ROOT) if "fidelity" in str(f)]
    assert stale == [], "run `python -m study.numbers` to render docs/fidelity.md from its files"


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


def _manifest(folder, sweep):
    import json

    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps(
        {"sweep": sweep.to_dict(), "fingerprint": sweep.fingerprint()}))
    return folder


def test_a_reading_joins_the_study_only_from_its_own_complete_folder(tmp_path):
    import pytest

    from nsrl.experiments.loader import load_sweep
    from study.sensitivity.readings import add_reading

    with pytest.raises(ValueError, match=r"'fastest' is not a reading.*add it to VARIANTS"):
        add_reading(tmp_path, "fastest", tmp_path)
    with pytest.raises(ValueError, match=r"does not hold the reading 'calibrated'.*run_sweep"):
        add_reading(tmp_path, "calibrated", tmp_path)  # no manifest
    other = _manifest(tmp_path / "other", load_sweep("sensitivity/default"))
    with pytest.raises(ValueError, match=r"does not hold the reading 'calibrated'"):
        add_reading(tmp_path, "calibrated", other)
    empty = _manifest(tmp_path / "empty", load_sweep("sensitivity/calibrated"))
    with pytest.raises(ValueError, match=r"no intact shard"):
        add_reading(tmp_path, "calibrated", empty)


def _study_operator_error():
    import importlib.util

    path = ROOT / "benchmarks" / "study_operator_error.py"
    spec = importlib.util.spec_from_file_location("study_operator_error", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_operator_errors_and_values_follow_from_their_script():
    """Two MDPs of benchmarks/study_operator_error.py, remeasured, give the committed rows."""
    import numpy as np

    from nsrl.exact import backend
    from nsrl.experiments.sensitivity import SWEEP
    from nsrl.experiments.shards import Shard
    from nsrl.schemes import rules

    study = _study_operator_error()
    errors = pd.read_csv(FOLDER / "operator_error.csv")
    values = pd.read_csv(FOLDER / "garnet_values.csv").set_index(study.KEYS)
    for key in ((50, 5, 1, 0), (200, 2, 10, 3)):
        mdp = SWEEP.model(Shard(*key))
        rows = errors.set_index(study.KEYS).loc[key].sort_values("draw")
        np.testing.assert_allclose(study.first_call_errors(mdp, key), rows["error"], rtol=1e-5)
        b = backend(mdp)
        np.testing.assert_allclose(
            [b.value(rules.start_policy()).mean(), b.optimal_value().mean()],
            values.loc[key, ["value_pi0", "value_star"]].to_numpy(dtype=float), rtol=1e-5)
    assert len(errors) == len(values) * study.DRAWS == 27 * SWEEP.n_mdps * study.DRAWS


def test_a_changed_operator_error_or_value_makes_the_values_quoted_from_it_stale(tmp_path):
    from study.numbers.render import render_pages

    root = _copy(tmp_path)
    shutil.copytree(ROOT / "benchmarks" / "results", root / "benchmarks" / "results")
    errors = pd.read_csv(root / "docs" / "sensitivity" / "operator_error.csv")
    errors.assign(error=errors["error"] * 10).to_csv(
        root / "docs" / "sensitivity" / "operator_error.csv", index=False)
    values = pd.read_csv(root / "docs" / "sensitivity" / "garnet_values.csv")
    values.assign(value_pi0=values["value_pi0"] / 2).to_csv(
        root / "docs" / "sensitivity" / "garnet_values.csv", index=False)
    assert {f.finding.name for f in check_pages(root)} == {
        "fidelity.operator-error.median", "fidelity.operator-error.mean",
        "fidelity.values.range", "fidelity.values.pi0", "fidelity.values.absolute-noise",
        "fidelity.values.relative-noise"}
    assert render_pages(root) == [] and check_pages(root) == []
    assert "is <!-- gen: fidelity.operator-error.median -->0.044<" in (
        root / "docs" / "fidelity.md").read_text()


def test_a_sentence_whose_claim_the_data_no_longer_support_is_reported(tmp_path):
    """'The verdicts do not move' with epsilon: a verdict that moves breaks its value."""
    root = _copy(tmp_path)
    path = root / "docs" / "sensitivity" / "sensitivity.csv"
    table = pd.read_csv(path, index_col="variant")
    table.loc["epsilon-0.1", "O3"] = "no"
    table.to_csv(path)
    found = [str(f) for f in check_pages(root) if f.finding.name == "fidelity.epsilon.held"]
    assert len(found) == 1 and "verdicts differ between the epsilon readings" in found[0]


def test_the_conclusions_counts_follow_its_comparisons():
    """C's measured figures and the page's counts come from the same comparisons."""
    from study.numbers.registry import BLOCKS

    obs = pd.read_csv(FOLDER / "observations.csv").set_index(["variant", "observation"])
    for variant in ("default", "closest-at-paper-p", "calibrated"):
        measured = obs.loc[(variant, "C"), "measured"]
        significant = BLOCKS[f"fidelity.{variant}.c-significant"].render(ROOT)
        failed = int(BLOCKS[f"fidelity.{variant}.c-failed"].render(ROOT))
        assert measured.startswith(significant.replace(" of ", "/") + " comparisons")
        assert int(significant.split()[0]) + failed == int(significant.split()[-1])
