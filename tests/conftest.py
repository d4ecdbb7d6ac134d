import os
import sys
import zlib

import numpy as np
import pytest

# tests/ holds helper modules (reference.py) imported by name.
sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture
def rng(request):
    """A seeded generator; the seed is printed so a failure can be replayed
    (KALEIDO_SEED=N pytest ...)."""
    seed = int(os.environ.get("KALEIDO_SEED", "0")) or zlib.crc32(request.node.nodeid.encode()) % 100000 + 1
    print(f"seed={seed}")
    return np.random.default_rng(seed)
