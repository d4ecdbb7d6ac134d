"""Cycle-level model of one processing element (docs/design.md, "How the PE works").

The augmented PE multiplies with two 4x8 lanes. A lane multiplies a row
operand by one nibble of a column byte, read either as a *low* part (unsigned,
no shift) or a *high* part (signed, shifted left by 4). A full 8x8 product is
lane 0 (low) plus lane 1 (high) on the same operands. A *paired* cycle carries
two channel steps, each with its own row operand, column byte and reuse flags
(the row port and the column port are both two bytes wide): a PE where only
one of them has work runs it alone, on both lanes if it needs them; a PE where
both have work gives each one lane (the dispatcher pairs two steps only where
that fits, :mod:`golden.matcher`).

Which lanes run and which of R0, R1, R2 each lane's product is added into is
decided inside the PE from the pass (mode), the flags that travel with the
operands, and whether the cycle is paired: :func:`decode` is that decision,
written as the table of docs/design.md, "How the PE works". The hand-over (``load``) and the drain
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

__all__ = ["Mode", "Load", "Need", "Target", "PEKind", "ACCUMULATORS", "PE_STAGES", "lane_adds", "need_lanes",
           "RowIn", "ColIn", "LaneOp", "Decoded", "decode",
           "PEModel", "BaselinePEModel", "step_need", "wrap"]


class Mode(IntEnum):
    """Pass of the 2x2 tile-group dataflow (docs/design.md, "How the PE works"), or the linear-layer mode."""

    A = 0       # R0=T0, R1=T1, R2=T2; q0 x k0
    B = 1       # R0=T1, R1=T3;        q0 x k1~
    C = 2       # R0=T2, R1=T3;        q1~ x k0
    D = 3       # R0=T3;               q1~ x k1~
    LINEAR = 4  # R0 = a window's reference token, R1.. = its partners; w x x_ref


class Load(IntEnum):
    """Register hand-over, applied before the cycle's products are added."""

    KEEP = 0
    CLEAR = 1      # R0..R3 <- 0
    R1 = 2         # R0 <- R1, R1 <- R3 (0 in a 3-register PE)
    R2 = 3         # R0 <- R2


class Need(IntEnum):
    """What one channel step needs of one PE's lanes."""

    NONE = 0
    LO = 1         # a * lo(b): one lane, unsigned nibble, no shift
    HI = 2         # 16 * a * hi(b): one lane, signed nibble, shifted
    FULL = 3       # a * b: both lanes
    ROW = 4        # b * lo(a): lane 0 multiplies the column byte by the row's low nibble


def need_lanes(need: Need) -> int:
    """Lanes a step with this need takes: a full product two, a nibble or ROW product one."""
    return 2 if need == Need.FULL else 0 if need == Need.NONE else 1


class Target(IntEnum):
    """What a step adds into one register. A lane's *tap* is the part of its
    product that comes from the high nibble of its 8-bit operand (the row
    operand, or the column byte in a ``ROW`` step)."""

    NO = 0
    ALL = 1        # the product
    HIGH = 2       # the high lane's product: 16 * a * hi(b)
    TAPS = 3       # both lanes' taps: 16 * hi(a) * b (a ROW step: 16 * hi(b) * lo(a))
    HIGH_TAP = 4   # the high lane's tap: 256 * hi(a) * hi(b)


class PEKind(IntEnum):
    """Which augmented PE; its value is its register count (``Config.accumulators``).

    The kind decides everything that differs between the two: the registers, the
    lane table of :func:`step_need` (from which the matcher's lanes, the engine's
    pass-D rule and the hand-over come), and the exact PE's taps and ``ROW`` steps.
    """
    PAPER = 3       #: the paper's PE: R0-R2
    EXACT = 4       #: the exact PE: R3 holds T3's reuse; executes exactly the oracle count

    @property
    def registers(self) -> int:
        return int(self)

    @property
    def exact(self) -> bool:
        return self is PEKind.EXACT


#: ``Config.accumulators``' values: the register count of each :class:`PEKind`.
ACCUMULATORS = tuple(int(k) for k in PEKind)

#: Register stages of a PE from its operands to its accumulators (``Config.pe_stages``):
#: 1; 2, the products registered first; 3, besides, the PE decodes each step's
#: control a cycle ahead, from what it forwards, and multiplies what it forwarded.
PE_STAGES = (1, 2, 3)

#: The default depth: the least at which every block and the whole Kaleido engine,
#: with its matcher, meet the chip clock (at one stage the Kaleido PE's multiply and
#: add in one cycle holds the engine near 126 MHz; at two, near 193).
DEFAULT_PE_STAGES = 3


