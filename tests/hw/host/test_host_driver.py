"""The host driver checks what it is given before any bus traffic (the runs
themselves are tests/tb/test_top_tb.py's, on both simulators)."""

import asyncio

import numpy as np
import pytest

from golden.config import Config
from hw.host.host_driver import DeviceError, Driver


class SilentPort:
    """A port that records every access and answers none: a check that passes
    would be seen as traffic."""

    def __init__(self):
        self.traffic = []

    async def read_reg(self, offset):
        self.traffic.append(("read_reg", offset))
        return 0

    async def write_reg(self, offset, value):
        self.traffic.append(("write_reg", offset))

    async def write_mem(self, addr, data):
        self.traffic.append(("write_mem", addr))

    async def read_mem(self, addr, length):
        self.traffic.append(("read_mem", addr))
        return bytes(length)

    async def wait_irq(self, cycles):
        return False


CFG = Config(grid=(1, 2, 4), rows=2, cols=2)


def _driver(opened=True):
    driver = Driver(SilentPort(), CFG)
    if opened:
        driver.info = {"q_words": 64, "k_words": 64, "out_rows": 64, "beats": {"q": 1, "k": 1, "out": 2}}
    return driver


def test_a_run_before_open_is_a_device_error():
    driver = _driver(opened=False)
    rng = np.random.default_rng(0)
    q = rng.integers(-128, 128, (CFG.tokens, CFG.head_dim), dtype=np.int8)
    with pytest.raises(DeviceError, match=r"not open: call open\(\) first"):
        asyncio.run(driver.attention(q, q))
    assert driver.port.traffic == []


@pytest.mark.parametrize("value", [2 ** 32 + 5, -(2 ** 40), 1 << 23])
def test_softmax_refuses_a_score_beyond_the_units_width(value):
    driver = _driver()
    scores = np.zeros((2, CFG.tokens), np.int64)
    scores[1, 3] = value
    with pytest.raises(ValueError, match=rf"within the softmax unit's {CFG.acc_bits}-bit range"):
        asyncio.run(driver.softmax(scores, 0.01))
    assert driver.port.traffic == []


def test_linear_refuses_weights_that_do_not_fit_the_activations():
    driver = _driver()
    x = np.zeros((CFG.tokens, CFG.head_dim), np.int8)
    w = np.zeros((CFG.head_dim + 1, 4), np.int8)
    with pytest.raises(ValueError, match="must agree on their channels"):
        asyncio.run(driver.linear(x, w, CFG))
    assert driver.port.traffic == []


@pytest.mark.parametrize("field, says", [("q_words", "Q words"), ("k_words", "K words"), ("out_rows", "drained rows")])
def test_a_run_the_top_cannot_hold_is_refused_before_any_traffic(field, says):
    """It used to write the images and 29 registers before the top answered SIZE."""
    driver = _driver()
    driver.info.update(q_words=1 << 20, k_words=1 << 20, out_rows=1 << 20)
    driver.info[field] = 1
    rng = np.random.default_rng(0)
    q = rng.integers(-128, 128, (CFG.tokens, CFG.head_dim), dtype=np.int8)
    with pytest.raises(DeviceError, match=rf"needs [\d,]+ {says} and the top holds 1: .* \(SIZE\)"):
        asyncio.run(driver.attention(q, q))
    assert driver.port.traffic == []
