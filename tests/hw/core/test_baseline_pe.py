"""The baseline PE in Amaranth's simulator: long random op sequences against the
golden baseline PE, at every depth."""

import random

from golden import Config
from golden.pe import BaselinePEModel
from hw.core.baseline_pe import BaselinePE
from tests.hw.core.test_pe import simulate
from tests.sweep import sweep

CFG = Config(partition=(16, 8, 8))


@sweep("run, stages", [1, 2], [1, 2, 3, 4])
def test_baseline_pe_matches_model(run, stages, seed):
    rnd = random.Random(seed)
    cfg = CFG.with_(pe_stages=stages)
    dut, model = BaselinePE(cfg), BaselinePEModel(cfg.acc_bits, stages=stages)

    async def tb(ctx):
        for cycle in range(3000):
            a, b = rnd.randrange(-128, 128), rnd.randrange(-128, 128)
            valid, clear, drain = rnd.random() < 0.8, rnd.random() < 0.1, rnd.random() < 0.1
            out_in, out_in_valid = rnd.randrange(-9, 9), rnd.random() < 0.5
            for name, v in dict(a=a, valid=valid, clear=clear, drain=drain).items():
                ctx.set(getattr(dut.row_in, name), int(v))
            ctx.set(dut.col_in, b)
            ctx.set(dut.drain_in.score, out_in)
            ctx.set(dut.drain_in.valid, out_in_valid)
            await ctx.tick()
            model.tick(a, b, valid, clear, drain, out_in, out_in_valid)
            assert ctx.get(dut.acc) == model.acc, f"cycle {cycle}"
            assert (ctx.get(dut.drain_out.valid), ctx.get(dut.drain_out.score)) == (model.out_valid, model.out)

    simulate(dut, tb)
