import numpy as np
import pytest

import nsrl


@pytest.fixture
def small_garnet():
    return nsrl.garnet(30, 3, 2, seed=7)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
