"""Kinds of the augmented PE, each a class that declares what the rest of the
project needs of it, so that nothing matches on names or register counts.

A kind declares its name, its registers, its datapath (whether its lanes also
give their *taps* and run ``ROW`` steps, the exact PE's additions), the energy
actions it has beyond the paper PE's, and its step table: what one channel step
of each pass computes and where it adds it (:meth:`PEKindModel.step_need`).
From that one table come the PE's decode (golden and RTL), the matcher's and
the channel window's lanes, the engine's pass-D rule and every cycle model.

The paper's PE (:class:`PaperPE`) and the exact PE (:class:`ExactPE`) are built
in. ``Config.accumulators`` picks between them (3 or 4 registers); a kind
admitted by :func:`golden.pe_contract.register` is picked by name (``Config.pe_kind``). A
new kind that runs on one of the two datapaths needs no RTL of its own: the
PE generates its decode from the kind's table.
"""

from __future__ import annotations

from typing import ClassVar

from .pe_encoding import Mode, Need, Target
from .registry import claim

__all__ = ["PEKindModel", "PaperPE", "ExactPE", "PE_KINDS", "check", "add", "pe_kind_of", "ACCUMULATORS"]


class PEKindModel:
    """One kind of augmented PE (subclass it, then :func:`golden.pe_contract.register` it).

    Attributes
    ----------
    name : str
        How a design point names it (``Config.pe_kind``).
    registers : int
        Its accumulators, R0..R2 or R0..R3 (``Config.accumulators`` must agree).
    taps : bool
        Its datapath: with taps, each lane also gives the part of its product
        that comes from its 8-bit operand's high nibble, ``ROW`` steps multiply
        the column byte by the row's low nibble, and R1 takes R3 at B's hand-over
        (the exact PE). Without, its table may use neither.
    actions : tuple of str
        Energy actions it has beyond the paper PE's (:mod:`synth.actions`).
    """

    name: ClassVar[str]
    registers: ClassVar[int]
    taps: ClassVar[bool] = False
    actions: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def step_need(cls, mode: Mode, sq: int, sk: int) -> tuple[Need, tuple[Target, ...]]:
        """``(need, targets)`` of one channel step of pass ``mode`` in a PE whose
        row operand has reuse state ``sq`` and column operand ``sk``: what the
        step needs of the lanes, and one target per register."""
        raise NotImplementedError


class PaperPE(PEKindModel):
    """The paper's PE: three registers (R0=T0, R1=T1, R2=T2 in pass A), and the
    step table of docs/design.md, "How the PE works".

    A partial reuse of a key (``sk = 1``) adds its high part ``16*q*hi(k)`` into
    the register of the token that shares it, and the low part comes in its own
    pass; a partial query reuse is computed whole."""

    name = "paper"
    registers = 3

    @classmethod
    def step_need(cls, mode, sq, sk):
        X, A_, H = Target.NO, Target.ALL, Target.HIGH
        pad = (X,) * (cls.registers - 3)
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
            return Need.FULL, (A_,) + (pick,) * (cls.registers - 1)
        return Need.NONE, (X, X, X) + pad          # modes 5..7 are reserved: no operation


class ExactPE(PaperPE):
    """The exact PE: four registers, executing exactly the oracle's MACs.

    R3 collects T3's reuse in pass A, the lanes' taps give the row-side split
    (``16*hi(q0)*k``), and a partial row (``sq = 1``) runs as a ``ROW`` step in
    C (``lo(q1)*k0``) and in D at ``sk = 0`` (``lo(q1)*k1``), so each pass
    executes exactly the oracle count of docs/concepts.md, "Operation counts and
    the oracle bound":

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

    The linear layers' pass runs as on the paper's PE, over four registers.
    """

    name = "exact"
    registers = 4
    taps = True
    actions = ("row_nibble", "tapped_mac")

    @classmethod
    def step_need(cls, mode, sq, sk):
        X, A_, H, T, HT = Target.NO, Target.ALL, Target.HIGH, Target.TAPS, Target.HIGH_TAP
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
        if mode == Mode.D:
            if sq == 2 or sk == 2:
                return Need.NONE, (X, X, X, X)
            need = Need.LO if sk == 1 else Need.ROW if sq == 1 else Need.FULL
            return need, (A_, X, X, X)
        return super().step_need(mode, sq, sk)


