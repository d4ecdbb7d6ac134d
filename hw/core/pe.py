"""Kaleido's augmented processing element (docs/design.md, "How the PE works"); the
baseline MAC it augments is :mod:`hw.core.baseline_pe`.

Both are output-stationary and tile into a systolic array: each registers what
it receives from the left (``row``) and from above (``col``) and passes it on to
the right and downward (the augmented PE moves an operand only with a step that
carries it: :data:`ROW_FORWARDED`), and each has one link of a drain chain that
carries finished scores up the column (see :mod:`golden.pe` for why up).
"""

from __future__ import annotations

from typing import NamedTuple

from amaranth import Cat, Module, Mux, ResetSignal, Signal, Value, signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.config import Config, require_config
from golden.pe_encoding import Load, Mode, Need, lane_adds
from golden.reuse import State

from .adders import full_adders, select_add
from .held import COL_FORWARDED, ROW_FORWARDED, SharedEnable, forward, held

__all__ = ["row_layout", "col_layout", "drain_signature", "stage", "drain_link", "PE",
           "LANES", "LANE_IN_BITS", "ROW_FORWARDED", "COL_FORWARDED"]

#: 4x8 multiplier lanes of the augmented PE. (Its accumulators, R0..R2 or
#: R0..R3, are ``Config.accumulators``.)
LANES = 2

#: Bits of one lane's registered operands in the FPGA variant (``pe_stages = 4``):
#: the 8-bit operand, the signed nibble and the nibble's side.
LANE_IN_BITS = 8 + 5 + 1

#: What travels along a row of augmented PEs.
row_layout = data.StructLayout({
    "a0":    signed(8),    # row operand of channel step 1 (and of a single step)
    "a1":    signed(8),    # row operand of channel step 2 in a paired cycle
    "sq0":   State,        # reuse state of a0's value
    "sq1":   State,        # reuse state of a1's value
    "mode":  Mode,         # pass A..D, or LINEAR
    "steps": 2,            # bit 0: step 1 present; bit 1: step 2 present (paired)
    "load":  Load,         # hand-over before this cycle's products
    "drain": 1,            # copy R0 into the drain chain (before the hand-over)
})

#: What travels down a column of augmented PEs.
col_layout = data.StructLayout({
    "b0":   8,             # column operand of step 1 (and of a single step)
    "b1":   8,             # column operand of step 2 in a paired cycle
    "sk0":  State,         # reuse state of b0's value (linear: its window's)
    "sk1":  State,         # reuse state of b1's value
    "steps": 2,            # the slot's steps, as the rows' ``steps`` (a superset of every row's)
})

def drain_signature(acc_bits: int) -> wiring.Signature:
    """One link of a drain chain of ``acc_bits``-bit scores, as its sender sees it.

    Members
    -------
    score : Out(signed(acc_bits))
        A finished score on its way up the column.
    valid : Out(1)
        ``score`` holds a score this cycle.
    """
    return wiring.Signature({"score": Out(signed(acc_bits)), "valid": Out(1)})



class _Decoded(NamedTuple):
    """A cycle's decoded control, as the lanes and the accumulators take it."""
    lane_on: list       #: per lane, whether it multiplies
    lane_hi: list       #: per lane, whether it reads the column byte's high nibble
    lane_row: list      #: per lane, whether it multiplies the column byte by lo(row) (a ROW step)
    second: list        #: per lane, whether it serves the cycle's second step
    en: list            #: ``en[k][lane]``: register k adds the lane's product
    tap: list           #: ``tap[k][lane]``: register k adds the lane's tap
    row: object         #: the row operands the decode belongs to
    col: object         #: the column operands the decode belongs to

