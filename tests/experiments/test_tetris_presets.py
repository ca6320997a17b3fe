"""The Tetris presets: tetris-tiny takes tetris-small's path (every scheme with CBMPI's step,
API with DPI's) in seconds, the same shards with one worker or two; the presets' protocol."""

import runpy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import nsrl
from nsrl.cli import main
from nsrl.experiments import load_experiment
from nsrl.tetris import load_controller

ROOT = Path(__file__).resolve().parents[2]


def _shards(out: Path) -> pd.DataFrame:
    keys = ["width", "height", "mdp", "scheme", "run", "iteration"]
    return pd.read_parquet(out / "shards").sort_values(keys).reset_index(drop=True)


def test_tetris_tiny_runs_every_scheme_and_dpi_the_same_on_two_workers(tmp_path,
                                                                       monkeypatch):
    one, two = tmp_path / "one", tmp_path / "two"
    assert main(["reproduce", "--preset", "tetris-tiny", "--out", str(one), "--quiet",
                 "--backend", "sequential"]) == 0
    assert main(["reproduce", "--preset", "tetris-tiny", "--out", str(two), "--quiet",
                 "--jobs", "2", "--no-plot"]) == 0
    cbmpi = _shards(one / "cbmpi")
    assert sorted(cbmpi.scheme.unique()) == ["API", "API(0.1)", "CPI(0.1)", "CPI+", "NSPI(2)",
                                             "NSPI(5)", "PSDP"]
    assert "loss" not in cbmpi.columns and np.isfinite(cbmpi.score).all()
    assert set(cbmpi.games) == {6, 10} and (cbmpi.samples > 0).all()
    assert set(_shards(one / "dpi").scheme) == {"API"}
    for variant in ("cbmpi", "dpi"):
        pd.testing.assert_frame_equal(_shards(one / variant), _shards(two / variant))
    summary = (one / "cbmpi" / "summary.md").read_text()
    assert "lines" in summary
    assert "gamma: the operator's own (the sweep's 0.99 is not used)" in summary  # games end
    final = pd.read_csv(one / "tetris_final.csv")  # the experiment's analysis, both variants
    assert set(final.variant) == {"cbmpi", "dpi"} and (one / "tetris_curves.png").exists()
    assert "Holm over all 21 pairs" in (one / "tetris.md").read_text()
    # benchmarks/tetris_best.py rebuilds a run's controller from the sweep's seeds: it scores
    # on the shard's games what the shard recorded (the script raises otherwise).
    script = runpy.run_path(str(ROOT / "benchmarks" / "tetris_best.py"))
    best = tmp_path / "best.json"
    monkeypatch.setattr("sys.argv", ["tetris_best.py", "--results", str(one), "--preset",
                                     "tetris-tiny", "--candidates", "2", "--games", "4",
                                     "--out", str(tmp_path / "best.txt"), "--save", str(best)])
    script["main"]()
    assert load_controller(best).features == "dellacherie-thiery"
    text = (tmp_path / "best.txt").read_text()
    assert text.count("| candidate") == 2
    # The header is the command as run, every option, and the install it ran on.
    command, install = text.splitlines()[:2]
    assert f"--save {best}" in command and f"--out {tmp_path / 'best.txt'}" in command
    assert install.startswith("# nsrl ") and install.endswith(str(Path(nsrl.__file__).parent))
    tiny = load_experiment("tetris-tiny")
    assert set(script["candidates"](one, tiny, 50, ["dpi"]).variant) == {"dpi"}
    assert set(script["candidates"](one, tiny, 50).variant) == {"cbmpi", "dpi"}
    with pytest.raises(ValueError, match="not variants of 'tetris-tiny'"):
        script["candidates"](one, tiny, 5, ["cbmpi", "papers"])


def test_the_comparisons_call_the_scheme_of_more_lines_better():
    from nsrl.experiments.tetris.analysis import comparisons

    index = pd.MultiIndex.from_product([[0], range(8)], names=["n_states", "mdp"])
    lines = np.arange(8.0)
    table = pd.DataFrame({"A": 1000 + 10 * lines, "B": 900 + 10 * lines + lines % 2,
                          "C": 1000 + 10 * lines + np.array([1, -1, 2, -2, 3, -3, 1, -1])},
                         index=index)
    c = comparisons({"v": table}).set_index(["a", "b"])
    assert c.loc[("A", "B"), "better"] == "A" and c.loc[("A", "B"), "diff"] > 0
    assert c.loc[("A", "C"), "better"] == ""  # differences of both signs, mean 0
    assert c.loc[("A", "B"), "p_holm"] >= c.loc[("A", "B"), "p_t"]


def test_the_presets_are_the_papers_protocol():
    small = load_experiment("tetris-small").sweeps()
    assert small["cbmpi"].operator.options["budget"] == 8_000_000
    assert small["cbmpi"].n_iterations == 10 and small["cbmpi"].n_mdps >= 10
    assert small["dpi"].operator.name == "dpi" and small["dpi"].scheme_names == ("API",)
    papers = small["cbmpi-m2-cmaes"]  # CBMPI as NIPS 2013 ran it: m = 2, CMA-ES, no warm start
    assert papers.operator.name == "cbmpi" and papers.scheme_names == ("API",)
    assert papers.operator.options == {"budget": 8_000_000, "m": 2, "fit": "cmaes",
                                       "warm_start": False}
    decay = small["cbmpi-decay"]  # not the papers': the critic's horizon bounded
    assert decay.operator.options == {"budget": 8_000_000, "critic_decay": 0.7}
    assert decay.scheme_names == small["cbmpi"].scheme_names  # every scheme, as the preset
    large = load_experiment("tetris-large").sweeps()[""]
    assert large.operator.options["budget"] == 16_000_000 and large.n_iterations >= 6
    assert large.n_mdps >= 3 and large.estimate.final_games >= 20


def test_the_curves_have_a_panel_per_variant_of_several_schemes(tmp_path):
    from matplotlib.image import imread

    from nsrl.experiments.tetris.analysis import plot

    def curve(schemes):
        return pd.DataFrame([{"scheme": s, "iteration": k, "mean": 100.0 * k, "low": 90.0 * k,
                              "high": 110.0 * k} for s in schemes for k in (1, 2, 3)])

    one = plot({"cbmpi": curve(["API", "PSDP"]), "dpi": curve(["API"])}, 10, tmp_path / "1.png")
    two = plot({"cbmpi": curve(["API", "PSDP"]), "dpi": curve(["API"]),
                "cbmpi-decay": curve(["API", "PSDP"])}, 10, tmp_path / "2.png")
    (h1, w1, _), (h2, w2, _) = imread(one).shape, imread(two).shape
    assert h1 == h2 and w2 == 2 * w1  # the API-only variant joins the first panel
