"""The dispatcher's matcher, docs/design.md, "The data dispatcher" and the lane pairing of §5.2: golden model.

A channel step needs, in each PE of the array, 0, 1 or 2 of its two 4x8 lanes
(:func:`golden.pe.need_lanes` of the step's :func:`golden.pe.step_need`): nothing,
one nibble or ``ROW`` product, or a full product. Two steps can share a cycle
when every PE's lanes add up to at most 2. Both ports carry two bytes (the row
operands ``a0, a1`` and the column operands ``b0, b1``), so the lanes are the
only budget: a PE where only one of the two steps has work runs it whole.

* pass B (``q0 x k1~``) depends on the column only (``sk``);
* pass C (``q1~ x k0``) on the row only (``sq``); with the exact PE a partial
  row is a one-lane ``ROW`` step, so two partial rows pair;
* pass D (``q1~ x k1~``) on both.

Pass A multiplies whole bytes in every PE and is never paired. The merge unit
looks at a window of ``lookahead`` upcoming steps (the head and the next
``lookahead - 1``), pairs the head with the first compatible one and issues
both in one cycle, or issues the head alone. A pass it pairs begins with one
slot that issues no step (:data:`FILL_SLOTS`): the merge unit loads its window then.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .pe import step_need
from .pe_encoding import Mode, need_lanes

__all__ = ["PAIRED_MODES", "FILL_SLOTS", "lanes_of", "pe_needs", "compatible", "step_masks", "share", "match",
           "match_slots", "paired_pass_slots"]

#: The passes whose steps the matcher pairs.
PAIRED_MODES = (Mode.B, Mode.C, Mode.D)

#: Slots a pass that the matcher pairs spends before its first step. The RTL
#: matcher keeps the window as registers, so that no cycle's pairing waits on a
#: search through the whole channel set; it loads them on the pass's first slot,
#: which still carries the pass's hand-over and the previous score's drain. A
#: pass with nothing to pair learns it there and ends one slot later, so it
#: takes the fill and one slot.
FILL_SLOTS = 1


def paired_pass_slots(issued):
    """Slots of a pass whose steps the matcher pairs into ``issued`` slots (an int
    or an array): the fill, then the issued slots (one at least)."""
    if isinstance(issued, (int, np.integer)):
        return FILL_SLOTS + max(1, int(issued))
    return FILL_SLOTS + np.maximum(np.asarray(issued), 1)


@lru_cache(maxsize=None)
def lanes_of(mode: int, kind=3) -> np.ndarray:
    """``[sq, sk]``: lanes one step of ``mode`` takes in a PE of ``kind`` with those flags.

    Built once per (mode, PE kind): the cycle model asks for it once per tile and
    pass, millions of times on a full-size head. The table is read-only."""
    table = np.array([[need_lanes(step_need(mode, sq, sk, kind)[0]) for sk in range(3)]
                      for sq in range(3)], dtype=np.int64)
    table.flags.writeable = False
    return table


def pe_needs(mode: int, sq: np.ndarray, sk: np.ndarray, kind=3) -> np.ndarray:
    """Lane needs ``[Dg, Rv * Cv]`` of every channel in every valid PE (row-major).

    ``sq`` is ``[Rv, Dg]`` (valid rows), ``sk`` is ``[Cv, Dg]`` (valid columns);
    PEs of rows or columns that do not exist are left out (they need nothing).
    """
    table = lanes_of(mode, kind)
    sq, sk = np.asarray(sq, np.int64), np.asarray(sk, np.int64)
    per = table[sq.T[:, :, None], sk.T[:, None, :]]          # [Dg, Rv, Cv]
    return per.reshape(per.shape[0], -1)


def compatible(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(np.asarray(a) + np.asarray(b) <= 2))


def step_masks(needs: np.ndarray) -> tuple[list[int], list[int]]:
    """Each step's needs (``needs[c]``, lanes per PE) as two PE bit masks: the PEs
    it uses some lane of, and those it uses both lanes of."""
    needs = np.asarray(needs).reshape(len(needs), -1)
    weights = np.array([1 << j for j in range(needs.shape[1])], dtype=object)
    return ((needs >= 1).astype(object) @ weights).tolist(), ((needs == 2).astype(object) @ weights).tolist()


def share(some: list[int], whole: list[int], a: int, b: int) -> bool:
    """Steps ``a`` and ``b`` (:func:`step_masks`) fit in one cycle: neither takes both
    lanes of a PE the other uses at all."""
    return not (whole[a] & some[b]) and not (some[a] & whole[b])


def match(channels, needs: np.ndarray, lookahead: int) -> list[tuple[int, int | None]]:
    """Issue order of a pass's ``channels``: ``(head, partner or None)`` per cycle."""
    some, whole = step_masks(needs)
    rem = list(channels)
    out = []
    while rem:
        head = rem.pop(0)
        partner = None
        for pos, c in enumerate(rem[:lookahead - 1]):
            if share(some, whole, head, c):
                partner = rem.pop(pos)
                break
        out.append((head, partner))
    return out


