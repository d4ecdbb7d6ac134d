"""One head's energy ledger: each schedule's joules by unit add up to its layer's,
the memories split as their bytes say, and a schedule in channel order reads no
feature buffer."""

from dataclasses import asdict, replace

import pytest

from golden import Config
from sim.chip.chip import QK_FIELDS, Chip, SignOff, Unit, baseline_head
from sim.chip.memories import feature_pj_per_byte, sram_pj_per_byte
from sim.chip.vdits import VDiT
from sim.experiments.ledger import head_ledger

PE = Unit(1000.0, {"full_mac": 40.0, "nibble_mac": 30.0, "idle": 10.0, "hand_over": 45.0, "drain_shift": 12.0}, 1.0)
SOFTMAX = Unit(5000.0, {"busy": 100.0, "idle": 20.0}, 2.0)
UNIT = Unit(2000.0, {"busy": 50.0, "idle": 5.0}, 1.0)
PLAIN = SignOff((16, 0.8), PE, SOFTMAX, 4)
SIGNS = {"kaleido": replace(PLAIN, scheduler=UNIT, matcher=UNIT, clusters=4), "baseline": PLAIN}
TINY = VDiT("wan2.1", layers=1, heads=2, head_dim=64, hidden=128, mlp=256, steps=1, passes_per_step=1,
            text_tokens=8, joint_text=False, video={"480p": (5, 32, 64)})
CHIP = Chip(arrays=8, softmax_lanes=8, coupled_share=1.0)


def _head(cfg):
    """A shard's head with a dense option and two paired ones (matcher, in order)
    that stream 3/4 of the channels and skip a third of the products."""
    base = baseline_head(cfg.tokens, cfg.head_dim, 4, 4)
    dense = {f: v for f, v in asdict(base).items() if f in QK_FIELDS}
    paired = dict(dense, slots=0.8 * base.slots, slots_low=0.8 * base.slots, slots_high=0.8 * base.slots,
                  full_products=base.full_products * 2 / 3, passes=3 * base.passes, first_passes=base.passes,
                  channel_steps=0.75 * base.channel_steps, paired=True)
    options = {"full": dict(paired, matcher=True), "pe": paired, "dense": dense}
    return {**asdict(base), "qk_options": options, "qk_ran_as": "full", **options["full"]}


def test_each_schedules_ledger_is_its_layer_split_by_unit():
    cfg = Config.for_model("wan2.1", 64, grid=TINY.grid("480p"))
    head = _head(cfg)
    ledger = head_ledger(TINY, CHIP, cfg, head, SIGNS)
    assert set(ledger) == {"full", "pe", "dense", "vs_dense"}
    for name in ("full", "pe", "dense"):
        e = ledger[name]
        parts = sum(j for u, j in e.items() if u not in ("total", "layer_s"))
        assert e["total"] == pytest.approx(parts)
        gain = ledger["vs_dense"].get(name, {"total": 0.0})["total"]
        assert gain == pytest.approx(e["total"] - ledger["dense"]["total"])
    # In channel order the matcher's buffer is not read; paired, the accumulation
    # buffer takes the later channel groups' reads and writes.
    assert ledger["pe"]["feature_buffer"] == 0 < ledger["full"]["feature_buffer"]
    assert ledger["vs_dense"]["pe"]["acc_buffer"] > 0
    # The accumulation buffer's share is its bytes at the SRAM's price: three
    # channel groups' passes drain 16 scores of 3 bytes (64 channels: 23 bits),
    # written by the first group and read and written by the others, where dense
    # writes each once: 4 more drains for every dense one.
    more = 4 * head["qk_options"]["dense"]["passes"] * 16 * 3
    assert ledger["vs_dense"]["pe"]["acc_buffer"] == pytest.approx(more * sram_pj_per_byte(CHIP.node) * 1e-12)
    assert feature_pj_per_byte(CHIP.node) > 0
