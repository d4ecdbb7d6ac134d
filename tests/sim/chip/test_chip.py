"""The chip model: its presets and files, a head's work against the exact cycle
model, and a layer's time, energy and area against hand counts."""

import json
from dataclasses import replace

import numpy as np
import pytest

from golden import Config, proxy_workload, quantize
from sim.chip.chip import (CHIPS, Chip, ChipError, SignOff, Unit, baseline_head, chip_area, chip_from, kaleido_head,
                         layer_cost)
from golden.cycle_model import baseline_cycles, executed_products, kaleido_cycles, tail_cycles
from sim.chip.memories import sram_mm2_per_mib
from sim.chip.vdits import VDiT

PE = Unit(1000.0, {"full_mac": 40.0, "nibble_mac": 30.0, "idle": 10.0, "hand_over": 45.0, "drain_shift": 12.0}, 1.0)
SOFTMAX = Unit(5000.0, {"busy": 100.0, "idle": 20.0}, 2.0)
UNIT = Unit(2000.0, {"busy": 50.0, "idle": 5.0}, 1.0)
PLAIN = SignOff((16, 0.8), PE, SOFTMAX, 4)              # measured at the chip's own node: no scaling
TINY = VDiT("wan2.1", layers=1, heads=2, head_dim=64, hidden=128, mlp=256, steps=1, passes_per_step=1,
            text_tokens=8, joint_text=True, video={"480p": (5, 32, 64)})


def test_the_papers_chip_is_the_preset():
    chip = chip_from("paper")
    assert chip.pes == 128 * 128 * 16 and chip.clock_mhz == 1000 and chip.softmax_lanes == 512
    assert chip.dram_bytes_per_s == pytest.approx(16 * 51.2e9)


def test_the_balanced_chip_keeps_up_with_its_arrays():
    chip = chip_from("balanced")
    assert replace(chip, name="paper", softmax_lanes=512) == CHIPS["paper"]
    # 16,384 arrays of 16 PEs make 2,048 scores a cycle at D = 128; each is read three times.
    assert chip.softmax_lanes == 6144 == 3 * 128 * 128 * 16 // 128


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