#: name -> kind, the built-in ones first.
PE_KINDS: dict[str, type[PEKindModel]] = {}

#: ``Config.accumulators``' values: the built-in kinds' register counts (each
#: count picks its built-in kind when ``Config.pe_kind`` names none).
ACCUMULATORS = (PaperPE.registers, ExactPE.registers)
_BY_REGISTERS = {PaperPE.registers: PaperPE, ExactPE.registers: ExactPE}

_TAPPED = (Target.TAPS, Target.HIGH_TAP)


def check(kind: type[PEKindModel]) -> None:
    """Raise ValueError, in one line, unless ``kind`` has a name that no other kind
    has (:func:`golden.registry.claim`) and a step table that fits its registers
    and its datapath."""
    name = getattr(kind, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"PE kind {getattr(kind, '__name__', kind)!r} declares no name")
    claim(PE_KINDS, name, kind, "PE kind")
    if getattr(kind, "registers", None) not in ACCUMULATORS:
        raise ValueError(f"PE kind {kind.name!r}: a PE has {' or '.join(map(str, ACCUMULATORS))} registers, "
                         f"not {getattr(kind, 'registers', None)}")
    for mode in Mode:
        for sq in range(3):
            for sk in range(3):
                need, targets = _step(kind, mode, sq, sk)
                if len(targets) != kind.registers:
                    raise ValueError(f"PE kind {kind.name!r}: {len(targets)} targets in {mode.name} "
                                     f"({sq}, {sk}) for {kind.registers} registers")
                if not kind.taps and (need == Need.ROW or any(t in _TAPPED for t in targets)):
                    raise ValueError(f"PE kind {kind.name!r} has no taps, but its {mode.name} ({sq}, {sk}) "
                                     f"step uses them")


def add(kind: type[PEKindModel]) -> type[PEKindModel]:
    """Add ``kind`` to :data:`PE_KINDS` once :func:`check` passes it. A user's
    kind is admitted by :func:`golden.pe_contract.register` instead, which also
    holds it to what the engine's passes ask of it: this module, below the PE
    model, only keeps the table."""
    check(kind)
    PE_KINDS[kind.name] = kind
    return kind


def _step(kind, mode: Mode, sq: int, sk: int) -> tuple[Need, tuple[Target, ...]]:
    """``kind``'s step table at one entry, checked to be a Need and one Target a register."""
    where = f"PE kind {kind.name!r}, {mode.name} ({sq}, {sk})"
    try:
        step = kind.step_need(mode, sq, sk)
    except Exception as exc:
        raise ValueError(f"{where}: its step table raised {exc.__class__.__name__}: {exc}") from None
    try:
        need, targets = step
        need, targets = Need(need), tuple(Target(t) for t in targets)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: the step table gave {step!r}, not (a Need, a Target per register): "
                         f"a Need is one of {', '.join(f'Need.{n.name}' for n in Need)}, a Target one of "
                         f"{', '.join(f'Target.{t.name}' for t in Target)}") from None
    return need, targets


add(PaperPE)
add(ExactPE)


def pe_kind_of(what) -> type[PEKindModel]:
    """The kind ``what`` builds: a design point or its PE part (by
    ``pe_kind``, else by ``accumulators``), a kind's name, a register count
    (a built-in kind) or a kind itself."""
    if isinstance(what, type) and issubclass(what, PEKindModel):
        return what
    if isinstance(what, str):
        return PE_KINDS[what]
    if isinstance(what, int):
        return _BY_REGISTERS[what]
    name = getattr(what, "pe_kind", "")
    return PE_KINDS[name] if name else _BY_REGISTERS[what.accumulators]
