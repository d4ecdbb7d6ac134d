"""``kaleido report`` / ``make report``: the paper's figures, reproduced from our
own golden model, cycle model, RTL simulation and synthesis.

One module per figure holds its sweep point, its plot and its section of the
Markdown (``fig7``, ``fig9``, ``fig18``, ``fig19``, ``fig20``, ``fig21``,
``fig23``, ``speed``, ``pv``, ``workloads``); ``build`` runs them in order and
writes ``DIR/report.md``, ``DIR/report.json`` and one PNG per figure. Every
sweep point is independent, so the sweeps run over processes with a progress
bar; everything is seeded, so a report is deterministic for a seed.
"""

from .build import build_report, cmd_report, default_sizes, register

__all__ = ["build_report", "cmd_report", "default_sizes", "register"]
