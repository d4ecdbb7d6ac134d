"""Cycle model of the attention engine: cycles, lane work and utilization of
``Q K^T``, predicted exactly (fill and drain included) without simulating.

It follows the controller of :mod:`hw.engine` slot by slot, in closed form:

* a tile group runs passes A-D; A streams every channel of its group; B
  streams the channels where some valid column has ``sk != 2``; C those where
  some valid row has ``sq != 2``; D those where some valid PE needs a product;
* every pass takes ``max(streamed channels, 2R - 1)`` slots (the drain chain's
  spacing); the baseline takes ``max(D, 2R - 1)`` slots per tile;
* one final slot drains the last scores, which leave the array
  ``2R + C`` cycles later; counting starts the cycle after ``start``.

Lane work counts, per slot and valid PE, the lanes its decode turns on (a full
product is two lanes, a nibble product one); utilization is lane work over
``cycles * R * C * 2``. The decode is :func:`golden.pe.decode`, the one the
golden PE model uses.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .config import Config
from .matcher import column_needs, match
from .pe import Mode, decode
from .scheduler import cluster_tables, operand_stream, schedule
from .tiling import pair_tables, tile_groups

__all__ = ["CycleReport", "kaleido_cycles", "baseline_cycles", "LANES", "tail_cycles",
           "VARIANTS", "variant_parts", "utilization", "kaleido_tables", "scheduler_lead", "kaleido_tile_slots",
           "split_cycles", "baseline_tile_slots", "kaleido_products"]

#: Dispatcher ablation (DESIGN.md §5.5): which of scheduler and matcher each variant has.
VARIANTS = {"pe": (False, False), "pe-sh": (True, False), "pe-m": (False, True), "full": (True, True)}


def utilization(lane_work: int, cycles: int, pes: int) -> float:
    """Useful lane work over the lane slots of ``cycles`` on ``pes`` PEs (two lanes each)."""
    return lane_work / (cycles * pes * 2) if cycles else 0.0


def variant_parts(variant: str) -> tuple[bool, bool]:
    """``(scheduler, matcher)`` of a variant."""
    try:
        return VARIANTS[variant]
    except KeyError:
        raise ValueError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}") from None


def kaleido_tables(q, k, cfg: Config, variant: str = "pe", assignments=(None, None)):
    """Pair tables of Q and K as the variant's engine sees them: clustered by the
    scheduler in pe-sh and full (``assignments`` from the RTL, else golden)."""
    qt, kt = pair_tables(q, cfg), pair_tables(k, cfg)
    if variant_parts(variant)[0]:
        qt = cluster_tables(qt, cfg, assignments[0])
        kt = cluster_tables(kt, cfg, assignments[1])
    return qt, kt


def scheduler_lead(q, k, cfg: Config) -> int:
    """Cycles before the first clusters of both operands exist: the scheduler's
    first batch (fill, pivots, assignment), the only part of its work that the
    array cannot overlap."""
    lead = 0
    for tables in (pair_tables(q, cfg), pair_tables(k, cfg)):
        strings, last = operand_stream(tables, cfg)
        assignments, sizes = schedule(strings, last, cfg)
        lead = max(lead, assignments[sizes[0] - 1].cycle + 1)
    return lead

# LANES[mode, sq, sk]: lanes a single channel step turns on in one PE.
LANES = np.array([[[sum(l.on for l in decode(mode, 1, sq, sk, 0, 0).lanes) for sk in range(3)]
                   for sq in range(3)] for mode in range(4)], dtype=np.int64)


@dataclass
class CycleReport:
    design: str
    cycles: int             # engine cycles plus, with a scheduler, its lead
    slots: int
    tiles: int
    lane_work: int
    pes: int
    variant: str = "pe"
    engine_cycles: int = 0
    lead_cycles: int = 0

    @property
    def executed_macs(self) -> float:
        """Lane-weighted MACs (DESIGN.md §4): a full product 1, a nibble product 0.5."""
        return self.lane_work / 2

    @property
    def utilization(self) -> float:
        return utilization(self.lane_work, self.cycles, self.pes)

    def as_dict(self) -> dict:
        d = asdict(self)
        d.update(executed_macs=self.executed_macs, utilization=self.utilization)
        return d


def tail_cycles(cfg: Config) -> int:
    """Cycles after the last slot until the last score has left the array."""
    return 2 * cfg.rows + cfg.cols


def _counts(states: np.ndarray) -> np.ndarray:
    """[Dg, 3]: how many of the rows (or columns) sit at each state, per channel."""
    return np.stack([(states == s).sum(axis=0) for s in range(3)], axis=1)


def _passes(tile, qt, kt):
    """``(mode, streamed channels, nq, nk, sq, sk)`` of each pass of one tile group.

    A pass streams a channel unless every PE can skip it: B needs a K partner
    that is not fully reused, C a Q partner, D a (sq, sk) with work left.
    """
    need_d = (LANES[Mode.D] > 0).astype(np.int64)
    sq = qt[tile.group].state[tile.q_pairs]                 # [Rv, Dg]
    sk = kt[tile.group].state[tile.k_pairs]                 # [Cv, Dg]
    nq, nk = _counts(sq), _counts(sk)                       # [Dg, 3]
    dg = nq.shape[0]
    streamed = {
        Mode.A: np.ones(dg, bool),
        Mode.B: (nk[:, 0] + nk[:, 1]) > 0,
        Mode.C: (nq[:, 0] + nq[:, 1]) > 0,
        Mode.D: np.einsum("ca,ab,cb->c", nq, need_d, nk) > 0,
    }
    for mode, chans in streamed.items():
        yield mode, chans, nq, nk, sq, sk


def kaleido_tile_slots(qt, kt, cfg: Config, with_matcher: bool) -> tuple[np.ndarray, np.ndarray]:
    """Slots and lane work of every tile group, in the controller's order."""
    min_slots = 2 * cfg.rows - 1
    tiles = tile_groups(qt, kt, cfg)
    slots = np.zeros(len(tiles), np.int64)
    work = np.zeros(len(tiles), np.int64)
    for t, tile in enumerate(tiles):
        for mode, chans, nq, nk, sq, sk in _passes(tile, qt, kt):
            issued = int(chans.sum())
            if with_matcher and mode in (Mode.B, Mode.D):
                issued = len(match(np.flatnonzero(chans), column_needs(mode, sq, sk), cfg.lookahead))
            slots[t] += max(issued, min_slots)
            per_channel = np.einsum("ca,ab,cb->c", nq, LANES[mode], nk)
            work[t] += int(per_channel[chans].sum())
    return slots, work


