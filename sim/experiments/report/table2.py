"""Table 2: the blocks' areas from synthesis, and the PE's and the dispatcher's
overheads beside the paper's."""

from __future__ import annotations

from pathlib import Path

from synth.area import area_table, table_markdown

from .figure import Figure

__all__ = ["compute", "markdown", "FIGURE"]


def compute(study) -> dict:
    return area_table(study.sizes["area"], study.liberty, study.jobs)


def markdown(d: dict) -> list[str]:
    return _table2_markdown(d, table_markdown(d["area"]))


def _table2_markdown(d: dict, area_md: str) -> list[str]:
    s = d["area"]["split"]
    # The file's name, not the machine's path to it: the report is committed.
    liberty = Path(d["area"]["liberty"]).name if d["area"]["liberty"] else "none (transistor-count estimate)"
    return [
        "## Table 2: area (synthesis)",
        "",
        f"Liberty: `{liberty}`; the area "
        "design point above.",
        "",
        area_md,
        "",
        f"Ours: PE overhead {100 * s['pe_overhead']:.0f} %, dispatcher "
        f"{100 * s['dispatcher_over_arrays']:.0f} % of the arrays it feeds. Paper: PE augmentation "
        "about 30 % (6.6 % of the chip over baseline PEs of about 19.3 mm^2); dispatcher 1.3 of "
        "25.1 mm^2 of PE arrays, about 5 %.",
        "",
    ]


FIGURE = Figure("area", compute, 13, markdown=markdown)
