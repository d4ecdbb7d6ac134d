"""The attention engine's operand stage (S1): the slot's buffer words become the
array's edge bundles (operands, reuse states, hand-over, drain), and in pass A
each channel's table entry goes to the dispatcher. How the steps reach the array
follows the dispatcher's signature: every row and column the same step (a second
one on the other byte where it pairs), or each group its own
(:mod:`hw.core.window_routing`)."""

from __future__ import annotations

from amaranth import Mux
from amaranth.lib import data

from golden.pe_encoding import Load, Mode
from golden.reuse import State

from ..dispatcher.matcher import INVALID
from .buffers import word_layout
from .sequencer import routing
from .window_routing import window_need_bits, window_operands

__all__ = ["operand_stage"]


def operand_stage(engine, m, s1, needs, reads, match, array):
    """S1: the slot's buffer words become the array's edge bundles (operands,
    flags, hand-over, drain); in pass A it also computes the need bits."""
    cfg, kaleido = engine.cfg, engine.design == "kaleido"
    R, C = cfg.rows, cfg.cols
    per_group, paired = routing(match)
    (qr, kr), *partner = reads
    s1_valid, s1_steps, s1_first, s1_drain = s1.valid, s1.steps, s1.first, s1.drain
    s1_pass, s1_flush, s1_pair, s1_c = s1.mode, s1.flush, s1.pair, s1.chan
    a_in_s1 = needs.a_in_s1
    q_word = data.View(word_layout(engine.design, R), qr.data)
    k_word = data.View(word_layout(engine.design, C), kr.data)
    rows = [q_word[i] for i in range(R)]
    cols = [k_word[j] for j in range(C)]
    # Hand-overs: A (and LINEAR) start afresh; B takes T1 (linear: partners 1 and 3
    # from R1, partner 2 from R2); C takes T2; D takes T3.
    takes_r2 = (s1_pass == Mode.C) | ((s1_pass == Mode.B) & (s1.part == 1))
    load_of = Mux(s1_flush, Load.CLEAR,
                  Mux(s1_first, Mux((s1_pass == Mode.A) | (s1_pass == Mode.LINEAR), Load.CLEAR,
                                    Mux(takes_r2, Load.R2, Load.R1)), Load.KEEP))
    if kaleido:
        qv = [e.valid for e in rows]
        kv = [e.valid for e in cols]
        sq = [e.state for e in rows]
        sk = [e.state for e in cols]
        use_x0 = (s1_pass == Mode.A) | (s1_pass == Mode.B) | (s1_pass == Mode.LINEAR)
        use_k0 = (s1_pass == Mode.A) | (s1_pass == Mode.C) | (s1_pass == Mode.LINEAR)
        if paired:
            qr2, kr2 = partner[0]
            q_word2 = data.View(word_layout(engine.design, R), qr2.data)
            k_word2 = data.View(word_layout(engine.design, C), kr2.data)
        rows2 = [q_word2[i] for i in range(R)] if paired else rows
        cols2 = [k_word2[j] for j in range(C)] if paired else cols
        if per_group:
            window_operands(engine, m, s1, reads, array, load_of, use_x0, use_k0)
        steps = Mux(s1_pair, 3, 1)
        for i, (e, e2) in enumerate(zip(rows, rows2) if not per_group else ()):
            # The dense schedule's folded key: the row adder forms P0 + P1 (<= 127).
            fold = engine.dense & (e.state == State.FULL)
            a0 = Mux(fold, (e.x0 + e.x1)[:8], Mux(use_x0, e.x0, e.x1))
            m.d.sync += [
                array.row_in[i].a0.eq(a0),
                array.row_in[i].a1.eq(Mux(s1_pair, Mux(use_x0, e2.x0, e2.x1), 0)),
                array.row_in[i].sq0.eq(Mux(engine.dense, 0, sq[i])),
                array.row_in[i].sq1.eq(Mux(s1_pair, e2.state, 0)),
                array.row_in[i].mode.eq(s1_pass),
                array.row_in[i].steps.eq(Mux(s1_valid & s1_steps & qv[i], steps, 0)),
                array.row_in[i].load.eq(Mux(s1_valid, load_of, Load.KEEP)),
                array.row_in[i].drain.eq(s1_valid & s1_drain),
            ]
        # A paired slot carries each step's column operand on its own byte.
        for j, (e, e2) in enumerate(zip(cols, cols2) if not per_group else ()):
            m.d.sync += [
                array.col_in[j].b0.eq(Mux(use_k0, e.x0, e.x1)),
                array.col_in[j].b1.eq(Mux(s1_pair, Mux(use_k0, e2.x0, e2.x1), 0)),
                array.col_in[j].sk0.eq(sk[j]),
                array.col_in[j].sk1.eq(Mux(s1_pair, e2.state, 0)),
                # The slot's steps, valid column or not: every row's are among them.
                array.col_in[j].steps.eq(Mux(s1_valid & s1_steps, steps, 0)),
                array.col_valid[j].eq(kv[j]),
            ]
        # The dispatcher keeps every row's and column's state (the in-order one ignores them).
        m.d.comb += [match.wr_en.eq(a_in_s1), match.wr_chan.eq(s1_c)]
        m.d.comb += [match.wr_data.sq[i].eq(Mux(qv[i], sq[i], INVALID)) for i in range(R)]
        m.d.comb += [match.wr_data.sk[j].eq(Mux(kv[j], sk[j], INVALID)) for j in range(C)]
        if per_group:
            window_need_bits(m, match, needs, cfg)
    else:
        for i, e in enumerate(rows):
            m.d.sync += [
                array.row_in[i].a.eq(e.x),
                array.row_in[i].valid.eq(s1_valid & s1_steps & e.valid),
                array.row_in[i].clear.eq(s1_valid & (s1_first | s1_flush)),
                array.row_in[i].drain.eq(s1_valid & s1_drain),
            ]
        for j, e in enumerate(cols):
            m.d.sync += [array.col_in[j].eq(e.x), array.col_valid[j].eq(e.valid)]
