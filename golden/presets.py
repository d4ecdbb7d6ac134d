"""Named design points, each built from the default :class:`~golden.config.Config`
by a few changes, and the dispatcher fragments they and the studies combine.

A preset is what a command's ``--preset`` starts from: its knobs (and, where
the command takes its head's shape from nowhere else, its shape); anything the
command is given goes over it. The report's, the sign-off bench's and the
demo's design points are presets, so each is written once.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, NamedTuple

from .config import Config

__all__ = ["Preset", "PRESETS", "preset", "DispatchFragment", "FRAGMENTS"]


class Preset(NamedTuple):
    """A named design point: what it is for, and its changes to the default."""
    description: str
    model: str | None = None            #: a model whose RoPE split of ``head_dim`` is the partition
    head_dim: int | None = None
    changes: Mapping = MappingProxyType({})     #: read-only: a preset's default is shared

    def config(self, **more) -> Config:
        """The design point, with ``more`` changes over it."""
        if self.model:
            return Config.for_model(self.model, self.head_dim, **{**self.changes, **more})
        return Config(**{**self.changes, **more})


#: name -> :class:`Preset`.
PRESETS = {
    "default": Preset("the project's default: the paper's PE, the matcher and the weight rule, three PE "
                      "stages, a 4x4 array, D = 128 (44, 42, 42), an 8x16x16 head"),
    "paper": Preset("the paper's design point: its 3-register PE at one stage (a canonical MAC) and its "
                    "dispatcher, the matcher behind the Hamming clustering of pivots",
                    changes={"pe_stages": 1, "cluster_rule": "pivots"}),
    "exact": Preset("the default with the exact PE (4 registers), which executes the oracle count",
                    changes={"accumulators": 4}),
    "signoff-head": Preset("the head the sign-off bench measures: Wan2.1's split of D = 128, an 8x16x16 grid",
                           "wan2.1", 128, {"grid": (8, 16, 16)}),
    "demo": Preset("`kaleido demo`'s head: Wan2.1's split of D = 32, a 2x8x8 grid", "wan2.1", 32,
                   {"grid": (2, 8, 8)}),
    "report-golden": Preset("the report's golden-model studies: Wan2.1, D = 128, 8x16x16", "wan2.1", 128,
                            {"grid": (8, 16, 16)}),
    "report-cycle-model": Preset("the report's cycle-model studies: Wan2.1, D = 64, 4x8x8", "wan2.1", 64,
                                 {"grid": (4, 8, 8)}),
    "report-rtl": Preset("the report's RTL runs: Wan2.1, D = 32, 2x8x8", "wan2.1", 32, {"grid": (2, 8, 8)}),
    "report-area": Preset("the report's area, timing and energy tables: the default"),
}


def preset(name: str, **more) -> Config:
    """The design point of preset ``name``, with ``more`` changes over it."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    return PRESETS[name].config(**more)


class DispatchFragment(NamedTuple):
    """A named dispatcher combination, as the studies sweep them: the issue window
    (0: the matcher) and the scheduler's rule."""
    issue_window: int
    cluster_rule: str

    @property
    def knobs(self) -> dict:
        return {"issue_window": self.issue_window, "cluster_rule": self.cluster_rule}


#: name -> :class:`DispatchFragment`: the matcher, and the channel windows of 4 and 8.
FRAGMENTS = {
    "matcher-pivots": DispatchFragment(0, "pivots"),
    "window4-pivots": DispatchFragment(4, "pivots"),
    "window4-weight": DispatchFragment(4, "weight"),
    "window8-weight": DispatchFragment(8, "weight"),
}
