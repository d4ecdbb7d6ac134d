"""A layer on a chip: time, energy and area against hand counts; the pipelined
schedule against the serial one; the SRAM's bandwidth, broadcast and feature
loads; standing power; mixed chips."""

import math
from dataclasses import replace

import pytest

from sim.chip.chip import Chip, SignOff, Unit, baseline_head
from sim.chip.kinds import ALONE, Kind, chip_area, kinds_of
from sim.chip.layer import layer_cost
from sim.chip.memories import (
    DRAM_REFRESH_W,
    DRAM_STANDBY_W,
    FEATURE_BUFFER_KIB,
    LOGIC_LEAKAGE_MW_PER_MM2,
    WIRE_FJ_PER_BIT_MM,
    sram_mm2_per_mib,
)
from sim.chip.vdits import VDiT

PE = Unit(1000.0, {"full_mac": 40.0, "nibble_mac": 30.0, "idle": 10.0, "hand_over": 45.0, "drain_shift": 12.0}, 1.0)
SOFTMAX = Unit(5000.0, {"busy": 100.0, "idle": 20.0}, 2.0)
UNIT = Unit(2000.0, {"busy": 50.0, "idle": 5.0}, 1.0)
GATE = Unit(128.0, {"cycle": 0.5}, 0.0)
PLAIN = SignOff((16, 0.8), PE, SOFTMAX, 4)              # measured at the chip's own node: no scaling
KALEIDO = replace(PLAIN, scheduler=UNIT, matcher=UNIT, clusters=4)
TINY = VDiT("wan2.1", layers=1, heads=2, head_dim=64, hidden=128, mlp=256, steps=1, passes_per_step=1,
            text_tokens=8, joint_text=True, video={"480p": (5, 32, 64)})
N = TINY.tokens("480p")
# Every Kaleido array with its dispatcher, unless a test says otherwise.
SMALL = Chip(arrays=4, softmax_lanes=8, schedule="serial", gate_idle_arrays=False, sram_bank_bits=4096,
             coupled_share=1.0)


def plain(chip, sign=PLAIN):
    return {"baseline": Kind(chip.arrays, baseline_head(N, TINY.head_dim, chip.rows, chip.cols), sign)}


def paired(head):
    """``head`` as Kaleido's passes ran it, with the matcher."""
    return replace(head, paired=True, matcher=True)


