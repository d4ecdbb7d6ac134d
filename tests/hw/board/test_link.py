"""The host link's bridge in Amaranth's simulator, driven by the host's own end
(:class:`hw.host.link_port.LinkPort`) over a byte stream with random gaps and a
transmit side that stalls: registers behind an AXI4-Lite slave, memory words in
and out at any byte address and length, the interrupt polled, and a command it
does not know answered and survived."""

import asyncio
import random

import pytest
from amaranth import Array, Module, Signal
from amaranth.lib.wiring import connect
from amaranth.sim import Simulator

from hw.board.link import HEADER, Answer, HostBridge
from hw.host.link_port import LinkError, LinkPort
from hw.system.axil_slave import AxiLiteSlave
from hw.system.bus_memory import BusMemory
from hw.system.top import REG_ADDR_BITS

WORDS = 256
REGS = 4


def _bench(seed, script):
    """Run ``script(port, link, irq)`` against a bridge, four registers and a memory."""
    rng = random.Random(seed)
    m = Module()
    m.submodules.bridge = bridge = HostBridge(WORDS)
    m.submodules.regs = regs = AxiLiteSlave(REG_ADDR_BITS)
    m.submodules.mem = mem = BusMemory(WORDS)
    connect(m, bridge.axil, regs.bus)
    file = Array(Signal(32, name=f"reg{i}") for i in range(REGS))
    m.d.comb += regs.rd_data.eq(file[regs.rd_addr[2:4]])
    with m.If(regs.wr_en):
        m.d.sync += file[regs.wr_addr[2:4]].eq(regs.wr_data)
    m.d.comb += [mem.host_addr.eq(bridge.mem_addr), mem.host_re.eq(bridge.mem_re), mem.host_we.eq(bridge.mem_we),
                 mem.host_wdata.eq(bridge.mem_wdata), bridge.mem_rdata.eq(mem.host_rdata)]
    irq = Signal()
    m.d.comb += bridge.irq.eq(irq)

    class Link:
        def __init__(self, ctx):
            self.ctx = ctx

        async def send(self, data):
            for byte in data:
                for _ in range(rng.randrange(4)):        # the line's gaps: a byte every few cycles at most
                    await self.ctx.tick()
                self.ctx.set(bridge.rx.payload, byte)
                self.ctx.set(bridge.rx.valid, 1)
                await self.ctx.tick().until(bridge.rx.ready)
                self.ctx.set(bridge.rx.valid, 0)

        async def receive(self, count):
            out = bytearray()
            for _ in range(count * 20 + 100):
                self.ctx.set(bridge.tx.ready, rng.random() < 0.6)
                *_, valid, ready, byte = await self.ctx.tick().sample(bridge.tx.valid, bridge.tx.ready,
                                                                      bridge.tx.payload)
                if valid and ready:
                    out.append(byte)
                    if len(out) == count:
                        self.ctx.set(bridge.tx.ready, 0)
                        return bytes(out)
            raise AssertionError(f"the bridge answered {len(out)} of {count} bytes")

    async def bench(ctx):
        link = Link(ctx)
        # One memory bit-time per cycle: wait_irq's poll count is then a handful of polls.
        await script(LinkPort(link, WORDS, divisor=1), link, lambda v: ctx.set(irq, v))

    sim = Simulator(m)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


def test_registers_over_the_link(seed):
    rng = random.Random(seed)
    values = [rng.getrandbits(32) for _ in range(REGS)]

    async def script(port, link, irq):
        for i, v in enumerate(values):
            await port.write_reg(4 * i, v)
        assert [await port.read_reg(4 * i) for i in range(REGS)] == values
    _bench(seed, script)


def test_memory_at_any_byte_and_length(seed):
    rng = random.Random(seed)
    model = bytearray(WORDS * 4)
    spans = [(0, 16), (5, 3), (62, 9), (128, 1), (4 * WORDS - 7, 7), (1, 200)]

    async def script(port, link, irq):
        await port.write_mem(0, bytes(model))
        for addr, length in spans:
            data = bytes(rng.getrandbits(8) for _ in range(length))
            await port.write_mem(addr, data)
            model[addr:addr + length] = data
            assert await port.read_mem(addr, length) == data
        assert await port.read_mem(0, len(model)) == bytes(model)
    _bench(seed, script)


def test_the_interrupt_is_polled(seed):
    async def script(port, link, irq):
        assert not await port.wait_irq(200)
        irq(1)
        assert await port.wait_irq(200)
    _bench(seed, script)


def test_an_unknown_command_is_refused_and_the_link_goes_on(seed):
    async def script(port, link, irq):
        await link.send(bytes([ord("?")]) + bytes(HEADER - 1))
        assert await link.receive(1) == bytes([Answer.BAD_COMMAND.value])
        await port.write_reg(8, 0x1234)
        assert await port.read_reg(8) == 0x1234
    _bench(seed, script)


def test_the_host_refuses_memory_beyond_the_board():
    port = LinkPort(None, WORDS, 4)
    with pytest.raises(LinkError, match="beyond the board's 1,024 bytes"):
        asyncio.run(port.read_mem(4 * WORDS - 2, 4))