def activity_lag(stages: int) -> int:
    """Cycles by which a Kaleido PE's activity (its lanes and enables) follows
    the operands it receives: one at three stages, where it multiplies what it
    forwards."""
    return 1 if stages == 3 else 0


def step_need(mode: Mode, sq: int, sk: int, accumulators: int = 3) -> tuple[Need, tuple[Target, ...]]:
    """What one channel step computes in a PE, and where it goes.

    Returns ``(need, targets)``, one target per register. With 3 registers this
    is docs/design.md, "How the PE works" table. With 4 (the exact PE), R3 collects T3's reuse
    in pass A, the lanes' taps give the row-side split (``16*hi(q0)*k``), and
    a partial row (``sq = 1``) runs as a ``ROW`` step in C (``lo(q1)*k0``) and
    in D at ``sk = 0`` (``lo(q1)*k1``), so each pass executes exactly the
    oracle count of docs/concepts.md, "Operation counts and the oracle bound":

    ======  ==================================================================
    pass    4-register schedule (R0=T0, R1=T1, R2=T2, R3=T3 in A; B, C, D as
            with 3, R1 taking R3 in B's hand-over)
    ======  ==================================================================
    A       full q0*k0. R0 all; R1 all (sk=2) / HIGH (sk=1); R2 all (sq=2) /
            TAPS (sq=1); R3 all (2,2), HIGH (2,1), TAPS (1,2), HIGH_TAP (1,1)
    B       sk=1 LO, sk=0 full. R0 all; R1 all (sq=2) / TAPS (sq=1, sk=0)
    C       sq=1 ROW, sq=0 full. R0 all; R1 all (sk=2), TAPS (ROW, sk=1) /
            HIGH (full, sk=1)
    D       nothing if sq=2 or sk=2; (0|1, 1) LO; (1, 0) ROW; (0, 0) full. R0 all
    ======  ==================================================================
    """
    X, A_, H, T, HT = Target.NO, Target.ALL, Target.HIGH, Target.TAPS, Target.HIGH_TAP
    if PEKind(accumulators).exact and mode in (Mode.A, Mode.B, Mode.C, Mode.D):
        if mode == Mode.A:
            r1 = {2: A_, 1: H, 0: X}[sk]
            r2 = {2: A_, 1: T, 0: X}[sq]
            r3 = {(2, 2): A_, (2, 1): H, (1, 2): T, (1, 1): HT}.get((sq, sk), X)
            return Need.FULL, (A_, r1, r2, r3)
        if mode == Mode.B:
            if sk == 2:
                return Need.NONE, (X, X, X, X)
            r1 = A_ if sq == 2 else T if (sq, sk) == (1, 0) else X
            return (Need.LO if sk == 1 else Need.FULL), (A_, r1, X, X)
        if mode == Mode.C:
            if sq == 2:
                return Need.NONE, (X, X, X, X)
            r1 = A_ if sk == 2 else X if sk == 0 else T if sq == 1 else H
            return (Need.ROW if sq == 1 else Need.FULL), (A_, r1, X, X)
        if sq == 2 or sk == 2:
            return Need.NONE, (X, X, X, X)
        need = Need.LO if sk == 1 else Need.ROW if sq == 1 else Need.FULL
        return need, (A_, X, X, X)
    pad = (X,) * (accumulators - 3)
    if mode == Mode.A:
        r1 = A_ if sk == 2 else H if sk == 1 else X
        return Need.FULL, (A_, r1, A_ if sq == 2 else X) + pad
    if mode == Mode.B:
        if sk == 2:
            return Need.NONE, (X, X, X) + pad
        return (Need.LO if sk == 1 else Need.FULL), (A_, A_ if sq == 2 else X, X) + pad
    if mode == Mode.C:
        if sq == 2:
            return Need.NONE, (X, X, X) + pad
        return Need.FULL, (A_, A_ if sk == 2 else H if sk == 1 else X, X) + pad
    if mode == Mode.D:
        if sq == 2:
            need = {2: Need.FULL, 1: Need.HI, 0: Need.NONE}[sk]
        else:
            need = {2: Need.NONE, 1: Need.LO, 0: Need.FULL}[sk]
        return need, (A_, X, X) + pad
    if mode == Mode.LINEAR:
        # The column carries a window's reference activation and the row a weight;
        # R0 holds the reference's output and R1.. its partners' outputs. A window
        # has one state per channel (docs/concepts.md, "Reuse states"), so the column's flag ``sk``
        # decides for every partner: the whole product when it is a full reuse,
        # the high part 16*w*hi(x_ref) when partial (its low part comes in pass B).
        pick = {2: A_, 1: H, 0: X}[sk]
        return Need.FULL, (A_,) + (pick,) * (accumulators - 1)
    return Need.NONE, (X, X, X) + pad          # modes 5..7 are reserved: no operation


