"""The board top under cocotb: the host driver runs a product over the serial
pins, through the link, the block-RAM memory and the system top, bit for bit
against golden and cycle for cycle against the model (the bench checks both)."""

import pytest

from golden import Config
from sim.rtl import runner
from sim.rtl.board import run_board
from tests.adversarial import operands
from tests.sweep import sweep

POINT = Config(partition=(3, 2, 3), grid=(2, 2, 4), rows=3, cols=2, max_channels=8, full_bits=5, partial_bits=3)


@sweep("simulator, design", [("verilator", "kaleido"), ("icarus", "kaleido"), ("verilator", "baseline")],
       keep=[("verilator", "kaleido"), ("icarus", "kaleido")])
def test_a_product_over_the_line(tmp_path, simulator, design, rng, seed):
    why = runner.missing(simulator)
    if why:
        pytest.skip(why)
    q, k = operands("correlated", POINT, rng)
    out = run_board(POINT, q, k, design, simulator, tmp_path, seed=seed)
    # Every byte of the operands crossed the line, and the run moved them on the bus.
    assert out["bytes_sent"] > (q.size + k.size) and out["run"]["read_beats"] > 0
    assert out["run"]["engine_cycles"] > 0
