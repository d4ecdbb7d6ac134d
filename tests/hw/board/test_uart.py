"""The serial line's two ends in Amaranth's simulator: a transmitter looped into a
receiver carries random bytes at several divisors; the receiver reads frames a
model line sends with the clock off by a few per cent, drops a frame whose stop
bit is low, ignores a glitch shorter than half a bit, and flags a byte nobody took."""

import random

import pytest
from amaranth import Module
from amaranth.sim import Simulator

from hw.board.uart import FRAME_BITS, MIN_DIVISOR, UartRx, UartTx


def _frame(byte, stop=1):
    return [0] + [byte >> i & 1 for i in range(8)] + [stop]


def _receive(divisor, line, ready=True, stretch=1.0):
    """Bytes the receiver hands out for ``line``: bits sent ``stretch`` x a bit long, or
    ``(bit, clocks)`` pairs held that many clocks; and its ``overrun`` flag at the end."""
    dut = UartRx(divisor)
    got, overrun = [], []

    async def send(ctx):
        ctx.set(dut.rx, 1)
        await ctx.tick().repeat(3)
        t = 0.0
        for bit in line:
            held = divisor * stretch
            if isinstance(bit, tuple):
                bit, held = bit
            ctx.set(dut.rx, bit)
            t += held
            await ctx.tick().repeat(int(round(t)) - int(round(t - held)))
        ctx.set(dut.rx, 1)
        await ctx.tick().repeat(4 * divisor)
        overrun.append(ctx.get(dut.overrun))

    async def take(ctx):
        ctx.set(dut.data.ready, int(ready))
        while True:
            *_, valid, byte = await ctx.tick().sample(dut.data.valid, dut.data.payload)
            if valid:
                got.append(byte)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(send)
    sim.add_testbench(take, background=True)
    sim.run()
    return got, overrun[0]


@pytest.mark.parametrize("divisor", [MIN_DIVISOR, 5, 25])
def test_a_loop_carries_every_byte(divisor, seed):
    rng = random.Random(seed)
    data = [rng.randrange(256) for _ in range(24)] + [0x00, 0xFF]
    m = Module()
    m.submodules.tx = tx = UartTx(divisor)
    m.submodules.rx = rx = UartRx(divisor)
    m.d.comb += rx.rx.eq(tx.tx)
    got = []

    async def source(ctx):
        for byte in data:
            ctx.set(tx.data.payload, byte)
            ctx.set(tx.data.valid, 1)
            await ctx.tick().until(tx.data.ready)
            ctx.set(tx.data.valid, 0)
            for _ in range(rng.randrange(3 * divisor)):       # gaps between frames, or none
                await ctx.tick()
        await ctx.tick().repeat(2 * FRAME_BITS * divisor)

    async def sink(ctx):
        ctx.set(rx.data.ready, 1)
        while True:
            *_, valid, byte = await ctx.tick().sample(rx.data.valid, rx.data.payload)
            if valid:
                got.append(byte)

    sim = Simulator(m)
    sim.add_clock(1e-8)
    sim.add_testbench(source)
    sim.add_testbench(sink, background=True)
    sim.run()
    assert got == data


@pytest.mark.parametrize("stretch", [0.97, 1.0, 1.03])
def test_the_receiver_samples_mid_bit(stretch, seed):
    rng = random.Random(seed)
    data = [rng.randrange(256) for _ in range(8)]
    got, _ = _receive(16, [b for d in data for b in _frame(d)], stretch=stretch)
    assert got == data


def test_a_broken_frame_is_dropped_and_a_glitch_ignored():
    line = _frame(0x5A) + _frame(0x33, stop=0) + [1, 1] + [(0, 3)] + [1] * 3 + _frame(0xC3)
    got, _ = _receive(8, line)
    assert got == [0x5A, 0xC3]


def test_a_byte_nobody_takes_sets_overrun():
    got, overrun = _receive(8, _frame(0x12), ready=False)
    assert got == [0x12] and overrun == 1          # offered once, lost, and flagged
    got, overrun = _receive(8, _frame(0x12))
    assert got == [0x12] and overrun == 0


def test_a_divisor_too_small_is_refused():
    for cls in (UartRx, UartTx):
        with pytest.raises(ValueError, match="divisor must be an integer of at least 4"):
            cls(3)