@dataclass(frozen=True)
class LaneOp:
    on: bool = False
    high: bool = False          # nibble read as a signed high part, shifted by 4
    second: bool = False        # step 2's operands (a1, b1) instead of step 1's (a0, b0)
    row: bool = False           # a ROW product: column byte times lo(row operand)


@dataclass(frozen=True)
class Decoded:
    lanes: tuple[LaneOp, LaneOp]
    enable: tuple[tuple[bool, bool], ...]      # enable[r][lane]: the lane's product
    tap: tuple[tuple[bool, bool], ...] = ()    # tap[r][lane]: the lane's tap (4 registers)


def lane_adds(target: Target, lane_is_high: bool) -> tuple[bool, bool]:
    """(product, tap) of one lane that ``target`` adds."""
    return (target == Target.ALL or (target == Target.HIGH and lane_is_high),
            target == Target.TAPS or (target == Target.HIGH_TAP and lane_is_high))


def _decoded(lanes, targets, high_lane) -> Decoded:
    enable = tuple(tuple(lane_adds(t, high_lane[l])[0] and lanes[l].on for l in (0, 1)) for t in targets)
    tap = tuple(tuple(lane_adds(t, high_lane[l])[1] and lanes[l].on for l in (0, 1)) for t in targets)
    return Decoded(tuple(lanes), enable, tap)


def _single(mode: int, sq: int, sk: int, second: bool, accumulators: int) -> Decoded:
    # One step on the whole column byte: low part in lane 0, high part in lane 1;
    # a ROW step uses lane 0 alone, on the column byte and the row's low nibble.
    need, tgt = step_need(mode, sq, sk, accumulators)
    l0 = LaneOp(on=need in (Need.FULL, Need.LO, Need.ROW), second=second, row=need == Need.ROW)
    l1 = LaneOp(on=need in (Need.FULL, Need.HI), high=True, second=second)
    return _decoded((l0, l1), tgt, (False, True))


def decode(mode: int, steps: int, sq0: int, sk0: int, sq1: int, sk1: int,
           accumulators: int = 3) -> Decoded:
    """Lane operations and accumulate enables of one PE cycle.

    ``steps`` has bit 0 set when channel step 1 is present and bit 1 when step 2
    is (a paired cycle). Step 1 works on ``a0`` and ``b0``, step 2 on ``a1`` and
    ``b1``. When only one present step has work in this PE, it runs as a whole
    step: lane 0 takes its low part (or its ``ROW`` product), lane 1 its high
    part. When both have work, lane 0 takes step 1 and lane 1 step 2, each as
    the one nibble product it needs; a step that would need both lanes then
    adds nothing (the dispatcher never pairs such steps, :mod:`golden.matcher`).
    """
    regs = accumulators
    off = Decoded((LaneOp(), LaneOp()), ((False, False),) * regs, ((False, False),) * regs)
    need1 = step_need(mode, sq0, sk0, regs)[0] if steps & 1 else Need.NONE
    need2 = step_need(mode, sq1, sk1, regs)[0] if steps & 2 else Need.NONE
    if need2 == Need.NONE:
        return _single(mode, sq0, sk0, False, regs) if need1 != Need.NONE else off
    if need1 == Need.NONE:
        return _single(mode, sq1, sk1, True, regs)
    lanes, targets = [LaneOp(), LaneOp()], [[Target.NO, Target.NO] for _ in range(regs)]
    highs = [False, False]
    for lane, (sq, sk) in enumerate(((sq0, sk0), (sq1, sk1))):
        need, tgt = step_need(mode, sq, sk, regs)
        if need_lanes(need) != 1:
            continue
        # The lane plays its step's low part (LO, ROW) or high part (HI), and adds as that part would.
        highs[lane] = need == Need.HI
        lanes[lane] = LaneOp(on=True, high=highs[lane], second=lane == 1, row=need == Need.ROW)
        for r in range(regs):
            targets[r][lane] = tgt[r]
    enable = tuple(tuple(lane_adds(targets[r][l], highs[l])[0] and lanes[l].on for l in (0, 1))
                   for r in range(regs))
    tap = tuple(tuple(lane_adds(targets[r][l], highs[l])[1] and lanes[l].on for l in (0, 1))
                for r in range(regs))
    return Decoded(tuple(lanes), enable, tap)


def _signed_nibble(v: int) -> int:
    return v - 16 if v & 8 else v


