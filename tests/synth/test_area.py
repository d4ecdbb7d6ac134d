"""The area table's SRAM alternative (synth/area.py): the assumed bit is priced at the
library's own node, not at 180 nm on every library (on NanGate45 it was 16x too big)."""

import pytest

from golden.config import Config
from hw.dispatcher.matcher import Matcher
from hw.dispatcher.scheduler import Scheduler
from synth import area
from synth.kits import LibraryError, kit, liberty_path
from synth.liberty import cells


def test_the_bit_scales_with_the_square_of_the_feature_size():
    assert area.sram_um2_per_bit(180) == area.SRAM_UM2_PER_BIT
    assert area.sram_um2_per_bit(45) == pytest.approx(area.SRAM_UM2_PER_BIT / 16)


@pytest.mark.parametrize("name", ["nangate45", "osu018"])
def test_the_sram_split_prices_bits_at_the_librarys_node(name):
    try:
        liberty = liberty_path(name)
    except LibraryError as e:
        pytest.skip(str(e))
    lib = cells(liberty)
    flop = next(c for c in kit(liberty).flops if c in lib)
    results = {b: {"cell_types": {flop: 10_000}} for b in ("scheduler", "matcher")}
    a = {"scheduler": 1e6, "matcher": 2e6, "array": 3e6}
    cfg = Config()
    got = area._sram_split(results, a, cfg, liberty)
    per_bit = area.sram_um2_per_bit(kit(liberty).node_nm)
    assert got["um2_per_bit"] == per_bit and got["node_nm"] == kit(liberty).node_nm
    bits = Scheduler.storage_bits(cfg)
    assert got["scheduler"] == pytest.approx(1e6 - bits * lib[flop][0] + bits * per_bit)
    bits = Matcher.storage_bits(cfg)
    assert got["matcher"] == pytest.approx(2e6 - bits * lib[flop][0] + bits * per_bit)