def test_a_serial_layer_adds_up():
    layer = layer_cost(TINY, N, plain(SMALL), SMALL, softmax_row_cycles=50)
    assert layer["time_s"] == pytest.approx(sum(o["time_s"] for o in layer["ops"].values()))
    assert layer["energy_j"] == pytest.approx(sum(layer["energy_by_unit_j"].values()))
    for op in layer["ops"].values():
        assert op["time_s"] == pytest.approx(max(op["compute_s"], op["memory_s"], op["global_buffer_s"],
                                                 op["acc_buffer_s"]))
    # Softmax: two 4-lane units share rows of 24 scores, 50 cycles a row.
    rows = TINY.heads * (N + TINY.text_tokens)
    assert layer["ops"]["softmax"]["compute_s"] == pytest.approx(-(-rows // 2) * 50 / 1e9)
    # Q K^T on the arrays: the head's slots per array, the tail, no lead.
    qk = layer["ops"]["qk"]
    n = N + TINY.text_tokens
    dense_slots = -(-n // 4) * -(-n // 4) * 64
    assert qk["compute_s"] == pytest.approx((2 * dense_slots / 4 + 12) / 1e9, rel=1e-3)


def test_pipelined_attention_overlaps_its_operations():
    serial = layer_cost(TINY, N, plain(SMALL), SMALL, 50)
    piped = layer_cost(TINY, N, plain(SMALL), replace(SMALL, schedule="pipelined"), 50)
    ops = serial["ops"]
    assert piped["serial_time_s"] == pytest.approx(serial["time_s"])
    # 24-score rows, 4 bytes each, in half of 32 MiB: one block a head, two in all.
    assert piped["blocks"] == TINY.heads == 2
    q, s, p = (ops[o]["compute_s"] / 2 for o in ("qk", "softmax", "pv"))
    # Step 0: Q K^T of block 0; 1: Q K^T of 1 beside softmax of 0; 2: P V of 0
    # beside softmax of 1; 3: P V of 1.
    assert piped["time_s"] == pytest.approx(q + max(q, s) + max(p, s) + p + ops["linear"]["time_s"])
    assert piped["time_s"] < serial["time_s"]
    # Many blocks: the arrays' work or the vector unit's, whichever is longer.
    many = replace(SMALL, schedule="pipelined", acc_buffer_mib=2 * 24 * 4 / 2 ** 20)     # a row a block
    layer = layer_cost(TINY, N, plain(many), many, 50)
    assert layer["blocks"] == 2 * 24
    busy = max(ops["qk"]["compute_s"] + ops["pv"]["compute_s"], ops["softmax"]["compute_s"])
    assert busy < layer["time_s"] - ops["linear"]["time_s"] < busy * 1.01


def test_softmax_reads_each_score_once_a_pass_and_runs_the_cross_attentions_rows():
    joint = layer_cost(TINY, N, plain(SMALL), SMALL, softmax_row_cycles=50)["ops"]["softmax"]
    n_all = N + TINY.text_tokens
    # Three reads of a 3-byte score (64 channels: 23 bits), one code.
    assert joint["acc_bytes"] == TINY.heads * n_all * n_all * (3 * 3 + 1)
    cross = replace(TINY, joint_text=False)
    alone = layer_cost(cross, N, plain(SMALL), SMALL, 50)["ops"]["softmax"]
    both = layer_cost(cross, N, plain(SMALL), SMALL, 50, cross_row_cycles=20)["ops"]["softmax"]
    rows = TINY.heads * N                                   # one row a video token, a text long
    assert both["acc_bytes"] - alone["acc_bytes"] == rows * TINY.text_tokens * 10
    assert (both["compute_s"] - alone["compute_s"]) * 1e9 == pytest.approx(-(-rows // 2) * 20)


#: 4,096 arrays, each reading its own operands.
STARVED = replace(SMALL, arrays=4096, operand_broadcast=False)


def test_faster_memory_never_slows_a_layer():
    for starved, fed in ((replace(SMALL, dram_channels=1, dram_mtps=10.0), {"dram_channels": 64}),
                         (replace(STARVED, sram_bank_bits=8), {"sram_bank_bits": 512}),
                         (replace(STARVED, sram_bank_bits=8), {"sram_ports": 4})):
        slow = layer_cost(TINY, N, plain(starved), starved, 50)
        fast = layer_cost(TINY, N, plain(starved), replace(starved, **fed), 50)
        assert fast["time_s"] < slow["time_s"]
        assert all(fast["ops"][o]["time_s"] <= slow["ops"][o]["time_s"] for o in fast["ops"])


def test_narrow_banks_bound_an_operation_and_say_so():
    chip = replace(SMALL, arrays=1024, sram_bank_bits=8, operand_broadcast=False)
    qk = layer_cost(TINY, N, plain(chip), chip, 50)["ops"]["qk"]
    # Each of 1,024 arrays reads 8 operand bytes a slot; 64 MiB in 32 KiB banks of
    # a byte moves 2,048 bytes a cycle: a quarter of the need.
    assert qk["bound"] == "global_buffer"
    assert qk["global_buffer_bytes"] / chip.global_bytes_per_cycle == pytest.approx(qk["global_buffer_s"] * 1e9)
    assert qk["global_buffer_s"] == pytest.approx(4 * (qk["compute_s"] - 12e-9), rel=0.01)


def test_broadcast_reads_a_tile_once_for_a_row_of_arrays():
    one = replace(SMALL, arrays=64, operand_broadcast=False)
    layers = {b: layer_cost(TINY, N, plain(one), replace(one, operand_broadcast=b), 50) for b in (False, True)}
    for op in ("qk", "pv", "linear"):
        assert layers[False]["ops"][op]["global_buffer_bytes"] == pytest.approx(
            8 * layers[True]["ops"][op]["global_buffer_bytes"])     # an 8 x 8 grid
    # A broadcast read crosses the chip's edge; one array's, half of it.
    edge = math.sqrt(chip_area(plain(one), one)["total"])
    wires = {b: layers[b]["energy_by_unit_j"]["wires"] for b in layers}
    reads = {b: sum(o["global_buffer_bytes"] for o in layers[b]["ops"].values()) for b in layers}
    assert wires[True] == pytest.approx(reads[True] * 8 * edge * WIRE_FJ_PER_BIT_MM * 1e-15)
    assert wires[False] == pytest.approx(reads[False] * 8 * edge / 2 * WIRE_FJ_PER_BIT_MM * 1e-15)


def test_a_paired_head_loads_each_tile_groups_features_once():
    chip = replace(SMALL, operand_broadcast=False)
    head = paired(baseline_head(N, TINY.head_dim, 4, 4))
    qk = layer_cost(TINY, N, {"kaleido": Kind(4, head, KALEIDO)}, chip, 50)["ops"]["qk"]
    streamed = layer_cost(TINY, N, plain(chip), chip, 50)["ops"]["qk"]
    groups = -(-N // 8) * -(-N // 8)                        # tile groups of 2R x 2C tokens
    text = streamed["global_buffer_bytes"] - TINY.heads * head.channel_steps * 8     # the joint text's dense share
    assert qk["global_buffer_bytes"] == pytest.approx(TINY.heads * groups * 16 * TINY.head_dim + text)
    # The array is fed from the matcher's buffer: a byte a port for each channel streamed.
    assert qk["sram_bytes"] - qk["global_buffer_bytes"] - qk["acc_bytes"] == pytest.approx(
        TINY.heads * head.channel_steps * 8)


def test_a_paired_heads_first_channel_group_writes_its_scores_and_each_later_one_adds_to_them():
    """Three channel groups' passes over the 16 score tiles: the first group's
    drains write (16), the others read and write (2 x 32); a dense head writes
    each tile once. Scores of 64 channels are 23 bits: 3 bytes."""
    base = baseline_head(N, TINY.head_dim, 4, 4)
    three = paired(replace(base, passes=3 * base.passes, first_passes=base.passes))
    qk = {name: layer_cost(TINY, N, {"kaleido": Kind(4, head, KALEIDO)}, SMALL, 50)["ops"]["qk"]
          for name, head in (("paired", three), ("dense", base))}
    extra = TINY.heads * ((16 + 2 * 32) - 16) * 16 * 3
    assert qk["paired"]["acc_bytes"] - qk["dense"]["acc_bytes"] == extra


def test_only_a_head_the_matcher_pairs_reads_the_feature_buffer():
    """A coupled array that runs a head's passes in channel order (``pe``) leaves
    its matcher and buffer unused: it streams the channels from the global buffer,
    as an array without a matcher does."""
    chip = replace(SMALL, operand_broadcast=False)
    in_order = replace(paired(baseline_head(N, TINY.head_dim, 4, 4)), matcher=False)
    coupled = layer_cost(TINY, N, {"kaleido": Kind(4, in_order, KALEIDO)}, chip, 50)["ops"]["qk"]
    plain_arrays = layer_cost(TINY, N, {ALONE: Kind(4, in_order, PLAIN)}, chip, 50)["ops"]["qk"]
    assert coupled["sram_bytes"] == pytest.approx(coupled["global_buffer_bytes"] + coupled["acc_bytes"])
    assert coupled["global_buffer_bytes"] == pytest.approx(plain_arrays["global_buffer_bytes"])


def test_the_dispatcher_costs_energy_and_area_only_where_it_exists():
    chip = replace(SMALL, arrays=8)
    head = baseline_head(N, TINY.head_dim, chip.rows, chip.cols)
    a = layer_cost(TINY, N, plain(chip), chip, 50)
    b = layer_cost(TINY, N, {"kaleido": Kind(8, head, KALEIDO)}, chip, 50)
    assert a["energy_by_unit_j"]["dispatcher"] == 0 < b["energy_by_unit_j"]["dispatcher"]
    area = chip_area({"kaleido": Kind(8, head, KALEIDO)}, chip)
    assert area["dispatcher"] == pytest.approx((8 + 2) * 2000e-6)
    assert area["pe_arrays"] == pytest.approx(8 * 16 * 1000e-6)
    assert area["sram"] == pytest.approx(96 * sram_mm2_per_mib())
    # Each matcher's feature buffer is SRAM in the area, as its reads are in the energy.
    assert area["feature_buffers"] == pytest.approx(8 * FEATURE_BUFFER_KIB / 1024 * sram_mm2_per_mib())
    assert chip_area(plain(chip), chip)["feature_buffers"] == 0
    assert area["total"] == pytest.approx(sum(v for k, v in area.items() if k != "total"))


def test_gated_dispatchers_spend_only_their_gates_on_a_dense_head():
    # A dense head gives the dispatcher no work: gated, each matcher (8) and
    # scheduler (2) spends its gate's cycle, 0.5 pJ, not its idle 5 pJ.
    head = baseline_head(N, TINY.head_dim, 4, 4)
    costs = {}
    for gated in (False, True):
        chip = replace(SMALL, arrays=8, gate_idle_dispatchers=gated)
        layer = layer_cost(TINY, N, {"kaleido": Kind(8, head, replace(KALEIDO, clock_gate=GATE))}, chip, 50)
        costs[gated] = (layer["energy_by_unit_j"]["dispatcher"], layer["cycles"])
        area = chip_area({"kaleido": Kind(8, head, replace(KALEIDO, clock_gate=GATE))}, chip)
        assert area["dispatcher"] == pytest.approx((8 + 2) * (2000 + 128 * gated) * 1e-6)
    for gated, pj in ((False, 5.0), (True, 0.5)):
        energy, cycles = costs[gated]
        assert energy == pytest.approx((8 + 2) * cycles * pj * 1e-12)


def test_the_chips_schedulers_share_a_layers_wait_for_clusters():
    # TINY has 2 heads: 4 operand streams. With 64 arrays and a scheduler per 4
    # arrays, each stream gets 4 schedulers, and its wait is a quarter of one's.
    still = baseline_head(N, TINY.head_dim, 4, 4)

    def qk_cycles(arrays, head):
        chip = replace(SMALL, arrays=arrays)
        return layer_cost(TINY, N, {"kaleido": Kind(arrays, head, KALEIDO)}, chip, 50)["ops"]["qk"]["compute_s"] * 1e9
    for arrays, share in ((64, 0.25), (8, 1.0)):          # 8 arrays: 2 schedulers for 4 streams, one each
        waited = qk_cycles(arrays, replace(still, lead=40_000)) - qk_cycles(arrays, still)
        assert waited == pytest.approx(40_000 * share)


def test_gated_arrays_spend_only_their_gates_while_softmax_runs():
    gated_sign = replace(PLAIN, clock_gate=GATE)
    free = layer_cost(TINY, N, plain(SMALL, gated_sign), SMALL, 50)
    chip = replace(SMALL, gate_idle_arrays=True)
    gated = layer_cost(TINY, N, plain(chip, gated_sign), chip, 50)
    assert gated["time_s"] == free["time_s"]
    sm = gated["ops"]["softmax"]
    # The gates tick every cycle of the layer, shared among the operations by time.
    gates = 4 * gated["cycles"] * 0.5e-12 * sm["time_s"] / gated["serial_time_s"]
    assert sm["energy_j"]["pe_arrays"] == pytest.approx(gates)
    assert gates < free["ops"]["softmax"]["energy_j"]["pe_arrays"]
    assert chip_area(plain(chip, gated_sign), chip)["pe_arrays"] == pytest.approx(4 * (16 * 1000 + 128) * 1e-6)


def test_standing_power_runs_for_the_whole_layer():
    layer = layer_cost(TINY, N, plain(SMALL), SMALL, 50)
    seconds = layer["time_s"]
    dram_bits = sum(o["dram_bytes"] for o in layer["ops"].values()) * 8
    standby = SMALL.dram_channels * (DRAM_STANDBY_W + DRAM_REFRESH_W) * seconds
    assert layer["energy_by_unit_j"]["dram"] == pytest.approx(standby + dram_bits * 1300 / 64 * 1e-12)
    area = chip_area(plain(SMALL), SMALL)
    logic = area["pe_arrays"] + area["softmax"]
    assert layer["energy_by_unit_j"]["leakage"] == pytest.approx(logic * LOGIC_LEAKAGE_MW_PER_MM2 * 1e-3 * seconds)


def test_a_mixed_chip_shares_the_heads_so_both_kinds_finish_together():
    base = baseline_head(N, TINY.head_dim, 4, 4)
    fast = paired(replace(base, slots=base.slots / 2, slots_low=base.slots / 2, slots_high=base.slots / 2))
    heads, signs = {"kaleido": fast, "baseline": base}, {"kaleido": KALEIDO, "baseline": PLAIN}
    chip = replace(SMALL, arrays=8, kaleido_share=0.5)
    kinds = kinds_of("kaleido", chip, heads, signs)
    assert {k: v.arrays for k, v in kinds.items()} == {"kaleido": 4, "baseline": 4}
    qk = layer_cost(TINY, N, kinds, chip, 50)["ops"]["qk"]
    # Kaleido's arrays run a head twice as fast: they take two thirds of the heads,
    # and the layer's heads take what 8 arrays at 2/3 of the baseline's slots take.
    text = (N + 8) ** 2 - N * N
    dense_text = (-(-(N + 8) // 4)) ** 2 * 64 * text / (N + 8) ** 2 * TINY.heads
    expect = (TINY.heads * base.slots * 2 / 3 + dense_text) / 8 + 12
    assert qk["compute_s"] * 1e9 == pytest.approx(expect, rel=1e-6)
    # No Kaleido arrays: the baseline chip, to the joule.
    none = replace(chip, kaleido_share=0)
    assert layer_cost(TINY, N, kinds_of("kaleido", none, heads, signs), none, 50) == layer_cost(
        TINY, N, kinds_of("baseline", none, heads, signs), none, 50)


def test_a_kind_that_reuses_in_dense_work_takes_more_of_it():
    base = baseline_head(N, TINY.head_dim, 4, 4)
    chip = replace(SMALL, arrays=8)
    kinds = {"kaleido": Kind(4, base, KALEIDO, dense_factor=0.5), "baseline": Kind(4, base, PLAIN)}
    pv = layer_cost(TINY, N, kinds, chip, 50)["ops"]["pv"]
    dense = layer_cost(TINY, N, plain(chip), chip, 50)["ops"]["pv"]
    # Half the slots a product on four arrays, all of them on the other four: the
    # Kaleido arrays take two thirds of the products, and the whole takes 3/4 the time.
    assert pv["compute_s"] - 12e-9 == pytest.approx((dense["compute_s"] - 12e-9) * 8 / (4 / 0.5 + 4))


def test_p_v_runs_as_each_head_s_fast_model_found_it():
    base = baseline_head(N, TINY.head_dim, 4, 4)
    chip = replace(SMALL, arrays=8)
    # 17 column tiles (one more than 64 channels need) over 3/4 of the keys each.
    keys = 17 * (3 * N // 4)
    own = paired(replace(base, pv_tiles=17, pv_keys=keys, pv_channel_keys=keys * 64 / 17, pv_shared=1.0))
    kinds = {"kaleido": Kind(8, own, KALEIDO)}
    pv = layer_cost(TINY, N, kinds, chip, 50)["ops"]["pv"]
    dense = layer_cost(TINY, N, plain(chip), chip, 50)["ops"]["pv"]
    n = N + TINY.text_tokens
    # Each row tile steps through every tile's keys and the 8 text keys, which never fold.
    slots = TINY.heads * -(-n // 4) * (keys + 17 * 8)
    assert pv["compute_s"] * 1e9 == pytest.approx(slots / 8 + 12)
    assert dense["compute_s"] * 1e9 == pytest.approx(TINY.heads * -(-n // 4) * 16 * n / 8 + 12)
    # One drain per tile pass, each output a sum of 24 products (22 bits, 3 bytes);
    # each slot's row entries carry two codes.
    assert pv["acc_bytes"] == TINY.heads * -(-n // 4) * 17 * 16 * 3
    assert pv["global_buffer_bytes"] == pytest.approx(slots * (4 * 2 + 4) / math.sqrt(8))
    # A head without P V~ figures runs it dense.
    assert layer_cost(TINY, N, {"kaleido": Kind(8, paired(base), KALEIDO)}, chip, 50)["ops"]["pv"]["compute_s"] \
        == pytest.approx(dense["compute_s"])


def test_linear_layers_on_the_hidden_state_run_as_the_heads_slices_found():
    base = baseline_head(N, TINY.head_dim, 4, 4)
    chip = replace(SMALL, arrays=8)
    own = paired(replace(base, linear_slots=0.5, linear_passes=3.0, linear_full=0.4, linear_nibble=0.2,
                         linear_windows=1.0))
    lin = layer_cost(TINY, N, {"kaleido": Kind(8, own, KALEIDO)}, chip, 50)["ops"]["linear"]
    dense = layer_cost(TINY, N, plain(chip), chip, 50)["ops"]["linear"]
    n, h, mlp = N + TINY.text_tokens, TINY.hidden, TINY.mlp

    def slots(m, k, out):
        return -(-m // 4) * -(-out // 4) * max(k, 8)
    # QKV (video rows at half, the 8 text rows dense) and the MLP's first layer
    # (video only) reuse; the output projection and the MLP's second layer do not.
    qkv, proj, mlp1, mlp2 = slots(n, h, 3 * h), slots(n, h, h), slots(N, h, mlp), slots(N, mlp, h)
    reused = qkv * (N / n * 0.5 + 8 / n) + proj + mlp1 * 0.5 + mlp2
    assert lin["compute_s"] * 1e9 == pytest.approx(reused / 8 + 4 * 12)
    assert dense["compute_s"] * 1e9 == pytest.approx((qkv + proj + mlp1 + mlp2) / 8 + 4 * 12)
    # Window passes drain three times as often, each output read and written but
    # for its first pass's write: 5 accesses; the text's rows drain once. Outputs
    # of 128 products take 3 bytes, of 256 (the MLP's second layer) 4.
    tiles = {g: -(-m // 4) * -(-out // 4) for g, (m, out) in
             {"qkv": (n, 3 * h), "proj": (n, h), "mlp1": (N, mlp), "mlp2": (N, h)}.items()}
    three = tiles["qkv"] * (N / n * 5 + 8 / n) + tiles["proj"] + tiles["mlp1"] * 5
    assert lin["acc_bytes"] == pytest.approx(three * 16 * 3 + tiles["mlp2"] * 16 * 4)


def test_a_linear_layer_runs_dense_where_its_windows_would_be_slower(monkeypatch):
    """Windows that drain three times as often, each score read and written, on a
    chip whose accumulation buffer moves 4 bytes a cycle: the windows would bound
    every layer there, so each runs dense, no slower than the dense chip's."""
    from sim.chip import layer

    base = baseline_head(N, TINY.head_dim, 4, 4)
    own = paired(replace(base, linear_slots=0.9, linear_passes=3.0, linear_full=0.9, linear_nibble=0.0,
                         linear_windows=1.0))
    starved = replace(SMALL, arrays=8, acc_buffer_mib=1 / 32, sram_bank_bits=32)
    assert starved.acc_bytes_per_cycle == 4
    lin = layer_cost(TINY, N, {"kaleido": Kind(8, own, KALEIDO)}, starved, 50)["ops"]["linear"]
    dense = layer_cost(TINY, N, plain(starved), starved, 50)["ops"]["linear"]
    assert lin["time_s"] == pytest.approx(dense["time_s"]) and lin["acc_bytes"] == pytest.approx(dense["acc_bytes"])
    assert lin["ran_dense"] == ["qkv", "mlp1"] and dense["ran_dense"] == []
    # Run as the windows regardless (the rule before this one), the op is slower.
    monkeypatch.setattr(layer, "_windows_or_dense", lambda *args: args[-2])
    forced = layer_cost(TINY, N, {"kaleido": Kind(8, own, KALEIDO)}, starved, 50)["ops"]["linear"]
    assert forced["bound"] == "acc_buffer" and forced["time_s"] > 1.5 * dense["time_s"]
    monkeypatch.undo()
    # With the bandwidth to spare the same windows run, and save their slots.
    roomy = replace(starved, acc_buffer_mib=32, sram_bank_bits=4096)
    lin = layer_cost(TINY, N, {"kaleido": Kind(8, own, KALEIDO)}, roomy, 50)["ops"]["linear"]
    dense = layer_cost(TINY, N, plain(roomy), roomy, 50)["ops"]["linear"]
    assert lin["compute_s"] < dense["compute_s"] and lin["acc_bytes"] > dense["acc_bytes"]


def test_arrays_without_a_dispatcher_run_their_own_head_and_have_no_dispatcher_or_buffer():
    """``coupled_share``: of 8 Kaleido arrays 2 have a dispatcher; the other 6 run
    the head they are given (in channel order here), stream its paired operands
    from the global buffer, and have neither a matcher nor a feature buffer."""
    base = baseline_head(N, TINY.head_dim, 4, 4)
    half = replace(base, slots=base.slots / 2, slots_low=base.slots / 2, slots_high=base.slots / 2)
    coupled, by_itself = paired(half), replace(paired(base), matcher=False)
    chip = replace(SMALL, arrays=8, coupled_share=0.25)
    heads = {"kaleido": coupled, ALONE: by_itself, "baseline": base}
    kinds = kinds_of("kaleido", chip, heads, {"kaleido": KALEIDO, "baseline": PLAIN})
    assert {k: v.arrays for k, v in kinds.items()} == {"kaleido": 2, ALONE: 6}
    assert kinds[ALONE].work is by_itself
    assert kinds[ALONE].sign.matcher is None and kinds[ALONE].sign.scheduler is None
    area = chip_area(kinds, chip)
    assert area["feature_buffers"] == pytest.approx(2 * FEATURE_BUFFER_KIB / 1024 * sram_mm2_per_mib())
    assert area["dispatcher"] == pytest.approx((2 + 1) * 2000e-6)          # 2 matchers, 1 scheduler (4 a cluster)
    qk = layer_cost(TINY, N, kinds, chip, 50)["ops"]["qk"]
    # The coupled arrays run a head twice as fast: 2 x 2 against 6 x 1, they take 4/10
    # of the heads, and every array is busy for a tenth of a head's slots at its pace
    # (the layer's heads take what 8 arrays at 8/10 of a plain head's slots take).
    work = layer_cost(TINY, N, kinds, chip, 50)
    assert work["energy_by_unit_j"]["dispatcher"] > 0
    text = (N + 8) ** 2 - N * N
    dense_text = (-(-(N + 8) // 4)) ** 2 * 64 * text / (N + 8) ** 2 * TINY.heads
    expect = (TINY.heads * base.slots * 8 / 10 + dense_text) / 8 + 12
    assert qk["compute_s"] * 1e9 == pytest.approx(expect, rel=1e-6)
    # Without a share coupled, every Kaleido array runs alone.
    none = kinds_of("kaleido", replace(chip, coupled_share=0), heads, {"kaleido": KALEIDO, "baseline": PLAIN})
    assert {k: v.arrays for k, v in none.items()} == {ALONE: 8}
    assert chip_area(none, chip)["feature_buffers"] == 0 == chip_area(none, chip)["dispatcher"]
    # Its paired heads read nothing from a feature buffer: each channel streamed
    # moves a byte a port from the global buffer (broadcast over the grid's side,
    # as a dense stream's). Here the passes stream 1.5 times the dense channels.
    more = {ALONE: replace(none[ALONE], work=replace(by_itself, channel_steps=1.5 * base.channel_steps))}
    alone_qk = layer_cost(TINY, N, more, chip, 50)["ops"]["qk"]
    assert alone_qk["sram_bytes"] == pytest.approx(alone_qk["global_buffer_bytes"] + alone_qk["acc_bytes"])
    dense_qk = layer_cost(TINY, N, {ALONE: replace(none[ALONE], work=replace(by_itself, paired=False))}, chip,
                          50)["ops"]["qk"]
    extra = TINY.heads * base.channel_steps * 8 * 0.5            # 8 ports, half a channel more
    side = math.sqrt(chip.arrays) if chip.operand_broadcast else 1.0
    assert alone_qk["global_buffer_bytes"] - dense_qk["global_buffer_bytes"] == pytest.approx(extra / side)