def _lane(a0: int, a1: int, b0: int, b1: int, op: LaneOp) -> tuple[int, int]:
    """(product, tap) of one lane. The lane multiplies an 8-bit operand by a
    nibble; the tap is the part of the product from the 8-bit operand's high
    nibble."""
    if not op.on:
        return 0, 0
    a, b = (a1, b1) if op.second else (a0, b0)
    if op.row:                           # the column byte times the row's low nibble
        wide, nib, scale = (b & 0xFF) - 256 if b & 0x80 else b & 0xFF, a & 0xF, 1
    elif op.high:                        # the column byte's high nibble, signed, shifted
        wide, nib, scale = a, _signed_nibble((b >> 4) & 0xF), 16
    else:
        wide, nib, scale = a, b & 0xF, 1
    tap = 16 * _signed_nibble((wide >> 4) & 0xF) * nib * scale
    return wide * nib * scale, tap


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
    """What travels down a column: the column bytes and their flags."""

    b0: int = 0                 # column operand of step 1 (and of a single step)
    b1: int = 0                 # column operand of step 2 in a paired cycle
    sk0: int = 0
    sk1: int = 0


@dataclass(frozen=True)
class _Action:
    """What reaches a PE's registers in one cycle: the drain, the hand-over and
    each register's addend. With ``s`` PE stages it reaches them ``s - 1``
    cycles after its operands arrive."""

    drain: bool = False
    load: int = Load.KEEP
    adds: tuple = ()


@dataclass
class PEModel:
    """One augmented PE, cycle by cycle. ``tick`` is one rising clock edge.

    With ``stages = 2`` the cycle's products, enables, hand-over and drain are
    registered first and act on the accumulators one edge later; with 3, two
    edges later."""

    acc_bits: int
    accumulators: int = 3
    r: list = None
    out: int = 0
    out_valid: bool = False
    stages: int = 1

    def __post_init__(self):
        if self.r is None:
            self.r = [0] * self.accumulators
        self._pending = [_Action(adds=(0,) * self.accumulators)] * (self.stages - 1)

    def tick(self, row: RowIn, col: ColIn, out_in: int = 0, out_in_valid: bool = False):
        dec = decode(row.mode, row.steps, row.sq0, col.sk0, row.sq1, col.sk1, self.accumulators)
        lanes = [_lane(row.a0, row.a1, col.b0, col.b1, dec.lanes[lane]) for lane in (0, 1)]
        adds = tuple(sum(lanes[l][0] for l in (0, 1) if dec.enable[k][l])
                     + sum(lanes[l][1] for l in (0, 1) if dec.tap[k][l]) for k in range(self.accumulators))
        action = _Action(bool(row.drain), row.load, adds)
        if self.stages > 1:
            self._pending.append(action)
            action = self._pending.pop(0)
        regs = list(self.r)
        if action.drain:
            self.out, self.out_valid = regs[0], True
        elif out_in_valid or self.out_valid:       # an idle link keeps its invalid score
            self.out, self.out_valid = out_in, out_in_valid
        r3 = regs[3] if PEKind(self.accumulators).exact else 0
        if action.load == Load.CLEAR:
            regs = [0] * self.accumulators
        elif action.load == Load.R1:
            regs[0], regs[1] = regs[1], r3
        elif action.load == Load.R2:
            regs[0] = regs[2]
        self.r = [wrap(regs[k] + action.adds[k], self.acc_bits) for k in range(self.accumulators)]


@dataclass
class BaselinePEModel:
    """The plain output-stationary 8-bit MAC, with the same drain chain (and, with
    ``stages`` above 1, its product, clear and drain reaching the accumulator
    ``stages - 1`` cycles late)."""

    acc_bits: int
    acc: int = 0
    out: int = 0
    out_valid: bool = False
    stages: int = 1
    _pending: list = field(default=None, init=False, repr=False)   # [(product, clear, drain)] in flight

    def __post_init__(self):
        self._pending = [(0, False, False)] * (self.stages - 1)

    def tick(self, a: int, b: int, valid: bool, clear: bool, drain: bool,
             out_in: int = 0, out_in_valid: bool = False):
        action = (a * b if valid else 0, bool(clear), bool(drain))
        if self.stages > 1:
            self._pending.append(action)
            action = self._pending.pop(0)
        prod, clear, drain = action
        if drain:
            self.out, self.out_valid = self.acc, True
        elif out_in_valid or self.out_valid:       # an idle link keeps its invalid score
            self.out, self.out_valid = out_in, out_in_valid
        acc = 0 if clear else self.acc
        self.acc = wrap(acc + prod, self.acc_bits)
