"""Controller files: JSON in and out, and refusals that name the fix."""

import json

import pytest

from nsrl.tetris import SHIPPED, Controller, load_controller, parse_weights, save_controller


def test_a_saved_controller_reads_back_equal(tmp_path):
    for name, controller in SHIPPED.items():
        path = save_controller(controller, tmp_path / f"{name}.json")
        assert load_controller(path) == controller
        assert set(json.loads(path.read_text())) == {"features", "weights"}


def test_the_shipped_controllers_have_one_weight_per_feature():
    sizes = {name: len(c.vector(10)) for name, c in SHIPPED.items()}
    assert sizes == {"dt-10": 9, "dt-20": 9, "dellacherie": 6, "du": 8, "bdu": 28}


@pytest.mark.parametrize("weights, message", [
    ({"landing_height": -1.0}, "no weight for eroded_piece_cells"),
    ({**SHIPPED["dellacherie"].weights, "holez": 1.0}, "weights for holez"),
])
def test_missing_or_unknown_weights_are_refused(weights, message):
    with pytest.raises(ValueError, match=message):
        Controller("dellacherie", weights).vector(10)


def test_bdu_is_a_10_column_controller():
    with pytest.raises(ValueError, match="no weight for height_10"):
        SHIPPED["bdu"].vector(11)


@pytest.mark.parametrize("text, message", [
    ("[1, 2]", "exactly the keys 'features' and 'weights'"),
    ('{"features": "dellacherie", "weights": {"holes": "x"}}', "an object of numbers"),
    ('{"features": "tetris", "weights": {}}', "unknown feature set or feature 'tetris'"),
    ("{oops", "is not JSON"),
])
def test_malformed_files_are_refused(tmp_path, text, message):
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_controller(path)


def test_weights_on_the_command_line():
    assert parse_weights("a=1,b=-2.5e-1") == {"a": 1.0, "b": -0.25}
    for bad in ("a", "a=", "a=x", "a=1,a=2", "=1"):
        with pytest.raises(ValueError):
            parse_weights(bad)
