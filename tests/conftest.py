import numpy as np
import pytest

import nsrl


@pytest.fixture
def small_garnet():
    return nsrl.garnet(30, 3, 2, seed=7)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(autouse=True)
def registries_as_they_were():
    """Whatever a test registers (a plugin, a late operator) is gone after it.

    The registries are process-wide, as a user's are; a test that adds to them must not change
    what the next test in the same worker sees (e.g. 'every registered scheme has an engine').
    """
    import sys

    from nsrl import plugins
    from nsrl.experiments import domains, registry
    from nsrl.greedy import registry as operators
    from nsrl.schemes import registry as schemes

    tables = (operators.OPERATORS, schemes.SCHEMES, domains.DOMAINS, registry.EXPERIMENTS,
              plugins._loaded)
    saved = [dict(t) for t in tables]
    modules = set(sys.modules)
    yield
    added = set(plugins.loaded_plugins()) - set(saved[-1])
    for table, before in zip(tables, saved, strict=True):
        table.clear()
        table.update(before)
    for spec in added:  # imported again, so registering again, by the next test that loads it
        name = spec.partition(":")[0]
        if name not in modules:
            sys.modules.pop(name, None)
