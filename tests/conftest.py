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
    from nsrl.registry import KINDS, registry

    tables = {kind: registry(kind) for kind in KINDS}
    saved = {kind: table.snapshot() for kind, table in tables.items()}
    loaded = dict(plugins._loaded)
    modules = set(sys.modules)
    yield
    added = set(plugins.loaded_plugins()) - set(loaded)
    for kind, table in tables.items():
        table.restore(saved[kind])
    plugins._loaded.clear()
    plugins._loaded.update(loaded)
    for spec in added:  # imported again, so registering again, by the next test that loads it
        name = spec.partition(":")[0]
        if name not in modules:
            sys.modules.pop(name, None)



@pytest.fixture
def on_workers_path(monkeypatch):
    """``on_workers_path(folder)``: importable here and in every worker process started next.

    loky keeps its workers between tests, and a worker started before PYTHONPATH changed does
    not see the change: they are shut down, so the next sweep starts fresh ones. They are
    shut down again after the test, so that no later test reuses a worker that imported the
    folder's modules (a plugin that replaced a built-in, say).
    """
    import os

    from joblib.externals.loky import get_reusable_executor

    used = []

    def put(folder) -> None:
        monkeypatch.syspath_prepend(str(folder))
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
            [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])]))
        get_reusable_executor().shutdown(wait=True)
        used.append(folder)

    yield put
    if used:
        get_reusable_executor().shutdown(wait=True)
