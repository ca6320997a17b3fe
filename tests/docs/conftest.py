"""What the tests of the doc numbers share: a scratch copy of the pages and their sources."""

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def copy(tmp_path):
    """README.md, docs/ and benchmarks/results/ copied to a temporary root (figures left out)."""
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    shutil.copytree(REPO / "docs", tmp_path / "docs", ignore=shutil.ignore_patterns("*.png"))
    shutil.copytree(REPO / "benchmarks" / "results", tmp_path / "benchmarks" / "results")
    return tmp_path
