"""Every dispatcher by name: what each declares, and which one a design point has.

A dispatcher decides which channel steps a pass of B, C or D issues in each slot.
Each is a :class:`DispatcherModel` subclass that declares everything another
layer needs of it: its name, where it stands (without a matcher, or in the
matcher's place), the knobs it reads, its slot model (exact, and batched over
many tile groups for the chip model), the PE the array is built of beside it
and the block that prices it at sign-off. No other module matches on a
dispatcher's name: they ask :func:`design_blocks` or the class.

Adding a dispatcher is this model (a class registered with :func:`register`),
its component (a :class:`hw.dispatcher.dispatch.Dispatcher` registered in
:mod:`hw.dispatcher.dispatchers`) and a test. A design point names it with
``Config.dispatcher``; left empty, a variant with a matcher gets the last
registered unit that :meth:`~DispatcherModel.claims` it (the channel window
when ``issue_window`` is set, else the matcher).
"""

from __future__ import annotations

from typing import Callable, ClassVar, NamedTuple

import numpy as np

from .channel_window import window_slots
from .matcher import match, match_slots, paired_pass_slots
from .registry import claim

# ``cfg`` below is always a design point (:class:`golden.config.Config`), left
# unannotated: the design point imports this registry, not the other way round.

__all__ = ["DispatcherModel", "DISPATCHERS", "register", "dispatcher_of", "dispatched_slots", "DesignBlocks",
           "design_blocks", "InOrder", "Matcher", "ChannelWindow"]


class DispatcherModel:
    """A dispatcher as every layer sees it; subclass, declare, :func:`register`.

    Attributes
    ----------
    name : str
        Its registry key, and the ``Config.dispatcher`` value that picks it.
    paired : bool
        True: it stands in the matcher's place (variants ``pe-m`` and ``full``);
        False: it is what the variants without a matcher have.
    knobs : frozenset of str
        The ``Config`` fields it reads beyond the array's and the PE's.
    pe_block : str
        The PE block an array beside it is built of (``hw.blocks``).
    unit_block : str or None
        The block that prices it at sign-off, if it is more than the sequencer's
        priority encoder.
    traced : bool
        Its busy cycle is priced on a trace of the run's own tables
        (:func:`golden.cycle_model.matcher_trace`), not on random data.
    """

    name: ClassVar[str]
    paired: ClassVar[bool] = True
    knobs: ClassVar[frozenset] = frozenset()
    pe_block: ClassVar[str] = "pe"
    unit_block: ClassVar[str | None] = None
    traced: ClassVar[bool] = False

    @classmethod
    def claims(cls, dispatch) -> bool:
        """Whether a design point whose ``dispatch`` (a ``DispatchConfig``) names no
        dispatcher gets this one. Only a built-in one claims any."""
        return False

    @classmethod
    def refusal(cls, dispatch) -> str | None:
        """Why ``dispatch`` cannot have this unit, or None. By default a unit
        without the issue window refuses one."""
        if dispatch.issue_window and "issue_window" not in cls.knobs:
            return f"the {cls.name} dispatcher has no issue window"
        return None

    @staticmethod
    def slots(chans, needs: Callable[[], np.ndarray], mode: int, cfg) -> int:
        """Slots of one pass: ``chans`` the channels it streams, ``needs()`` each valid
        PE's lanes per channel of the group, ``[Dg, Rv, Cv]`` (0: no work; a channel
        outside ``chans`` needs none). A function, not the array: a unit that never
        reads it saves the cycle model a fifth of its time."""
        raise NotImplementedError

    @classmethod
    def batched(cls, mode: int, chans: np.ndarray, lanes: np.ndarray, cfg) -> np.ndarray:
        """:meth:`slots` of many tile groups at once: ``chans`` ``[S, Dg]`` (the
        channels each streams), ``lanes`` ``[S, Dg, R*C]`` (padded PEs need none).
        By default one tile group at a time."""
        return np.array([cls.slots(np.flatnonzero(chans[t]), lambda t=t: lanes[t].reshape(-1, cfg.rows, cfg.cols),
                                   mode, cfg) for t in range(len(chans))], np.int64)


#: name -> :class:`DispatcherModel` subclass, in the order registered.
DISPATCHERS: dict[str, type[DispatcherModel]] = {}


