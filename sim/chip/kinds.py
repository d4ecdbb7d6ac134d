"""The kinds of array a chip has, and their area.

A chip's arrays are of up to three *kinds*: Kaleido's with a dispatcher each
(``kaleido``), Kaleido's without one (``kaleido-alone``: each head in channel
order or dense), and plain ones. :func:`kinds_of` says which a design's chip
has; each kind comes with its head's work (:class:`~sim.chip.chip.HeadWork`)
and its blocks' sign-off (:class:`~sim.chip.chip.SignOff`). A layer's cost on
them is :func:`sim.chip.layer.layer_cost`'s; their area is :func:`chip_area`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .chip import Chip, HeadWork, SignOff
from .memories import FEATURE_BUFFER_KIB, sram_mm2_per_mib

__all__ = ["Kind", "ALONE", "kinds_of", "head_shares", "chip_area"]


@dataclass(frozen=True)
class Kind:
    """One kind of array on a chip: its ``arrays``, its head's ``work`` and its
    ``sign``-off; ``dense_factor``, the share of a dense product's slots and
    products it needs (1: P V and the linear layers as its head's fast models
    found them, or dense; below, a what-if of reuse in every product,
    :mod:`sim.chip.explore`)."""

    arrays: int
    work: HeadWork
    sign: SignOff
    dense_factor: float = 1.0


def kinds_of(design: str, chip: Chip, heads: dict, signs: dict, dense_factor: float = 1.0) -> dict[str, Kind]:
    """The array kinds of ``design``'s chip: the baseline chip's are all plain;
    Kaleido's are its ``kaleido_share`` of Kaleido arrays (at ``dense_factor``),
    ``coupled_share`` of them with a dispatcher (``kaleido``) and the others
    without (``kaleido-alone``), and the rest plain. ``heads`` and ``signs`` map
    each kind to its head's work and sign-off; without ``kaleido-alone``, the
    coupled arrays' head, and Kaleido's sign-off less its matcher and scheduler."""
    plain = Kind(chip.arrays, heads["baseline"], signs["baseline"])
    if design == "baseline":
        return {"baseline": plain}
    k, coupled = chip.kaleido_arrays, chip.coupled_arrays
    out = {"kaleido": Kind(coupled, heads["kaleido"], signs["kaleido"], dense_factor)} if coupled else {}
    if coupled < k:
        alone = signs.get(ALONE) or replace(signs["kaleido"], matcher=None, scheduler=None)
        out[ALONE] = Kind(k - coupled, heads.get(ALONE) or heads["kaleido"], alone, dense_factor)
    if k < chip.arrays:
        out["baseline"] = Kind(chip.arrays - k, heads["baseline"], signs["baseline"])
    return out


#: The kind of the Kaleido arrays without a dispatcher.
ALONE = "kaleido-alone"


def head_shares(kinds: dict[str, Kind]) -> dict[str, float]:
    """Each kind's share of Q K^T's heads: in proportion to how fast its arrays run one."""
    rate = {name: kind.arrays / kind.work.slots for name, kind in kinds.items()}
    return {name: r / sum(rate.values()) for name, r in rate.items()}


def chip_area(kinds: dict[str, Kind], chip: Chip) -> dict:
    """mm^2 of the chip's units: PE arrays (with their clock gates), dispatcher,
    softmax, the global and accumulation buffers (``sram``), and the matchers'
    feature buffers, each of :data:`~sim.chip.memories.FEATURE_BUFFER_KIB` (the
    SRAM whose reads the energy already prices)."""
    sign = next(iter(kinds.values())).sign
    units = max(1, chip.softmax_lanes // sign.softmax_lanes)
    pe = disp = features = 0.0
    for kind in kinds.values():
        s = kind.sign
        pe += kind.arrays * chip.rows * chip.cols * s.area_mm2(s.pe, chip)
        if chip.gate_idle_arrays and s.clock_gate is not None:
            pe += kind.arrays * s.area_mm2(s.clock_gate, chip)
        gate = (s.area_mm2(s.clock_gate, chip)
                if chip.gate_idle_dispatchers and s.clock_gate is not None else 0.0)
        if s.matcher is not None:
            disp += kind.arrays * (s.area_mm2(s.matcher, chip) + gate)
            features += kind.arrays * FEATURE_BUFFER_KIB / 1024 * sram_mm2_per_mib()
        if s.scheduler is not None:
            disp += -(-kind.arrays // s.clusters) * (s.area_mm2(s.scheduler, chip) + gate)
    out = {"pe_arrays": pe, "dispatcher": disp, "softmax": units * sign.area_mm2(sign.softmax, chip),
           "sram": (chip.global_buffer_mib + chip.acc_buffer_mib) * sram_mm2_per_mib(), "feature_buffers": features}
    out["total"] = sum(out.values())
    return out
