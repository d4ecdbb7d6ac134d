"""The words of the attention engine's operand buffers, and the slot register the
sequencer (S0) hands the operand stage (S1): layouts both stages and the
testbenches' images share."""

from __future__ import annotations

from amaranth import signed
from amaranth.lib import data

from golden.pe_encoding import Mode
from golden.reuse import State

from ..dispatcher.dispatch import choice_layout

__all__ = ["pair_entry", "token_entry", "slot_layout", "entry_layout", "word_layout", "entry_bits"]


#: One entry of the Kaleido engine's buffers: a pair's two values on one channel,
#: the partner's reuse state there (golden.reuse codes), and whether the pair exists.
pair_entry = data.StructLayout({"x0": signed(8), "x1": signed(8), "state": State, "valid": 1})

#: One entry of the baseline engine's buffers: a token's value on one channel.
token_entry = data.StructLayout({"x": signed(8), "valid": 1})


def slot_layout(channels: int, cols: int, window: int = 0, groups: int = 0) -> data.StructLayout:
    """What the sequencer (S0) hands the operand stage (S1) about one slot
    (with a channel window of ``window`` channels, each of ``groups``' steps)."""
    extra = {"choice": data.ArrayLayout(choice_layout(window), groups)} if window else {}
    return data.StructLayout({
        "valid": 1,                       # the slot issues (a step, a drain, or both)
        "steps": 1,                       # it carries a channel step
        "pair": 1,                        # and a second, paired one (matcher)
        "first": 1,                       # the first slot of a pass: its hand-over
        "drain": 1,                       # it drains the previous pass's score
        "flush": 1,                       # the final drain slot
        "mode": Mode,                     # the pass
        "part": range(3),                 # linear: which partner a pass B serves
        "chan": range(max(2, channels)),  # the step's channel
        **extra,
    })


def entry_layout(design: str) -> data.StructLayout:
    """The buffer entry of ``design``."""
    return pair_entry if design == "kaleido" else token_entry


def word_layout(design: str, entries: int) -> data.ArrayLayout:
    """One buffer word: a channel of a tile, ``entries`` (rows or columns) entries."""
    return data.ArrayLayout(entry_layout(design), entries)


def entry_bits(design: str) -> int:
    """Bits of one buffer entry."""
    return entry_layout(design).size
