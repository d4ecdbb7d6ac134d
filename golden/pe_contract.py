"""What the engine asks of a PE kind's step table, checked before the kind is used.

A kind's table (:meth:`golden.pe_kinds.PEKindModel.step_need`) says what one
channel step computes; the engine decides which channel steps reach a PE. It
streams a channel in pass B only if some column of the tile group has a key
that is not fully reused there, in C only if some row has such a query, and
in D only if the table gives some PE work there; a linear layer's partner
passes run the B table at row state 0, on the channels where the window is
not a full reuse (docs/plugins.md, "The contract"). So a table may not count
on a step the engine may leave out: whatever a PE in state (2, sk) asks of
pass C, say, is lost on every tile group whose rows are all full reuses.

:func:`violation` runs one PE of the kind (:class:`golden.pe.PEModel`) through
every pass, on every pair of reuse states, with each pass that the engine may
leave out both taken and left out, and asks that each drained register equal
the product it stands for, on operands that reach every nibble's corner. Its
answer is the first entry that does not, in one line. :func:`register` admits
a user's kind only if it has none: it lives here, above the PE model, so that
the kinds' registry (:mod:`golden.pe_kinds`) stays below it.
"""

from __future__ import annotations

import itertools

import numpy as np

from .pe import ColIn, PEModel, RowIn
from .pe_encoding import PARTNER_HANDOVER, PASS_HANDOVER, Load, Mode
from .pe_kinds import PE_KINDS, PEKindModel, check
from .reuse import approximate

__all__ = ["register", "violation"]


def register(kind: type[PEKindModel]) -> type[PEKindModel]:
    """Add ``kind`` to :data:`golden.pe_kinds.PE_KINDS` (a class decorator), after
    checking that its table fits its registers and its datapath
    (:func:`golden.pe_kinds.check`) and that the engine's passes compute every
    product exactly with it (:func:`violation`): otherwise ValueError, in one line."""
    check(kind)
    if why := violation(kind):
        raise ValueError(f"PE kind {kind.name!r} computes a wrong result: {why}")
    PE_KINDS[kind.name] = kind
    return kind

#: What R0 holds when each pass ends: T0 after A, T1 after B, T2 after C, T3 after D.
_TOKENS = ("T0", "T1", "T2", "T3")
_BITS = 40


def _partner(ref: int, own: int, state: int) -> int:
    """The value a partner stands for (:func:`golden.reuse.approximate`), as an int."""
    return int(approximate(ref, own, state))


def _samples(seed: int = 0, count: int = 24) -> list[tuple[int, int, int, int]]:
    """``(ref0, own0, ref1, own1)`` operand sets: every corner of a signed byte
    and of its nibbles, then random ones."""
    corners = [-128, -121, -9, -8, -1, 0, 7, 8, 15, 16, 119, 127]
    rng = np.random.default_rng(seed)
    out = [(a, b, c, d) for a, b, c, d in zip(corners, corners[::-1], corners[3:] + corners[:3],
                                                  corners[7:] + corners[:7])]
    out += [tuple(int(v) for v in rng.integers(-128, 128, 4)) for _ in range(count)]
    return out


def _head_drains(kind, q0, q1, k0, k1, sq, sk, skip) -> list[int]:
    """R0 as each of passes A-D ends, for one PE on one channel; ``skip``: the
    passes the engine leaves out on this channel (each still hands over)."""
    pe = PEModel(acc_bits=_BITS, kind=kind)
    operands = {Mode.A: (q0, k0), Mode.B: (q0, k1), Mode.C: (q1, k0), Mode.D: (q1, k1)}
    drained = []
    for n, mode in enumerate((Mode.A, Mode.B, Mode.C, Mode.D)):
        a, b = operands[mode]
        # One channel: its step is the pass's first, with the hand-over (and a drain after A).
        pe.tick(RowIn(a0=a, sq0=sq, mode=mode, steps=0 if mode in skip else 1, load=PASS_HANDOVER[mode], drain=n > 0),
                ColIn(b0=b & 0xFF, sk0=sk))
        if n > 0:
            drained.append(pe.out)
    pe.tick(RowIn(drain=True), ColIn())
    drained.append(pe.out)
    return drained


def _optional(kind, mode: Mode, sq: int, sk: int) -> bool:
    """Whether the engine may leave pass ``mode``'s channel out for a PE in state
    ``(sq, sk)``: when every other PE of the tile group could skip it too."""
    if mode == Mode.B:
        return sk == 2
    if mode == Mode.C:
        return sq == 2
    if mode == Mode.D:
        return kind.step_need(Mode.D, sq, sk)[0] == 0
    return False


def _head_violation(kind) -> str | None:
    for sq, sk in itertools.product(range(3), repeat=2):
        optional = [m for m in (Mode.B, Mode.C, Mode.D) if _optional(kind, m, sq, sk)]
        for r0, o0, r1, o1 in _samples():
            q0, k0 = r0, r1
            q1, k1 = _partner(r0, o0, sq), _partner(r1, o1, sk)
            want = (q0 * k0, q0 * k1, q1 * k0, q1 * k1)
            for n in range(len(optional) + 1):
                for skip in itertools.combinations(optional, n):
                    got = _head_drains(kind, q0, q1, k0, k1, sq, sk, set(skip))
                    for t, (g, w) in enumerate(zip(got, want)):
                        if g != w:
                            left = f", with pass {'/'.join(m.name for m in skip)} left out" if skip else ""
                            return (f"in a tile group at states (sq={sq}, sk={sk}){left}, {_TOKENS[t]} comes "
                                    f"out as {g}, not {w} (q0={q0}, q1~={q1}, k0={k0}, k1~={k1})")
    return None


def _linear_violation(kind) -> str | None:
    partners = 3          # one more than a 3-register PE holds: that one is computed whole
    for state in range(3):
        for r0, o0, w, o1 in _samples(1):
            xs = [r0] + [_partner(r0, o, state) for o in (o0, o1, o0 ^ o1)][:partners]
            for streamed in ((True, False) if state == 2 else (True,)):
                pe = PEModel(acc_bits=_BITS, kind=kind)
                pe.tick(RowIn(a0=w, mode=Mode.LINEAR, steps=1, load=Load.CLEAR), ColIn(b0=r0 & 0xFF, sk0=state))
                got = []
                for p in range(1, partners + 1):
                    held = p < kind.registers
                    st = state if held else 0          # beyond the registers: computed whole, every channel
                    on = streamed or not held
                    pe.tick(RowIn(a0=w, mode=Mode.B, steps=1 if on else 0, load=PARTNER_HANDOVER[p - 1], drain=True),
                            ColIn(b0=xs[p] & 0xFF, sk0=st))
                    got.append(pe.out)
                pe.tick(RowIn(drain=True), ColIn())
                got.append(pe.out)
                for p, g in enumerate(got):
                    if g != w * xs[p]:
                        left = ", with the partner passes left out" if not streamed else ""
                        who = "the reference" if p == 0 else f"partner {p}"
                        return (f"in a linear layer's window at state {state}{left}, {who}'s output comes out "
                                f"as {g}, not {w * xs[p]} (w={w}, x={xs[p]})")
    return None


def violation(kind) -> str | None:
    """Why the engine would compute a wrong result with PE kind ``kind``, or None:
    the first pass, reuse states and operands where a drained register is not
    the exact product (attention's passes A-D, then a linear layer's passes)."""
    return _head_violation(kind) or _linear_violation(kind)
