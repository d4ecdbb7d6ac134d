"""Fast cycle model of ``Q K^T``: the cycle model of :mod:`golden.cycle_model`
for heads too big to walk tile group by tile group, exact or sampled.

The exact model visits every tile group in Python; a head of ``N`` tokens has
about ``N^2 / (4 R C)`` of them per channel group, so a 480p Wan2.1 head
(``N = 32,760``) has 52 million, hours of work. This model gets the same
answer, or a stated estimate of it, much faster, in two steps:

* **Tile groups at once.** :func:`tile_costs` computes what the controller
  issues for a whole batch of tile groups with array operations: the channels
  each pass streams, the lanes each PE needs, the matcher's pairing
  (:func:`golden.matcher.match_slots`), the lane work and the products. It
  uses the same tables as the exact model (:func:`golden.cycle_model.lanes_table`),
  so a batch gives bit for bit what the exact model gives tile by tile.
* **A head as a sum.** A tile group's own slots, with the drain waits it
  causes, depend on nothing that ran before it when its pass A (every channel
  of its group) lasts at least ``2R`` slots (:func:`golden.drain.group_waits`
  says why). The head's engine slots are then a sum over tile groups, plus one
  final slot. A sum can be *sampled*: tile groups are drawn per stratum
  (channel group x how much work the Q tile's pairs need x the K tile's, in
  ``bins`` quantiles each), and the head's figure is the stratified estimate,
  with its ``confidence`` interval from the strata's sample variances (a
  normal interval; the stratified estimator is unbiased).

With ``samples=None`` (or at least as many samples as tile groups) every tile
group is computed: the figures are exact and equal the exact model's, which the
tests check. Otherwise a figure is an estimate with an interval. The driver's
choice (``schedule="auto"``) is made as the exact model makes it, the fewest
cycles among the variant's dispatcher parts and the dense schedule, on the
estimates; every option is estimated on the same sample of tile groups of its
pair tables, so the comparison is not blurred by different draws.

The scheduler's lead and clustering come from :mod:`golden.scheduler` itself:
they are linear in ``N`` and cheap. The channel window (``Config.issue_window``)
has no batched form yet; its sampled tile groups go through
:func:`golden.channel_window.window_slots` one by one.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from statistics import NormalDist
from typing import Callable

import numpy as np

from golden import drain
from golden.config import Config
from golden.cycle_model import baseline_cycles, lanes_table, scheduler_lead, sub_variants, tail_cycles, variant_parts
from golden.dispatchers import DISPATCHERS, dispatcher_of
from golden.pe_encoding import Mode
from golden.scheduler import PARTNER_LANES, cluster_tables
from golden.tiling import pair_tables

__all__ = ["NO_TOKEN", "CycleEstimate", "tile_states", "tile_costs", "estimate_cycles", "QUANTITIES"]

#: The state a missing row or column of a partial tile group carries: it needs
#: no lane in any pass and streams nothing.
NO_TOKEN = 3

#: What the model sums over tile groups, per dispatcher option: ``slots`` (issued
#: slots with the drain waits they cause), ``lane_work``, the ``full`` and
#: ``nibble`` products, and ``channel_steps``, the channels the passes stream
#: (each moves one operand byte over every row and column port; a dispatcher
#: packs them into slots but does not change them).
QUANTITIES = ("slots", "lane_work", "full_products", "nibble_products", "channel_steps")

_CHUNK = 4096


def _padded_tables(kind) -> np.ndarray:
    # [mode, sq, sk] lanes with a row and column of zeros for NO_TOKEN.
    table = np.zeros((4, 4, 4), np.int8)
    table[:, :3, :3] = lanes_table(kind)
    return table


@dataclass
class CycleEstimate:
    """Cycles of the Kaleido engine on a head, exact or estimated.

    ``cycles``, ``lane_work``, ``full_products`` and ``nibble_products`` are the
    figures of what ran (``ran_as``: a variant's dispatcher parts, or
    ``"dense"``); ``intervals`` gives each its ``confidence`` interval (equal to
    the figure when ``exact``). ``options`` holds every option's cycles and
    interval, products and scheduler lead, ``tiles`` the head's tile groups (per pair table set) and
    ``sampled`` how many were computed."""

    cycles: float
    ran_as: str
    schedule: str
    variant: str
    exact: bool
    confidence: float
    lane_work: float
    full_products: float
    nibble_products: float
    tiles: int
    sampled: int
    lead_cycles: int
    intervals: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)

    @property
    def low(self) -> float:
        return self.intervals["cycles"][0]

    @property
    def high(self) -> float:
        return self.intervals["cycles"][1]

    @property
    def executed_macs(self) -> float:
        """Lane-weighted MACs: a full product 1, a nibble product 0.5."""
        return self.lane_work / 2

    def as_dict(self) -> dict:
        d = asdict(self)
        d.update(low=self.low, high=self.high, executed_macs=self.executed_macs)
        return d


def tile_states(tables, cfg: Config, group: int, q_tiles: np.ndarray, k_tiles: np.ndarray):
    """Partner states of tile groups ``(q_tiles[s], k_tiles[s])`` of channel group
    ``group``: ``sq [S, R, Dg]`` and ``sk [S, C, Dg]``, :data:`NO_TOKEN` where a
    partial tile has no pair."""
    qt, kt = tables[0][group], tables[1][group]
    return (_padded(qt.state, cfg.rows)[q_tiles], _padded(kt.state, cfg.cols)[k_tiles])


def _padded(state: np.ndarray, size: int) -> np.ndarray:
    tiles = -(-len(state) // size)
    out = np.full((tiles * size, state.shape[1]), NO_TOKEN, np.int8)
    out[:len(state)] = state
    return out.reshape(tiles, size, state.shape[1])


def tile_costs(sq: np.ndarray, sk: np.ndarray, cfg: Config, dispatchers=("in-order", "matcher")) -> dict:
    """What the controller issues for a batch of tile groups (:func:`tile_states`).

    Returns ``slots`` per dispatcher (``[S, 4]``, issued slots of passes A-D
    before drain waits), and ``lane_work``, ``full_products``,
    ``nibble_products`` and ``channel_steps`` (``[S]``; the dispatcher does not
    change them). The
    rules are the exact model's (:func:`golden.cycle_model.kaleido_tile_slots`):
    A streams every channel; B a channel some column needs (``sk != 2``); C one
    some row needs; D one some PE has lanes for; a paired pass takes the slots
    its dispatcher issues.
    """
    table = _padded_tables(cfg.pe.kind)
    s, _, dg = sq.shape
    real_q, real_k = sq < NO_TOKEN, sk < NO_TOKEN
    streamed = {Mode.A: np.ones((s, dg), bool),
                Mode.B: ((sk < 2) & real_k).any(axis=1),
                Mode.C: ((sq < 2) & real_q).any(axis=1)}
    out = {"slots": {d: np.zeros((s, 4), np.int64) for d in dispatchers},
           "lane_work": np.zeros(s, np.int64), "full_products": np.zeros(s, np.int64),
           "nibble_products": np.zeros(s, np.int64), "channel_steps": np.zeros(s, np.int64)}
    for mode in Mode:
        if mode == Mode.LINEAR:
            continue
        lanes = table[mode][sq[:, :, None, :], sk[:, None, :, :]]            # [S, R, C, Dg]
        lanes = lanes.reshape(s, -1, dg).transpose(0, 2, 1)                   # [S, Dg, PEs]
        if mode == Mode.D:
            streamed[mode] = (lanes > 0).any(axis=2)
        chans = streamed[mode]
        out["lane_work"] += (lanes.sum(axis=2, dtype=np.int64) * chans).sum(axis=1)
        out["full_products"] += ((lanes == 2).sum(axis=2) * chans).sum(axis=1)
        out["nibble_products"] += ((lanes == 1).sum(axis=2) * chans).sum(axis=1)
        out["channel_steps"] += chans.sum(axis=1)
        for name in dispatchers:
            out["slots"][name][:, mode] = _issued(name, mode, chans, lanes, cfg)
    return out


def _issued(dispatcher: str, mode: Mode, chans: np.ndarray, lanes: np.ndarray, cfg: Config) -> np.ndarray:
    # Slots one pass takes under a dispatcher: pass A streams every channel, one a
    # slot; B-D take what the dispatcher's batched model says.
    if mode == Mode.A:
        return chans.sum(axis=1)
    return DISPATCHERS[dispatcher].batched(mode, chans, lanes, cfg)


class _TableSet:
    """The tile groups of one pair of table lists (natural order, or clustered),
    their strata, and what has been computed of them."""

    def __init__(self, tables, cfg: Config, dispatchers, samples: int | None, bins: int, rng):
        self.tables, self.cfg, self.dispatchers = tables, cfg, dispatchers
        q, k = tables
        self.shape = [(-(-a.pairs // cfg.rows), -(-b.pairs // cfg.cols)) for a, b in zip(q, k)]
        self.tiles = sum(tq * tk for tq, tk in self.shape)
        self.census = samples is None or samples >= self.tiles
        # Every group's pass A must outlast the drain spacing for the sum rule.
        self.summable = all(t.width >= drain.drain_spacing(cfg.rows) for t in q)
        self.strata = self._census() if self.census else self._strata(samples, bins, rng)

    def _census(self):
        # One stratum per channel group, every tile group in the controller's order.
        out = []
        for g, (tq, tk) in enumerate(self.shape):
            i, j = np.divmod(np.arange(tq * tk), tk)
            out.append((g, tq * tk, i, j))
        return out

    def _strata(self, samples: int, bins: int, rng):
        # Channel group x Q-tile work quantile x K-tile work quantile; each stratum
        # gets samples in proportion to its tile groups, at least two (for a variance).
        out = []
        for g, (tq, tk) in enumerate(self.shape):
            qb = _quantile_bins(_tile_work(self.tables[0][g].state, self.cfg.rows), bins)
            kb = _quantile_bins(_tile_work(self.tables[1][g].state, self.cfg.cols), bins)
            for qs in qb:
                for ks in kb:
                    size = len(qs) * len(ks)
                    n = max(2, round(samples * size / self.tiles))
                    if n >= size:
                        i, j = np.repeat(qs, len(ks)), np.tile(ks, len(qs))
                    else:
                        i, j = rng.choice(qs, n), rng.choice(ks, n)
                    out.append((g, size, i, j))
        return out

    @property
    def sampled(self) -> int:
        return sum(len(i) for _, _, i, _ in self.strata)

    def evaluate(self, progress: Callable[[int], None] | None = None) -> dict:
        """Per stratum and quantity, the per-tile values of every sampled tile group.

        Each tile group's costs depend on it alone, so the strata of one channel
        group are computed together, in chunks of :data:`_CHUNK` tile groups, and
        split again: a stratum holds some hundred tile groups, and the
        dispatchers' batched models take as long a round for a hundred passes as
        for thousands."""
        cfg = self.cfg
        values = [None] * len(self.strata)
        for g in dict.fromkeys(g for g, *_ in self.strata):
            mine = [n for n, (h, *_) in enumerate(self.strata) if h == g]
            i = np.concatenate([self.strata[n][2] for n in mine])
            j = np.concatenate([self.strata[n][3] for n in mine])
            parts = []
            for lo in range(0, len(i), _CHUNK):
                sq, sk = tile_states(self.tables, cfg, g, i[lo:lo + _CHUNK], j[lo:lo + _CHUNK])
                parts.append(tile_costs(sq, sk, cfg, self.dispatchers))
                if progress:
                    progress(len(sq))
            whole = _concat(parts)
            ends = np.cumsum([len(self.strata[n][2]) for n in mine])
            for n, lo, hi in zip(mine, [0, *ends[:-1]], ends):
                size, sampled = self.strata[n][1], len(self.strata[n][2])
                values[n] = (size, _slice(whole, lo, hi), sampled == size)
        return values


def _slice(values: dict, lo: int, hi: int) -> dict:
    out = {q: values[q][lo:hi] for q in QUANTITIES[1:]}
    out["slots"] = {d: v[lo:hi] for d, v in values["slots"].items()}
    return out


def _concat(parts: list[dict]) -> dict:
    out = {q: np.concatenate([p[q] for p in parts]) for q in QUANTITIES[1:]}
    out["slots"] = {d: np.concatenate([p["slots"][d] for p in parts]) for d in parts[0]["slots"]}
    return out


def _tile_work(state: np.ndarray, size: int) -> np.ndarray:
    # Lanes the partners of each tile's pairs still need (the weight rule's key).
    per_pair = PARTNER_LANES[state.astype(np.int64)].sum(axis=1)
    tiles = -(-len(per_pair) // size)
    padded = np.zeros(tiles * size, np.int64)
    padded[:len(per_pair)] = per_pair
    return padded.reshape(tiles, size).sum(axis=1)


def _quantile_bins(work: np.ndarray, bins: int) -> list[np.ndarray]:
    order = np.argsort(work, kind="stable")
    return [b for b in np.array_split(order, min(bins, len(order))) if len(b)]


def _total(values, pick: Callable[[dict], np.ndarray]) -> tuple[float, float]:
    # Stratified total and its variance: sum of N_h * mean_h, sum of N_h^2 s_h^2 / n_h.
    total = var = 0.0
    for size, v, whole in values:
        x = pick(v).astype(np.float64)
        if whole:
            total += x.sum()
            continue
        total += size * x.mean()
        var += size * size * x.var(ddof=1) / len(x)
    return total, var


def estimate_cycles(q: np.ndarray, k: np.ndarray, cfg: Config, samples: int | None = None,
                    seed: int = 0, confidence: float = 0.95, bins: int = 8,
                    progress: Callable[[int, int], None] | None = None, natural=None,
                    lead: int | None = None) -> CycleEstimate:
    """Cycles of the Kaleido engine on int8 ``q``, ``k`` ``[N, D]`` with the
    driver's choice (as :func:`golden.cycle_model.kaleido_cycles` with
    ``schedule="auto"``), from at most ``samples`` tile groups per pair table set.

    ``samples=None`` computes every tile group: exact. ``seed`` fixes the draw.
    ``progress(done, total)`` is called as tile groups are computed. A caller
    that has them passes the operands' natural pair tables (``natural``, as
    :func:`golden.tiling.pair_tables` gives them) and the scheduler's ``lead``
    (:func:`golden.cycle_model.scheduler_figures`), so that each is made once a head.
    """
    if samples is not None and samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    rng = np.random.default_rng(seed)
    subs = sub_variants(cfg.variant)
    natural = natural or (pair_tables(q, cfg), pair_tables(k, cfg))
    sets = {False: natural}
    if any(variant_parts(v)[0] for v in subs):
        sets[True] = (cluster_tables(natural[0], cfg), cluster_tables(natural[1], cfg))
    used = {}
    for v in subs:
        sch, mat = variant_parts(v)
        used.setdefault(sch, set()).add(dispatcher_of(cfg, mat))
    sets = {sch: _TableSet(sets[sch], cfg, tuple(sorted(used[sch])), samples, bins, rng) for sch in used}
    total = sum(s.sampled for s in sets.values())
    done = [0]

    def tick(n):
        done[0] += n
        if progress:
            progress(done[0], total)

    values = {sch: s.evaluate(tick) for sch, s in sets.items()}
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    if True not in sets:
        lead = 0
    elif lead is None:
        lead = scheduler_lead(q, k, cfg)
    options = {}
    for v in subs:
        sch, mat = variant_parts(v)
        d = dispatcher_of(cfg, mat)
        ts = sets[sch]
        if ts.census and not ts.summable:
            slots = _census_slots(values[sch], d, cfg)
            mean, var = float(slots), 0.0
        else:
            mean, var = _total(values[sch], lambda x: _tile_slots(x, d, cfg))
            mean += 1                                      # the final drain's slot
        cycles = mean + tail_cycles(cfg) + (lead if sch else 0)
        half = z * math.sqrt(var)
        options[v] = {"cycles": float(cycles), "low": float(cycles - half), "high": float(cycles + half),
                      "scheduler": sch}
    dense = baseline_cycles(q.shape[0], k.shape[0], cfg)
    options["dense"] = {"cycles": float(dense.cycles), "low": float(dense.cycles), "high": float(dense.cycles),
                        "scheduler": None}
    # Every option's products, so that a caller weighing them (the chip model's
    # choice, sim.chip.qk_schedule) has what each would execute.
    n_q, n_k = q.shape[0], k.shape[0]
    dense_figures = {"lane_work": (2 * cfg.head_dim * n_q * n_k, 0.0),
                     "full_products": (n_q * n_k * cfg.head_dim, 0.0), "nibble_products": (0, 0.0),
                     "channel_steps": (dense.tiles * cfg.head_dim, 0.0)}
    per_set = {sch: {name: _total(values[sch], lambda x, name=name: x[name]) for name in QUANTITIES[1:]}
               for sch in sets}
    for v, o in options.items():
        figs = dense_figures if v == "dense" else per_set[o["scheduler"]]
        o.update({name: float(m) for name, (m, _) in figs.items()})
        o["lead"] = lead if v != "dense" and o["scheduler"] else 0
        o["tiles"] = dense.tiles if v == "dense" else sets[o["scheduler"]].tiles
        # The tile groups of the first channel group, whose drains are each score's first.
        o["first_tiles"] = dense.tiles if v == "dense" else math.prod(sets[o["scheduler"]].shape[0])
    best = min(options, key=lambda v: options[v]["cycles"])        # the first of equals: own first
    # Exact when every tile group was computed and the head's sum holds (or ran in order).
    exact = all(s.census or (s.summable and all(whole for _, _, whole in values[sch]))
                for sch, s in sets.items())
    figures = dense_figures if best == "dense" else per_set[options[best]["scheduler"]]
    intervals = {"cycles": (options[best]["low"], options[best]["high"])}
    for name, (m, var) in figures.items():
        intervals[name] = (float(m - z * math.sqrt(var)), float(m + z * math.sqrt(var)))
    ts = sets[options[best]["scheduler"]] if best != "dense" else sets[False]
    return CycleEstimate(
        cycles=options[best]["cycles"], ran_as=best, schedule="dense" if best == "dense" else "pairs",
        variant=cfg.variant, exact=exact, confidence=confidence,
        lane_work=float(figures["lane_work"][0]), full_products=float(figures["full_products"][0]),
        nibble_products=float(figures["nibble_products"][0]), tiles=ts.tiles, sampled=total,
        lead_cycles=lead if best != "dense" and options[best]["scheduler"] else 0,
        intervals=intervals, options=options)


def _tile_slots(values: dict, dispatcher: str, cfg: Config) -> np.ndarray:
    # Each tile group's issued slots and the drain waits it causes.
    slots = values["slots"][dispatcher]
    return np.maximum(slots, 1).sum(axis=1) + drain.group_waits(slots, cfg.rows)


def _census_slots(values, dispatcher: str, cfg: Config) -> int:
    # Every tile group in order through the drain rule itself (a group narrower than 2R).
    lengths = np.concatenate([v["slots"][dispatcher] for _, v, _ in values])
    return drain.drain_slots(lengths.ravel(), cfg.rows)
