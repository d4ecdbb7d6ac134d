"""The channel window's PE (:class:`hw.core.window_pe.WindowPE`) in Amaranth's
simulator: on random wide ports it picks each step's operands by the choosing
side's window positions (columns in B and D, rows in C) and then runs exactly
as the golden PE model on those operands."""

import random

from amaranth.sim import Simulator

from golden import Config
from golden.pe import ColIn, PEModel, RowIn
from golden.pe_encoding import Load, Mode
from hw.core.window_pe import WindowPE
from tests.sweep import sweep


@sweep("width, accumulators", [2, 4, 8], [3, 4], keep=[(2, 3), (4, 4)])
def test_window_pe_picks_its_steps_and_matches_golden_pe(width, accumulators, seed):
    rnd = random.Random(seed)
    cfg = Config(partition=(2, 1, 1), accumulators=accumulators, issue_window=width)
    dut, model = WindowPE(cfg), PEModel(cfg.pe_acc_bits, accumulators, stages=cfg.pe_stages)

    async def tb(ctx):
        for cycle in range(3000):
            mode = rnd.choice([Mode.A, Mode.B, Mode.C, Mode.D])
            a = [rnd.randrange(-128, 128) for _ in range(width)]
            sq = [rnd.randrange(3) for _ in range(width)]
            b = [rnd.randrange(256) for _ in range(width)]
            sk = [rnd.randrange(3) for _ in range(width)]
            rsel = [rnd.randrange(width) for _ in range(2)]
            csel = [rnd.randrange(width) for _ in range(2)]
            rtake, ctake = rnd.randrange(4), rnd.randrange(4)
            load = rnd.choice([Load.KEEP] * 6 + [Load.CLEAR, Load.R1, Load.R2])
            drain = rnd.random() < 0.1
            for w in range(width):
                ctx.set(dut.row_in.a[w], a[w])
                ctx.set(dut.row_in.sq[w], sq[w])
                ctx.set(dut.col_in.b[w], b[w])
                ctx.set(dut.col_in.sk[w], sk[w])
            for k in range(2):
                ctx.set(dut.row_in.sel[k], rsel[k])
                ctx.set(dut.col_in.sel[k], csel[k])
            ctx.set(dut.row_in.take, rtake)
            ctx.set(dut.col_in.take, ctake)
            ctx.set(dut.row_in.mode, mode)
            ctx.set(dut.row_in.load, load)
            ctx.set(dut.row_in.drain, drain)
            # The choosing side's steps sit at 0 and 1; the other side's are picked.
            if mode == Mode.C:
                ra, rs, cb, cs = a[:2], sq[:2], [b[i] for i in rsel], [sk[i] for i in rsel]
            else:
                ra, rs, cb, cs = [a[i] for i in csel], [sq[i] for i in csel], b[:2], sk[:2]
            row = RowIn(a0=ra[0], a1=ra[1], sq0=rs[0], sq1=rs[1], mode=mode, steps=rtake & ctake,
                        load=load, drain=drain)
            col = ColIn(b0=cb[0], b1=cb[1], sk0=cs[0], sk1=cs[1])
            await ctx.tick()
            model.tick(row, col)
            regs = [ctx.get(getattr(dut, f"r{k}")) for k in range(accumulators)]
            assert regs == model.r, f"cycle {cycle}: {row} {col}"
            assert (ctx.get(dut.drain_out.valid), ctx.get(dut.drain_out.score)) == (model.out_valid, model.out)
            assert ctx.get(dut.row_out.a[width - 1]) == a[-1] and ctx.get(dut.col_out.sel[1]) == csel[1]

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()
