"""``kaleido report`` / ``make report``: the paper's figures, reproduced from our
own golden model, cycle model, RTL simulation and synthesis.

One module per figure holds its sweep point, how it computes its data, its
plot and its section of the Markdown, declared as a :class:`.figure.Figure`
(``fig7``, ``fig9``, ``fig18``, ``fig19``, ``fig20``, ``fig21``, ``fig23``,
``speed``, ``pv``, ``workloads``, ``table2``, ``chip``); ``figures`` lists them
in order, and ``build`` runs them and writes ``DIR/report.md``,
``DIR/report.json`` and one PNG per figure. The command, ``kaleido report``,
is :mod:`sim.cli.report_cmd`. Every
sweep point is independent, so the sweeps run over processes with a progress
bar; everything is seeded, so a report is deterministic for a seed.
"""

from .build import build_report, default_sizes, publish

__all__ = ["build_report", "default_sizes", "publish"]
