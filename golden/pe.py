"""Cycle-level model of one processing element (DESIGN.md §5.1-5.2).

The augmented PE multiplies with two 4x8 lanes. Lane 0 multiplies its row
operand by the column byte's low nibble, lane 1 by its high nibble; each lane
reads its nibble either as a *low* part (unsigned, no shift) or a *high* part
(signed, shifted left by 4). A full 8x8 product is lane 0 (low) plus lane 1
(high) on the same row operand; a *paired* cycle runs two channel steps, one
per lane, each on its own row operand and with its own reuse flags.

Which lanes run and which of R0, R1, R2 each lane's product is added into is
decided inside the PE from the pass (mode), the flags that travel with the
operands, and whether the cycle is paired: :func:`decode` is that decision,
written as the table of DESIGN.md §5.2. The hand-over (``load``) and the drain
act before the cycle's products are added, so a pass's first step lands in
the freshly handed-over registers.

The drain is a chain that moves *up* each column, against the column operands'
flow: a PE that drains copies R0 into its output register; otherwise it takes
the output register of the PE below. Because PE (i, j) acts one cycle after
PE (i-1, j), a value moving up meets a capture only when two drains of the
same cycle parity are fewer than ``2*rows`` cycles apart (:mod:`golden.drain`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

__all__ = ["Mode", "Load", "Need", "Packing", "RowIn", "ColIn", "LaneOp", "Decoded", "decode",
           "NIBBLES", "BYTE_STEP1", "BYTE_STEP2",
           "PEModel", "BaselinePEModel", "step_need", "wrap"]


class Mode(IntEnum):
    """Pass of the 2x2 tile-group dataflow (DESIGN.md §5.2), or the linear-layer mode."""

    A = 0       # R0=T0, R1=T1, R2=T2; q0 x k0
    B = 1       # R0=T1, R1=T3;        q0 x k1~
    C = 2       # R0=T2, R1=T3;        q1~ x k0
    D = 3       # R0=T3;               q1~ x k1~
    LINEAR = 4  # R0 = the reference token, R1/R2 = two tokens that reuse it


class Load(IntEnum):
    """Register hand-over, applied before the cycle's products are added."""

    KEEP = 0
    CLEAR = 1      # R0, R1, R2 <- 0
    R1 = 2         # R0 <- R1, R1 <- 0
    R2 = 3         # R0 <- R2


class Need(IntEnum):
    """What one channel step needs of one PE's lanes."""

    NONE = 0
    LO = 1         # a * lo(b): one lane, unsigned nibble, no shift
    HI = 2         # 16 * a * hi(b): one lane, signed nibble, shifted
    FULL = 3       # a * b: both lanes


# Register targets of a step's product: nothing, everything, or only its high part.
_NO, _ALL, _HIGH = 0, 1, 2


def step_need(mode: Mode, sq: int, sk: int) -> tuple[Need, tuple[int, int, int]]:
    """What one channel step computes in a PE, and where it goes.

    Returns ``(need, (r0, r1, r2))`` where each ``r`` is nothing, the whole
    product, or its high part only. This is DESIGN.md §5.2's table.
    """
    if mode == Mode.A:
        r1 = _ALL if sk == 2 else _HIGH if sk == 1 else _NO
        return Need.FULL, (_ALL, r1, _ALL if sq == 2 else _NO)
    if mode == Mode.B:
        if sk == 2:
            return Need.NONE, (_NO, _NO, _NO)
        return (Need.LO if sk == 1 else Need.FULL), (_ALL, _ALL if sq == 2 else _NO, _NO)
    if mode == Mode.C:
        if sq == 2:
            return Need.NONE, (_NO, _NO, _NO)
        return Need.FULL, (_ALL, _ALL if sk == 2 else _HIGH if sk == 1 else _NO, _NO)
    if mode == Mode.D:
        if sq == 2:
            need = {2: Need.FULL, 1: Need.HI, 0: Need.NONE}[sk]
        else:
            need = {2: Need.NONE, 1: Need.LO, 0: Need.FULL}[sk]
        return need, (_ALL, _NO, _NO)
    if mode == Mode.LINEAR:
        # Here (sq, sk) are the states of the two tokens that reuse the row's
        # value: the tokens whose outputs R1 and R2 hold.
        pick = {2: _ALL, 1: _HIGH, 0: _NO}
        return Need.FULL, (_ALL, pick[sq], pick[sk])
    return Need.NONE, (_NO, _NO, _NO)          # modes 5..7 are reserved: no operation


@dataclass(frozen=True)
class LaneOp:
    on: bool = False
    high: bool = False          # nibble read as a signed high part, shifted by 4
    second: bool = False        # row operand a1 instead of a0


@dataclass(frozen=True)
class Decoded:
    lanes: tuple[LaneOp, LaneOp]
    enable: tuple[tuple[bool, bool], ...]      # enable[r][lane]


def _targets(target: int, lane_is_high: bool) -> bool:
    return target == _ALL or (target == _HIGH and lane_is_high)


def _single(mode: int, sq: int, sk: int, second: bool) -> Decoded:
    # One step on the whole column byte: low part in lane 0, high part in lane 1.
    need, tgt = step_need(mode, sq, sk)
    l0 = LaneOp(on=need in (Need.FULL, Need.LO), second=second)
    l1 = LaneOp(on=need in (Need.FULL, Need.HI), high=True, second=second)
    enable = tuple((_targets(t, False) and l0.on, _targets(t, True) and l1.on) for t in tgt)
    return Decoded((l0, l1), enable)


