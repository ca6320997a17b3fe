"""The numbers of README.md and docs/ are those of the committed result files.

`python -m study.numbers --check` on the repository finds nothing stale, and it does find a
figure edited by hand (in a copy of the pages, in a temporary folder), naming its block.
"""

from pathlib import Path

import pytest

import study.numbers  # noqa: F401  (registers the renderers)
from study.numbers.__main__ import main
from study.numbers.markers import render_text
from study.numbers.render import check_pages, render_pages

REPO = Path(__file__).resolve().parents[2]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) >= 1, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_every_generated_block_of_the_repository_is_current():
    findings = check_pages(REPO)
    assert findings == [], "\n".join(map(str, findings)) + "\nrun `python -m study.numbers`"


def test_a_table_figure_edited_by_hand_is_reported(copy):
    # API's final mean with the projected operator, in the table of docs/sampled.md
    _edit(copy / "docs" / "sampled.md", "| projected | 25.89 (8) |", "| projected | 24.89 (8) |")
    findings = [str(f) for f in check_pages(copy)]
    assert len(findings) == 1
    assert findings[0].startswith("docs/sampled.md:")
    assert "'sampled-final-means'" in findings[0] and "stale" in findings[0]
    assert "24.89" in findings[0] and "25.89" in findings[0]
    assert main(["--check", "--root", str(copy)]) == 1


def test_a_number_in_a_sentence_edited_by_hand_is_reported(copy):
    # pi_0's loss, an inline value of docs/sampled.md
    _edit(copy / "docs" / "sampled.md", "has a mean loss of 26.63", "has a mean loss of 25.63")
    names = [f.finding.name for f in check_pages(copy)]
    assert names == ["sampled-reference"]


def test_a_readme_figure_edited_by_hand_is_reported(copy):
    _edit(copy / "README.md", "| PSDP | 24.39 |", "| PSDP | 23.39 |")
    findings = check_pages(copy)
    assert [(f.page, f.finding.name) for f in findings] == [("README.md", "readme-paper-ranking")]


def test_a_changed_result_file_makes_its_blocks_stale_and_render_updates_them(copy):
    summary = copy / "docs" / "paper" / "summary.md"
    _edit(summary, "| PSDP | 24.393 |", "| PSDP | 24.993 |")
    stale = {f.finding.name for f in check_pages(copy)}
    assert {"paper-final-table", "readme-paper-ranking", "paper-observations-measured"} <= stale
    assert render_pages(copy) == []
    assert check_pages(copy) == []
    assert "| PSDP | 24.993 |" in (copy / "docs" / "reproduce.md").read_text()
    assert main(["--check", "--root", str(copy)]) == 0


def test_a_missing_result_file_is_named(copy):
    (copy / "benchmarks" / "results" / "bench_rollouts.txt").unlink()
    findings = check_pages(copy)
    # the two blocks that read it (docs/performance.md, docs/sampling.md), each naming the file
    assert {f.finding.name for f in findings} == {"perf-rollouts", "sampling-rollouts-speed"}
    assert all("bench_rollouts.txt is missing" in str(f) for f in findings)


def test_markers_unknown_unclosed_and_fenced():
    renderers = {"a": lambda: "1"}
    text = ("x <!-- gen: a -->0<!-- /gen --> <!-- gen: b -->2<!-- /gen -->\n"
            "<!-- BEGIN generated: a -->\nold\n<!-- END generated: a -->\n"
            "<!-- BEGIN generated: c -->\nnever closed\n"
            "```\n<!-- gen: example -->9<!-- /gen -->\n```\n")
    out, findings = render_text(text, renderers)
    problems = {(f.name, f.problem.split(":")[0]) for f in findings}
    assert problems == {("a", "stale"), ("b", "no renderer is registered under this name "
                                                "(register one with study.numbers.registry.block)"),
                        ("c", "opening marker without its closing marker")}
    assert "<!-- gen: a -->1<!-- /gen -->" in out
    assert "<!-- BEGIN generated: a -->\n1\n<!-- END generated: a -->" in out
    assert "<!-- gen: example -->9<!-- /gen -->" in out


