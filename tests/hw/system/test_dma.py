"""The system top's DMA against a model AXI4 slave in Amaranth's simulator: every beat
in order, no burst longer than 16 beats or across a 4 KiB page, random stalls on
every channel and on both streams, and an error response that sets the error bit
and still ends the run (never a hang)."""

import random

import pytest
from amaranth.sim import Simulator

from hw.system.axi import MAX_BURST, PAGE_BYTES, Resp
from hw.system.dma import Dma

BEAT = 4


class Slave:
    """A memory behind an AXI4 slave port, one burst at a time, with stalls; it answers
    ``bad`` addresses with SLVERR."""

    def __init__(self, rng, busy, bad=()):
        self.rng, self.busy, self.bad = rng, busy, set(bad)
        self.mem, self.bursts = {}, []

    def stall(self):
        return self.rng.random() < self.busy

    async def reads(self, ctx, bus):
        while True:
            ctx.set(bus.arready, 0 if self.stall() else 1)
            *_, valid, ready, addr, length = await ctx.tick().sample(bus.arvalid, bus.arready, bus.araddr, bus.arlen)
            if not (valid and ready):
                continue
            length += 1
            ctx.set(bus.arready, 0)
            self.bursts.append(("r", addr, length))
            for i in range(length):
                a = addr + i * BEAT
                while self.stall():
                    await ctx.tick()
                ctx.set(bus.rvalid, 1)
                ctx.set(bus.rdata, self.mem.get(a, a ^ 0x5A5A5A5A))
                ctx.set(bus.rresp, Resp.SLVERR.value if a in self.bad else Resp.OKAY.value)
                ctx.set(bus.rlast, i == length - 1)
                await ctx.tick().until(bus.rready)
                ctx.set(bus.rvalid, 0)

    async def writes(self, ctx, bus):
        while True:
            ctx.set(bus.awready, 0 if self.stall() else 1)
            *_, valid, ready, addr, length = await ctx.tick().sample(bus.awvalid, bus.awready, bus.awaddr, bus.awlen)
            if not (valid and ready):
                continue
            length += 1
            ctx.set(bus.awready, 0)
            self.bursts.append(("w", addr, length))
            error = False
            for i in range(length):
                while True:
                    ctx.set(bus.wready, 0 if self.stall() else 1)
                    *_, valid, ready, last, word = await ctx.tick().sample(bus.wvalid, bus.wready, bus.wlast,
                                                                            bus.wdata)
                    if valid and ready:
                        break
                assert last == (i == length - 1), "WLAST on the wrong beat"
                self.mem[addr + i * BEAT] = word
                error |= addr + i * BEAT in self.bad
            ctx.set(bus.wready, 0)
            ctx.set(bus.bresp, Resp.SLVERR.value if error else Resp.OKAY.value)
            ctx.set(bus.bvalid, 1)
            await ctx.tick().until(bus.bready)
            ctx.set(bus.bvalid, 0)


def _run(rng, addr, beats, busy, bad=()):
    dut = Dma()
    slave = Slave(rng, busy, bad)
    data = [rng.getrandbits(32) for _ in range(beats)]
    got, flags = [], {}

    async def host(ctx):
        # Write `data` at `addr`, then read it back, each run started with one pulse.
        for d in ("wr", "rd"):
            ctx.set(getattr(dut, f"{d}_addr"), addr)
            ctx.set(getattr(dut, f"{d}_beats"), beats)
            ctx.set(getattr(dut, f"{d}_start"), 1)
            await ctx.tick()
            ctx.set(getattr(dut, f"{d}_start"), 0)
            for _ in range(20 * beats + 200):
                await ctx.tick()
                if not ctx.get(getattr(dut, f"{d}_busy")):
                    break
            else:
                raise AssertionError(f"{d}: still busy")
            flags[d] = ctx.get(getattr(dut, f"{d}_error"))

    async def source(ctx):
        for word in data:
            ctx.set(dut.wr_data.payload, word)
            while slave.stall():
                await ctx.tick()
            ctx.set(dut.wr_data.valid, 1)
            await ctx.tick().until(dut.wr_data.ready)
            ctx.set(dut.wr_data.valid, 0)

    async def sink(ctx):
        while True:
            ctx.set(dut.rd_data.ready, 0 if slave.stall() else 1)
            *_, valid, ready, word = await ctx.tick().sample(dut.rd_data.valid, dut.rd_data.ready,
                                                             dut.rd_data.payload)
            if valid and ready:
                got.append(word)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    async def reads(ctx):
        await slave.reads(ctx, dut.bus)

    async def writes(ctx):
        await slave.writes(ctx, dut.bus)

    sim.add_testbench(host)
    for bench in (source, sink, reads, writes):
        sim.add_testbench(bench, background=True)
    sim.run()
    return data, got, slave, flags


@pytest.mark.parametrize("addr, beats", [(0x1000, 1), (0x1004, 37), (0x0FF0, 9), (0x2FC0, 100)])
def test_every_beat_in_order_in_legal_bursts(addr, beats, seed):
    rng = random.Random(seed)
    data, got, slave, flags = _run(rng, addr, beats, busy=0.3)
    assert got == data
    assert flags == {"wr": 0, "rd": 0}
    for kind, start, length in slave.bursts:
        assert 1 <= length <= MAX_BURST, (kind, start, length)
        assert start // PAGE_BYTES == (start + length * BEAT - 1) // PAGE_BYTES, f"{kind} burst crosses a page"
    assert sum(n for k, _, n in slave.bursts if k == "r") == beats


def test_an_error_response_sets_the_flag_and_ends_the_run(seed):
    rng = random.Random(seed)
    data, got, slave, flags = _run(rng, 0x1000, 40, busy=0.2, bad=[0x1000 + 4 * 21])
    assert flags == {"wr": 1, "rd": 1}
    assert len(got) == 40          # every beat the bus owed still came
