"""The channel-window dispatcher (``Config.issue_window``): golden model.

The matcher (:mod:`golden.matcher`) issues one or two channel steps a slot to
*every* PE, so a step pairs only where it fits beside the head in all of them,
and a channel that some PEs skip leaves those PEs idle. The channel window
lets each column (pass B, D) or each row (pass C) choose its own steps:

* the row and column ports carry the first ``W`` channels that some PE of the
  pass still needs (the *window*, in channel order);
* each *group* (a column in B and D, whose work depends on the column's state
  or on both; a row in C, whose work depends on the row's state) takes the
  first window channel it still needs, and the first later one whose lanes fit
  beside it in every PE of the group (the matcher's rule, :func:`golden.matcher.share`);
* a channel leaves a group's set once the group took it, and leaves the window
  once every group has.

So a PE still takes at most two steps and two lanes a slot, and every (channel,
PE) with work is served exactly once; only the order changes, and integer sums
do not care. A group that needs nothing of the window idles. Pass A, LINEAR,
the dense schedule and an unpaired pass stream one channel a slot, as before.
"""

from __future__ import annotations

import numpy as np

from .matcher import share, step_masks
from .pe_encoding import Mode

__all__ = ["WINDOW_WIDTHS", "row_groups", "window_slots"]

#: ``Config.issue_window``: 0 (no window: the matcher pairs for every PE) or the
#: channels the ports carry in a slot of pass B, C or D.
WINDOW_WIDTHS = (0, 2, 3, 4, 5, 6, 7, 8)


def row_groups(mode: int) -> bool:
    """The groups that choose together are rows (pass C), else columns (B, D)."""
    return mode == Mode.C


def window_slots(needs: np.ndarray, mode: int, width: int) -> list[tuple[list[int], dict[int, tuple]]]:
    """The slots of one pass: ``(window channels, {group: its steps})`` per slot.

    ``needs`` is ``[Dg, Rv, Cv]``: lanes each valid PE takes for each channel
    (0: no work). A group's steps are one or two channels of the window, in
    window order.
    """
    needs = np.asarray(needs)
    if row_groups(mode):
        needs = needs.transpose(0, 2, 1)              # [Dg, group PEs (columns), groups (rows)]
    dg, _, groups = needs.shape
    # Per group and channel: the group's PEs that use a lane, and that use both.
    masks = [step_masks(needs[:, :, g]) for g in range(groups)]
    left = [{c for c in range(dg) if masks[g][0][c]} for g in range(groups)]
    slots = []
    while any(left):
        window = sorted(set().union(*left))[:width]
        steps = {}
        for g in range(groups):
            mine = [c for c in window if c in left[g]]
            if not mine:
                continue
            first, second = mine[0], None
            for c in mine[1:]:
                if share(*masks[g], first, c):
                    second = c
                    break
            steps[g] = (first, second)
            left[g] -= {first, second}
        slots.append((window, steps))
    return slots
