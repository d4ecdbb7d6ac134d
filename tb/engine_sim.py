"""Run the attention engine in Amaranth's simulator (fast to start, for small cases)."""

from amaranth.sim import Simulator

from hw.core.engine import COUNTER_SETTLE, AttentionEngine
from hw.host.engine_image import Scoreboard


def simulate_engine(image, cfg, n_q, n_k, max_cycles=200_000, matcher=False):
    dut = AttentionEngine(cfg, image.design, max(1, len(image.q_words)), max(1, len(image.k_words)),
                          matcher)
    board = Scoreboard(image, cfg, n_q, n_k)
    result = {}

    async def tb(ctx):
        for name, values in image.settings().items():
            if isinstance(values, list):
                for port, v in zip(getattr(dut, name), values):
                    ctx.set(port, v)
            else:
                ctx.set(getattr(dut, name), values)
        for side in "qk":
            words = getattr(image, f"{side}_words")
            ctx.set(getattr(dut, f"{side}_wr_en"), 1)
            for addr, w in enumerate(words):
                ctx.set(getattr(dut, f"{side}_wr_addr"), addr)
                ctx.set(getattr(dut, f"{side}_wr_data"), w)
                await ctx.tick()
            ctx.set(getattr(dut, f"{side}_wr_en"), 0)
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        result["last_out"] = None
        for cycle in range(1, max_cycles):
            # `cycle` counts from the first cycle after start, like the engine's counter.
            for j in range(cfg.cols):
                if ctx.get(dut.out_valid[j]):
                    board.push(j, ctx.get(dut.out[j]), cycle)
                    result["last_out"] = cycle
            if not ctx.get(dut.busy):
                break
            await ctx.tick()
        for _ in range(COUNTER_SETTLE):          # the counters are pipelined
            await ctx.tick()
        result["cycles"] = ctx.get(dut.cycles)
        result["lane_work"] = ctx.get(dut.lane_work)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(tb)
    sim.run()
    result["scores"] = board.result()
    return result
