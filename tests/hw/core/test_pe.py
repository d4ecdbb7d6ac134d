"""The augmented PE in Amaranth's simulator: exhaustive lane products, and long
random op sequences against the golden PE model."""

import random

import pytest
from amaranth.sim import Simulator

from golden import Config
from golden.pe import ColIn, PEModel, RowIn, activity_lag, decode
from golden.pe_encoding import Load, Mode
from hw.core.pe import COL_FORWARDED, PE, ROW_FORWARDED
from tb.forwarded import Forwarded
from tests.sweep import sweep

# One stage, so each product is in r0 the cycle after its operands; the random
# sequences below cover every depth against the golden model.
CFG = Config(partition=(16, 8, 8), pe_stages=1)


def simulate(dut, testbench):
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(testbench)
    sim.run()


def drive(ctx, dut, row: RowIn, col: ColIn):
    for name in ("a0", "a1", "sq0", "sq1", "mode", "steps", "load", "drain"):
        ctx.set(getattr(dut.row_in, name), int(getattr(row, name)))
    for name in ("b0", "b1", "sk0", "sk1", "steps"):
        ctx.set(getattr(dut.col_in, name), int(getattr(col, name)))


def s8(v):
    return v - 256 if v > 127 else v


@pytest.mark.slow      # make formal proves the same for every operand (flags off = the baseline MAC)
def test_full_product_all_operand_pairs():
    dut = PE(CFG)
    got = []

    async def tb(ctx):
        for i in range(1 << 16):
            drive(ctx, dut, RowIn(a0=s8(i >> 8), mode=Mode.A, steps=1, load=Load.CLEAR),
                  ColIn(b0=i & 0xFF, b1=0x5A))
            await ctx.tick()
            got.append(ctx.get(dut.r0))

    simulate(dut, tb)
    bad = [i for i in range(1 << 16) if got[i] != s8(i >> 8) * s8(i & 0xFF)]
    assert not bad, f"{len(bad)} wrong products, first a={s8(bad[0] >> 8)} b={s8(bad[0] & 0xFF)}"


@pytest.mark.parametrize("lane, high", [(0, False), (0, True), (1, False), (1, True)])
def test_nibble_lanes_all_combinations(lane, high):
    # Paired cycles in pass D where both steps have work, so each takes one lane:
    # (sq=0, sk=1) needs a low nibble, (sq=2, sk=1) a high one. The other step is a
    # low-nibble product of a zero operand; each step reads its own column byte.
    dut = PE(CFG)
    sq = 2 if high else 0
    cases = [(a, n) for a in range(-128, 128) for n in range(16)]
    got = []

    async def tb(ctx):
        for a, n in cases:
            row = RowIn(mode=Mode.D, steps=3, load=Load.CLEAR, a0=0, a1=0)
            col = ColIn(b0=0xFF, b1=0xFF, sk0=1, sk1=1)
            if lane:
                row.a1, row.sq1, col.b1 = a, sq, n << 4 if high else n | 0xA0
            else:
                row.a0, row.sq0, col.b0 = a, sq, n << 4 if high else n | 0xA0
            drive(ctx, dut, row, col)
            await ctx.tick()
            got.append(ctx.get(dut.r0))

    simulate(dut, tb)
    want = [16 * a * (n - 16 if n > 7 else n) if high else a * n for a, n in cases]
    assert got == want


def random_row(rnd):
    paired = rnd.random() < 0.3
    return RowIn(
        a0=rnd.randrange(-128, 128), a1=rnd.randrange(-128, 128),
        sq0=rnd.randrange(3), sq1=rnd.randrange(3),
        mode=rnd.choice(list(Mode) + [7]),
        steps=rnd.choice([2, 3]) if paired else rnd.choice([0, 1, 1, 1]),
        load=rnd.choices(list(Load), weights=[8, 1, 1, 1])[0],
        drain=rnd.random() < 0.15)


def check_random_sequences(cfg: Config, rnd: random.Random, cycles: int = 4000) -> list:
    """Drive ``cycles`` random cycles into a PE built at ``cfg`` and check it, cycle
    by cycle, against the golden PE of the design point's kind: activity, registers,
    drain chain and forwarded operands. Returns the ``(row, col)`` driven."""
    kind, stages = cfg.pe.kind, cfg.pe_stages
    dut, model = PE(cfg), PEModel(cfg.pe_acc_bits, kind, stages=stages)
    n = kind.registers
    driven = []
    row_fwd, col_fwd = Forwarded(ROW_FORWARDED, RowIn()), Forwarded(COL_FORWARDED, ColIn())

    async def tb(ctx):
        # The activity outputs belong to the operands of activity_lag cycles ago.
        decodes = [decode(0, 0, 0, 0, 0, 0, kind)] * activity_lag(stages)
        for cycle in range(cycles):
            row = random_row(rnd)
            col = ColIn(b0=rnd.randrange(256), b1=rnd.randrange(256), sk0=rnd.randrange(3), sk1=rnd.randrange(3),
                        steps=row.steps | rnd.choice([0, 0, 1, 3]))
            driven.append((row, col))
            out_in, out_in_valid = rnd.randrange(-100, 100), rnd.random() < 0.5
            drive(ctx, dut, row, col)
            ctx.set(dut.drain_in.score, out_in)
            ctx.set(dut.drain_in.valid, out_in_valid)
            decodes.append(decode(row.mode, row.steps, row.sq0, col.sk0, row.sq1, col.sk1, kind))
            dec = decodes.pop(0)
            assert ctx.get(dut.lanes) == dec.lanes[0].on | dec.lanes[1].on << 1
            assert ctx.get(dut.acc_en) == sum((dec.enable[k][i] or dec.tap[k][i]) << (2 * k + i)
                                              for k in range(n) for i in range(2))
            await ctx.tick()
            model.tick(row, col, out_in, out_in_valid)
            regs = [ctx.get(getattr(dut, f"r{k}")) for k in range(n)]
            assert regs == model.r, f"cycle {cycle}: {row} {col}"
            assert (ctx.get(dut.drain_out.valid), ctx.get(dut.drain_out.score)) == (model.out_valid, model.out)
            # What moves on: a field with its step, the control always.
            slot = row.steps | col.steps
            moved_row, moved_col = row_fwd.tick(row, slot), col_fwd.tick(col, slot)
            for port, moved in ((dut.row_out, moved_row), (dut.col_out, moved_col)):
                assert {f: ctx.get(port[f]) for f in moved} == moved, f"cycle {cycle}: forwarded"

    simulate(dut, tb)
    return driven


@sweep("run, accumulators, stages", [1, 2], [3, 4], [1, 2, 3, 4])
def test_random_sequences_match_golden_pe(run, accumulators, stages, seed):
    # A narrow accumulator, so wrapping is exercised.
    check_random_sequences(Config(partition=(2, 1, 1), accumulators=accumulators, pe_stages=stages),
                           random.Random(seed))
