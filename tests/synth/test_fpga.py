"""The FPGA flow on its smallest case: both designs' PE on an ECP5, placed and
routed, with the resources each design's PE is built from."""

import pytest

from golden import Config
from golden.pe import FPGA_PE_STAGES
from synth.fpga import FpgaError, fpga_blocks, fpga_build


@pytest.fixture(scope="module")
def pes():
    return fpga_blocks("pe", Config(), "85k", seeds=(1,))


def test_each_pe_takes_what_it_is_built_from(pes):
    k, b = pes["kaleido"], pes["baseline"]
    # The baseline PE multiplies one 8x8 product a cycle; Kaleido's PE two 4x8 lanes.
    assert b["mult18"] == 1 and k["mult18"] == 2
    assert k["luts"] > 2 * b["luts"] > 0 and k["ffs"] > b["ffs"] > 0
    for r in (k, b):
        lo, hi = r["fmax_mhz"]
        assert 20 < lo == hi < 400 and r["device"] == "LFE5U-85K" and r["runs"][0]["seed"] == 1
    assert b["fmax_mhz"][0] > k["fmax_mhz"][0]


def test_the_fpga_variant_takes_the_select_out_of_the_multipliers_path(pes):
    # At four stages the lanes' operands are registered before the MULT18s: the
    # PE still uses two of them, and the same seed places it at a faster clock
    # (measured: 98.6-102.3 MHz at three stages, 124.6-125.8 at four, seeds 1-3).
    fpga = fpga_build("pe", Config(pe_stages=FPGA_PE_STAGES), "85k", seeds=(1,))
    assert fpga["mult18"] == 2 and fpga["ffs"] > pes["kaleido"]["ffs"]
    assert fpga["fmax_mhz"][0] > 1.1 * pes["kaleido"]["fmax_mhz"][0]


def test_a_device_it_does_not_know_is_refused():
    with pytest.raises(FpgaError, match="device '12k'"):
        fpga_build("pe", Config(), "12k")
