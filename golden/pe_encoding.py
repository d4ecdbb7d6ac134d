"""What a Kaleido PE's control says: the pass, the register hand-over, what a
channel step needs of the lanes, and what it adds into each register
(docs/design.md, "How the PE works").

These encodings are shared by every PE kind (:mod:`golden.pe_kinds`), the PE's
cycle model (:mod:`golden.pe`) and the RTL, which use them as field shapes.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["Mode", "Load", "Need", "Target", "PASS_HANDOVER", "PARTNER_HANDOVER", "need_lanes", "lane_adds"]


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


#: The hand-over at the first step of each of passes A to D (docs/design.md, "How the PE works").
PASS_HANDOVER = {Mode.A: Load.CLEAR, Mode.B: Load.R1, Mode.C: Load.R2, Mode.D: Load.R1}
#: A linear layer's partner 1, 2, 3 (pass B after LINEAR) takes its register so.
PARTNER_HANDOVER = (Load.R1, Load.R2, Load.R1)


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



def lane_adds(target: Target, lane_is_high: bool) -> tuple[bool, bool]:
    """(product, tap) of one lane that ``target`` adds."""
    return (target == Target.ALL or (target == Target.HIGH and lane_is_high),
            target == Target.TAPS or (target == Target.HIGH_TAP and lane_is_high))


