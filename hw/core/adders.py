"""Adders built for the clock: carry-save trees and carry-select sums.

This flow maps an adder to a ripple of carries, about 0.15 ns a bit in OSU018:
a 32-bit sum alone takes most of a 5 ns cycle. Two ways shorten it.

Carry-save arithmetic adds many numbers with no carry chain until the last.

A row of full adders turns three addends into two (their bitwise sum and their
carries, one place up) in the delay of one full adder, whatever the width. A
tree of such rows brings any number of addends down to two; one carry-propagate
adder then finishes the sum. A multiplier is such a tree over its partial
products. Keeping the two rows in registers and adding them in a later cycle
(in halves, if the adder is too slow for the clock) is how the softmax unit
closes timing with wide products (docs/timing.md, "Timing, power and energy").

A carry-select sum splits one adder in two halves that run at once: the high
half is added both ways, with and without a carry in, and the low half's carry
out picks one. It costs a second high adder and saves half the chain.

Every width is explicit: sums wrap at ``width`` bits, as a register of that
width would.
"""

from __future__ import annotations

from amaranth import Cat, Const, Mux, Signal, Value

__all__ = ["full_adders", "compress", "product_rows", "select_add"]


def full_adders(x: Value, y: Value, z: Value) -> tuple[Value, Value]:
    """Three unsigned addends to two with the same sum: the bitwise sum, and the
    majority carries shifted up one place (the caller truncates both)."""
    return x ^ y ^ z, ((x & y) | (x & z) | (y & z)) << 1


def compress(m, rows: list[Value], width: int, name: str) -> tuple[Value, Value]:
    """Two unsigned rows whose sum is that of ``rows`` modulo ``2**width``
    (a Wallace tree of full adders; one or two rows pass through). Each level's
    rows are signals of ``m``, named ``name`` and the level: an expression that
    used its inputs twice a level would double at every level."""
    rows = [r.as_unsigned()[:width] for r in rows]
    if not rows:
        raise ValueError("compress needs at least one row")
    level = 0
    while len(rows) > 2:
        nxt = []
        whole = len(rows) - len(rows) % 3
        for i in range(0, whole, 3):
            s, c = full_adders(*rows[i:i + 3])
            for kind, v in (("s", s), ("c", c)):
                sig = Signal(width, name=f"{name}_l{level}{kind}{i // 3}")
                m.d.comb += sig.eq(v[:width])
                nxt.append(sig)
        rows = nxt + rows[whole:]
        level += 1
    if len(rows) == 1:
        rows.append(Const(0, width))
    return rows[0], rows[1]


def product_rows(a: Value, b: Value, width: int) -> list[Value]:
    """The partial products of the unsigned ``a * b``, one per bit of ``b``,
    modulo ``2**width``."""
    a = a.as_unsigned()
    return [Mux(b[j], a << j, 0)[:width] for j in range(len(b))]


def select_add(m, a: Value, b: Value, width: int, name: str, carry: int = 0) -> Value:
    """``a + b + carry`` modulo ``2**width`` as a carry-select sum (signals of
    ``m`` named ``name``): ``a - b`` is ``select_add(m, a, ~b, width, name, 1)``."""
    lo = width // 2
    low = Signal(lo + 1, name=f"{name}_low")
    high = [Signal(width - lo, name=f"{name}_high{c}") for c in (0, 1)]
    m.d.comb += [low.eq(a.as_unsigned()[:lo] + b.as_unsigned()[:lo] + carry)]
    m.d.comb += [h.eq(a.as_unsigned()[lo:width] + b.as_unsigned()[lo:width] + c) for c, h in enumerate(high)]
    return Cat(low[:lo], Mux(low[lo], high[1], high[0]))
