"""The chip: its presets and files, its fields' checks, a head's work against the
exact cycle model, and sign-off figures brought to the chip's node."""

import json
from dataclasses import replace

import numpy as np
import pytest

from golden import Config, proxy_workload, quantize
from golden.cycle_model import baseline_cycles, executed_products, kaleido_cycles, tail_cycles
from sim.chip.chip import CHIPS, Chip, ChipError, SignOff, Unit, baseline_head, chip_from, kaleido_head

PE = Unit(1000.0, {"full_mac": 40.0, "nibble_mac": 30.0, "idle": 10.0, "hand_over": 45.0, "drain_shift": 12.0}, 1.0)
SOFTMAX = Unit(5000.0, {"busy": 100.0, "idle": 20.0}, 2.0)
PLAIN = SignOff((16, 0.8), PE, SOFTMAX, 4)              # measured at the chip's own node: no scaling


def test_the_papers_chip_is_the_preset():
    chip = chip_from("paper")
    assert chip.pes == 128 * 128 * 16 and chip.clock_mhz == 1000 and chip.softmax_lanes == 512
    assert chip.dram_bytes_per_s == pytest.approx(16 * 51.2e9)


def test_the_balanced_chip_keeps_up_with_its_arrays():
    chip = chip_from("balanced")
    assert replace(chip, name="paper", softmax_lanes=512, sram_bank_bits=64) == CHIPS["paper"]
    # 16,384 arrays of 16 PEs make 2,048 scores a cycle at D = 128; each is read three times.
    assert chip.softmax_lanes == 6144 == 3 * 128 * 128 * 16 // 128
    # Its accumulation buffer takes them: drained, then read three times, 3 bytes
    # each (a sum of 128 int8 products: 24 bits), plus a 1-byte code; narrower banks would not.
    need = 2048 * (1 + 3) * 3 + 2048
    assert chip.acc_bytes_per_cycle >= need > replace(chip, sram_bank_bits=chip.sram_bank_bits // 2).acc_bytes_per_cycle
    assert CHIPS["paper"].acc_bytes_per_cycle == 32 * 1024 // 32 * 8          # 1,024 banks of 8 bytes


def test_chip_fields_are_checked():
    for fields, message in (({"kaleido_share": 1.5}, "kaleido_share must be a number from 0 to 1"),
                            ({"kaleido_share": True}, "kaleido_share"), ({"schedule": "fast"}, "schedule must be"),
                            ({"operand_broadcast": 1}, "true or false"), ({"sram_bank_bits": 0}, "sram_bank_bits"),
                            ({"sram_ports": 100}, "sram_ports must be an integer from 1 to 8")):
        with pytest.raises(ChipError, match=message):
            Chip(**fields)
    assert Chip(kaleido_share=0.5, arrays=5).kaleido_arrays == 2          # rounds half to even, at least one
    assert Chip(kaleido_share=0.01, arrays=5).kaleido_arrays == 1
    assert Chip(kaleido_share=0, arrays=5).kaleido_arrays == 0
    with pytest.raises(ChipError, match="coupled_share must be a number from 0 to 1"):
        Chip(coupled_share=-0.1)
    # The paper's chip couples Table 2's 64 x 32 dispatchers to its 128 x 128 arrays.
    assert CHIPS["paper"].coupled_arrays == 64 * 32
    assert Chip(arrays=5, coupled_share=0.01).coupled_arrays == 1               # at least one of any
    assert Chip(arrays=5, kaleido_share=0.4, coupled_share=1).coupled_arrays == 2
    assert Chip(arrays=5, coupled_share=0).coupled_arrays == 0 == Chip(arrays=5, kaleido_share=0).coupled_arrays


def test_a_chip_file_overrides_the_preset(tmp_path):
    path = tmp_path / "chip.json"
    path.write_text(json.dumps({"arrays": 64, "clock_mhz": 500}))
    assert chip_from(str(path)) == replace(CHIPS["paper"], arrays=64, clock_mhz=500)
    path.write_text(json.dumps({"arrays": 64, "cores": 2}))
    with pytest.raises(ChipError, match="unknown field"):
        chip_from(str(path))
    path.write_text("{")
    with pytest.raises(ChipError, match="JSON"):
        chip_from(str(path))
    with pytest.raises(ChipError, match="dram_mtps must be a number above 0"):
        Chip(dram_mtps=0)
    with pytest.raises(ChipError, match="no scaling equations"):
        Chip(node_nm=28)


def test_a_head_is_what_the_cycle_model_says():
    cfg = Config.for_model("wan2.1", 64, grid=(2, 8, 8))
    w = proxy_workload(cfg)
    q, k = quantize(w["q"])[0], quantize(w["k"])[0]
    exact = kaleido_cycles(q, k, cfg)
    head = kaleido_head(q, k, cfg)
    assert head.slots + tail_cycles(cfg) + head.lead == exact.cycles == head.slots_low + tail_cycles(cfg) + head.lead
    products = executed_products(q, k, cfg, exact)
    assert (head.full_products, head.nibble_products) == (products["full_products"], products["nibble_products"])
    assert head.oracle_macs < head.dense_macs == cfg.tokens ** 2 * 64
    base = baseline_head(cfg.tokens, 64, cfg.rows, cfg.cols)
    assert base.slots + tail_cycles(cfg) == baseline_cycles(cfg.tokens, cfg.tokens, cfg).cycles
    assert head.paired == (exact.schedule != "dense") and not base.paired


def test_sign_off_figures_are_brought_to_the_chips_node():
    at180 = replace(PLAIN, node=(180, 1.8))
    chip = Chip()
    assert at180.area_mm2(PE, chip) == pytest.approx(1000e-6 / 99)
    assert at180.energy(PE, "full_mac", chip) == pytest.approx(40.0 * 0.120272 / 26.372)
    assert PLAIN.energy(PE, "nibble_mac", chip) == 30.0
    assert np.isclose(replace(PLAIN, pe=Unit(1.0, {"full_mac": 7.0, "idle": 1.0}, 0.0)).energy(
        Unit(1.0, {"full_mac": 7.0, "idle": 1.0}, 0.0), "nibble_mac", chip), 7.0)     # no nibble: a full product




def test_the_array_has_one_owner(tmp_path):
    """A chip's array is the design point's own part: a chip file's rows and cols
    set it, checked by its rule, and every head's design point takes it as is."""
    from golden.config import ArrayConfig
    from sim.chip.estimate import shard_config
    from sim.chip.vdits import VDITS

    path = tmp_path / "chip.json"
    path.write_text(json.dumps({"rows": 8, "arrays": 64}))
    chip = chip_from(str(path))
    assert chip.array == ArrayConfig(rows=8, cols=4) and (chip.rows, chip.cols) == (8, 4)
    model = next(iter(VDITS.values()))
    assert shard_config(model, "480p", chip).array is chip.array
    for bad, message in (({"rows": True}, "rows must be an integer"), ({"cols": 0}, "cols must be between 1 and 256")):
        path.write_text(json.dumps(bad))
        with pytest.raises(ChipError, match=message):
            chip_from(str(path))
