"""``nsrl tetris play``: its JSON, its refusals (one line, status 2) and Ctrl-C."""

import json

import pytest

import nsrl.tetris
from nsrl.cli import main
from nsrl.tetris import SHIPPED, play_games, save_controller

DT10 = ",".join(f"{k}={v}" for k, v in SHIPPED["dt-10"].weights.items())


def run_json(capsys, *argv) -> dict:
    assert main(["tetris", "play", *map(str, argv), "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return json.loads(out)


def test_the_json_result_is_the_engines(capsys):
    got = run_json(capsys, "--width", 6, "--height", 8, "--features", "dellacherie-thiery",
                   "--weights", DT10, "--games", 6, "--seed", 4)
    games = play_games(SHIPPED["dt-10"], 6, width=6, height=8, seed=4)
    assert got["games"] == 6 and not got["partial"]
    assert got["mean_lines"] == pytest.approx(games.lines.mean())
    low, high = got["ci95"]
    assert low < got["mean_lines"] < high and got["pieces"] == games.pieces.sum()
    assert got["pieces_per_s"] > 0 and got["board"] == [6, 8]


def test_the_games_do_not_depend_on_jobs_or_on_how_the_controller_is_given(capsys, tmp_path):
    path = save_controller(SHIPPED["dt-10"], tmp_path / "dt10.json")
    runs = [run_json(capsys, "--width", 6, "--height", 6, *source, "--games", 5, "--jobs", jobs)
            for source, jobs in ((["--controller", "dt-10"], 1), (["--policy", path], 2),
                                 (["--features", "dellacherie-thiery", "--weights", DT10], 1))]
    assert len({(r["mean_lines"], r["pieces"]) for r in runs}) == 1


def usage_error(capsys, *argv) -> str:
    assert main(["tetris", "play", *map(str, argv)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nsrl: error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("argv, expected", [
    (["--features", "dellacherie-thiery+wells", "--weights", "holes=1"],
     "unknown feature set or feature 'wells'"),
    (["--features", "dellacherie", "--weights", "holes=-4"], "no weight for landing_height"),
    (["--features", "holes", "--weights", "holes=-4,hole=1"], "weights for hole,"),
    (["--controller", "dt-10", "--width", "3"], "argument --width: should be an int in [4, 31]"),
    (["--controller", "dt-10", "--games", "0"], "argument --games: should be an int >= 1"),
    (["--controller", "dt-30"], "--controller 'dt-30' is not shipped"),
    ([], "give the controller once"),
    (["--controller", "dt-10", "--policy", "x.json"], "give the controller once"),
    (["--policy", "no-such-file.json"], "--policy no-such-file.json: No such file"),
    (["--features", "holes"], "needs --weights"),
])
def test_bad_input_is_one_line_naming_the_fix(capsys, argv, expected):
    assert expected in usage_error(capsys, *argv)


def test_ctrl_c_prints_the_games_finished_so_far_marked_partial(capsys, monkeypatch):
    def interrupted(*args, progress=None, **kwargs):
        def stop(done, total):
            raise KeyboardInterrupt  # as Ctrl-C would, once the first games are in

        return play_games(*args, progress=stop, **kwargs)

    monkeypatch.setattr(nsrl.tetris, "play_games", interrupted)
    assert main(["tetris", "play", "--controller", "dellacherie", "--width", "6", "--height",
                 "6", "--games", "300", "--json"]) == 130
    captured = capsys.readouterr()
    got = json.loads(captured.out)
    assert got["partial"] and 0 < got["games"] < 300 and got["games_asked"] == 300
    assert "partial" in captured.err


def test_the_committed_best_learned_controller_plays_as_its_benchmark_says(capsys):
    # docs/tetris/best-10x10.json is benchmarks/tetris_best.py's pick (4,645 lines over 10,000
    # games on 10 x 10). A game's lines are about geometric (sd ~ mean), so the mean of 200
    # games has an sd of ~7% of it: +-40% is over 5 sd, and pi_0's few lines or a weak
    # controller in a wrong file (Dellacherie's 2,400) are outside.
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "docs" / "tetris" / "best-10x10.json"
    got = run_json(capsys, "--policy", path, "--board", "small", "--games", 200, "--seed", 11)
    assert got["board"] == [10, 10] and got["features"] == "dellacherie-thiery"
    assert 4_645 * 0.6 < got["mean_lines"] < 4_645 * 1.4, got
