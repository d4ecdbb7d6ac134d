"""hw/core/held.py: registers that load only when they must still hold what an
always-loading register would, wherever it is read."""

import random

import pytest
from amaranth import Module, ResetSignal, Signal
from amaranth.sim import Simulator

from hw.core import held as held_module
from hw.core.held import SharedEnable

SEED = 73


class _Pair:
    """Two held groups on one shared enable, and one with ``when``, beside plain registers."""

    def __init__(self):
        self.a, self.b, self.when = Signal(3), Signal(2), Signal()
        self.rst = Signal()

    def build(self, held):
        m = Module()
        m.d.comb += ResetSignal().eq(self.rst)
        shared = SharedEnable("load")
        self.ha = held(m, [self.a], "a_", shared=shared)[0]
        self.hb = held(m, [self.b], "b_", shared=shared)[0]
        shared.drive(m)
        self.hw = held(m, [self.a], "w_", when=self.when, reset=False)[0]
        self.pa, self.pb = Signal(3), Signal(2)
        m.d.sync += [self.pa.eq(self.a), self.pb.eq(self.b)]
        return m


def _check(held):
    print(f"seed {SEED}")
    rnd = random.Random(SEED)
    dut = _Pair()
    sim = Simulator(dut.build(held))
    sim.add_clock(1e-6)
    loads = {"shared": 0}

    async def bench(ctx):
        last_when = None
        for cycle in range(2000):
            # Mostly still, now and then a change: what control does.
            a = rnd.randrange(8) if rnd.random() < 0.2 else ctx.get(dut.a)
            b = rnd.randrange(4) if rnd.random() < 0.2 else ctx.get(dut.b)
            ctx.set(dut.a, a)
            ctx.set(dut.b, b)
            ctx.set(dut.when, when := rnd.random() < 0.5)
            ctx.set(dut.rst, rnd.random() < 0.02)
            before = ctx.get(dut.ha)
            await ctx.tick()
            loads["shared"] += ctx.get(dut.ha) != before
            assert ctx.get(dut.ha) == ctx.get(dut.pa), f"seed {SEED} cycle {cycle}"
            assert ctx.get(dut.hb) == ctx.get(dut.pb), f"seed {SEED} cycle {cycle}"
            if when:
                last_when = a
            if last_when is not None:
                # With ``when`` it holds what it took at the last cycle ``when`` was high.
                assert ctx.get(dut.hw) == last_when, f"seed {SEED} cycle {cycle}"

    sim.add_testbench(bench)
    sim.run()
    assert loads["shared"] > 0


def test_held_copies_equal_always_loading_registers():
    _check(held_module.held)


def test_the_check_sees_a_copy_that_misses_a_change():
    # Planted: the change test ignores the lowest bit, so a copy keeps an old
    # value that differs from the new one only there.
    def careless(m, signals, prefix, when=None, reset=True, shared=None):
        return held_module.held(m, [s[1:] for s in signals], prefix, when, reset, shared)

    with pytest.raises(AssertionError):
        _check(careless)