def stage(m, stages: int, prefix: str, *values, enable=None):
    """``values`` as the accumulators see them: themselves with one PE stage, or
    each registered once (pipeline registers ``{prefix}{i}``) with more. With
    ``enable`` the registers load only when it is high and have no reset (a
    product no enable will add), so synthesis gates their clock."""
    if stages == 1:
        return values
    out = []
    for i, value in enumerate(values):
        reg = Signal(Value.cast(value).shape(), name=f"{prefix}{i}", reset_less=enable is not None)
        if enable is None:
            m.d.sync += reg.eq(value)
        else:
            with m.If(enable):
                m.d.sync += reg.eq(value)
        out.append(reg)
    return tuple(out)


def _copies(m, signals, prefix, shared):
    """``signals`` a cycle later: :func:`hw.core.held.held` copies that load when any of
    ``shared``'s groups changes, or, with no ``shared``, registers that load every
    cycle (both reset to zeros)."""
    if shared is not None:
        return held(m, signals, prefix, shared=shared)
    copies = [Signal(Value.cast(s).shape(), name=f"{prefix}{getattr(s, 'name', i)}_q") for i, s in enumerate(signals)]
    m.d.sync += [c.eq(s) for c, s in zip(copies, signals)]
    return copies


def drain_link(m, self, value, drain, gated_valid=False):
    """One link of the upward drain chain: capture ``value`` when ``drain``, or pass on
    the one below. A link that carries nothing, and is given nothing, keeps its
    (invalid) score: its register then has no reason to load, and synthesis gates
    its clock (:mod:`synth.flow`). Only ``valid`` needs a reset; with
    ``gated_valid`` the reset is part of its data (a link that holds a valid
    score loads anyway, and one that does not already holds 0), so that
    ``valid`` shares the score's enable and clock gate (a PE whose other
    registers are all gated would otherwise keep it as the one flip-flop on the
    bare clock, which the clock tree cannot balance against the gated ones)."""
    score = Signal.like(self.drain_out.score, name="drain_score", reset_less=True)
    m.d.comb += self.drain_out.score.eq(score)
    if gated_valid:
        valid = Signal(name="drain_valid", reset_less=True)
        m.d.comb += self.drain_out.valid.eq(valid)
        reset = ResetSignal()
        with m.If(drain | self.drain_in.valid | valid):
            m.d.sync += [score.eq(Mux(drain, value, self.drain_in.score)),
                         valid.eq(~reset & (drain | self.drain_in.valid))]
        return
    with m.If(drain):
        m.d.sync += [score.eq(value), self.drain_out.valid.eq(1)]
    with m.Elif(self.drain_in.valid | self.drain_out.valid):
        m.d.sync += [score.eq(self.drain_in.score), self.drain_out.valid.eq(self.drain_in.valid)]


