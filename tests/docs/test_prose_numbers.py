"""A number typed in a results page's prose, outside the generated markers, is reported.

The check (study.numbers.prose) flags measured-looking numbers (a decimal point or a unit) in
the prose of the results pages, unless a definition on its allow-list covers them; derived
numbers are quoted through generated markers, so an edit to one is stale.
"""

from pathlib import Path

import pytest

from study.numbers.prose import DEFINITIONS, RESULTS_PAGES, prose_numbers
from study.numbers.render import check_pages, typed_numbers

REPO = Path(__file__).resolve().parents[2]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not in {path} exactly once"
    path.write_text(text.replace(old, new))


def test_no_results_page_has_a_number_typed_in_its_prose():
    found = typed_numbers(REPO)
    assert found == [], "\n".join(map(str, found))


def test_the_19_44_m_of_reproduce_md_edited_to_19_45_m_is_caught(copy):
    page = copy / "docs" / "reproduce.md"
    _edit(page, "gamma = 0.99: <!-- gen: preset.paper.scheme-iterations -->19.44 M<!-- /gen -->",
          "gamma = 0.99: <!-- gen: preset.paper.scheme-iterations -->19.45 M<!-- /gen -->")
    found = [str(f) for f in check_pages(copy)]
    assert len(found) == 1 and found[0].startswith("docs/reproduce.md:19: ")
    assert "preset.paper.scheme-iterations" in found[0] and "19.45 M" in found[0]


def test_the_same_figure_typed_without_its_markers_is_caught(copy):
    page = copy / "docs" / "reproduce.md"
    _edit(page, "gamma = 0.99: <!-- gen: preset.paper.scheme-iterations -->19.44 M<!-- /gen -->",
          "gamma = 0.99: 19.45 M")
    found = [str(f) for f in typed_numbers(copy)]
    assert found == ["docs/reproduce.md:19: the number '19.45 M' is typed in prose: put it "
                     "inside generated markers (or, if it defines rather than measures, on "
                     "study.numbers.prose's allow-list)"]


def test_a_hand_reading_edited_on_the_page_or_in_its_file_is_caught(copy):
    _edit(copy / "docs" / "benchmarks.md", "-->0.2-0.3 ms<!--", "-->0.2-0.4 ms<!--")
    assert [f.finding.name for f in check_pages(copy)] == ["reading.dense-lu-200"]
    _edit(copy / "docs" / "benchmarks.md", "-->0.2-0.4 ms<!--", "-->0.2-0.3 ms<!--")
    _edit(copy / "benchmarks" / "results" / "readings.toml", '"0.2-0.3 ms"', '"0.2-0.4 ms"')
    _edit(copy / "benchmarks" / "results" / "runs.toml", '"before issue 22 (loaded machine)"',
          '"before a change (loaded machine)"')
    # the reading is quoted on two pages (benchmarks.md, reproduce.md): both are stale
    assert sorted(f.finding.name for f in check_pages(copy)) == [
        "perf-sweep", "reading.dense-lu-200", "reading.dense-lu-200"]


@pytest.mark.parametrize("text, flagged", [
    ("It took 14 min 54 s and 2.5 GiB.", ["14 min", "54 s", "2.5 GiB"]),
    ("A 5x speed-up, 86% of a call, 0.2-0.3 ms, loss 0.31.", ["5x", "86%", "0.2", "0.3 ms",
                                                             "0.31"]),
    ("gamma = 0.99, API(0.1) and CPI(0.1), noise 10%, close = within 10%, rho = nu (0.3) "
     "for rho = d, epsilon = 0.01, first mean below 0.5, 0.9^k", []),
    ("Section 5, eq. (12), 27 instances of 30 MDPs in 2026, Garnet(100, 4, 2).", []),
    ("1e-6, 1e308, n^-0.5 and -1.2e10", []),
    ("`--budget 15000` and `0.5 s` in code, [a link](perf.md#run-1.5) and <!-- 2.5 s -->", []),
    ("```\n3.5 s in a fenced block\n```\n", []),
    ("value <!-- gen: x -->1.5 s<!-- /gen --> and\n<!-- BEGIN generated: t -->\n| 2.5 |\n"
     "<!-- END generated: t -->", []),
])
def test_what_is_flagged_as_a_typed_number(text, flagged):
    assert [n.number for n in prose_numbers(text)] == flagged


def test_every_allow_list_entry_says_why_and_every_results_page_exists():
    assert all(len(why) > 10 for _, why in DEFINITIONS)
    assert all((REPO / page).is_file() for page in RESULTS_PAGES)
