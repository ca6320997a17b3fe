"""The schema derived from dataclass annotations (nsrl.params) and Sweep's use of it."""

import dataclasses
import json
import math
from dataclasses import dataclass

import pytest

from nsrl.experiments.loader import load_sweep
from nsrl.experiments.registry import EXPERIMENTS
from nsrl.experiments.sweep import Sweep
from nsrl.params import conform_fields, schema, spec


@dataclass(frozen=True)
class Every:
    """One field per supported annotation, with rules."""

    count: int = spec(3, ge=1, le=10)
    rate: float = spec(0.5, gt=0, lt=1)
    flag: bool = False
    mode: str = spec("best", choices=("best", "first"))
    sizes: tuple[int, ...] = spec((1, 2), ge=1, distinct=True)
    names: tuple[str, ...] = spec(("a",), min_items=0)
    limit: int | None = spec(None, ge=0)
    scale: float | None = None

    def __post_init__(self):
        conform_fields(self, "option")


def test_valid_values_are_stored_canonically():
    e = Every(count=10, rate=0.25, flag=True, mode="first", sizes=[3, 1], names=[], limit=0,
              scale=2)
    assert (e.count, e.rate, e.sizes, e.names, e.limit, e.scale) == (10, 0.25, (3, 1), (), 0, 2.0)
    assert isinstance(e.scale, float)
    assert Every() == Every(**{f.name: f.default for f in dataclasses.fields(Every)})


@pytest.mark.parametrize(("field", "value", "error", "says"), [
    ("count", "3", TypeError, "an int"), ("count", 3.0, TypeError, "got 3.0 (a float)"),
    ("count", True, TypeError, "(a bool)"), ("count", 0, ValueError, "in [1, 10]"),
    ("count", 11, ValueError, "in [1, 10]"), ("count", None, TypeError, "None"),
    ("rate", "0.5", TypeError, "a finite float"), ("rate", math.nan, ValueError, "nan"),
    ("rate", math.inf, ValueError, "inf"), ("rate", 1.0, ValueError, "in (0, 1)"),
    ("rate", False, TypeError, "(a bool)"),
    ("flag", "false", TypeError, "a bool (true or false)"), ("flag", 0, TypeError, "a bool"),
    ("mode", "worst", ValueError, "one of 'best', 'first'"), ("mode", 1, TypeError, "a string"),
    ("sizes", "12", TypeError, "a non-empty list of ints"), ("sizes", [], ValueError, "0 items"),
    ("sizes", [1, "2"], TypeError, "item '2'"), ("sizes", [1, 0], ValueError, "out of range"),
    ("sizes", [2, 2], ValueError, "repeated"), ("sizes", 5, TypeError, "got 5 (an int)"),
    ("names", ["a", 1], TypeError, "a list of strings"),
    ("limit", -1, ValueError, ">= 0 (or left out)"), ("scale", "x", TypeError, "finite float"),
])
def test_wrong_values_are_refused_naming_the_field(field, value, error, says):
    with pytest.raises(error) as info:
        Every(**{field: value})
    message = str(info.value)
    assert message.startswith(f"option {field!r} should be ") and says in message, message


def test_the_example_is_the_default_as_toml():
    with pytest.raises(TypeError, match=r"; e\.g\. sizes = \[1, 2\]\.$"):
        Every(sizes="x")
    with pytest.raises(TypeError, match=r"; e\.g\. flag = false\.$"):
        Every(flag="no")


@pytest.mark.parametrize("annotation", [list[int], int | dict, tuple[int, int], bytes, set])
def test_unsupported_annotations_are_refused_at_definition(annotation):
    cls = dataclasses.make_dataclass("Bad", [("x", annotation, dataclasses.field(default=None))])
    with pytest.raises(TypeError, match="unsupported field annotation"):
        schema(cls)


# --- Sweep -------------------------------------------------------------------------------

@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(Sweep)])
def test_every_sweep_field_refuses_a_wrong_type_by_name(field):
    """Generic over the annotations: holds for fields added later, with no test to write."""
    with pytest.raises(TypeError, match=f"sweep field {field!r} should be"):
        Sweep(**{field: 3j})  # a complex number is no field's type


