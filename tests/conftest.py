"""One seed source for every randomized test, printed so that a failure can be replayed."""

import os
import zlib

import numpy as np
import pytest

# tests/ is a package, so its helpers are tests.reference, tests.strategies and
# tests.adversarial, and tests/golden/ never shadows the golden package.


@pytest.fixture
def seed(request) -> int:
    """The test's seed: ``KALEIDO_SEED`` when set, else one drawn from the test's id, so
    each test (and each parameter) has its own and the same every run. Benches under
    cocotb get it as ``COCOTB_RANDOM_SEED`` (``runner.test(..., seed=seed)``)."""
    value = int(os.environ.get("KALEIDO_SEED", "0")) or zlib.crc32(request.node.nodeid.encode()) % 100000 + 1
    print(f"seed={value} (replay: KALEIDO_SEED={value} pytest '{request.node.nodeid}')")
    return value


@pytest.fixture
def rng(seed) -> np.random.Generator:
    """A numpy generator on the test's seed."""
    return np.random.default_rng(seed)
