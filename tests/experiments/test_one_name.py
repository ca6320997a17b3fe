"""One name per setting in every layer; the old spellings work for one release and warn.

A setting of a greedy operator is the operator's keyword and attribute, the sweep field and
the command-line flag (with dashes) under one name; results written under the old names
still load, plot and resume; a sweep is checked once per start.
"""

import dataclasses
import inspect
import json
import shutil
import warnings
from pathlib import Path

import pytest

import nsrl
from nsrl.batched import Batch
from nsrl.cli import build_parser, main
from nsrl.experiments import registry, runner
from nsrl.experiments.execution import run_experiment
from nsrl.experiments.experiment import Experiment
from nsrl.experiments.loader import load_experiment, load_sweep
from nsrl.experiments.storage import read_manifest
from nsrl.experiments.sweep import Sweep
from nsrl.greedy.registry import OPERATORS
from nsrl.params import RENAMED, InvalidParameterError, param

DOCS = Path(__file__).parents[2] / "docs"
OLD_NAMES = {"value_estimate": "line_search_scores", "features": "representation",
             "budget": "samples_per_call"}  # the sweep fields' names before the rename
TINY = Sweep(name="tiny", n_states=(12,), n_actions=(2,), branching=(1, 2), n_mdps=1,
             n_runs=2, n_iterations=4, schemes=("api", "cpi+"))


def _flags(command: str) -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return {s for a in sub._actions for s in a.option_strings}


def _in_a_sweep(operator: str, name: str, value):
    """The option ``name`` set through a sweep's operator spec, as the sweep passes it on."""
    sweep = Sweep(operator={"name": operator, "options": {name: value}})
    return sweep.operator_options()[name]


def test_each_operator_option_is_one_name_in_every_layer():
    mdp = nsrl.garnet(20, 2, 2, seed=0)
    run_flags = _flags("run")
    for name, declared in nsrl.ProjectedGreedy.params.items():
        value = declared.default
        assert getattr(nsrl.ProjectedGreedy(mdp, **{name: value}), name) == value
        assert getattr(Batch(mdp, **{name: value}), name) == value
        assert _in_a_sweep("projected", name, value) == value
        assert "--" + name.replace("_", "-") in run_flags
    # the signature states no default of its own: each is the declaration's
    signature = inspect.signature(nsrl.ProjectedGreedy).parameters
    assert all(signature[k].default == p.default
               for k, p in nsrl.ProjectedGreedy.params.items())
    # the sample-based operators' budget and features: keyword, attribute, field, flag
    lstdq = nsrl.make_operator("lstdq", mdp, budget=500, features="onehot")
    assert lstdq.budget == 500 and _in_a_sweep("lstdq", "features", "onehot") == "onehot"
    assert _in_a_sweep("lstdq", "budget", 500) == 500
    assert {"--budget", "--features"} <= run_flags and "--features" in _flags("compare")
    for entry in OPERATORS.values():  # every declared option has its flag
        assert all(("--rollout-m" if k == "m" else "--" + k.replace("_", "-")) in run_flags
                   for k in entry.params)


@pytest.mark.parametrize(("build", "new", "value"), [
    (lambda mdp: nsrl.ProjectedGreedy(mdp, value="estimated"), "value_estimate", "estimated"),
    (lambda mdp: nsrl.make_operator("projected", mdp, value="estimated"), "value_estimate",
     "estimated"),
    (lambda mdp: nsrl.make_operator("lstdq", mdp, samples=300), "budget", 300),
    (lambda mdp: nsrl.OperatorSpec("rollout-csc", samples=400).make(mdp), "budget", 400),
    (lambda mdp: Batch(mdp, value="estimated"), "value_estimate", "estimated"),
])
def test_an_old_keyword_still_works_and_names_the_new_one(build, new, value):
    with pytest.warns(DeprecationWarning, match=f"use '{new}'"):
        operator = build(nsrl.garnet(20, 2, 2, seed=0))
    assert getattr(operator, new) == value


@pytest.mark.parametrize("old, new, value", [("line_search_scores", "value_estimate",
                                              "estimated"),
                                             ("representation", "features", "onehot"),
                                             ("samples_per_call", "budget", 700)])
