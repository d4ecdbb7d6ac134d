"""``sim.rtl.simulate.simulate`` refuses what it cannot run before it writes anything."""

import numpy as np
import pytest

from golden import Config
from sim.rtl.simulate import PRODUCTS, simulate


def test_an_unknown_product_is_refused(tmp_path):
    q = np.zeros((4, 4), np.int8)
    with pytest.raises(ValueError, match="unknown product 'pv'"):
        simulate(Config(grid=(1, 2, 2), partition=(2, 1, 1)), q, q, "kaleido", "icarus", tmp_path / "w",
                 product="pv")
    assert not (tmp_path / "w").exists() and PRODUCTS == ("qk", "gemm")
