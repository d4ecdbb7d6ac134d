"""The attention engine's sequencer (S0): it walks channel groups, tile groups
and passes, has the dispatcher pick each slot's channel(s), applies the drain
rule of :mod:`golden.drain`, addresses the operand buffers and fills the slot
register ``s1`` that the operand stage (S1, :mod:`hw.core.operand_stage`) turns into the
array's edge bundles.

It is built in stages, each a method of :class:`Sequencer`, in the order the
controller's logic flows: its registers, the need sets pass A records, the sets
the dispatcher is given, the drain rule and the slot it issues, where the
controller goes when a pass ends, and the start, flush and pass-end control.
Registers one stage makes and a later one reads are the sequencer's attributes.
"""

from __future__ import annotations

from amaranth import Array, Cat, Const, Mux, Signal

from golden.drain import drain_spacing, tail_cycles
from golden.pe_encoding import Mode, Need

from ..dispatcher.channel_window import group_count
from ..dispatcher.prefix import at_least

__all__ = ["Sequencer", "NeedBits", "need_bits", "routing", "dense_pass_of", "GROUP_SLOTS", "MAX_PARTNERS"]

GROUP_SLOTS = 3          # channel groups the controller can be given
MAX_PARTNERS = 3         # linear: partners of a window's reference (windows of up to 4 tokens)


def dense_pass_of(mode):
    """A pass that streams every channel, one per slot: A (and the dense tile) or LINEAR."""
    return (mode == Mode.A) | (mode == Mode.LINEAR)


def routing(match) -> tuple[bool, bool]:
    """How a dispatcher's steps reach the array: ``(per_group, paired)``. Per group,
    each column or row picks its own from the words read; otherwise every row and
    column takes the same step, and with ``paired`` a second one on the other byte."""
    return match.signature.per_group, match.signature.paired


class NeedBits:
    """What the two stages share about the need bits pass A records: the read
    ports of the state planes the sequencer records them from (Kaleido), and
    whether S1 holds a pass A step, whose table entry the dispatcher writes now
    (``a_in_s1``). With a channel window, also each group's bit of the channel
    in S1 (columns for B and D, rows for C; ``groups``), and each group's
    recorded set with it bypassed (``group_now``)."""

    def __init__(self, groups: int, channels: int):
        self.a_in_s1 = Signal()
        self.q_plane = self.k_plane = None          # the state planes' read ports (Kaleido)
        self.groups = [[Signal(name=f"bit_{p}{g}") for g in range(groups)] for p in "BCD"]
        self.group_now = [[Signal(channels, name=f"group_now_{p}{g}") for g in range(groups)] for p in "BCD"]


def need_bits(qs, ks, kind) -> list:
    """A channel's need bits for passes B, C and D, from the states present in its
    row word (``qs``) and column word (``ks``): B needs it when a column is not a
    full reuse, C when a row is not, and D when a row and a column meet whose pair
    the lane table of the PE's ``kind`` gives work in D (the paper's PE still computes (2,2) and
    (2,1) there; the exact PE only pairs where neither side is a full reuse)."""
    d_work = Const(0)
    for a in range(3):
        for b in range(3):
            if kind.step_need(Mode.D, a, b)[0] != Need.NONE:
                d_work = d_work | (qs[a] & ks[b])
    return [ks[1] | ks[0], qs[1] | qs[0], d_work]


