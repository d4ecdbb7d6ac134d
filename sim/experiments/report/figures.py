"""Every figure of the report, in the order it is computed (and ``report.json``
holds it): a new figure is its module, declaring a
:class:`~sim.experiments.report.figure.Figure`, and one line here."""

from __future__ import annotations

from . import fig7, fig9, fig18, fig19, fig20, fig21, fig23, fpga, pv, speed, table2, workloads
from . import whole_model as chip

__all__ = ["FIGURES"]

FIGURES = (
    fig7.FIGURE,            # quality of each group along each axis
    fig9.FIGURE,            # reuse against skipping
    fig19.FIGURE,           # the dispatcher's ablation (cycle model, and RTL)
    fig21.FIGURE,           # array sizes
    fig23.FIGURE,           # the reuse thresholds
    fig20.FIGURE,           # the vDiT block
    pv.FIGURE,              # P V~ with V's reuse
    workloads.FIGURE,       # real clips against the proxy
    workloads.NOISE,        # the denoising step's noise
    speed.FIGURE,           # speed against the oracle bound
    table2.FIGURE,          # Table 2: area
    fig18.TIMING,           # every block's timing
    fig18.POWER,            # every block's energy per action
    fig18.FIGURE,           # energy and throughput at one clock
    chip.FIGURE,            # the whole models on the paper's chip
    fpga.FIGURE,            # both designs on an FPGA
)