def test_an_old_sweep_key_still_works_in_python_dicts_and_toml(old, new, value, tmp_path):
    operator = "projected" if new == "value_estimate" else "lstdq"
    with pytest.warns(DeprecationWarning, match=f"'{old}' is deprecated.*use '{new}'"):
        sweep = Sweep.from_dict({old: value, "operator": operator})
    assert getattr(sweep, new) == value
    assert sweep == Sweep(**{new: value, "operator": operator})
    with pytest.warns(DeprecationWarning, match=f"use '{new}'"):
        assert getattr(Sweep(**{old: value, "operator": operator}), new) == value
    toml = tmp_path / "old.toml"
    toml.write_text(f'operator = "{operator}"\n{old} = {json.dumps(value)}\n')
    with pytest.warns(DeprecationWarning, match=f"use '{new}'"):
        assert getattr(load_experiment(str(toml)).base, new) == value
    with pytest.raises(InvalidParameterError, match=f"give only '{new}'"):
        Sweep.from_dict({old: value, new: value, "operator": operator})


def test_old_command_line_flags_still_work_and_name_the_new_ones(capsys):
    def run(*flags):
        argv = ["run", "--scheme", "api", "--garnet", "20,2,2", "--iterations", "2", "--json"]
        assert main(argv + list(flags)) == 0
        return capsys.readouterr()

    with pytest.warns(DeprecationWarning) as warned:
        old = run("--operator", "lstdq", "--samples", "300", "--representation", "onehot")
    assert [str(w.message).rsplit(" ", 1)[-1] for w in warned] == ["--budget.", "--features."]
    assert "use --budget" in old.err and "use --features" in old.err
    assert old.out == run("--operator", "lstdq", "--budget", "300", "--features", "onehot").out
    with pytest.warns(DeprecationWarning, match="use --n-features"):
        old = run("--features", "4")
    assert old.out == run("--n-features", "4").out != run("--n-features", "5").out


def _flat_before_the_rename(sweep: Sweep) -> dict:
    """The sweep as nsrl wrote it in a manifest before specs, and before the fields' renames."""
    from nsrl.experiments.compat import flat_view

    data = {"name": sweep.name, **flat_view(sweep)}
    data.pop("noise_model")
    data["relative_noise"] = True
    return {OLD_NAMES.get(k, k): v for k, v in data.items()}


def _write_as_before_the_rename(folder: Path, sweep: Sweep) -> None:
    """Rewrite a results folder's manifest as nsrl wrote it before the fields were renamed."""
    path = folder / "manifest.json"
    data = json.loads(path.read_text())
    data["sweep"] = _flat_before_the_rename(sweep)
    path.write_text(json.dumps(data, indent=2))


@pytest.mark.parametrize("change", [
    {"operator_options": {"value_estimate": "estimated"}},
    {"operator": {"name": "lstdq", "options": {"features": "onehot", "budget": 200}}}])
def test_a_folder_written_under_the_old_names_plots_and_resumes(change, tmp_path, capsys):
    sweep = TINY.replace(**change)
    out = tmp_path / "old"
    runner.run_sweep(sweep, out, backend="sequential", progress=False, limit=1)
    _write_as_before_the_rename(out, sweep)
    assert set(OLD_NAMES.values()) <= set(json.loads((out / "manifest.json").read_text())
                                          ["sweep"])
    with warnings.catch_warnings():  # a manifest nsrl wrote: read silently
        warnings.simplefilter("error", DeprecationWarning)
        data, loaded = read_manifest(out)
        assert loaded == sweep
        assert main(["plot", str(out)]) == 0
    # resumed from today's spelling, and from a TOML file in the old one
    toml = tmp_path / "tiny.toml"
    body = {k: v for k, v in _flat_before_the_rename(sweep).items() if v is not None}
    toml.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in body.items()))
    with pytest.warns(DeprecationWarning):
        assert main(["reproduce", "--preset", str(toml), "--out", str(out), "--backend",
                     "sequential", "--resume", "--no-plot"]) == 0
    assert "2/2 shards done" in capsys.readouterr().err
    assert runner.run_sweep(sweep, out, backend="sequential", progress=False,
                            resume=True)["computed"] == 0


@pytest.mark.parametrize("manifest", sorted(DOCS.glob("**/manifest.json")),
                         ids=lambda p: str(p.parent.relative_to(DOCS)))