class Packing(IntEnum):
    """How a paired cycle packs the column byte (``col.byte``): one nibble per
    step, or the whole byte belongs to step 1, or to step 2."""

    NIBBLES = 0
    BYTE_STEP1 = 1
    BYTE_STEP2 = 2


NIBBLES, BYTE_STEP1, BYTE_STEP2 = Packing.NIBBLES, Packing.BYTE_STEP1, Packing.BYTE_STEP2


def decode(mode: int, steps: int, sq0: int, sk0: int, sq1: int, sk1: int,
           byte: int = NIBBLES) -> Decoded:
    """Lane operations and accumulate enables of one PE cycle.

    ``steps`` has bit 0 set when channel step 1 is present and bit 1 when step 2
    is (a paired cycle). A single step uses lane 0 for its low part and lane 1
    for its high part, both on ``a0``. In a paired cycle the column says how it
    packed its byte (``byte``): one nibble per step (step 1 in ``b[3:0]`` on
    ``a0``, step 2 in ``b[7:4]`` on ``a1``, each step needing at most one
    nibble product: the dispatcher guarantees it, and a step that would need a
    full product is dropped), or the whole byte for one step, which is then
    decoded like a single step on its own row operand.
    """
    off = Decoded((LaneOp(), LaneOp()), ((False, False),) * 3)
    if steps & 1 and not steps & 2:
        # In the linear mode both flags ride the row (the activations reuse);
        # the column carries weights and no flags.
        return _single(mode, sq0, sq1 if mode == Mode.LINEAR else sk0, False)
    if not steps & 2:
        return off
    if byte == BYTE_STEP1:
        return _single(mode, sq0, sq1 if mode == Mode.LINEAR else sk0, False) if steps & 1 else off
    if byte == BYTE_STEP2:
        return _single(mode, sq1, sk1, True)
    lanes, enable = [LaneOp(), LaneOp()], [[False, False] for _ in range(3)]
    for lane, (present, sq, sk) in enumerate(((steps & 1, sq0, sk0), (True, sq1, sk1))):
        if not present:
            continue
        need, tgt = step_need(mode, sq, sk)
        if need not in (Need.LO, Need.HI):
            continue
        high = need == Need.HI
        lanes[lane] = LaneOp(on=True, high=high, second=lane == 1)
        for r in range(3):
            enable[r][lane] = _targets(tgt[r], high)
    return Decoded(tuple(lanes), tuple(tuple(e) for e in enable))


def _lane_product(a0: int, a1: int, b: int, lane: int, op: LaneOp) -> int:
    if not op.on:
        return 0
    a = a1 if op.second else a0
    nib = (b >> (4 * lane)) & 0xF
    if op.high:
        return 16 * a * (nib - 16 if nib & 8 else nib)
    return a * nib


def wrap(v: int, bits: int) -> int:
    """Two's complement wrap of ``v`` to ``bits`` bits (what a register holds)."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


@dataclass
class RowIn:
    """What travels along a row: operands, their flags, and the cycle's control."""

    a0: int = 0
    a1: int = 0
    sq0: int = 0
    sq1: int = 0
    mode: int = 0
    steps: int = 0
    load: int = Load.KEEP
    drain: bool = False


@dataclass
class ColIn:
    """What travels down a column: the column byte and its flags."""

    b: int = 0
    sk0: int = 0
    sk1: int = 0
    byte: int = NIBBLES         # packing of b in a paired cycle


@dataclass
class PEModel:
    """One augmented PE, cycle by cycle. ``tick`` is one rising clock edge."""

    acc_bits: int
    r: list = field(default_factory=lambda: [0, 0, 0])
    out: int = 0
    out_valid: bool = False

    def tick(self, row: RowIn, col: ColIn, out_in: int = 0, out_in_valid: bool = False):
        r0, r1, r2 = self.r
        if row.drain:
            self.out, self.out_valid = r0, True
        else:
            self.out, self.out_valid = out_in, out_in_valid
        if row.load == Load.CLEAR:
            r0 = r1 = r2 = 0
        elif row.load == Load.R1:
            r0, r1 = r1, 0
        elif row.load == Load.R2:
            r0 = r2
        dec = decode(row.mode, row.steps, row.sq0, col.sk0, row.sq1, col.sk1, col.byte)
        p = [_lane_product(row.a0, row.a1, col.b, lane, dec.lanes[lane]) for lane in (0, 1)]
        regs = [r0, r1, r2]
        for k in range(3):
            regs[k] = wrap(regs[k] + sum(p[l] for l in (0, 1) if dec.enable[k][l]), self.acc_bits)
        self.r = regs


@dataclass
class BaselinePEModel:
    """The plain output-stationary 8-bit MAC, with the same drain chain."""

    acc_bits: int
    acc: int = 0
    out: int = 0
    out_valid: bool = False

    def tick(self, a: int, b: int, valid: bool, clear: bool, drain: bool,
             out_in: int = 0, out_in_valid: bool = False):
        if drain:
            self.out, self.out_valid = self.acc, True
        else:
            self.out, self.out_valid = out_in, out_in_valid
        acc = 0 if clear else self.acc
        self.acc = wrap(acc + (a * b if valid else 0), self.acc_bits)