def test_a_component_s_new_option_needs_no_sweep_field():
    """Options live with their component: a scheme's or operator's declaration is all a sweep
    reads, so an option added there is set (and checked) in a sweep with no sweep change."""
    from nsrl.params import param
    from nsrl.schemes import API, register_scheme

    class Patient(API):
        params = {"patience": param(int, 3, ge=1)}

        def __init__(self, patience: int = 3) -> None:
            self.patience = patience

    register_scheme("patient", Patient)
    sweep = Sweep(schemes=[{"name": "patient", "options": {"patience": 5}}])
    assert sweep.scheme("patient").patience == 5
    with pytest.raises(ValueError, match="scheme 'patient' option 'patience' should be an int"):
        Sweep(schemes=[{"name": "patient", "options": {"patience": "5"}}])
    assert Sweep.from_dict({"schemes": [{"name": "patient", "options": {"patience": 2}}],
                            "n_mdps": 2}).n_mdps == 2


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_presets_survive_their_manifest(name):
    sweep = EXPERIMENTS[name].base
    back = Sweep.from_dict(json.loads(json.dumps(sweep.to_dict())))
    assert back == sweep and back.fingerprint() == sweep.fingerprint()


def test_equal_values_have_one_fingerprint():
    assert Sweep(noise=1).fingerprint() == Sweep(noise=1.0).fingerprint()
    assert Sweep(n_states=[50, 100]).fingerprint() == Sweep(n_states=(50, 100)).fingerprint()


def test_sweep_cross_field_rules():
    with pytest.raises(ValueError, match="branching"):
        Sweep(n_states=(5,), branching=(10,))
    with pytest.raises(ValueError, match="shards"):
        Sweep(n_mdps=10**6)
    with pytest.raises(ValueError, match="sweep field 'schemes': unknown scheme"):
        Sweep(schemes=("api", "nope"))
    with pytest.raises(ValueError, match="distinct schemes"):
        Sweep(schemes=("api", "API"))


def test_the_published_paper_run_keeps_its_fingerprint():
    """Fields added since docs/paper was computed do not change what --resume accepts."""
    from pathlib import Path

    manifest = json.loads((Path(__file__).parents[1] / "docs/paper/manifest.json").read_text())
    assert Sweep.from_dict(manifest["sweep"], record=True).fingerprint() == manifest["fingerprint"]
    assert load_sweep("paper").fingerprint() == manifest["fingerprint"]
    assert Sweep(cpi_advantage="exact").fingerprint() != manifest["fingerprint"]


def test_a_dict_field_takes_a_table_with_string_keys_and_copies_it():
    @dataclass(frozen=True)
    class Options:
        options: dict = dataclasses.field(default_factory=dict, hash=False)

        def __post_init__(self):
            conform_fields(self)

    given = {"slip": 0.2}
    made = Options(given)
    assert made.options == given and made.options is not given
    with pytest.raises(TypeError, match="field 'options' should be a table of options"):
        Options({1: 2})
    with pytest.raises(TypeError, match="field 'options' should be a table of options"):
        Options([("slip", 0.2)])


def test_a_changed_default_keeps_the_results_it_produced():
    """rollout-csc's default fit became the soft-label one: the logistic results keep theirs
    (the ``bigger`` family's), and the powered family's rollouts, recomputed, name the new."""
    from pathlib import Path

    docs = Path(__file__).parents[1] / "docs/bigger"
    manifest = json.loads((docs / "full_run/grid-rollout/manifest.json").read_text())
    old = Sweep.from_dict(manifest["sweep"], record=True)  # written before the option existed
    assert old.operator_options()["classifier"] == "logistic"
    assert old.fingerprint() == manifest["fingerprint"]
    pinned = EXPERIMENTS["bigger"].sweeps()
    assert manifest["fingerprint"] in {s.fingerprint() for s in pinned.values()}
    new = old.replace(operator={"name": "rollout-csc", "options": {"budget": 100_000}})
    assert new.operator_options()["classifier"] == "softmax"
    assert new.fingerprint() != manifest["fingerprint"]  # other policies: another sweep
    back = Sweep.from_dict(json.loads(json.dumps(new.to_dict())), record=True)
    assert back.fingerprint() == new.fingerprint()
    rerun = json.loads((docs / "powered_run/grid-rollout-1e4/manifest.json").read_text())
    fresh = Sweep.from_dict(rerun["sweep"], record=True)
    assert fresh.operator_options()["classifier"] == "softmax"
    assert fresh.fingerprint() == rerun["fingerprint"] \
        == EXPERIMENTS["bigger-powered"].sweeps()["grid-rollout-1e4"].fingerprint()
