"""The wheel holds the library, all of it, and nothing of the study.

CI also installs this wheel non-editable in a clean environment and runs every subcommand
from outside the checkout (.ci/wheel_smoke.sh); this test states what must be inside it.
"""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


# What a wheel is built of.
SOURCES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "nsrl", "envs")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built from a copy of the sources (a checkout's stale build/ folder would put
    modules that no longer exist into an in-place build)."""
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("wheel")
    for name in SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, src / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                         if (ROOT / name).is_dir() else {}))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--wheel-dir", str(out), str(src)], check=True, capture_output=True)
    (built,) = out.glob("nsrl-*.whl")
    return built


@pytest.fixture(scope="module")
def wheel_names(wheel) -> set[str]:
    """The wheel's file names."""
    with zipfile.ZipFile(wheel) as z:
        return set(z.namelist())


def packages_in(folder: Path, installed_as: str) -> set[str]:
    return {f"{installed_as}/{p.parent.relative_to(folder)}/__init__.py".replace("/./", "/")
            for p in folder.rglob("__init__.py") if "__pycache__" not in p.parts}


def test_every_package_of_the_tree_is_in_the_wheel(wheel_names):
    expected = packages_in(ROOT / "nsrl", "nsrl") | packages_in(ROOT / "envs", "nsrl/envs")
    assert len(expected) > 15
    assert expected <= wheel_names, sorted(expected - wheel_names)


def test_every_module_of_the_tree_is_in_the_wheel(wheel_names):
    modules = {f"nsrl/{p.relative_to(ROOT / 'nsrl')}" for p in (ROOT / "nsrl").rglob("*.py")}
    modules |= {f"nsrl/envs/{p.relative_to(ROOT / 'envs')}" for p in (ROOT / "envs").rglob("*.py")}
    assert modules <= wheel_names, sorted(modules - wheel_names)


def test_the_wheel_ships_its_types_and_no_study(wheel_names):
    assert "nsrl/py.typed" in wheel_names
    top = {name.split("/")[0] for name in wheel_names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"nsrl"}
    assert not any(name.startswith(("nsrl/docs/", "benchmarks/", "study/", "tests/"))
                   for name in wheel_names)


def test_the_wheel_carries_the_license_and_its_metadata(wheel, wheel_names):
    """PEP 639: the license text in the .dist-info, named by License-File; the SPDX expression."""
    (license_file,) = [n for n in wheel_names if n.endswith(".dist-info/licenses/LICENSE")]
    (metadata,) = [n for n in wheel_names if n.endswith(".dist-info/METADATA")]
    with zipfile.ZipFile(wheel) as z:
        assert z.read(license_file) == (ROOT / "LICENSE").read_bytes()
        fields = z.read(metadata).decode().splitlines()
    assert {"License-Expression: MIT", "License-File: LICENSE",
            "Classifier: Typing :: Typed"} <= set(fields)


def test_the_version_is_the_metadata_one():
    from importlib.metadata import version

    import nsrl
    from nsrl.cli import main

    assert nsrl.__version__ == version("nsrl")
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
