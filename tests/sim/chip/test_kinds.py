"""A chip's kinds of array (sim/chip/kinds.py): how many of each, the head each
runs, each kind's share of the heads, and their area by unit."""

from dataclasses import replace

import pytest

from sim.chip.chip import Chip, baseline_head
from sim.chip.kinds import ALONE, chip_area, head_shares, kinds_of
from sim.chip.memories import FEATURE_BUFFER_KIB, sram_mm2_per_mib
from tests.sim.chip.test_layer import GATE, KALEIDO, PLAIN

BASE = baseline_head(1024, 64, 4, 4)
SIGNS = {"kaleido": replace(KALEIDO, clock_gate=GATE), "baseline": PLAIN}


def test_the_kaleido_arrays_split_into_coupled_and_alone_and_the_rest_are_plain():
    chip = Chip(arrays=16, kaleido_share=0.5, coupled_share=0.25, softmax_lanes=8)
    fast = replace(BASE, slots=BASE.slots / 2)
    kinds = kinds_of("kaleido", chip, {"kaleido": fast, ALONE: BASE, "baseline": BASE}, SIGNS)
    assert {k: v.arrays for k, v in kinds.items()} == {"kaleido": 2, ALONE: 6, "baseline": 8}
    # Without a dispatcher: Kaleido's PE, no matcher, no scheduler.
    assert kinds[ALONE].sign.pe is KALEIDO.pe and kinds[ALONE].sign.matcher is kinds[ALONE].sign.scheduler is None
    # Heads in proportion to speed: 2 arrays at twice the pace, 6 and 8 at one.
    assert head_shares(kinds) == pytest.approx({"kaleido": 4 / 18, ALONE: 6 / 18, "baseline": 8 / 18})
    # Without an alone head, the coupled arrays' head; the baseline design is all plain.
    assert kinds_of("kaleido", chip, {"kaleido": fast, "baseline": BASE}, SIGNS)[ALONE].work is fast
    assert {k: v.arrays for k, v in kinds_of("baseline", chip, {"baseline": BASE}, SIGNS).items()} == {"baseline": 16}


def test_only_a_coupled_array_has_a_matcher_a_feature_buffer_and_a_share_of_a_scheduler():
    chip = Chip(arrays=16, coupled_share=0.5, softmax_lanes=8)
    area = chip_area(kinds_of("kaleido", chip, {"kaleido": BASE, "baseline": BASE}, SIGNS), chip)
    unit, gate = 2000e-6, 128e-6                   # a matcher's or scheduler's mm^2, and its clock gate's
    assert area["dispatcher"] == pytest.approx(8 * (unit + gate) + 2 * (unit + gate))    # 8 matchers, 2 schedulers
    assert area["feature_buffers"] == pytest.approx(8 * FEATURE_BUFFER_KIB / 1024 * sram_mm2_per_mib())
    assert area["pe_arrays"] == pytest.approx(16 * 16 * 1000e-6 + 16 * gate)
    assert area["total"] == pytest.approx(sum(v for k, v in area.items() if k != "total"))
