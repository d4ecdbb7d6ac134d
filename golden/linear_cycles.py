"""Cycle model of a linear layer ``X~ W`` on the engine (:mod:`golden.windows`),
exact like :mod:`golden.cycle_model`, whose drain rule and tail it shares.

Per tile group: the LINEAR pass streams every channel of the group; each
partner's pass B streams the channels where some valid column's window is
not a full reuse (one set for all partners, recorded during LINEAR), paired by
the matcher when the variant has one; a partner beyond the PE's registers
streams every channel, unpaired. The baseline, and Kaleido's dense fallback,
tile ``W^T`` by ``X`` (``X~`` for Kaleido) plainly over all channels. With
``schedule="auto"`` the driver takes the fewest cycles of: the passes with the
matcher, without it, and the dense schedule; so Kaleido is never slower than
the baseline array on the same layer.
"""

from __future__ import annotations

import numpy as np

from .config import Config
from .cycle_model import SCHEDULES, CycleReport, baseline_cycles, engine_cycles, lanes_table, tail_cycles
from .dispatchers import DISPATCHERS, dispatcher_of
from .matcher import pe_needs
from .pe_encoding import Mode
from .windows import linear_config, window_tables, window_tiles

__all__ = ["linear_tile_slots", "kaleido_linear_cycles", "baseline_linear_cycles"]


def linear_tile_slots(tables, outputs: int, cfg: Config, with_matcher: bool):
    """Issued slots, lane work and nibble products of every pass of every tile
    group, as lists (one ``[passes]`` array per tile group, in the controller's
    order). A pass's whole products are its lane work less its nibbles, halved."""
    lanes = lanes_table(cfg.pe.kind)
    tiles = window_tiles(tables, outputs, cfg)
    paired = _paired_slots(tiles, tables, cfg) if with_matcher else {}
    slots, work, nibbles = [], [], []
    for n, tile in enumerate(tiles):
        table = tables[tile.group]
        cols = np.asarray(tile.k_pairs)
        rv = len(tile.q_pairs)
        G = table.width
        s = [G]
        w = [2 * rv * len(cols) * G]
        nb = [0]
        if table.partners:
            streamed = _streamed(table, cols)
            for p in range(table.partners):
                state = table.state[cols, p]
                if p >= cfg.accumulators - 1:
                    chans, issued = np.arange(G), G
                else:
                    chans = streamed
                    issued = paired.get(n, len(chans))
                s.append(issued)
                need = lanes[Mode.B, 0][state[:, chans]]
                w.append(int(rv * need.sum()))
                nb.append(int(rv * (need == 1).sum()))
        slots.append(np.array(s, np.int64))
        work.append(np.array(w, np.int64))
        nibbles.append(np.array(nb, np.int64))
    return slots, work, nibbles


def _streamed(table, cols: np.ndarray) -> np.ndarray:
    # The channels a tile group's partner passes stream: those where some valid
    # column's window (its state at the first partner) is not a full reuse.
    return np.flatnonzero((table.state[cols, 0] != 2).any(axis=0))


#: Tile groups whose partner passes the dispatcher's batched model takes at once.
_BATCH = 1024


def _paired_slots(tiles, tables, cfg: Config) -> dict[int, int]:
    """``{tile group: slots}`` of the paired partner passes, under the design
    point's dispatcher. Every paired partner of a tile group streams the same
    channels with the same needs (the window's), so each tile group is matched
    once, and the tile groups of a channel group together, each padded to the
    whole ``R x C`` array (padded PEs need nothing)."""
    unit = DISPATCHERS[dispatcher_of(cfg, True)]
    by_group = {}
    for n, tile in enumerate(tiles):
        if tables[tile.group].partners:
            by_group.setdefault(tile.group, []).append(n)
    out = {}
    for g, members in by_group.items():
        table, G = tables[g], tables[g].width
        for lo in range(0, len(members), _BATCH):
            batch = members[lo:lo + _BATCH]
            chans = np.zeros((len(batch), G), bool)
            needs = np.zeros((len(batch), G, cfg.rows, cfg.cols), np.int64)
            for i, n in enumerate(batch):
                cols, rv = np.asarray(tiles[n].k_pairs), len(tiles[n].q_pairs)
                first = table.state[cols, 0]                                  # [Cv, G]: the window's state
                chans[i, _streamed(table, cols)] = True
                needs[i, :, :rv, :len(cols)] = pe_needs(Mode.B, np.zeros((rv, G), np.int64), first,
                                                        cfg.pe.kind).reshape(G, rv, len(cols))
            issued = unit.batched(Mode.B, chans, needs.reshape(len(batch), G, -1), cfg)
            out.update(zip(batch, (int(v) for v in issued)))
    return out


def baseline_linear_cycles(n: int, outputs: int, cfg: Config, heads: int) -> CycleReport:
    """The baseline array on ``X W``: R outputs by C tokens, all channels."""
    return baseline_cycles(outputs, n, linear_config(cfg, heads))


def kaleido_linear_cycles(x: np.ndarray, outputs: int, cfg: Config, schedule: str = "auto") -> CycleReport:
    """Cycles and lane work of the Kaleido engine on ``X~ W`` (``X`` int8 ``[N, heads*D]``,
    ``outputs`` columns of ``W``), with the dispatcher of ``cfg.variant``. ``ran_as`` names what ran: a variant (the
    scheduler does not apply to windows, so ``full`` runs as ``pe-m``) or ``dense``."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; choose one of {', '.join(SCHEDULES)}")
    heads = x.shape[1] // cfg.head_dim
    lcfg = linear_config(cfg, heads)
    tables = window_tables(x, cfg)
    variant, with_matcher = cfg.variant, cfg.dispatch.parts[1]

    def windows(matcher: bool) -> CycleReport:
        slots, work, _ = linear_tile_slots(tables, outputs, lcfg, matcher)
        engine = engine_cycles(np.concatenate(slots) if slots else np.zeros(0, np.int64), lcfg)
        return CycleReport("kaleido", engine, engine - tail_cycles(lcfg), len(slots),
                           int(sum(int(w.sum()) for w in work)), lcfg.rows * lcfg.cols, variant, engine, 0,
                           "pairs", engine, "pe-m" if matcher else "pe")

    own = windows(with_matcher)
    if schedule == "pairs":
        return own
    dense = baseline_linear_cycles(x.shape[0], outputs, cfg, heads)
    dense = CycleReport("kaleido", dense.cycles, dense.slots, dense.tiles, dense.lane_work, dense.pes,
                        variant, dense.engine_cycles, 0, "dense", own.cycles, "dense")
    if schedule == "dense":
        return dense
    options = [own] + ([windows(False)] if with_matcher else [])
    best = min(options + [dense], key=lambda r: r.cycles)
    best.pair_cycles = own.cycles
    return best