def register(model: type[DispatcherModel]) -> type[DispatcherModel]:
    """Add ``model`` to :data:`DISPATCHERS` (a class decorator) under a name no other
    model has (:func:`golden.registry.claim`); a user's model must stand in the
    matcher's place (``paired``), where a design point can pick it."""
    if not isinstance(getattr(model, "name", None), str) or not model.name:
        raise ValueError(f"dispatcher {getattr(model, '__name__', model)!r} declares no name")
    claim(DISPATCHERS, model.name, model, "dispatcher")
    if model.__module__ != __name__ and not model.paired:
        # dispatcher_of puts the first unpaired unit (in-order) where there is no
        # matcher, and Config.dispatcher names only paired ones: this one would never run.
        raise ValueError(f"dispatcher {model.name!r} declares paired = False, but only the built-in in-order unit "
                         f"stands where a variant has no matcher: declare paired = True, and a design point with "
                         f"a matcher (pe-m, full) picks it by --dispatcher {model.name}")
    DISPATCHERS[model.name] = model
    return model


@register
class InOrder(DispatcherModel):
    """One channel a slot, in channel order: what a pass streams, it issues (no lanes read)."""
    name = "in-order"
    paired = False

    @staticmethod
    def slots(chans, needs, mode, cfg):
        return len(chans)

    @classmethod
    def batched(cls, mode, chans, lanes, cfg):
        return chans.sum(axis=1)


@register
class Matcher(DispatcherModel):
    """:mod:`golden.matcher`: pairs steps for every PE at once, so it reads the PEs
    as one row; it fills its window on the pass's first slot."""
    name = "matcher"
    knobs = frozenset({"lookahead"})
    unit_block = "matcher"
    traced = True

    @classmethod
    def claims(cls, dispatch):
        return not dispatch.issue_window

    @staticmethod
    def slots(chans, needs, mode, cfg):
        lanes = np.asarray(needs())
        return paired_pass_slots(len(match(chans, lanes.reshape(len(lanes), -1), cfg.lookahead)))

    @classmethod
    def batched(cls, mode, chans, lanes, cfg):
        return paired_pass_slots(match_slots(chans, lanes, cfg.lookahead))


@register
class ChannelWindow(DispatcherModel):
    """:mod:`golden.channel_window`: each column (B, D) or row (C) takes its own
    steps from a window of ``issue_window`` channels, behind PEs that select them."""
    name = "channel-window"
    knobs = frozenset({"issue_window"})
    pe_block = "window-pe"
    unit_block = "channel-window"

    @classmethod
    def claims(cls, dispatch):
        return bool(dispatch.issue_window)

    @classmethod
    def refusal(cls, dispatch):
        return None if dispatch.issue_window else "the channel window needs an issue window (2 or more channels)"

    @staticmethod
    def slots(chans, needs, mode, cfg):
        return len(window_slots(np.asarray(needs()), mode, cfg.issue_window))


def dispatcher_of(cfg, matcher: bool) -> str:
    """The dispatcher of an engine at ``cfg`` (a :class:`Config` or its
    ``DispatchConfig``): without a matcher, the unit that stands there; with one,
    the unit ``cfg.dispatcher`` names, or the last registered one that claims the
    design point."""
    if not matcher:
        return next(name for name, d in DISPATCHERS.items() if not d.paired)
    dispatch = getattr(cfg, "dispatch", cfg)
    if dispatch.dispatcher:
        return dispatch.dispatcher
    return next(d.name for d in reversed(DISPATCHERS.values()) if d.paired and d.claims(dispatch))


def dispatched_slots(chans, needs: Callable[[], np.ndarray], mode: int, cfg, matcher: bool = True) -> int:
    """Slots one paired pass (B, C or D) takes under the design point's dispatcher
    (``needs``: as :meth:`DispatcherModel.slots` says)."""
    return DISPATCHERS[dispatcher_of(cfg, matcher)].slots(chans, needs, mode, cfg)


class DesignBlocks(NamedTuple):
    """The blocks a design at a design point is built of, by ``hw.blocks`` name."""
    pe: str                     #: its PEs
    dispatcher: str | None      #: the dispatcher in the engine (None: the baseline has none)
    unit: str | None            #: the block that prices the dispatcher, if any
    scheduler: str | None       #: the scheduler, if the variant has one
    traced: bool = False        #: the unit's busy cycle is priced on the run's own trace


def design_blocks(cfg, design: str) -> DesignBlocks:
    """What ``design`` (``kaleido`` or ``baseline``) at ``cfg`` is built of: the one
    place that turns a variant and a dispatcher into blocks."""
    if design == "baseline":
        return DesignBlocks("baseline-pe", None, None, None)
    if design != "kaleido":
        raise ValueError(f"design must be 'kaleido' or 'baseline', not {design!r}")
    scheduler, matcher = cfg.dispatch.parts
    unit = DISPATCHERS[dispatcher_of(cfg, matcher)]
    return DesignBlocks(unit.pe_block, unit.name, unit.unit_block, "scheduler" if scheduler else None,
                        unit.traced and unit.unit_block is not None)
