"""Package discovery: nsrl/ and the top-level envs/ folder installed as nsrl.envs.

Everything else (name, version, dependencies, the envs mapping) is in pyproject.toml. The
lists are found, not written by hand, so a new subpackage cannot be left out of the wheel.
"""

from setuptools import find_packages, setup

setup(packages=find_packages(include=["nsrl", "nsrl.*"])
      + [f"nsrl.{name}" for name in find_packages(include=["envs", "envs.*"])])