def kaleido_products(qt, kt, cfg: Config) -> dict:
    """How many full (two-lane) and nibble (one-lane) products the engine runs, and its
    tile groups: what an energy model needs beyond the cycle count. Pairing and
    clustering change when products run, never which, so the variant does not matter."""
    full = nibble = 0
    tiles = tile_groups(qt, kt, cfg)
    for tile in tiles:
        for mode, chans, nq, nk, _, _ in _passes(tile, qt, kt):
            def products(lanes):
                pes = np.einsum("ca,ab,cb->c", nq, (LANES[mode] == lanes).astype(np.int64), nk)
                return int(pes[chans].sum())
            full += products(2)
            nibble += products(1)
    return {"full_products": full, "nibble_products": nibble, "tiles": len(tiles), "passes": 4}


def kaleido_cycles(q: np.ndarray, k: np.ndarray, cfg: Config, variant: str = "pe",
                   tables=None) -> CycleReport:
    """Cycles and lane work of the Kaleido engine on int8 operands ``[N, D]``.

    ``tables`` are the pair tables the engine ran (default: the variant's own).
    """
    with_scheduler, with_matcher = variant_parts(variant)
    qt, kt = tables if tables is not None else kaleido_tables(q, k, cfg, variant)
    tile_slots, tile_work = kaleido_tile_slots(qt, kt, cfg, with_matcher)
    slots = int(tile_slots.sum()) + 1                            # + the final drain
    engine = slots + tail_cycles(cfg)
    lead = scheduler_lead(q, k, cfg) if with_scheduler else 0
    return CycleReport("kaleido", engine + lead, slots, len(tile_slots), int(tile_work.sum()),
                       cfg.rows * cfg.cols, variant, engine, lead)


def split_cycles(tile_slots: np.ndarray, arrays: int, cfg: Config) -> int:
    """Cycles when ``arrays`` engines share the tile groups round-robin, each
    with its own controller: the slowest engine's count."""
    per_array = [int(tile_slots[a::arrays].sum()) for a in range(arrays)]
    return max(per_array) + 1 + tail_cycles(cfg)


def baseline_tile_slots(n_q: int, n_k: int, cfg: Config) -> np.ndarray:
    tq, tk = -(-n_q // cfg.rows), -(-n_k // cfg.cols)
    return np.full(tq * tk, max(cfg.head_dim, 2 * cfg.rows - 1), np.int64)


def baseline_cycles(n_q: int, n_k: int, cfg: Config) -> CycleReport:
    """Cycles and lane work of the baseline engine: dense tiles of R x C tokens."""
    D = cfg.head_dim
    tq, tk = -(-n_q // cfg.rows), -(-n_k // cfg.cols)
    slots = tq * tk * max(D, 2 * cfg.rows - 1) + 1
    cycles = slots + tail_cycles(cfg)
    return CycleReport("baseline", cycles, slots, tq * tk, 2 * D * n_q * n_k,
                       cfg.rows * cfg.cols, "pe", cycles, 0)
