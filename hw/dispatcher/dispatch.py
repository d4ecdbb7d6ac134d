"""The dispatcher interface: what the engine's sequencer and operand stage see of
the unit that picks each slot's channel steps, whichever unit it is.

A dispatcher keeps, while pass A reads every channel, each channel's table entry
(the reuse states of the tile group's rows and columns), and in each slot of a
pass B, C or D it is given, per group, the channels still to take. It answers
with the channels the slot reads, what each group takes from them, and what is
left. The engine reads one buffer word per position, routes each group's steps
to it, and keeps ``rest`` for the next slot. A dispatcher may also keep state
of its own across a pass's slots (``opening`` and ``advance`` say when), and
spend slots that issue nothing: the first slot of a pass the matcher pairs is one.

A group is what takes its steps together. A dispatcher of one group (the
in-order one, the matcher) has the whole array take the same steps; the channel
window has a group per column (passes B, D) or row (pass C).

``hw.dispatcher.dispatchers`` names every dispatcher; adding one is a component
(subclassing :class:`Dispatcher` and naming its golden model) registered
there, its golden model in ``golden.dispatchers``, and a test.
"""

from __future__ import annotations

from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.config import Config, require_config
from golden.matcher import PAIRED_MODES
from golden.pe_encoding import Mode

__all__ = ["Dispatcher", "DispatchSignature", "state_entry", "choice_layout"]


def state_entry(rows: int, cols: int) -> data.StructLayout:
    """One channel's table entry: the states of the tile group's rows and columns."""
    return data.StructLayout({"sq": data.ArrayLayout(2, rows), "sk": data.ArrayLayout(2, cols)})


def choice_layout(width: int) -> data.StructLayout:
    """One group's steps in a slot: which of them are present, and their positions."""
    return data.StructLayout({"take": 2, "sel": data.ArrayLayout(range(max(2, width)), 2)})


class DispatchSignature(wiring.Signature):
    """The ports of a dispatcher that reads ``width`` channels a slot for ``groups``
    groups (see :class:`Dispatcher`'s members), and how its steps reach the array.

    Parameters
    ----------
    cfg : Config
        Gives ``group_width`` (the channel sets and table entries), ``rows`` and
        ``cols`` (each entry's states).
    width, groups : int
        Channels read a slot, and groups that take their own steps.
    per_group : bool
        Each group picks its own steps from the words read, rather than every
        row and column taking the same ones.

    The engine routes by these properties, never by the unit's name: per group,
    or every row and column taking the same step and, where ``paired``, a second
    one on the other byte.
    """

    def __init__(self, cfg: Config, width: int, groups: int, per_group: bool = False):
        if width < 1 or groups < 1:
            raise ValueError(f"a dispatcher reads at least one channel for one group, not {width} for {groups}")
        self._shape = (cfg.group_width, cfg.rows, cfg.cols, width, groups, bool(per_group))
        G = cfg.group_width
        chan = range(max(2, G))
        super().__init__({
            "wr_en": In(1), "wr_chan": In(chan), "wr_data": In(state_entry(cfg.rows, cfg.cols)),
            "mode": In(Mode), "single": In(1),
            "wr_need": In(len(PAIRED_MODES)),
            "opening": In(1), "advance": In(1), "recorded": In(G),
            "sets": In(G).array(groups),
            "found": Out(1).array(width), "chan": Out(chan).array(width),
            "choice": Out(choice_layout(width)).array(groups),
            "rest": Out(G).array(groups),
            "more": Out(1),
        })

    @property
    def width(self) -> int:
        return self._shape[3]

    @property
    def groups(self) -> int:
        return self._shape[4]

    @property
    def per_group(self) -> bool:
        return self._shape[5]

    @property
    def paired(self) -> bool:
        """Every row and column takes the same steps, two a slot on the two bytes."""
        return self.width > 1 and not self.per_group

    def __eq__(self, other):
        return type(other) is type(self) and other._shape == self._shape

    def __hash__(self):
        return hash(self._shape)

    def __repr__(self):
        G, R, C, W, NG, per_group = self._shape
        return f"DispatchSignature(group_width={G}, rows={R}, cols={C}, width={W}, groups={NG}, per_group={per_group})"


class Dispatcher(wiring.Component):
    """What every dispatcher is: a component with a :class:`DispatchSignature`'s ports.

    Parameters
    ----------
    cfg : Config
        Takes ``group_width`` (table entries, set bits), ``rows`` and ``cols``.
    width : int
        Channels the dispatcher may read in one slot (the engine's read ports).
    groups : int
        Groups that take their own steps (1: the whole array takes the same).

    Members
    -------
    wr_en, wr_chan, wr_data : In(1), In(range(group_width)), In(state_entry(rows, cols))
        Write channel ``wr_chan``'s entry this cycle (pass A): each row's and
        column's reuse state on it (``hw.dispatcher.matcher.INVALID`` for one the tile group
        lacks). A dispatcher that needs no states ignores it.
    mode : In(Mode)
        The pass being run.
    single : In(1)
        One step a slot: the lowest channel only, taken by every group that
        needs it (an unpaired pass, or one the PE cannot pair).
    opening : In(1)
        The pass's first slot (it lasts until it issues): ``sets`` is the pass's whole set.
    advance : In(1)
        The slot issues this cycle (what it takes is gone by the next).
    wr_need : In(len(golden.matcher.PAIRED_MODES))
        With the write, bit ``k``: the channel written is in the set of pass
        ``PAIRED_MODES[k]`` (it needs a step there). Pass A writes its channels in
        order from channel 0, so a write of channel 0 begins a new tile group's table.
    recorded : In(group_width)
        At a pass's first slot, its whole set, from a register. A dispatcher that
        keeps registers of its own (the matcher) loads them from it and the writes.
    sets : In(group_width).array(groups)
        Each group's channels still to take, one bit each.
    found, chan : Out(1).array(width), Out(range(group_width)).array(width)
        The channels the slot reads, in order: ``found[w]`` says position ``w``
        holds one; position 0 is the channel issued first (the built-in units: the
        lowest any group needs).
    choice : Out(choice_layout(width)).array(groups)
        Each group's steps: ``take`` bit ``k`` marks step ``k``, ``sel[k]`` its position.
    rest : Out(group_width).array(groups)
        ``sets`` without what each group takes this slot.
    more : Out(1)
        Some group has channels left after this slot.
    """

    #: Each group picks its own steps from the words read (the channel window's PEs
    #: select among them), rather than every row and column taking the same ones;
    #: so even with one group (a 1x1 array) the operands are routed per group.
    per_group = False

    #: The golden model it implements (a :class:`golden.dispatchers.DispatcherModel`):
    #: its name, knobs and slot model, which the engine's cycles must equal.
    model = None

    def __init__(self, cfg: Config, width: int, groups: int):
        self.cfg = require_config(cfg, self)
        self.width, self.groups = width, groups
        super().__init__(DispatchSignature(cfg, width, groups, type(self).per_group))
