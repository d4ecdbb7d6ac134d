"""The adders built for the clock against Python's integers: a carry-save tree
of partial products and addends, and a carry-select sum, on random and extreme
operands (seeded)."""

import random

import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator

from hw.core.adders import compress, product_rows, select_add


def settle(m, ports, cases, check):
    """Set each case's inputs (by name, of ``ports``) and ``check(ctx, case)``
    once the logic has settled."""
    sim = Simulator(m)

    async def bench(ctx):
        for inputs in cases:
            for name, value in inputs.items():
                ctx.set(ports[name], value)
            await ctx.delay(1e-9)
            check(ctx, inputs)

    sim.add_testbench(bench)
    sim.run()


def extremes(width, rnd, n):
    top = (1 << width) - 1
    return [v & top for v in (0, top, 1, top - 1, 1 << (width - 1))] + [rnd.getrandbits(width) for _ in range(n)]


@pytest.mark.parametrize("a_bits, b_bits, addends, width", [(25, 16, 1, 42), (21, 27, 1, 48), (5, 3, 0, 8),
                                                            (8, 8, 2, 12)])
def test_carry_save_product_sums_like_integers(a_bits, b_bits, addends, width, seed):
    rnd = random.Random(seed)
    m = Module()
    a, b = Signal(a_bits), Signal(b_bits)
    extra = [Signal(width, name=f"x{i}") for i in range(addends)]
    s, c = compress(m, product_rows(a, b, width) + extra, width, "tree")
    total = Signal(width)
    m.d.comb += total.eq(s + c)
    ports = {"a": a, "b": b, **{e.name: e for e in extra}}
    cases = [{"a": x, "b": y, **{e.name: rnd.getrandbits(width) for e in extra}}
             for x, y in zip(extremes(a_bits, rnd, 40), reversed(extremes(b_bits, rnd, 40)))]

    def check(ctx, inputs):
        want = (inputs["a"] * inputs["b"] + sum(inputs[e.name] for e in extra)) % (1 << width)
        assert ctx.get(total) == want, inputs

    settle(m, ports, cases, check)


@pytest.mark.parametrize("width, carry", [(34, 1), (33, 0), (1, 1), (2, 0)])
def test_carry_select_sum_like_integers(width, carry, seed):
    rnd = random.Random(seed)
    m = Module()
    a, b = Signal(width), Signal(width)
    out = Signal(width)
    m.d.comb += out.eq(select_add(m, a, b, width, "sel", carry))
    cases = [{"a": x, "b": y} for x in extremes(width, rnd, 8) for y in extremes(width, rnd, 8)]

    def check(ctx, inputs):
        assert ctx.get(out) == (inputs["a"] + inputs["b"] + carry) % (1 << width), inputs

    settle(m, {"a": a, "b": b}, cases, check)
