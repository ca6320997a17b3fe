import json
import subprocess
import sys

import numpy as np
import pytest

import nsrl
from nsrl.cli import main


def test_run_json_contract(capsys):
    assert (
        main(["run", "--scheme", "nspi(5)", "--garnet", "30,3,2", "--iterations", "7", "--json"])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert len(out["losses"]) == 7 and out["memory"] == [5] * 7
    assert all(isinstance(x, float) for x in out["losses"])


def test_run_matches_python_api(capsys):
    main(
        [
            "run",
            "--scheme",
            "api(0.1)",
            "--garnet",
            "30,3,2",
            "--mdp-seed",
            "4",
            "--iterations",
            "5",
            "--seed",
            "9",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    mdp = nsrl.garnet(30, 3, 2, seed=4)
    h = nsrl.run(
        nsrl.APIAlpha(0.1), nsrl.ProjectedGreedy(mdp, noise=0.1), 5, rng=np.random.default_rng(9)
    )
    np.testing.assert_array_equal(out["losses"], h.losses)


def test_garnet_then_run_from_file(tmp_path, capsys):
    path = tmp_path / "g.npz"
    assert (
        main(
            [
                "garnet",
                "--states",
                "20",
                "--actions",
                "2",
                "--branching",
                "3",
                "--n-features",
                "4",
                "--gamma",
                "0.9",
                "--mdp-seed",
                "1",
                "--out",
                str(path),
            ]
        )
        == 0
    )
    assert nsrl.FiniteMDP.load(path) == nsrl.garnet(20, 2, 3, 4, 0.9, seed=1)
    assert main(["run", "--scheme", "psdp", "--mdp", str(path), "--iterations", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["memory"] == [1, 2, 3]


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["run", "--scheme", "foo", "--garnet", "10,2,1"], "unknown scheme"),
        (["run", "--scheme", "api", "--garnet", "10,2"], "--garnet expects"),
        (["run", "--scheme", "api", "--garnet", "a,b,c"], "--garnet expects"),
        (["run", "--scheme", "api", "--mdp", "/no/such.npz"], "no MDP file"),
        (["run", "--scheme", "api"], "--garnet S,A,B or --mdp"),
        (["run", "--scheme", "api", "--garnet", "10,2,1", "--iterations", "0"], "iterations"),
        (["run", "--scheme", "api", "--garnet", "10,2,20"], "branching"),
        (["run", "--garnet", "10,2,1"], "required"),
        (["run", "--scheme", "api", "--garnet", "10,2,1", "--operator", "rollout-csc",
          "--horizon", "forever"], "--horizon"),
        (["run", "--scheme", "api", "--garnet", "10,2,1", "--operator", "rollout-csc",
          "--horizon", "-3"], "--horizon"),
        (["run", "--scheme", "api", "--garnet", "10,2,1", "--operator", "rollout-csc",
          "--rollout-m", "0"], "--rollout-m"),
        (["run", "--scheme", "api", "--garnet", "10,2,1", "--operator", "rollout-reg",
          "--critic", "svr"], "--critic"),
        (["run", "--scheme", "api", "--garnet", "10,2,1", "--operator", "rollout-csc",
          "--rollout-m", "4", "--critic", "none"], "--rollout-m"),
        (["run", "--scheme", "api", "--garnet", "10,2,1", "--operator", "lstdq",
          "--rollout-m", "4"], "--rollout-m"),
        (["run", "--scheme", "api", "--garnet", "10,2,1", "--horizon", "geometric"],
         "--horizon"),
        (["run", "--scheme", "api", "--garnet", "10,2,1", "--operator", "rollout-csc",
          "--horizon", "geometric", "--budget", "50"], "too small"),
    ],
)
def test_errors_are_one_line_exit_2(argv, match, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1


def test_console_script_entry_point():
    proc = subprocess.run(
        [sys.executable, "-m", "nsrl.cli", "run", "--scheme", "bad", "--garnet", "5,2,1"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "unknown scheme" in proc.stderr
