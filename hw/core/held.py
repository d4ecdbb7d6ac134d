"""Registers of the augmented PE that load only when they must (docs/design.md, "How the PE works").

A dense slot uses none of the PE's added hardware, so none of it should be
clocked: an operand moves on only with a step that carries it
(:func:`forward`), and control that seldom changes (flags, the decoded
selects) loads only when it does (:func:`held`). Every register here holds, in
every state, exactly what a register loading every cycle would where anything
reads it, so Yosys can gate its clock (synth.flow) and no proof needs more than
the invariants tb/formal.py states.
"""

from __future__ import annotations

from amaranth import Cat, Mux, ResetSignal, Signal, Value

__all__ = ["ROW_FORWARDED", "COL_FORWARDED", "held", "SharedEnable", "forward"]

#: Which fields of a bundle move on with which of the slot's steps (the row's
#: ``steps`` or the column's): ``(fields, bits)``. A PE forwards them only in a
#: cycle that has one of those steps (they are read only then), so with no step
#: to carry, their registers hold and their clock is gated; the fields not named
#: here (``steps``, ``load``, ``drain``) move every cycle.
ROW_FORWARDED = ((("a0", "sq0", "sq1", "mode"), 0b11), (("a1",), 0b10))
COL_FORWARDED = ((("b0", "sk0", "sk1"), 0b11), (("b1",), 0b10))

#: The fields that are flags rather than operands: they seldom change from one
#: step to the next, so their registers load only when they do (:func:`held`).
_FLAGS = frozenset({"sq0", "sq1", "mode", "sk0", "sk1"})


def held(m, signals, prefix, when=None, reset=True, shared=None):
    """Registered copies of ``signals`` (control, which seldom changes) that load
    only when the value does (and ``when``, if given): a copy that would load
    what it holds keeps it instead, so its clock is gated (synth.flow), and in
    every state it holds exactly what a register loading every cycle would, so
    no proof needs an invariant for it. With ``reset`` a reset loads zeros,
    as part of the data: a flip-flop's own reset would keep Yosys from gating
    its clock. With ``shared`` (a :class:`SharedEnable`) the copies load whenever
    any group sharing it changes: one clock gate for all, loading more often, so
    still exactly."""
    copies = [Signal(Value.cast(s).shape(), name=f"{prefix}{getattr(s, 'name', i)}_q", reset_less=True)
              for i, s in enumerate(signals)]
    new = [Mux(ResetSignal(), 0, s) if reset else s for s in signals]
    load = Cat(*new) != Cat(*copies)
    load = load if when is None else load & when
    if shared is not None:
        shared.changes.append(load)
        load = shared.signal
    with m.If(load):
        m.d.sync += [c.eq(n) for c, n in zip(copies, new)]
    return copies


class SharedEnable:
    """One enable for several groups of :func:`held` copies: any group's change."""

    def __init__(self, name: str):
        self.signal, self.changes = Signal(name=name), []

    def drive(self, m) -> None:
        m.d.comb += self.signal.eq(Cat(*self.changes).any())


def forward(m, row, col, row_out, col_out):
    """``row_out`` <- ``row``, ``col_out`` <- ``col``, registered: each field of
    :data:`ROW_FORWARDED` and :data:`COL_FORWARDED` only with its steps (and no
    reset: nothing reads it before its step loads it), the control every cycle.
    Operands of both bundles that move with the same steps share one enable, so
    one clock gate; flags and control load only when they change."""
    slot = row.steps | col.steps
    groups = {}
    for src, dst, table in ((row, row_out, ROW_FORWARDED), (col, col_out, COL_FORWARDED)):
        moved = {f for fields, _ in table for f in fields}
        for fields, bits in table:
            for f in fields:
                groups.setdefault((bits, f in _FLAGS), []).append((src[f], dst[f], f))
        groups.setdefault("control", []).extend((src[f], dst[f], f) for f in src.shape().members
                                                if f not in moved)
    for key, members in groups.items():
        sources = [s for s, _, _ in members]
        if key == "control":
            regs = held(m, sources, "fwd_")
        elif key[1]:
            regs = held(m, sources, "fwd_", when=(slot & key[0]).any(), reset=False)
        else:
            regs = [Signal.like(d, name=f"fwd_{f}", reset_less=True) for _, d, f in members]
            with m.If((slot & key[0]).any()):
                m.d.sync += [r.eq(s) for r, s in zip(regs, sources)]
        m.d.comb += [d.eq(r) for r, (_, d, _) in zip(regs, members)]
