"""The pass-scoped memo of the docs readers: one read per pass, nothing kept between passes."""

import pandas as pd

from study.numbers.sources import memo, one_pass, read_text


def test_memo_runs_once_per_argument_within_a_pass_and_hands_out_copies():
    calls = []

    @memo
    def table(root, rel):
        calls.append(rel)
        return pd.DataFrame({"x": [1, 2]})

    with one_pass():
        first = table("r", "a.csv")
        first.loc[0, "x"] = 99  # a caller modifying its result
        second = table("r", "a.csv")
        table("r", "b.csv")
    assert calls == ["a.csv", "b.csv"]
    assert second["x"].tolist() == [1, 2]
    table("r", "a.csv")  # outside a pass: runs again
    assert calls == ["a.csv", "b.csv", "a.csv"]


def test_a_file_edited_between_two_passes_is_read_again(tmp_path):
    (tmp_path / "f.txt").write_text("one")
    with one_pass():
        assert read_text(tmp_path, "f.txt") == "one"
    (tmp_path / "f.txt").write_text("two")
    with one_pass():
        assert read_text(tmp_path, "f.txt") == "two"
