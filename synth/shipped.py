"""Sign-off results that ship with the project, so a fresh clone answers in
minutes instead of signing every block off again.

``synth/characterized/`` holds, for the design points a user meets first (the
report's, the chip's defaults, the README's examples), the results the flow
would compute: area, timing and energy per action on each library, and the
FPGA placements. Each is the cache's own file, under the cache's own name: the
hash of the block's Verilog, the library's content and the tools, so it is
used only where it is exactly what a cold run would compute, and a design point
that is not shipped is signed off as before. ``make characterize`` measures
them again (:mod:`synth.characterize`); ``$KALEIDO_SHIPPED=0`` runs cold.

Each result says what it is (:func:`what`): the block, the design point, the
library by its kit's name, so that a test can recompute its name from today's
Verilog and fail when a change leaves it stale.
"""

from __future__ import annotations

from pathlib import Path

from golden.config import Config

__all__ = ["CHARACTERIZED", "KINDS", "folder", "what"]

#: The shipped results, a folder a kind of result.
CHARACTERIZED = Path(__file__).resolve().parent / "characterized"

#: The kinds of result that ship, by the folder they go in.
KINDS = ("area", "timing", "energy", "fpga")


def folder(kind: str) -> Path:
    """Where results of ``kind`` (one of :data:`KINDS`) ship."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}: one of {', '.join(KINDS)}")
    return CHARACTERIZED / kind


def what(kind: str, block: str, cfg: Config, liberty: str | None, **extra) -> dict:
    """What a result of ``kind`` is: enough to name it again (the liberty by its kit's name)."""
    from .kits import kit
    return {"kind": kind, "block": block, "config": cfg.to_json(),
            "library": kit(liberty).name if liberty else None, **extra}