class PE(wiring.Component):
    """Kaleido's augmented output-stationary PE.

    Three accumulators R0, R1, R2; an 8x8 multiplier built of two 4x8 lanes;
    per-register, per-lane accumulate enables; register hand-over; reuse flags
    travelling beside the operands.

    Parameters
    ----------
    cfg : Config
        Takes ``pe_acc_bits``.

    Members
    -------
    row_in : In(row_layout)
        Operands, reuse states and control from the left (or the array's edge).
    row_out : Out(row_layout)
        ``row_in``, registered: the PE to the right's ``row_in``. Operands and
        flags move only with a step that carries them (:data:`ROW_FORWARDED`);
        the control every cycle.
    col_in : In(col_layout)
        The column bytes and their reuse states from above.
    col_out : Out(col_layout)
        ``col_in``, registered: the PE below's ``col_in``, its operands and flags
        only with a step (:data:`COL_FORWARDED`).
    drain_in : In(drain_signature(pe_acc_bits))
        The drain chain from the PE below (tied off at the bottom of a column).
    drain_out : Out(drain_signature(pe_acc_bits))
        The drain chain upward: R0 when ``row_in.drain``, else ``drain_in``, registered.
    r0, r1, r2 (, r3) : Out(signed(pe_acc_bits))
        The accumulators, for tests and proofs (``r3`` in the exact PE only).
    lanes : Out(LANES)
        Bit ``i``: lane ``i`` multiplies this cycle.
    split : Out(1)
        This cycle's lanes serve two channel steps, one each (for the overflow proof).
    acc_en : Out(LANES * accumulators)
        Bit ``LANES*k + i``: lane ``i``'s product (or its tap) is added into register ``k``.
    lane_in : Out(LANES * LANE_IN_BITS)
        The FPGA variant's (four stages) registered lane operands, for the overflow proof.

    Control encoding (``row.mode``, ``row.steps``, flags; decoded inside the PE,
    and identical to :func:`golden.pe.decode`). ``p`` is ``a0*b``, ``H`` its high
    part ``16*a0*hi(b)``, ``L`` its low part ``a0*lo(b)``; ``sq``/``sk`` the step's
    flags; a blank means nothing is added.

    ======  ============  =============  ==========  ==============  =============
    mode    lanes         R0 +=          R1 +=       R2 +=           skipped when
    ======  ============  =============  ==========  ==============  =============
    A       L and H       p              p if sk=2,  p if sq=2
                                         H if sk=1
    B       L if sk=1,    L or p         same as R0                  sk=2
            else L and H                 if sq=2
    C       L and H       p              p if sk=2,                  sq=2
                                         H if sk=1
    D       by (sq, sk):  (2,2) p, (2,1) H, (0|1,1) L, (0|1,0) p    (2,0), (0|1,2)
    LINEAR  L and H       p              p if sk=2,  p if sk=2,      (R3 too, in
                                         H if sk=1   H if sk=1       the exact PE)
    ======  ============  =============  ==========  ==============  =============

    A *paired* cycle (``steps = 0b11``, or ``0b10``) carries two channel steps:
    step 1 on ``a0`` and ``b0`` with flags ``sq0, sk0``, step 2 on ``a1`` and ``b1``
    with ``sq1, sk1``. Where only one of them has work in this PE it runs as a
    whole step on its own operands. Where both have work, lane 0 takes step 1 and
    lane 1 step 2, each as the one nibble (or ``ROW``) product it needs, adding
    into the registers as that part of its step would (a step that would need
    both lanes then adds nothing; the dispatcher never pairs it so).

    ``row.load`` (applied before the products are added): KEEP; CLEAR (R0..R2 <- 0);
    R1 (R0 <- R1, R1 <- 0); R2 (R0 <- R2). ``row.drain`` copies R0, as it was before
    the hand-over, into the drain chain.

    The two activity outputs, ``lanes`` and ``acc_en``, are combinational; at
    three PE stages they belong to the operands of the cycle before, which the
    PE multiplies from its own ``row_out`` and ``col_out`` under control it
    decoded from ``row_in`` and ``col_in`` and registered
    (:func:`golden.pe.activity_lag`).

    The decode is generated from the step table of the design point's PE kind
    (:mod:`golden.pe_kinds`), so a kind that runs on one of the two datapaths
    needs no RTL of its own. **The exact PE's datapath** (a kind with ``taps``,
    ``cfg.accumulators = 4``) adds
    R3, which collects T3's reuse in pass A and moves to R1 in B's hand-over
    (``Load.R1``: R0 <- R1, R1 <- R3). Each lane is built as two 4x4 products
    split by its 8-bit operand's nibbles, so the part from the high nibble (the
    *tap*) can be added on its own: ``16*hi(q0)*k`` is the row-side split of a
    full product. In a ``ROW`` step a lane multiplies the column byte by the
    row operand's low nibble (``lo(q1)*k``): a partial row costs one lane, and
    two partial rows of pass C share a cycle.
    """

    def __init__(self, cfg: Config):
        self.cfg = require_config(cfg, self)
        self.kind = cfg.pe.kind
        self.registers = self.kind.registers
        acc = signed(cfg.pe_acc_bits)
        regs = {f"r{k}": Out(acc) for k in range(self.registers)}
        super().__init__({
            "row_in": In(row_layout), "row_out": Out(row_layout),
            "col_in": In(col_layout), "col_out": Out(col_layout),
            "drain_in": In(drain_signature(cfg.pe_acc_bits)),
            "drain_out": Out(drain_signature(cfg.pe_acc_bits)),
            **regs,
            "lanes": Out(LANES), "split": Out(1), "acc_en": Out(LANES * self.registers),
            # The FPGA variant's registered lane operands, for the overflow proof.
            **({"lane_in": Out(LANES * LANE_IN_BITS)} if cfg.pe_stages == 4 else {}),
        })

    def _step_decode(self, m, mode, sq, sk, prefix):
        """One channel step's lanes and register enables: golden.pe.step_need's
        table, as a case per (mode, sq, sk) that sets the final enable bits (unused
        codes decode to no operation). ``product[k][l]`` and ``tap[k][l]``: lane
        ``l``, decoded as a whole step's lane (0 low, 1 high), adds its product or
        its tap into register ``k``."""
        n = self.registers
        lo, hi = Signal(name=f"{prefix}_lo"), Signal(name=f"{prefix}_hi")
        row_step = Signal(name=f"{prefix}_row")
        product = [[Signal(name=f"{prefix}_p{k}_{l}") for l in range(2)] for k in range(n)]
        tap = [[Signal(name=f"{prefix}_t{k}_{l}") for l in range(2)] for k in range(n)]
        outputs = [lo, hi, row_step] + [x for k in range(n) for x in (*product[k], *tap[k])]
        # One word of every output per (mode, sq, sk): a small ROM the synthesizer reduces.
        word = Signal(len(outputs), name=f"{prefix}_decode")
        with m.Switch(Cat(sk, sq, mode)):
            for mode in Mode:
                for sqv in range(3):
                    for skv in range(3):
                        need, targets = self.kind.step_need(mode, sqv, skv)
                        bits = [need in (Need.LO, Need.FULL, Need.ROW), need in (Need.HI, Need.FULL),
                                need == Need.ROW]
                        for target in targets:
                            adds = [lane_adds(target, l == 1) for l in range(2)]
                            bits += [adds[0][0], adds[1][0], adds[0][1], adds[1][1]]
                        value = sum(int(b) << i for i, b in enumerate(bits))
                        if value:
                            with m.Case(skv | sqv << 2 | int(mode) << 4):
                                m.d.comb += word.eq(value)
        m.d.comb += [out.eq(word[i]) for i, out in enumerate(outputs)]
        return lo, hi, row_step, product, tap

    def elaborate(self, platform):
        m = Module()
        n = self.registers
        exact = self.kind.taps
        row, col = self.row_in, self.col_in
        # Operands and flags move on only with a step that reads them: in a slot
        # with no step (or one of two) their registers hold, clock gated.
        forward(m, row, col, self.row_out, self.col_out)
        stages = self.cfg.pe_stages
        # From three stages on the PE decodes the control of what arrives, registers
        # the decode beside the operands it forwards (row_out, col_out), and
        # multiplies those a cycle later: no decode stands before the multipliers.
        # With four, the lanes' selected operands are registered too, and the
        # multipliers take them from there (an FPGA's DSP block, registered in).
        ahead = stages >= 3
        # No reset: every score starts with a clearing hand-over, and a register
        # without one can have its clock gated where it holds (synth.flow).
        r = [Signal(signed(self.cfg.pe_acc_bits), name=f"reg{k}", reset_less=True) for k in range(n)]
        m.d.comb += [getattr(self, f"r{k}").eq(r[k]) for k in range(n)]

        # The decode a cycle ahead and its copy a stage later change together (with
        # the pass or the flags): one enable, one clock gate, for both. The FPGA
        # variant registers them plainly instead: there the comparison that finds a
        # change, and the enable it fans out to every copy, were the array's slowest
        # path, and a clock gate saves nothing.
        control = SharedEnable("control_load") if stages < 4 else None
        decoded = self._decode(m, row, col, ahead, control)
        lane_on, en, tap, row = decoded.lane_on, decoded.en, decoded.tap, decoded.row
        operand_stage = stages == 4
        prods, taps = self._lanes(m, decoded, exact, operand_stage)
        flat_en = [e for k in range(n) for e in (*en[k], *tap[k])]
        # The paper's PE at two and three stages stages its hand-over decoded, a bit
        # a kind: the decode then stands before the stage, not between the staged
        # hand-over and the 66 bits of base it picks (the array's slowest path at
        # 720 MHz on NanGate45, by 0.001 ns).
        hot = not exact and stages in (2, 3)
        handover = [row.load == kind for kind in Load] if hot else [row.load]
        control_now = [*flat_en, *handover, row.drain]
        if operand_stage:
            # Everything the lanes' operands wait for waits a cycle with them.
            lane_on = _copies(m, lane_on, "run_", control)
            control_now = _copies(m, control_now, "wait_", control)

        # --- with two PE stages, what reaches the accumulators is registered here ------
        # A lane's product (and tap) is registered only when the lane runs: its
        # staged enables are then 0, so what it holds is never added.
        lanes = [stage(m, stages, f"stage_lane{lane}_", prods[lane], *taps[lane:lane + 1], enable=lane_on[lane])
                 for lane in range(2)]
        prods, taps = [h[0] for h in lanes], [h[1] for h in lanes if len(h) > 1]
        # Enables, hand-over and drain change only when the pass does: held between.
        staged = control_now if stages == 1 else _copies(m, control_now, "stage_", control)
        if control is not None and control.changes:
            control.drive(m)
        flat_en = staged[:-1 - len(handover)]
        en = [list(flat_en[4 * k:4 * k + 2]) for k in range(n)]
        tap = [list(flat_en[4 * k + 2:4 * k + 4]) for k in range(n)]
        if hot:
            load = dict(zip(Load, staged[-1 - len(handover):-1]))
        else:
            load = Signal(Load, name="load_now")
            m.d.comb += load.eq(staged[-2])
        drain_link(m, self, r[0], staged[-1], gated_valid=True)

        base = self._handover(m, r, load, exact)
        if exact:
            self._accumulate_exact(m, r, load, base, en, tap, prods, taps)
        else:
            self._accumulate_paper(m, r, load, base, en, prods)
        return m

    def _decode(self, m, row, col, ahead, enable):
        """Which lanes run, how they read their operands, and which register each
        adds into, from the two steps' decodes; with three stages, registered
        beside the operands the PE forwards (returned as ``row``, ``col``)."""
        n = self.registers
        lane_on = [Signal(name=f"lane{i}_on") for i in range(2)]
        lane_hi = [Signal(name=f"lane{i}_hi") for i in range(2)]
        lane_row = [Signal(name=f"lane{i}_row") for i in range(2)]     # column byte times lo(row)
        en = [[Signal(name=f"en_r{k}_l{i}") for i in range(2)] for k in range(n)]
        tap = [[Signal(name=f"tap_r{k}_l{i}") for i in range(2)] for k in range(n)]

        s1 = self._step_decode(m, row.mode, row.sq0, col.sk0, "s1")
        s2 = self._step_decode(m, row.mode, row.sq1, col.sk1, "s2")
        # A step has work here when its decode turns a lane on.
        work1 = row.steps[0] & (s1[0] | s1[1])
        work2 = row.steps[1] & (s2[0] | s2[1])
        whole1, whole2, split = work1 & ~work2, work2 & ~work1, work1 & work2

        def whole_step(decoded):
            lo, hi, row_step, product, tapped = decoded
            m.d.comb += [lane_on[0].eq(lo), lane_on[1].eq(hi), lane_hi[1].eq(1), lane_row[0].eq(row_step)]
            for k in range(n):
                for lane, on in enumerate((lo, hi)):
                    m.d.comb += [en[k][lane].eq(product[k][lane] & on), tap[k][lane].eq(tapped[k][lane] & on)]

        with m.If(whole1):
            whole_step(s1)
        with m.Elif(whole2):
            whole_step(s2)
        with m.Elif(split):
            for lane, (lo, hi, row_step, product, tapped) in enumerate((s1, s2)):
                one = lo ^ hi                       # exactly one lane's product (LO, HI or ROW)
                m.d.comb += [lane_on[lane].eq(one), lane_hi[lane].eq(hi), lane_row[lane].eq(one & row_step)]
                # The lane plays the step's low or high part: it adds as that part would.
                for k in range(n):
                    m.d.comb += [en[k][lane].eq(one & Mux(hi, product[k][1], product[k][0])),
                                 tap[k][lane].eq(one & Mux(hi, tapped[k][1], tapped[k][0]))]

        # Lane 0 serves step 2 only when step 2 runs whole; lane 1 also when split.
        second = [Signal(name=f"lane{i}_second") for i in range(2)]
        m.d.comb += [second[0].eq(whole2), second[1].eq(whole2 | split)]
        split_now = Signal(name="split_now")
        m.d.comb += split_now.eq(split)
        if ahead:
            # The decode changes only when the pass or the flags do: held, clock gated, between.
            flat = [*lane_on, *lane_hi, *lane_row, *second, split_now,
                    *(x for k in range(n) for x in (*en[k], *tap[k]))]
            q = iter(_copies(m, flat, "", enable))
            lane_on, lane_hi, lane_row, second = ([next(q) for _ in range(2)] for _ in range(4))
            split_now = next(q)
            pairs = [([next(q) for _ in range(2)], [next(q) for _ in range(2)]) for _ in range(n)]
            en, tap = [e for e, _ in pairs], [t for _, t in pairs]
            row, col = self.row_out, self.col_out        # the operands the decode belongs to
        # Activity, for utilization counters and the overflow proof.
        m.d.comb += [self.lanes.eq(Cat(*lane_on)), self.split.eq(split_now),
                     self.acc_en.eq(Cat(*(en[k][i] | tap[k][i] for k in range(n) for i in range(2))))]

        return _Decoded(lane_on, lane_hi, lane_row, second, en, tap, row, col)

    def _lanes(self, m, decoded, exact, operand_stage=False):
        """The datapath: two 4x8 lanes' products (and, on the exact PE, their taps).
        With ``operand_stage`` each lane's selected operands (and its nibble's
        side) are registered before it multiplies, loading only when the lane
        runs: an idle lane's multiplier then holds still on its last operands."""
        lane_on, lane_hi, lane_row, second = decoded.lane_on, decoded.lane_hi, decoded.lane_row, decoded.second
        row, col = decoded.row, decoded.col
        prods, taps, held_in = [], [], []

        def registered(lane, *values):
            if not operand_stage:
                return values
            regs = [Signal(Value.cast(v).shape(), name=f"lane{lane}_in{i}", reset_less=True)
                    for i, v in enumerate(values)]
            with m.If(lane_on[lane]):
                m.d.sync += [r.eq(v) for r, v in zip(regs, values)]
            held_in.extend(regs)
            return regs

        for lane in range(2):
            # Operand isolation: a lane that does not multiply sees zeros, so its
            # multiplier holds still instead of computing a product that is then
            # dropped (what a nibble step's idle lane used to cost).
            a = Mux(lane_on[lane], Mux(second[lane], row.a1, row.a0), 0)
            b = Mux(lane_on[lane], Mux(second[lane], col.b1, col.b0), 0)
            nib = Mux(lane_hi[lane], b[4:8], b[0:4])
            # A low nibble is unsigned, a high nibble signed; both fit signed(5).
            nv = Signal(signed(5), name=f"lane{lane}_nib")
            if not exact:
                m.d.comb += nv.eq(Mux(lane_hi[lane], nib.as_signed(), nib))
                a_in, nv_in, hi = registered(lane, a, nv, lane_hi[lane])
                prod = Signal(signed(13), name=f"lane{lane}_prod")
                p = Signal(signed(17), name=f"lane{lane}_p")
                m.d.comb += prod.eq(a_in * nv_in)
                m.d.comb += p.eq(Mux(hi, prod << 4, prod))      # 0 when off: isolated
                prods.append(p)
                continue
            # The exact PE splits each lane by its 8-bit operand's nibbles, so the
            # part from the high nibble (the tap) is there to add on its own; a
            # ROW product takes the column byte as that operand and the row's low nibble.
            swap = lane_row[lane]
            wide = Signal(signed(8), name=f"lane{lane}_wide")
            m.d.comb += [wide.eq(Mux(swap, b.as_signed(), a)),
                         nv.eq(Mux(swap, a[0:4], Mux(lane_hi[lane], nib.as_signed(), nib)))]
            wide_in, nv_in, hi = registered(lane, wide, nv, lane_hi[lane])
            hp = Signal(signed(9), name=f"lane{lane}_hp")        # hi(wide) * nibble
            lp = Signal(signed(10), name=f"lane{lane}_lp")       # lo(wide) * nibble
            m.d.comb += [hp.eq(wide_in[4:8].as_signed() * nv_in), lp.eq(wide_in[0:4] * nv_in)]
            p = Signal(signed(17), name=f"lane{lane}_p")
            t = Signal(signed(17), name=f"lane{lane}_t")
            m.d.comb += [
                p.eq(Mux(hi, ((hp << 4) + lp) << 4, (hp << 4) + lp)),     # 0 when off
                t.eq(Mux(hi, hp << 8, hp << 4)),
            ]
            prods.append(p)
            taps.append(t)

        if operand_stage:
            m.d.comb += self.lane_in.eq(Cat(*held_in))
        return prods, taps

    def _pick(self, m, sel, cases, default):
        """``cases[sel]``, or ``default`` when ``sel`` is none of its keys (``sel``:
        a value, or ``{key: bit}`` with one bit set).

        Icarus runs an `always @*` block only once one of its inputs changes. With
        two stages nothing here sees the testbench's first input change, so the
        selection is then an AND-OR expression (a continuous assign, as parallel as
        a case) instead of a Switch; with one stage the netlist stays as it was
        measured."""
        if self.cfg.pe_stages > 1:
            hits = [sel[key] if isinstance(sel, dict) else sel == key for key in cases]
            value = Mux(~Cat(*hits).any(), default, 0)
            for hit, v in zip(hits, cases.values()):
                value = value | Mux(hit, v, 0)
            return value
        out = Signal.like(default)
        m.d.comb += out.eq(default)
        with m.Switch(sel):
            for key, v in cases.items():
                with m.Case(key):
                    m.d.comb += out.eq(v)
        return out

    def _handover(self, m, r, load, exact) -> list:
        """What each register adds onto this cycle: itself, or what the hand-over
        (``load``) puts there first."""
        base = [Signal(signed(self.cfg.pe_acc_bits), name=f"base{k}") for k in range(self.registers)]
        handover = {0: {Load.CLEAR: 0, Load.R1: r[1], Load.R2: r[2]},
                    1: {Load.CLEAR: 0, Load.R1: r[3] if exact else 0}}
        for k in range(self.registers):
            m.d.comb += base[k].eq(self._pick(m, load, handover.get(k, {Load.CLEAR: 0}), r[k]))
        return base

    def _accumulate_paper(self, m, r, load, base, en, prods) -> None:
        """Each register of the paper's PE adds what its two enables pick of the
        two lanes' products: 0, either one, or both. Like the register, the sum
        wraps at ``pe_acc_bits``.

        Up to three stages each register adds its two terms and its base with a
        carry-save adder and one carry-propagate adder (:meth:`_carry_save`):
        a shared sum of the lanes ahead of the accumulator's adder put two carry
        chains in the PE's slowest path, 1.50 ns on NanGate45, and the chip
        clock gives 1.39. The FPGA variant (four stages) keeps the shared sum,
        one adder for every register: there its LUTs' carry chains are fast
        and the matcher, not the PE, sets the clock.

        R0's enables are the lanes themselves (golden.pe.decode). With one stage
        an idle lane's product is 0 by its operands; a staged one is stale, so it
        is masked by R0's enable, and moves only with the lanes that run."""
        width = self.cfg.pe_acc_bits
        if self.cfg.pe_stages > 1:
            prods = [Mux(en[0][lane], prods[lane], 0) for lane in range(2)]
        # R1 and R2 load on one enable (one clock gate): a register that loads
        # with no addend of its own adds 0 to itself.
        any_add = Cat(*(e for k in range(1, self.registers) for e in en[k])).any()
        if self.cfg.pe_stages < 4:
            for k in range(self.registers):
                terms = [Mux(en[k][lane], prods[lane], 0) for lane in range(2)]
                self._carry_save(m, r, k, load, base, terms, any_add if k else en[0][0] | en[0][1], select=True)
            return
        both = Signal(signed(18), name="lanes_sum")
        m.d.comb += both.eq(prods[0] + prods[1])
        for k in range(self.registers):
            addend = Signal(signed(18), name=f"add{k}")
            e0, e1 = en[k]
            if k == 0:                  # what runs is what R0 adds: the sum, 0 with no lane
                m.d.comb += addend.eq(both)
            else:                       # AND-OR, not a case, as _pick writes it for Icarus
                m.d.comb += addend.eq(Mux(e0 & ~e1, prods[0], 0) | Mux(e1 & ~e0, prods[1], 0) |
                                      Mux(e0 & e1, both, 0))
            with m.If((load != Load.KEEP) | (any_add if k else en[0][0] | en[0][1])):
                m.d.sync += r[k].eq((base[k] + addend)[:width])

    def _accumulate_exact(self, m, r, load, base, en, tap, prods, taps) -> None:
        """Each register of the exact PE, which takes taps too, adds three addends
        (its base and what each lane gives it: its product, its tap, or nothing) as
        a carry-save adder (one full adder a bit, no carry chain) and one
        carry-propagate adder, so no lane sum runs ahead of the accumulator's own
        adder. Like the register, the sum wraps at ``pe_acc_bits``."""
        # R1..R3 load on one enable (one clock gate): a register that loads with
        # no addend of its own adds 0 to itself.
        any_add = Cat(*(e for k in range(1, self.registers) for e in (*en[k], *tap[k]))).any()
        for k in range(self.registers):
            terms = [Mux(en[k][lane], prods[lane], Mux(tap[k][lane], taps[lane], 0)) for lane in range(2)]
            self._carry_save(m, r, k, load, base, terms,
                             any_add if k else Cat(en[0][0], en[0][1], tap[0][0], tap[0][1]).any())

    def _carry_save(self, m, r, k, load, base, terms, mine, select: bool = False) -> None:
        """Register ``k`` takes its base plus the two lane ``terms``: a row of full
        adders (no carry chain) and one carry-propagate adder (with ``select``, a
        carry-select one: half the chain), wrapping at ``pe_acc_bits``; it loads
        on a hand-over or when ``mine`` (an addend of its own) is set, and
        otherwise holds, its clock gated."""
        width = self.cfg.pe_acc_bits
        lanes = []
        for lane, value in enumerate(terms):
            term = Signal(signed(width), name=f"add{k}_lane{lane}")
            m.d.comb += term.eq(value)
            lanes.append(term.as_unsigned())
        full = full_adders(base[k].as_unsigned(), lanes[0], lanes[1])
        sums = Signal(width, name=f"csa{k}_sum")
        carries = Signal(width, name=f"csa{k}_carry")
        m.d.comb += [sums.eq(full[0]), carries.eq(full[1])]
        total = select_add(m, sums, carries, width, f"acc{k}") if select else (sums + carries)[:width]
        handing_over = ~load[Load.KEEP] if isinstance(load, dict) else load != Load.KEEP
        with m.If(handing_over | mine):
            m.d.sync += r[k].eq(total)
