"""Kaleido's reuse in a linear layer ``X~ W`` at chip scale, from one head's
slice of the activations.

The exact model (:func:`golden.linear_cycles.kaleido_linear_cycles`) runs
every tile group: ``R`` outputs by ``C`` windows of one channel group. What a
tile group issues depends on its windows alone, never on which ``R`` outputs
it computes (the weights have no reuse), so every full output tile issues the
same passes. This model runs one output tile
(:func:`golden.linear_cycles.linear_tile_slots` with ``R`` outputs) and counts
each tile group's drain waits on its own, which holds because a tile group's
first pass streams every channel of its group, at least ``2R`` of them
(:func:`golden.drain.group_waits`). A layer with ``k R`` outputs then takes
``k`` times that, plus the final drain and the tail: equal to the exact model,
which the tests check, with the driver's choice (the matcher, without it, or
dense) made the same way.

A layer's channel groups gather their direction's channels of every head
(:func:`golden.windows.linear_config`). At chip scale the model runs one head's
slice of ``X`` (``N x D``) and takes the layer's work as ``heads`` slices of
it: a pass streams the channels some window of its tile group needs, and
channels of different heads add up, exactly without the matcher; the matcher's
pairing across two heads' channels is left out (a pass's first and last few
slots), and the drain waits between passes, a few slots on passes hundreds of
channels long. What the chip needs is :class:`LinearWork`: per full output
tile, the slots, passes and products as shares of the dense schedule's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from golden import drain
from golden.config import Config
from golden.linear_cycles import linear_tile_slots
from golden.windows import linear_config, window_tables

__all__ = ["LinearWork", "linear_work"]


@dataclass
class LinearWork:
    """One output tile (``R`` outputs) of a linear layer on Kaleido's array, as
    the driver runs it (``ran_as``: ``pe-m`` with the matcher, ``pe`` without,
    or ``dense``), against the dense schedule on the same outputs.

    Members
    -------
    slots, passes, tile_groups : int
        Issued slots with the drain waits they cause, passes (each drains once),
        and tile groups.
    full_products, nibble_products : int
    dense_slots, dense_passes, dense_products : int
        The dense schedule's (``R`` outputs by ``C`` tokens, every channel).
    """

    ran_as: str
    slots: int
    passes: int
    tile_groups: int
    full_products: int
    nibble_products: int
    dense_slots: int
    dense_passes: int
    dense_products: int

    def factors(self) -> dict:
        """Shares of the dense schedule's slots, passes and products (the chip's
        :class:`~sim.chip.chip.HeadWork` ``linear_*``)."""
        return {"linear_slots": self.slots / self.dense_slots, "linear_passes": self.passes / self.dense_passes,
                "linear_full": self.full_products / self.dense_products,
                "linear_nibble": self.nibble_products / self.dense_products}


def _windows(tables, cfg: Config, matcher: bool) -> tuple[int, int, int, int, int]:
    """Slots with their waits, passes, tile groups, whole and nibble products of one output tile."""
    slots, work, nibbles = linear_tile_slots(tables, cfg.rows, cfg, matcher)
    total = 0
    by_length = {}
    for s in slots:                       # tile groups of one channel group have as many passes
        by_length.setdefault(len(s), []).append(s)
    for group in by_length.values():
        lengths = np.stack(group)
        total += int(np.maximum(lengths, 1).sum() + drain.group_waits(lengths, cfg.rows).sum())
    lane_work = sum(int(w.sum()) for w in work)
    nibble = sum(int(n.sum()) for n in nibbles)
    return total, sum(len(s) for s in slots), len(slots), (lane_work - nibble) // 2, nibble


def linear_work(x: np.ndarray, cfg: Config) -> LinearWork:
    """:class:`LinearWork` of int8 activations ``x`` (``[N, heads * D]``) on
    ``cfg``'s array, with its variant's dispatcher."""
    heads = x.shape[1] // cfg.head_dim
    lcfg = linear_config(cfg, heads)
    if any(sl.stop - sl.start < drain.drain_spacing(cfg.rows) for sl in lcfg.group_slices.values()
           if sl.stop > sl.start):
        raise ValueError("a channel group narrower than 2R: its tile groups' drain waits depend on each other")
    tables = window_tables(x, cfg)
    n = x.shape[0]
    token_tiles = -(-n // cfg.cols)
    dense = (token_tiles * max(lcfg.head_dim, drain.drain_spacing(cfg.rows)), token_tiles,
             cfg.rows * n * lcfg.head_dim)
    options = {"pe-m": _windows(tables, lcfg, True)} if cfg.dispatch.parts[1] else {}
    options["pe"] = _windows(tables, lcfg, False)
    options["dense"] = (dense[0], dense[1], dense[1], dense[2], 0)
    # The driver's choice: the fewest cycles, the variant's own passes first among equals.
    best = min(options, key=lambda name: options[name][0])
    return LinearWork(best, *options[best], *dense)
