"""The paper's statistics on hand-made data, the report and the CLI."""

import numpy as np
import pandas as pd
import pytest

from nsrl.cli import main
from nsrl.experiments.stats import final_summary, paper_stats, per_mdp


def hand_table() -> pd.DataFrame:
    """Two instances (b = 1, 2), two MDPs each, two runs, two schemes, two iterations.

    Losses: API on MDP i of instance b at iteration k, run j: 10 b + 2 i + j + k;
    PSDP: the same minus 5 (so PSDP ranks first with the same spreads).
    """
    rows = []
    for b in (1, 2):
        for i in range(2):
            for j in range(2):
                for k in (1, 2):
                    base = 10 * b + 2 * i + j + k
                    for scheme, loss in (("API", base), ("PSDP", base - 5)):
                        rows.append(dict(n_states=5, n_actions=2, branching=b, mdp=i, run=j,
                                         scheme=scheme, iteration=k, loss=float(loss), memory=1))
    return pd.DataFrame(rows)


def test_per_mdp_mean_and_std_over_runs():
    pm = per_mdp(hand_table())
    row = pm[(pm.branching == 2) & (pm.mdp == 1) & (pm.scheme == "API") & (pm.iteration == 2)]
    assert row["mean"].item() == 20 + 2 + 0.5 + 2  # runs 0 and 1
    assert row["std"].item() == 0.5  # population std of {24, 25}
    assert (pm["runs"] == 2).all()


def test_paper_statistics_overall_and_conditioned():
    pm = per_mdp(hand_table())
    st = paper_stats(pm).set_index(["scheme", "iteration"])
    # per-MDP means at k = 1: {11.5, 13.5, 21.5, 23.5}
    means = np.array([11.5, 13.5, 21.5, 23.5])
    assert st.loc[("API", 1), "mean"] == pytest.approx(means.mean())
    assert st.loc[("API", 1), "std_of_mean"] == pytest.approx(means.std())
    assert st.loc[("API", 1), "mean_of_std"] == pytest.approx(0.5)
    assert st.loc[("API", 1), "std_of_std"] == pytest.approx(0.0)
    assert st.loc[("PSDP", 2), "mean"] == pytest.approx(means.mean() + 1 - 5)
    by_b = paper_stats(pm, ["branching"]).set_index(["branching", "scheme", "iteration"])
    assert by_b.loc[(1, "API", 1), "mean"] == pytest.approx(12.5)
    assert by_b.loc[(1, "API", 1), "std_of_mean"] == pytest.approx(1.0)
    assert (by_b["mdps"] == 2).all()
    with pytest.raises(ValueError, match="condition"):
        paper_stats(pm, ["gamma"])


def test_std_of_std_sees_unequal_spreads():
    df = hand_table()
    df.loc[(df.mdp == 0) & (df.run == 1), "loss"] += 2  # MDP 0 runs now differ by 3, not 1
    st = paper_stats(per_mdp(df)).set_index(["scheme", "iteration"])
    assert st.loc[("API", 1), "mean_of_std"] == pytest.approx((1.5 + 0.5) / 2)
    assert st.loc[("API", 1), "std_of_std"] == pytest.approx(0.5)


def test_final_summary_ranks_by_final_mean():
    pm = per_mdp(hand_table())
    final = final_summary(paper_stats(pm), pm)
    assert list(final.index) == ["PSDP", "API"]
    assert list(final["rank"]) == [1, 2]


def test_reproduce_and_plot_cli(tmp_path, capsys):
    toml = tmp_path / "s.toml"
    toml.write_text('n_states = [10]\nn_actions = [2]\nbranching = [1, 2]\nn_mdps = 2\n'
                    'n_runs = 2\nn_iterations = 4\nschemes = ["api", "psdp"]\n')
    out = tmp_path / "out"
    assert main(["reproduce", "--preset", str(toml), "--out", str(out), "--backend",
                 "sequential"]) == 0
    for name in ("summary.md", "expall.png", "exp_branching.png", "stats.csv", "manifest.json"):
        assert (out / name).exists(), name
    text = (out / "summary.md").read_text()
    assert "4/4 shards" in text and "| PSDP |" in text
    assert main(["reproduce", "--preset", str(toml), "--out", str(out)]) == 2  # no --resume
    assert main(["reproduce", "--out", str(out), "--jobs", "0"]) == 2
    assert main(["plot", str(tmp_path)]) == 2  # not a results folder
    assert "error" in capsys.readouterr().err