def test_a_layer_adds_up():
    chip = Chip(arrays=4, softmax_lanes=8)
    head = baseline_head(TINY.tokens("480p"), TINY.head_dim, chip.rows, chip.cols)
    layer = layer_cost(TINY, TINY.tokens("480p"), head, PLAIN, chip, softmax_row_cycles=50)
    assert layer["time_s"] == pytest.approx(sum(o["time_s"] for o in layer["ops"].values()))
    assert layer["energy_j"] == pytest.approx(sum(layer["energy_by_unit_j"].values()))
    for op in layer["ops"].values():
        assert op["time_s"] == pytest.approx(max(op["compute_s"], op["memory_s"]))
    # Softmax: two 4-lane units share rows of 264 scores, 50 cycles a row.
    rows = TINY.heads * (TINY.tokens("480p") + TINY.text_tokens)
    assert layer["ops"]["softmax"]["compute_s"] == pytest.approx(-(-rows // 2) * 50 / 1e9)
    # Q K^T on the arrays: the head's slots per array, the tail, no lead.
    qk = layer["ops"]["qk"]
    n = TINY.tokens("480p") + TINY.text_tokens
    dense_slots = -(-n // 4) * -(-n // 4) * 64
    assert qk["compute_s"] == pytest.approx((2 * dense_slots / 4 + 12) / 1e9, rel=1e-3)


def test_softmax_reads_each_score_once_a_pass_and_runs_the_cross_attentions_rows():
    chip = Chip(arrays=4, softmax_lanes=8)
    n = TINY.tokens("480p")
    head = baseline_head(n, TINY.head_dim, chip.rows, chip.cols)
    joint = layer_cost(TINY, n, head, PLAIN, chip, softmax_row_cycles=50)["ops"]["softmax"]
    n_all = n + TINY.text_tokens
    assert joint["sram_bytes"] == TINY.heads * n_all * n_all * (3 * 4 + 1)      # three reads, one code
    cross = replace(TINY, joint_text=False)
    alone = layer_cost(cross, n, head, PLAIN, chip, 50)["ops"]["softmax"]
    both = layer_cost(cross, n, head, PLAIN, chip, 50, cross_row_cycles=20)["ops"]["softmax"]
    rows = TINY.heads * n                                   # one row a video token, a text long
    assert both["sram_bytes"] - alone["sram_bytes"] == rows * TINY.text_tokens * 13
    assert (both["compute_s"] - alone["compute_s"]) * 1e9 == pytest.approx(-(-rows // 2) * 20)


def test_faster_memory_never_slows_a_layer():
    chip = Chip(arrays=4, softmax_lanes=8, dram_channels=1, dram_mtps=10.0)     # starved of DRAM
    head = baseline_head(TINY.tokens("480p"), TINY.head_dim, chip.rows, chip.cols)
    slow = layer_cost(TINY, TINY.tokens("480p"), head, PLAIN, chip, 50)
    fast = layer_cost(TINY, TINY.tokens("480p"), head, PLAIN, replace(chip, dram_channels=64), 50)
    assert fast["time_s"] < slow["time_s"]
    assert all(fast["ops"][o]["time_s"] <= slow["ops"][o]["time_s"] for o in fast["ops"])


def test_the_dispatcher_costs_energy_and_area_only_where_it_exists():
    chip = Chip(arrays=8, softmax_lanes=8)
    kaleido = replace(PLAIN, scheduler=UNIT, matcher=UNIT, clusters=4, port_bytes=2)
    head = baseline_head(TINY.tokens("480p"), TINY.head_dim, chip.rows, chip.cols)
    a = layer_cost(TINY, TINY.tokens("480p"), head, PLAIN, chip, 50)
    b = layer_cost(TINY, TINY.tokens("480p"), head, kaleido, chip, 50)
    assert a["energy_by_unit_j"]["dispatcher"] == 0 < b["energy_by_unit_j"]["dispatcher"]
    area = chip_area(kaleido, chip)
    assert area["dispatcher"] == pytest.approx((8 + 2) * 2000e-6)
    assert area["pe_arrays"] == pytest.approx(8 * 16 * 1000e-6)
    assert area["sram"] == pytest.approx(96 * sram_mm2_per_mib())
    assert area["total"] == pytest.approx(sum(v for k, v in area.items() if k != "total"))


def test_the_chips_schedulers_share_a_layers_wait_for_clusters():
    # TINY has 2 heads: 4 operand streams. With 64 arrays and a scheduler per 4
    # arrays, each stream gets 4 schedulers, and its wait is a quarter of one's.
    still = baseline_head(TINY.tokens("480p"), TINY.head_dim, 4, 4)
    kaleido = replace(PLAIN, scheduler=UNIT, matcher=UNIT, clusters=4, port_bytes=2)
    f = 1e6 * Chip().clock_mhz

    def qk_cycles(arrays, head):
        return layer_cost(TINY, TINY.tokens("480p"), head, kaleido, Chip(arrays=arrays), 50)["ops"]["qk"]["compute_s"] * f
    for arrays, share in ((64, 0.25), (8, 1.0)):          # 8 arrays: 2 schedulers for 4 streams, one each
        waited = qk_cycles(arrays, replace(still, lead=40_000)) - qk_cycles(arrays, still)
        assert waited == pytest.approx(40_000 * share)


def test_sign_off_figures_are_brought_to_the_chips_node():
    at180 = replace(PLAIN, node=(180, 1.8))
    chip = Chip()
    assert at180.area_mm2(PE, chip) == pytest.approx(1000e-6 / 99)
    assert at180.energy(PE, "full_mac", chip) == pytest.approx(40.0 * 0.120272 / 26.372)
    assert PLAIN.energy(PE, "nibble_mac", chip) == 30.0
    assert np.isclose(replace(PLAIN, pe=Unit(1.0, {"full_mac": 7.0, "idle": 1.0}, 0.0)).energy(
        Unit(1.0, {"full_mac": 7.0, "idle": 1.0}, 0.0), "nibble_mac", chip), 7.0)     # no nibble: a full product


def test_gated_arrays_spend_nothing_while_softmax_runs():
    chip = Chip(arrays=4, softmax_lanes=8)
    head = baseline_head(TINY.tokens("480p"), TINY.head_dim, chip.rows, chip.cols)
    free = layer_cost(TINY, TINY.tokens("480p"), head, PLAIN, chip, 50)
    gated = layer_cost(TINY, TINY.tokens("480p"), head, PLAIN, replace(chip, gate_idle_arrays=True), 50)
    assert gated["time_s"] == free["time_s"]
    assert gated["ops"]["softmax"]["energy_j"]["pe_arrays"] == 0 < free["ops"]["softmax"]["energy_j"]["pe_arrays"]
    # While the arrays issue slots, gating changes nothing but the drain's tail.
    qk_free, qk_gated = free["ops"]["qk"]["energy_j"]["pe_arrays"], gated["ops"]["qk"]["energy_j"]["pe_arrays"]
    assert qk_gated == pytest.approx(qk_free, rel=1e-3)
    with pytest.raises(ChipError, match="true or false"):
        Chip(gate_idle_arrays="yes")