def test_every_committed_results_folder_loads_under_today_s_names(manifest):
    """The committed manifests hold the old flat names (written before the rename), today's
    flat names (the powered family's first run) or today's nested spec (the Tetris runs, the
    powered learner variants recomputed); their sweeps, and the experiments that wrote them,
    still have their fingerprint (so --resume accepts the folders)."""
    data = json.loads(manifest.read_text())
    fields = set(data["sweep"])
    nested = "grid" in fields and not (set(OLD_NAMES) | set(OLD_NAMES.values())) & fields
    assert nested or set(OLD_NAMES.values()) <= fields or (
        set(OLD_NAMES) <= fields and not set(OLD_NAMES.values()) & fields)
    tetris = manifest.relative_to(DOCS).parts[0] == "tetris"
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        _, sweep = read_manifest(manifest.parent)
    assert sweep is not None and sweep.fingerprint() == data["fingerprint"]
    variant, run = manifest.parent.name, manifest.parent.parent.name
    if (manifest.parent / "sweep.toml").is_file():  # a study beside a preset: its sweep file
        name = str(manifest.parent / "sweep.toml")
    elif variant == "large_run":  # a one-sweep experiment: the folder is the sweep's
        name = "tetris-large"
    else:
        name = "paper" if variant == "paper" else f"tetris-small/{variant}" if tetris else \
            f"{'bigger-powered' if run == 'powered_run' else 'bigger'}/{variant}"
    assert load_sweep(name).fingerprint() == data["fingerprint"]


def test_a_committed_folder_plots(tmp_path):
    out = tmp_path / "car-lstdq"
    shutil.copytree(DOCS / "bigger" / "full_run" / "car-lstdq", out)
    (out / "summary.md").unlink()
    assert main(["plot", str(out)]) == 0 and (out / "summary.md").exists()


def test_a_sweep_is_checked_once_per_start(tmp_path, monkeypatch, capsys):
    """The Dask scheduler is probed once per `nsrl reproduce`, each sweep's operator built
    once by the check (it was three times per sweep: the CLI, run_experiment, run_sweep)."""
    from nsrl.experiments import checks

    probes, builds, built = [], [], []
    monkeypatch.setattr(checks, "check_scheduler", probes.append)
    check_budgets = checks.check_budgets
    monkeypatch.setattr(checks, "check_budgets",
                        lambda sweep: builds.append(sweep.name) or check_budgets(sweep))
    results = runner._results  # no cluster here: the shards run in this process
    monkeypatch.setattr(runner, "_results", lambda jobs, backend, scheduler, calls: results(
        1, "sequential", None, calls))
    base = TINY.replace(name="family", operator={"name": "lstdq", "options": {
        "features": "onehot"}}, samples_per_pair=20)
    variants = {"onehot": {}, "phi": {"operator_options": {"features": "phi"}}}
    init = Sweep.__init__

    def counted(self, *args, **kwargs):
        built.append(kwargs.get("name", args[0] if args else None))
        init(self, *args, **kwargs)

    monkeypatch.setattr(Sweep, "__init__", counted)
    registry.register_experiment(Experiment("family", base, variants,
                                                                   "checked once?"), replace=True)
    assert main(["reproduce", "--preset", "family", "--out", str(tmp_path / "f"), "--backend",
                 "dask", "--scheduler", "tcp://127.0.0.1:8786", "--no-plot"]) == 0
    assert probes == ["tcp://127.0.0.1:8786"]
    # each variant's sweep built (so checked) once in the driver, once per shard in a worker
    shards = len(TINY.shards())
    assert sorted(built) == sorted([f"family-{v}" for v in variants] * (1 + shards)), built
    assert sorted(builds) == sorted(f"family-{v}" for v in variants)
    assert all((tmp_path / "f" / v / "manifest.json").exists() for v in variants)
    probes.clear()
    run_experiment(registry.EXPERIMENTS["family"], tmp_path / "g", backend="dask",
                   scheduler="tcp://127.0.0.1:8786", progress=False, report=False)
    assert len(probes) == 1


def test_the_renames_are_declared_once():
    """Every old spelling maps to a name some layer uses today (nothing is renamed twice)."""
    from nsrl.experiments.compat import OPERATOR_FLAT

    fields = {f.name for f in dataclasses.fields(Sweep)} | set(OPERATOR_FLAT)
    options = {k for e in OPERATORS.values() for k in e.params}
    assert set(RENAMED.values()) <= fields & options
    assert not set(RENAMED) & (fields | options)


def test_an_operator_of_one_s_own_gets_flags_of_its_options_names(monkeypatch):
    """Flags are built from the live registry; an option spelled as a flag that exists
    already (``gamma``: the problem's) is left to Python, not a clash that breaks the CLI."""
    nsrl.register_operator("mine", nsrl.ExactGreedy, {"gamma": param(float, 0.5),
                                                      "look_ahead": param(int, 1, ge=1)})
    assert "--look-ahead" in _flags("run") and "--look-ahead" in _flags("compare")
    args = build_parser().parse_args(["run", "--scheme", "api", "--look-ahead", "3"])
    assert args.look_ahead == 3 and "gamma" not in args.operator_flags