def test_an_inline_value_at_the_start_of_a_line_is_reported():
    _, findings = render_text("text\n<!-- gen: a -->1<!-- /gen --> more", {"a": lambda: "1"})
    assert [f.problem.split(",")[0] for f in findings] == ["an inline value starts its line"]


def test_a_paper_run_with_observations_is_quoted_from_its_summary(copy):
    """A paper summary's observation table is what the pages quote (here another run's)."""
    sampled = (copy / "docs" / "sampled" / "projected" / "summary.md").read_text()
    section = sampled[sampled.index("## Section 5's observations"):]
    summary = copy / "docs" / "paper" / "summary.md"
    text = summary.read_text()
    if "## Section 5's observations" in text:
        text = text[: text.index("## Section 5's observations")]
    summary.write_text(text.rstrip() + "\n\n" + section)
    assert render_pages(copy) == []
    readme = (copy / "README.md").read_text()
    assert "Verdicts of the observation checks on this run" in readme
    assert "O3 holds; O1, O2, O4, O5, O6 and C do not." in readme  # the projected variant's
    reproduce = (copy / "docs" / "reproduce.md").read_text()
    assert "is that run's (created" in reproduce
    assert check_pages(copy) == []


@pytest.mark.parametrize(("result", "old", "new", "expected"), [
    # a slope of the greedy-error study: the sentence of slopes (docs/sampling.md)
    ("study_greedy_error.txt", "| 0.0024 | 0.00017 | -1.11 |", "| 0.0024 | 0.00017 | -1.31 |",
     {"sampling-greedy-slopes", "sampling-greedy-error"}),
    # C(2,1,0) at n_S = 100, b = 2: the ratio and the spread quoted by docs/bounds.md
    ("garnet_constants.txt", "| 94.64 | 94.74 |", "| 94.64 | 98.74 |",
     {"bounds-garnet-constants", "bounds-ratio-100", "bounds-all-policy-spread"}),
    # one of the three vector-env runs at 10^6 states quoted by docs/scale.md, and their swing
    ("bench_scale_session_runs.txt", "| 34.1 M |", "| 24.1 M |",
     {"scale-vecenv-runs", "scale-vecenv-swing"}),
    # the quiet run's native env (numba): its table and the values docs/envs.md computes from it
    ("bench_envs_quiet.txt", "numba, N=4096           54.817", "numba, N=4096           44.817",
     {"perf-envs-quiet", "envs-drift", "envs-numpy-share", "envs-step-us"}),
    # API(0.1) after issue 20 made faster: the table and the sentence naming the slower schemes
    ("bench_exact_issue20_new_1.txt", "api(0.1)      1.663", "api(0.1)      1.263",
     {"perf-exact", "scale-exact-schemes"}),
    # PSDP's bound on the first Garnet of docs/bounds.md now the best of its row
    ("bounds_measured.txt", "| psdp | 2.45772 | 126.629 |", "| psdp | 2.45772 | 26.629 |",
     {"bounds-measured-table", "bounds-measured-ranking"}),
    # the grid world's v* at 10^6 states quoted by docs/bigger.md
    ("bench_bigger_build.txt", "| 899636 | 3.4 | 6.0 | 91.5 |", "| 899636 | 3.4 | 6.0 | 81.5 |",
     {"bigger-build"}),
])
def test_a_changed_study_output_makes_the_values_read_from_it_stale(copy, result, old, new,
                                                                     expected):
    _edit(copy / "benchmarks" / "results" / result, old, new)
    assert {f.finding.name for f in check_pages(copy)} == expected
    assert render_pages(copy) == [] and check_pages(copy) == []


def test_a_changed_head_to_head_run_updates_the_values_computed_from_the_runs(copy):
    """The sb3 values are computed from the per-checkpoint CSVs (means, per-seed comparisons)."""
    import pandas as pd

    csv = copy / "benchmarks" / "results" / "sb3_head_to_head_dqn.csv"
    runs = pd.read_csv(csv)
    runs.loc[runs["problem"] == "garnet", "loss"] *= 10  # DQN ten times worse on the Garnet
    runs.to_csv(csv, index=False)
    stale = {f.finding.name for f in check_pages(copy)}
    assert {"sb3.garnet.dqn.1e6", "sb3-dqn-range-1e6", "sb3-instances-1e5",
            "sb3-dqn-rise"} <= stale
    assert "sb3-head-to-head" not in stale  # the table is the benchmark's text output
    assert render_pages(copy) == [] and check_pages(copy) == []
    sb3 = (copy / "docs" / "sb3.md").read_text()
    assert "LSPI is below DQN on 5 instances" in sb3