def match_slots(streamed: np.ndarray, needs: np.ndarray, lookahead: int) -> np.ndarray:
    """Slots :func:`match` issues, for many passes at once (the fast cycle model's).

    ``streamed`` is ``[S, Dg]`` (the channels each pass streams), ``needs`` is
    ``[S, Dg, P]`` (lanes per PE; 0 where a PE does not exist). Returns ``[S]``.

    The same greedy rule, kept as a sliding buffer per pass instead of a list:
    the buffer holds the first ``lookahead`` channels not yet issued (the head
    and its candidates), in stream order. Each round issues the head with its
    first compatible candidate, closes the gap and refills from the stream, so
    every pass advances one slot a round and the loop runs at most ``Dg`` times.
    """
    streamed = np.asarray(streamed, bool)
    needs = np.asarray(needs)
    s, dg = streamed.shape
    width = max(lookahead, 1)
    order = np.argsort(~streamed, axis=1, kind="stable")            # streamed channels first, in order
    count = streamed.sum(axis=1)
    seq = np.full((s, dg + width + 2), -1, np.int64)                 # -1: the stream has ended
    seq[:, :dg] = np.where(np.arange(dg) < count[:, None], order, -1)
    # Each step as two PE bit masks (step_masks' rule) where the PEs fit in a word.
    packed = needs.shape[2] <= 62
    if packed:
        weights = np.left_shift(1, np.arange(needs.shape[2], dtype=np.int64))
        some, whole = (needs >= 1).astype(np.int64) @ weights, (needs == 2).astype(np.int64) @ weights
    slots = np.zeros(s, np.int64)
    live = np.flatnonzero(count)                                     # passes with steps left
    buf = seq[live, :width]
    ptr = np.full(len(live), width)
    shift = np.arange(1, width - 1)                                  # where kept candidates come from
    while len(live):
        slots[live] += 1
        partner = np.full(len(live), width)                          # none
        if width > 1:
            cand = buf[:, 1:]
            at, c = live[:, None], np.maximum(cand, 0)
            if packed:
                h = buf[:, :1]
                clash = (whole[at, h] & some[at, c]) | (some[at, h] & whole[at, c])
                fits = (cand >= 0) & (clash == 0)
            else:
                head = needs[live, buf[:, 0]][:, None, :]
                fits = (cand >= 0) & np.all(head + needs[at, c] <= 2, axis=-1)
            has = fits.any(axis=1)
            partner = np.where(has, 1 + fits.argmax(axis=1), width)
        gone = 1 + (partner < width)
        # Close the gaps left by the head and the partner, then refill from the stream.
        nxt = np.empty_like(buf)
        src = shift[None, :] + (shift[None, :] >= partner[:, None])
        nxt[:, :width - 2] = np.take_along_axis(buf, np.minimum(src, width - 1), axis=1)
        rows = live
        if width > 1:
            nxt[:, width - 2] = np.where(gone == 2, seq[rows, ptr], buf[:, width - 1])
        nxt[:, width - 1] = np.where(gone == 2, seq[rows, ptr + 1], seq[rows, ptr])
        ptr = np.minimum(ptr + gone, seq.shape[1] - 2)
        more = nxt[:, 0] >= 0
        live, buf, ptr = live[more], nxt[more], ptr[more]
    return slots