class Sequencer:
    """S0 of ``engine`` (an :class:`hw.core.engine.AttentionEngine`), built into ``m``:
    it fills ``s1`` from the buffers' ``reads`` and the dispatcher ``match``,
    recording pass A's need bits through ``needs``."""

    def __init__(self, engine, m, s1, needs: NeedBits, reads, match):
        self.engine, self.m, self.s1, self.needs, self.reads, self.match = engine, m, s1, needs, reads, match
        cfg = engine.cfg
        self.cfg, self.kaleido = cfg, engine.design == "kaleido"
        self.G = cfg.group_width if self.kaleido else 1      # channels a pass B-D chooses from
        self.per_group, self.paired = routing(match)

    def build(self) -> None:
        self._registers()
        self._need_sets()
        self._dispatch_sets()
        self._issue()
        self._pass_end()
        self._next_set()
        self._control()

    def _registers(self):
        """The controller's position: group, tile group, pass, channel; and the
        group's own figures, registered as the group changes."""
        e, cfg, kaleido, G = self.engine, self.cfg, self.kaleido, self.G
        CH = e.channels
        self.dense = e.dense if kaleido else Const(1)
        # Linear layers: a tile group is a LINEAR pass, then one pass B per partner.
        self.linear = (e.linear & ~e.dense) if kaleido else Const(0)

        running = Signal()           # issuing slots
        flushing = Signal()          # the final drain slot is being issued
        draining = Signal(range(tail_cycles(cfg.rows, cfg.cols, cfg.pe_stages) + 1))
        very_first = Signal()        # no finished score to drain yet
        g = Signal(range(GROUP_SLOTS))
        qt = Signal(range(e.q_words + 1))
        kt = Signal(range(e.k_words + 1))
        q_tile = Signal(range(e.q_words))         # buffer address of the tile's channel 0
        k_tile = Signal(range(e.k_words))
        pss = Signal(Mode)                        # pass: A, B, C, D (kaleido); A (dense); LINEAR, B (linear)
        dense_pass = Signal()                     # pss streams every channel (set with pss: it steers every slot)
        part = Signal(range(MAX_PARTNERS))        # linear: the partner pass B serves
        k_off = Signal(range(e.k_words))          # linear: that partner's words, past the tile's first
        first_slot = Signal(init=1)               # the pass's first slot (its hand-over and drain)
        chan = Signal(range(CH + 1))              # pass A / dense: next channel
        need = [Signal(G, name=f"need_{p}") for p in "BCD"]
        self.running, self.flushing, self.draining, self.very_first = running, flushing, draining, very_first
        self.g, self.qt, self.kt, self.q_tile, self.k_tile = g, qt, kt, q_tile, k_tile
        self.pss, self.dense_pass, self.part, self.k_off = pss, dense_pass, part, k_off
        self.first_slot, self.chan, self.need = first_slot, chan, need

        self._arrays = (Array(e.dg), Array(e.q_tiles), Array(e.k_tiles), Array(e.q_base), Array(e.k_base),
                        Array(e.partners if kaleido else [Const(0, 2)] * GROUP_SLOTS))
        # The group's own figures, and the next group's first words, registered as
        # the group changes (the ports hold still through a run), so that no path
        # goes through a multiplexer indexed by ``g``.
        dg = Signal(range(CH + 1))
        group = {"q_tiles": Signal.like(e.q_tiles[0]), "k_tiles": Signal.like(e.k_tiles[0]),
                 "partners": Signal(range(MAX_PARTNERS + 1)), "k_base": Signal.like(e.k_base[0]),
                 "next_q_base": Signal.like(e.q_base[0]), "next_k_base": Signal.like(e.k_base[0])}
        self.dg, self.group = dg, group
        next_group = Signal()                     # this pass's end starts the next group
        self.next_group = next_group

    def _load_group(self, index):
        """The registers of group ``index`` (an expression of the registers now)."""
        dg_of, q_tiles, k_tiles, q_base, k_base, partners = self._arrays
        group = self.group
        return [self.dg.eq(dg_of[index]), group["q_tiles"].eq(q_tiles[index]), group["k_tiles"].eq(k_tiles[index]),
                group["partners"].eq(partners[index]), group["k_base"].eq(k_base[index]),
                group["next_q_base"].eq(q_base[index + 1]), group["next_k_base"].eq(k_base[index + 1])]

    def _need_sets(self):
        """Pass A records which channels B, C and D need, from the state planes, in
        the cycle each channel issues, from none: a pass A (or LINEAR) clears them
        as it begins, so a channel the group does not have is never needed."""
        m, cfg, needs, s1, G = self.m, self.cfg, self.needs, self.s1, self.G
        dg, chan, need = self.dg, self.chan, self.need
        dg_mask = Signal(G)
        m.d.comb += dg_mask.eq((Const(1, G + 1) << dg) - 1)
        # The same, registered, for a pass that streams every channel of the group
        # (a linear partner beyond the PE's registers): it comes two passes or more
        # after the group begins, and the mask then stays off the dispatcher's paths.
        all_of_group = Signal(G)
        m.d.sync += all_of_group.eq(dg_mask)
        onehot = Signal(G)
        m.d.comb += onehot.eq(Mux(needs.a_in_s1, Const(1, G) << s1.chan, 0))
        records = Signal()              # this cycle starts a pass A or LINEAR
        recording = Signal()            # this cycle issues a channel of it
        bits = [Signal(name=f"bit_{p}") for p in "BCD"]
        last_bits = [Signal(name=f"last_bit_{p}") for p in "BCD"]    # the channel recorded last
        if self.kaleido:
            m.d.comb += [needs.q_plane.addr.eq(self.q_tile + chan),
                         needs.k_plane.addr.eq(self.k_tile + self.k_off + chan)]
            m.d.comb += [b.eq(x) for b, x in zip(bits, need_bits(needs.q_plane.data, needs.k_plane.data,
                                                                 cfg.pe.kind))]
        # Each set's value after this cycle's clear and record, for the pass set below.
        need_next = [Signal(G, name=f"need_next_{p}") for p in "BCD"]
        recorded_bit = Signal(G)
        m.d.comb += recorded_bit.eq(Mux(recording, Const(1, G) << chan, 0))
        for p in range(3):
            m.d.comb += need_next[p].eq((Mux(records, 0, need[p]) & ~recorded_bit) | Mux(bits[p], recorded_bit, 0))
            m.d.sync += need[p].eq(need_next[p])
            with m.If(recording):
                m.d.sync += last_bits[p].eq(bits[p])
            if self.per_group:
                # Each group's own set, recorded the same way.
                for gr in range(group_count(cfg)):
                    recorded = Signal(G, name=f"group_set_{'BCD'[p]}{gr}")
                    bit = needs.groups[p][gr]
                    m.d.comb += needs.group_now[p][gr].eq(
                        ((recorded & ~onehot) | Mux(bit, onehot, 0)) & dg_mask)
                    with m.If(needs.a_in_s1):
                        m.d.sync += recorded.bit_select(s1.chan, 1).eq(bit)
        self.all_of_group, self.records, self.recording = all_of_group, records, recording
        self.last_bits, self.need_next, self.bits, self.recorded_bit = last_bits, need_next, bits, recorded_bit

    def _beyond_registers(self, partner):
        """A linear partner the PE has no register for (the 3-register PE's third)
        runs as a whole product on every channel, from R0 = 0 (golden.windows)."""
        return self.linear & (partner >= self.cfg.accumulators - 1)

    def _dispatch_sets(self):
        """What the dispatcher is given each slot, and what it answers."""
        m, match, needs, G, kaleido = self.m, self.match, self.needs, self.G, self.kaleido
        pss, last_bits = self.pss, self.last_bits
        beyond = Signal()
        if kaleido:                 # (the baseline has no linear passes, nor a Kaleido PE's registers)
            m.d.comb += beyond.eq(self._beyond_registers(self.part))
        # The set of the pass being run, registered as the pass before it ends (with
        # that cycle's record), so that no pass decode sits on the dispatcher's paths.
        pass_set = Signal(G)
        # The dispatcher is given, per group, the channels still to take: at a pass's
        # first slot the pass's set (each group's own, with a group per column or row,
        # unless the pass streams one step a slot), after it what it left.
        single = Signal()
        m.d.comb += single.eq((self.engine.unpaired | beyond) if kaleido else 1)
        rest = [Signal(G, name=f"rest{gr}") for gr in range(match.groups)]
        for gr in range(match.groups):
            if self.per_group:
                recorded = Mux(pss == Mode.C, needs.group_now[1][gr],
                               Mux(pss == Mode.D, needs.group_now[2][gr], needs.group_now[0][gr]))
                first = Mux(single, pass_set, recorded)
            else:
                first = pass_set
            m.d.comb += match.sets[gr].eq(Mux(self.first_slot, first, rest[gr]))
        m.d.comb += [match.mode.eq(pss), match.single.eq(single)]
        # A dispatcher with registers of its own loads them from the recorded set,
        # and from the table's writes with their channels' need bits (those of the
        # channel S1 holds, recorded a cycle before), and moves them on as slots issue.
        m.d.comb += [match.recorded.eq(pass_set), match.wr_need.eq(Cat(*last_bits))]
        found, first_left = match.found[0], match.chan[0]
        pair = Signal()                           # this slot issues two steps
        if self.paired:
            m.d.comb += pair.eq(match.choice[0].take[1] & ~self.dense_pass)
        have = Signal()
        c = Signal(range(max(2, self.engine.channels)))
        more = Signal()
        single_more = Signal()          # an unpaired pass has steps left (_single_count)
        self.single_more = single_more
        m.d.comb += [
            have.eq(Mux(self.dense_pass, self.chan < self.dg, found)),
            c.eq(Mux(self.dense_pass, self.chan, first_left)),
            more.eq(Mux(self.dense_pass, self.chan + 1 < self.dg, Mux(single, single_more, match.more))),
        ]
        issue = Signal()
        m.d.comb += issue.eq(self.running & ~self.flushing)
        self.pass_set, self.rest, self.pair, self.have, self.c, self.more, self.issue = \
            pass_set, rest, pair, have, c, more, issue

    def _issue(self):
        """The drain rule of golden.drain, and the slot that issues into ``s1``: a
        slot that drains waits (issues nothing) while the last drain of its parity
        is fewer than ``2R`` slots ago."""
        m, match, s1, needs = self.m, self.match, self.s1, self.needs
        spacing = drain_spacing(self.cfg.rows)
        issue, first_slot, dense_pass = self.issue, self.first_slot, self.dense_pass
        parity = Signal()
        cool = [Signal(range(spacing), name=f"cool_{p}") for p in "eo"]
        want_drain = Signal()
        wait = Signal()
        m.d.comb += [
            want_drain.eq(self.flushing | (issue & first_slot & ~(dense_pass & self.very_first))),
            wait.eq(want_drain & Mux(parity, cool[1] != 0, cool[0] != 0)),
        ]
        with m.If(self.running):
            m.d.sync += parity.eq(~parity)
        for p, counter in enumerate(cool):
            with m.If(want_drain & ~wait & (parity == p)):
                m.d.sync += counter.eq(spacing - 1)
            with m.Elif(counter != 0):
                m.d.sync += counter.eq(counter - 1)
        go = Signal()                             # the slot issues (a step, a drain, or both)
        m.d.comb += go.eq((issue | self.flushing) & ~wait)
        have, c = self.have, self.c
        m.d.comb += [match.opening.eq(issue & first_slot), match.advance.eq(go & issue),
                     self.records.eq(go & issue & first_slot & dense_pass),
                     # (``have`` is ``chan < dg`` in a pass that streams every channel: said
                     # directly, so that no record waits on the dispatcher's search ``have`` muxes in.)
                     self.recording.eq(go & issue & (self.chan < self.dg) & dense_pass & ~self.dense)]

        q_tile, k_tile, k_off = self.q_tile, self.k_tile, self.k_off
        (qr, kr), *partner = self.reads
        m.d.comb += [qr.addr.eq(q_tile + c), kr.addr.eq(k_tile + k_off + c)]
        for w, (qw, kw) in enumerate(partner, start=1):
            m.d.comb += [qw.addr.eq(q_tile + match.chan[w]), kw.addr.eq(k_tile + k_off + match.chan[w])]
        if self.per_group:
            # A pass that streams every channel puts its step at position 0 for all.
            for gr in range(match.groups):
                with m.If(dense_pass):
                    m.d.sync += [s1.choice[gr].take.eq(0b01), s1.choice[gr].sel[0].eq(0), s1.choice[gr].sel[1].eq(0)]
                with m.Else():
                    m.d.sync += s1.choice[gr].eq(match.choice[gr])
        if self.paired:
            m.d.sync += s1.pair.eq(go & issue & have & self.pair)
        m.d.sync += [s1.valid.eq(go), s1.steps.eq(go & issue & have),
                     s1.first.eq(go & issue & first_slot), s1.mode.eq(self.pss), s1.part.eq(self.part), s1.chan.eq(c),
                     s1.flush.eq(self.flushing), s1.drain.eq(want_drain & ~wait)]
        if self.kaleido:
            # Pass A records the needs of B-D; a dense tile has no passes after it.
            m.d.comb += needs.a_in_s1.eq(s1.valid & s1.steps & ((s1.mode == Mode.A) | (s1.mode == Mode.LINEAR))
                                         & ~self.dense)
        self.parity, self.cool, self.go = parity, cool, go

    def _pass_end(self):
        """Where the controller goes when a pass ends: worked out from its registers
        alone, every cycle, so that the pass's end (``more``, the dispatcher's
        latest answer) only picks it."""
        m, group, linear, dense = self.m, self.group, self.linear, self.dense
        pss, part, k_off, kt, k_tile, qt, q_tile, g = (self.pss, self.part, self.k_off, self.kt, self.k_tile,
                                                       self.qt, self.q_tile, self.g)
        dg, next_group = self.dg, self.next_group
        kept = (pss, part, k_off, kt, k_tile, qt, q_tile, g)
        ends = [Signal.like(x, name=f"{x.name}_at_end") for x in kept]
        at_end = {x.name: e for x, e in zip(kept, ends)}
        done = Signal()                           # and the last tile group's last pass is over
        m.d.comb += [e.eq(x) for x, e in zip(kept, ends)]
        next_tile = Signal()
        with m.If(linear):
            with m.If((pss == Mode.LINEAR) & (group["partners"] != 0)):
                m.d.comb += [at_end["pss"].eq(Mode.B), at_end["part"].eq(0)]
            with m.Elif((pss == Mode.B) & (part + 1 < group["partners"])):
                # The next partner's words follow this one's.
                m.d.comb += [at_end["part"].eq(part + 1), at_end["k_off"].eq(k_off + dg)]
            with m.Else():
                m.d.comb += next_tile.eq(1)
        with m.Else():
            with m.If(pss != Mode.D):
                m.d.comb += at_end["pss"].eq(pss + 1)
            m.d.comb += next_tile.eq((pss == Mode.D) | dense)
        with m.If(next_tile):
            m.d.comb += [at_end["pss"].eq(Mux(linear, Mode.LINEAR, Mode.A)), at_end["part"].eq(0),
                         at_end["k_off"].eq(0)]
            with m.If(kt + 1 < group["k_tiles"]):
                m.d.comb += [at_end["kt"].eq(kt + 1), at_end["k_tile"].eq(k_tile + k_off + dg)]
            with m.Elif(qt + 1 < group["q_tiles"]):
                m.d.comb += [at_end["kt"].eq(0), at_end["k_tile"].eq(group["k_base"]),
                             at_end["qt"].eq(qt + 1), at_end["q_tile"].eq(q_tile + dg)]
            with m.Elif(g + 1 < self.engine.groups):
                m.d.comb += [at_end["kt"].eq(0), at_end["qt"].eq(0), at_end["g"].eq(g + 1), next_group.eq(1),
                             at_end["k_tile"].eq(group["next_k_base"]), at_end["q_tile"].eq(group["next_q_base"])]
            with m.Else():
                m.d.comb += done.eq(1)
        self.kept, self.ends, self.at_end, self.done = kept, ends, at_end, done

    def _next_set(self):
        """The set of the pass after this one (``pass_set``), and whether it holds two
        channels or more, registered every cycle past a pass's first slot, so that
        the pass's end (``more``) does not steer them; an unpaired pass's end comes
        from those counts, kept as registers, rather than from counting its set."""
        m, G = self.m, self.G
        if not self.kaleido:
            m.d.comb += self.single_more.eq(self.match.more)
            return
        at_end = self.at_end
        next_pss, next_beyond = at_end["pss"], self._beyond_registers(at_end["part"])
        # At least two in each need set after this cycle's record, from the set before
        # it (a tree on registers) and the one channel it may add.
        many_next = []
        for p in range(3):
            base = Signal(G, name=f"need_kept_{'BCD'[p]}")
            m.d.comb += base.eq(Mux(self.records, 0, self.need[p]) & ~self.recorded_bit)
            counts = at_least(m, base, G, 2, f"need_{'BCD'[p]}")
            many_next.append(counts[1] | (counts[0] & self.bits[p] & self.recording))
        whole = at_least(m, self.all_of_group, G, 2, "group")[1]
        pass_many = Signal()
        with m.If(~self.first_slot | (self.issue & self.go)):
            m.d.sync += [
                self.pass_set.eq(Mux(next_beyond, self.all_of_group,
                                     Mux(next_pss == Mode.B, self.need_next[0],
                                         Mux(next_pss == Mode.C, self.need_next[1], self.need_next[2])))),
                pass_many.eq(Mux(next_beyond, whole,
                                 Mux(next_pss == Mode.B, many_next[0],
                                     Mux(next_pss == Mode.C, many_next[1], many_next[2])))),
            ]
        if self.per_group:
            m.d.comb += self.single_more.eq(self.match.more)
            return
        # An unpaired pass takes the lowest channel a slot: two or more are left
        # after a slot that issues when three or more were given to it.
        given = at_least(m, self.match.sets[0], G, 3, "given")
        many = Signal()
        m.d.sync += many.eq(Mux(self.match.advance, given[2], given[1]))
        m.d.comb += self.single_more.eq(Mux(self.first_slot, pass_many, many))

    def _control(self):
        """Start, the final flush, a pass's end, and the tail's drain."""
        m, e, cfg = self.m, self.engine, self.cfg
        running, flushing, draining, go = self.running, self.flushing, self.draining, self.go
        first_slot, chan, at_end = self.first_slot, self.chan, self.at_end
        with m.If(e.start & ~running & ~e.busy):
            m.d.sync += [running.eq(1), self.very_first.eq(1), self.g.eq(0), self.qt.eq(0), self.kt.eq(0),
                         self.q_tile.eq(e.q_base[0]), self.k_tile.eq(e.k_base[0]), self.k_off.eq(0),
                         self.part.eq(0), self.pss.eq(Mux(self.linear, Mode.LINEAR, Mode.A)), first_slot.eq(1),
                         chan.eq(0), self.parity.eq(0)]
            m.d.sync += [*self._load_group(Const(0, 1)), self.dense_pass.eq(1)]
            m.d.sync += [counter.eq(0) for counter in self.cool]
        with m.If(flushing & go):
            m.d.sync += [flushing.eq(0), running.eq(0), draining.eq(tail_cycles(cfg.rows, cfg.cols, cfg.pe_stages))]
        with m.Elif(self.issue & go):
            m.d.sync += first_slot.eq(0)
            with m.If(self.dense_pass):
                # ``have`` is ``chan < dg`` here; said directly, so that the counter does not
                # sit (for timing) behind the dispatcher's search that ``have`` muxes in.
                m.d.sync += chan.eq(chan + (chan < self.dg))
            with m.Else():
                m.d.sync += [r.eq(self.match.rest[gr]) for gr, r in enumerate(self.rest)]
            with m.If(~self.more):                # the pass's last slot
                m.d.sync += [first_slot.eq(1), chan.eq(0), self.very_first.eq(0), flushing.eq(self.done)]
                m.d.sync += [x.eq(end) for x, end in zip(self.kept, self.ends)]
                m.d.sync += self.dense_pass.eq(dense_pass_of(at_end["pss"]))
                with m.If(self.next_group):
                    m.d.sync += self._load_group(self.g + 1)
        with m.If(draining != 0):
            m.d.sync += draining.eq(draining - 1)
        m.d.comb += e.busy.eq(running | (draining != 0))