def test_a_changed_bigger_run_updates_its_tables_and_the_claims_computed_from_them(copy):
    """docs/bigger.md's tables and answer read the complete run's per-variant statistics."""
    stats = copy / "docs" / "bigger" / "full_run" / "car-exact" / "stats_n_states.csv"
    # CPI(0.1)'s final loss on the 10^4 car with the exact operator, 25.93 -> 20.53: now
    # within 10% of API(0.1)'s 20.07, so O3's count of close cases goes from 11 to 12
    _edit(stats, "10000,CPI(0.1),10,25.928566979551,", "10000,CPI(0.1),10,20.528566979551,")
    stale = {f.finding.name for f in check_pages(copy)}
    assert stale == {"bigger-final.car.10000", "bigger-answer-ranks", "bigger-answer-o3"}
    assert render_pages(copy) == [] and check_pages(copy) == []
    page = (copy / "docs" / "bigger.md").read_text()
    assert "| CPI(0.1) | 20.53 | 47.23 | 22.77 | 47.88 |" in page
    assert "within 10% of each other in 12 of 16 cases" in page


def test_a_changed_bigger_session_log_updates_the_run_times(copy):
    sessions = copy / "docs" / "bigger" / "full_run" / "grid-lstdq" / "sessions.jsonl"
    _edit(sessions, '"elapsed": 506.87, "cpu_seconds": 381.81', '"elapsed": 506.87, '
          '"cpu_seconds": 481.81')
    stale = {f.finding.name for f in check_pages(copy)}
    assert stale == {"bigger-run-totals", "bigger-run-efficiency", "bigger-run-dask",
                     "bigger-run-drop-lstdq", "powered-projection", "powered-projection-table",
                     "powered-cost-table", "powered-cost-ratio"}  # measured beside
    # projected, and the measured / projected ratio of the committed variants
    assert render_pages(copy) == [] and check_pages(copy) == []
    assert "2 787 worker CPU s" in (copy / "docs" / "bigger.md").read_text()


def test_a_changed_powered_analysis_moves_its_family_marks_and_edges(copy):
    """The answer's marks and edges read the committed comparisons and margins."""
    run = copy / "docs" / "bigger" / "powered_run"
    # CPI+ below CPI(0.1) on grid-projected-1e4: significant over the family -> in its
    # variant only ("**" -> "*" in O2's table; the counts and the lists move with it)
    _edit(run / "bigger-powered_comparisons.csv",
          "grid-projected-1e4,grid,projected,0.007933994693676416,True",
          "grid-projected-1e4,grid,projected,0.07933994693676416,False")
    stale = {f.finding.name for f in check_pages(copy)}
    assert {"powered-answer-o2", "powered-significant", "powered-family-holm",
            "powered-stars.o2"} <= stale
    assert "powered-answer-o3" not in stale and "powered-edges" not in stale
    # O3's gap on the grid world with the projected operator, 10.02% with a standard error
    # of 6.3 points: on the edge; with a standard error of 0.01 point it is firm
    _edit(run / "bigger-powered_margins.csv",
          "-0.00020302456836510108,0.0632610267091711,False,True,grid,projected",
          "-0.00020302456836510108,0.0001,False,False,grid,projected")
    stale = {f.finding.name for f in check_pages(copy)}
    assert {"powered-answer-o3", "powered-edges", "powered-verdicts.o3",
            "powered-summary"} <= stale
    assert render_pages(copy) == [] and check_pages(copy) == []
    page = (copy / "docs" / "bigger.md").read_text()
    assert "| grid world, 1e4 | 4.33 [1.49, 7.18] | -1.34 [-1.71, -0.97]* |" in page
    assert ("does not hold: API(0.1) and CPI(0.1) apart 10.02%, against <= 10%: margin "
            "-0.02 pp, se 0.01 pp") in page
