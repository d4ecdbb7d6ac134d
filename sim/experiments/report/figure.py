"""What a figure of the report is, and what it is computed from.

A figure module declares one :class:`Figure`: the key its data has in
``report.json``, how it computes that data from the :class:`Study`, and,
where it has them, its plot and its section of ``report.md``. The report runs
the figures of :data:`sim.experiments.report.figures.FIGURES` in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

__all__ = ["Study", "Figure"]


@dataclass(frozen=True)
class Study:
    """What one report is run on.

    Attributes
    ----------
    out : Path
        The report's folder (figures, and the RTL runs' work).
    sizes : dict
        The design points by study: ``golden``, ``cycle_model``, ``rtl`` and ``area``.
    workload, clips : str, tuple
        What every figure runs on; the clips the workload table sets beside the proxy.
    jobs : int
        Worker processes of the sweeps.
    simulator : str or None
        The RTL runs' simulator (None: no RTL runs).
    liberty : str or None
        The liberty file, where there is one.
    energy : bool
        Timing and energy: the blocks' fmax, energy per action and Fig. 18.
    chip_level : bool
        The whole models on the paper's chip too.
    place : bool
        Place the FPGA table's blocks anew, not reuse the recorded placements.
    """

    out: Path
    sizes: dict
    workload: str
    clips: tuple
    jobs: int
    simulator: str | None
    liberty: str | None
    energy: bool
    chip_level: bool
    place: bool = False

    @property
    def big(self):
        return self.sizes["golden"]

    @property
    def mid(self):
        return self.sizes["cycle_model"]

    @property
    def small(self):
        return self.sizes["rtl"]


@dataclass(frozen=True)
class Figure:
    """One figure (or table) of the report.

    Attributes
    ----------
    key : str
        Where its data goes in ``report.json``.
    compute : callable
        ``compute(study) -> data``.
    section : int
        Where its section goes in ``report.md`` (in increasing order).
    plot : callable or None
        ``plot(out, data)``: its PNG, from the whole report's data.
    markdown : callable or None
        ``markdown(data) -> lines``: its section, from the whole report's data.
    wanted : callable
        ``wanted(study) -> bool``: whether this report has it.
    """

    key: str
    compute: Callable[[Study], Any]
    section: int = 0
    plot: Callable[[Path, dict], None] | None = None
    markdown: Callable[[dict], list] | None = None
    wanted: Callable[[Study], bool] = lambda study: True
