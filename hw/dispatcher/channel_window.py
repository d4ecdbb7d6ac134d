"""The channel-window dispatcher (``Config.issue_window``; :mod:`golden.channel_window`).

In its place of the matcher, it keeps the same table (each valid row's and
column's reuse state per channel, written while pass A reads every channel).
Each cycle of pass B, C or D it finds the window, the first ``W`` channels
that some group (a column in B and D, a row in C) still needs, and gives each
group its steps: the first window channel the group needs, and the first later
one whose lanes fit beside it in every PE of the group. The engine reads the
``W`` channels' words, lets each group pick its bytes from them, and removes
what each group took from its set.
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal, Value

from golden import dispatchers as models
from golden.channel_window import row_groups
from golden.config import Config, require_config
from golden.pe_encoding import Mode

from .dispatch import Dispatcher, state_entry
from .matcher import lane_masks, pe_masks, state_table
from .prefix import at_least, lowest_onehot, lowest_set, lowest_sets, select

__all__ = ["ChannelWindow", "group_count", "rows_choose"]


def group_count(cfg: Config) -> int:
    """Groups the window serves: the columns (B, D) or the rows (C), whichever are more."""
    return max(cfg.rows, cfg.cols)


def rows_choose(mode) -> Value:
    """1 where the pass ``mode`` (a signal) lets the rows choose (pass C), 0 where
    the columns do (:func:`golden.channel_window.row_groups`)."""
    return Cat(*(mode == m for m in Mode if row_groups(m))).any()


class ChannelWindow(Dispatcher):
    """Window of channel steps, and each group's choice from it.

    Parameters
    ----------
    cfg : Config
        Takes ``group_width`` (table entries), ``rows`` and ``cols``,
        ``accumulators`` (the PE's lane table) and ``issue_window`` (``W``).

    Members
    -------
    wr_en, wr_chan, wr_data : In
        Write a channel's entry, as :class:`hw.dispatcher.matcher.Matcher`'s.
    mode : In(Mode)
        The pass: B and D let the columns choose, C the rows.
    single : In(1)
        One step a slot: the lowest channel only, and every group that needs it
        takes it (an unpaired pass, or one that streams every channel).
    sets : In(group_width).array(groups)
        Each group's channels still to take (group ``g``: column ``g`` in B and
        D, row ``g`` in C; a group beyond the array's rows or columns passes 0).
    found, chan : Out(1).array(W), Out(range(group_width)).array(W)
        The window: its channels in order (``found[w]``: position ``w`` holds one).
    choice : Out(choice_layout(W)).array(groups)
        Each group's steps: ``take`` bit ``k`` marks step ``k``, ``sel[k]`` its window position.
    rest : Out(group_width).array(groups)
        ``sets`` without what each group takes this cycle.
    more : Out(1)
        Some group has channels left after this cycle.
    """

    model = models.ChannelWindow

    per_group = True

    def __init__(self, cfg: Config):
        if require_config(cfg, self).issue_window < 2:
            raise ValueError("a channel window needs Config.issue_window of 2 or more")
        super().__init__(cfg, width=cfg.issue_window, groups=group_count(cfg))

    def elaborate(self, platform):
        m = Module()
        cfg = self.cfg
        G, R, C, W, NG = cfg.group_width, cfg.rows, cfg.cols, cfg.issue_window, group_count(cfg)
        table = state_table(m, self, G, state_entry(R, C))
        lanes = lane_masks(m, self.mode, cfg.pe.kind)
        by_rows = Signal()
        m.d.comb += by_rows.eq(rows_choose(self.mode))

        # The window: the lowest W channels of the union of the groups' sets, every
        # rank at once (as the matcher finds its window), entries read by position.
        union = Signal(G)
        m.d.comb += union.eq(Cat(*(Cat(*(s[c] for s in self.sets)).any() for c in range(G))))
        entries, onehots = [], []
        for w, (found, idx, onehot) in enumerate(lowest_sets(m, union, G, W, "win")):
            m.d.comb += [self.found[w].eq(found), self.chan[w].eq(idx)]
            onehots.append(onehot)
            entry = select(m, table, onehot, G, state_entry(R, C), f"win{w}_entry")
            entries.append(pe_masks(m, entry, lanes, R, C, f"win{w}"))

        def group_bits(mask, g):
            """The bits of a row-major PE mask that belong to group ``g``, for either orientation."""
            col = Cat(*(mask[i * C + g] for i in range(R))) if g < C else Const(0, R)
            row = Cat(*(mask[g * C + j] for j in range(C))) if g < R else Const(0, C)
            return col, row

        more = []
        for g in range(NG):
            # has[w]: the group still needs window channel w (read by its one-hot code:
            # no index to decode on the way).
            has = [Signal(name=f"g{g}_has{w}") for w in range(W)]
            for w in range(W):
                m.d.comb += has[w].eq((self.sets[g] & onehots[w]).any() & (~self.single | (w == 0)))
            first_ok, first = lowest_set(m, Cat(*has), W, f"g{g}_first")
            # fits[a][b]: window channels a < b share every PE of the group.
            some = [group_bits(entries[w][0], g) for w in range(W)]
            whole = [group_bits(entries[w][1], g) for w in range(W)]

            def fits(a, b):
                clash = [(whole[a][o] & some[b][o]) | (some[a][o] & whole[b][o]) for o in range(2)]
                return ~Mux(by_rows, clash[1].any(), clash[0].any())

            second_ok = Signal(name=f"g{g}_second_ok")
            second = Signal(range(max(2, W)), name=f"g{g}_second")
            # The window positions the group takes, one-hot, for what it leaves. Each is
            # a signal: an Amaranth expression is a tree, and every use of one would
            # emit its logic again (the table below reads them once per channel).
            first_at = Signal(W, name=f"g{g}_first_at")
            m.d.comb += first_at.eq(lowest_onehot(Cat(*has), W))
            second_at = Signal(W, name=f"g{g}_second_at")
            for a in range(W):
                # The first later channel the group needs that fits beside the first.
                cand = Signal(W, name=f"g{g}_after{a}_fits")
                m.d.comb += cand.eq(Cat(*((has[b] & fits(a, b)) if b > a else Const(0) for b in range(W))))
                ok, idx = lowest_set(m, cand, W, f"g{g}_after{a}")
                with m.If(first_ok & (first == a)):
                    m.d.comb += [second_ok.eq(ok), second.eq(idx)]
                    m.d.comb += second_at.eq(lowest_onehot(cand, W))
            choice = self.choice[g]
            m.d.comb += [choice.take.eq(Cat(first_ok, second_ok)), choice.sel[0].eq(first),
                         choice.sel[1].eq(second)]
            took = Signal(W, name=f"g{g}_took")
            m.d.comb += took.eq(first_at | second_at)
            taken = Cat(*(Cat(*(onehots[w][c] & took[w] for w in range(W))).any() for c in range(G)))
            m.d.comb += self.rest[g].eq(self.sets[g] & ~taken)
            # Whether the group has any left does not wait for the rest: it takes one or
            # two distinct channels of its set, so it has more than it takes.
            count = at_least(m, self.sets[g], G, 3, f"g{g}_steps")
            more.append(Mux(second_ok, count[2], Mux(first_ok, count[1], count[0])))
        m.d.comb += self.more.eq(Cat(*more).any())
        return m
