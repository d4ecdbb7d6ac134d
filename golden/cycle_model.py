"""Cycle model of the attention engine: cycles, lane work and utilization of
``Q K^T``, predicted exactly (fill and drain included) without simulating.

It follows the controller of :mod:`hw.core.engine` slot by slot, in closed form:

* a tile group runs passes A-D; A streams every channel of its group; B
  streams the channels where some valid column has ``sk != 2``; C those where
  some valid row has ``sq != 2``; D those where some valid PE needs a product;
* a pass takes as many slots as it streams (paired steps share one), and at
  least one, which carries its hand-over and the drain of the previous pass;
  the baseline streams ``D`` channels per tile;
* a drain waits while the last drain of its slot's parity is closer than
  ``2R`` slots (:mod:`golden.drain`, the rule the RTL controller imports);
* one final slot drains the last scores, which leave the array
  ``2R + C`` cycles later; counting starts the cycle after ``start``;
* the driver (``schedule="auto"``) runs whatever is fastest of passes A-D with
  the variant's dispatcher, passes A-D with its scheduler or matcher bypassed,
  and the dense schedule, so Kaleido never takes more cycles than the
  baseline, nor ``full`` more than ``pe``.

Lane work counts, per slot and valid PE, the lanes its decode turns on (a full
product is two lanes, a nibble product one); utilization is lane work over
``cycles * R * C * 2``. The lanes come from :func:`golden.pe.step_need`, the table the
golden PE model uses.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from . import drain
from .config import Config
from .dispatchers import dispatched_slots
from .matcher import PAIRED_MODES, lanes_of, pe_needs
from .pe_encoding import Mode
from .scheduler import cluster_tables, operand_stream, schedule
from .tiling import TileGroup, pair_tables, tile_groups
from .variants import VARIANTS

__all__ = ["CycleReport", "kaleido_cycles", "baseline_cycles", "LANES", "lanes_table", "tail_cycles",
           "VARIANTS", "variant_parts", "utilization", "kaleido_tables", "scheduler_lead", "kaleido_tile_slots",
           "split_cycles", "baseline_tile_slots", "kaleido_products", "dense_products", "engine_cycles",
           "executed_products", "pass_profile", "sub_variants", "scheduler_busy", "scheduler_figures",
           "SCHEDULES", "gemm_cycles", "tile_lane_needs", "matcher_trace", "group_ready", "group_floors",
           "scheduler_wait", "channel_steps"]



def utilization(lane_work: int, cycles: int, pes: int) -> float:
    """Useful lane work over the lane slots of ``cycles`` on ``pes`` PEs (two lanes each)."""
    return lane_work / (cycles * pes * 2) if cycles else 0.0


def variant_parts(variant: str) -> tuple[bool, bool]:
    """``(scheduler, matcher)`` of a variant."""
    try:
        return VARIANTS[variant]
    except KeyError:
        raise ValueError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}") from None


def kaleido_tables(q, k, cfg: Config, assignments=(None, None)):
    """Pair tables of Q and K as ``cfg``'s engine sees them: clustered by the
    scheduler in variants pe-sh and full (``assignments`` from the RTL, else golden)."""
    return _tables(q, k, cfg, cfg.dispatch.parts[0], assignments)


def _tables(q, k, cfg: Config, with_scheduler: bool, assignments=(None, None)):
    qt, kt = pair_tables(q, cfg), pair_tables(k, cfg)
    if with_scheduler:
        qt = cluster_tables(qt, cfg, assignments[0])
        kt = cluster_tables(kt, cfg, assignments[1])
    return qt, kt


def group_ready(assignments, last) -> list[int]:
    """Per channel group of one operand's stream, the cycle by which all of its
    clusters exist (its last assignment's cycle, plus one): ``assignments`` as
    :func:`golden.scheduler.schedule` or the RTL gives them, ``last`` the
    stream's flags (a group's last pair carries one)."""
    return [assignments[i].cycle + 1 for i, flag in enumerate(last) if flag]


def _scheduler_runs(tables, cfg: Config) -> list[list[int]]:
    # Per operand (its pair tables), each channel group's ready cycle.
    runs = []
    for t in tables:
        strings, last = operand_stream(t, cfg)
        assignments, _ = schedule(strings, last, cfg)
        runs.append(group_ready(assignments, last))
    return runs


def _floors(qt, kt, cfg: Config) -> list[int]:
    return [-(-a.pairs // cfg.rows) * -(-b.pairs // cfg.cols) * (a.width + 3) for a, b in zip(qt, kt)]


def group_floors(q, k, cfg: Config) -> list[int]:
    """Per channel group, the fewest engine cycles it can take: each tile group
    streams every channel in pass A and takes a slot at least in each of B, C and D."""
    return _floors(pair_tables(q, cfg), pair_tables(k, cfg), cfg)


def scheduler_wait(ready: list[list[int]], floors: list[int]) -> int:
    """Cycles the engine waits for the scheduler's clusters over a head. It starts
    a channel group once the clusters of both operands' pairs of the group exist:
    the first group after the scheduler ranks it (the lead), each later one when
    the engine is done with the one before, or when its clusters are, if later.
    ``ready``: each operand's :func:`group_ready`; ``floors``: each group's
    :func:`group_floors`, which the engine's real time only exceeds, so the wait
    counted is never less than the real one (the scheduler works ahead while the
    engine runs a group: past the first group it rarely holds it)."""
    both = [max(cycles) for cycles in zip(*ready)]
    start = wait = both[0]
    for g in range(1, len(both)):
        due = start + floors[g - 1]
        start = max(due, both[g])
        wait += start - due
    return wait


def scheduler_lead(q, k, cfg: Config) -> int:
    """Cycles the engine waits for clusters over a head (:func:`scheduler_wait`):
    mostly its first channel group's ranking, which the array cannot overlap."""
    return scheduler_figures((pair_tables(q, cfg), pair_tables(k, cfg)), cfg)[0]


def scheduler_busy(q, k, cfg: Config) -> int:
    """Cycles the scheduler works on a head: every batch of ``Q``'s stream and of ``K``'s."""
    return scheduler_figures((pair_tables(q, cfg), pair_tables(k, cfg)), cfg)[1]


def scheduler_figures(tables, cfg: Config) -> tuple[int, int]:
    """:func:`scheduler_lead` and :func:`scheduler_busy` of a head from its
    operands' natural pair tables, with one run of the scheduler's model."""
    runs = _scheduler_runs(tables, cfg)
    return scheduler_wait(runs, _floors(*tables, cfg)), sum(ready[-1] for ready in runs)


def lanes_table(kind=3) -> np.ndarray:
    """``[mode, sq, sk]``: lanes a single channel step turns on in one PE of
    ``kind`` (the matcher's table; read-only, built once per kind)."""
    table = np.stack([lanes_of(mode, kind) for mode in range(4)])
    table.flags.writeable = False
    return table


#: The paper's PE's table (3 accumulators); ``lanes_table(4)`` is the exact PE's.
LANES = lanes_table(3)


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
    schedule: str = "pairs"     # what ran: passes A-D ("pairs") or the dense fallback
    pair_cycles: int = 0        # what passes A-D take with every dispatcher part (lead included)
    ran_as: str = ""            # the dispatcher parts used: a variant name, or "dense"

    @property
    def executed_macs(self) -> float:
        """Lane-weighted MACs (docs/concepts.md, "Operation counts and the oracle
        bound"): a full product 1, a nibble product 0.5."""
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
    return drain.tail_cycles(cfg.rows, cfg.cols, cfg.pe_stages)


def _counts(states: np.ndarray) -> np.ndarray:
    """[Dg, 3]: how many of the rows (or columns) sit at each state, per channel."""
    return np.stack([(states == s).sum(axis=0) for s in range(3)], axis=1)


def _passes(tile, qt, kt, lanes):
    """``(mode, streamed channels, nq, nk, sq, sk)`` of each pass of one tile group.

    A pass streams a channel unless every PE can skip it: B needs a K partner
    that is not fully reused, C a Q partner, D a (sq, sk) with work left
    (``lanes``, the PE's table, says which).
    """
    need_d = (lanes[Mode.D] > 0).astype(np.int64)
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


def channel_steps(qt, kt, cfg: Config) -> int:
    """Channels that passes A-D of every tile group stream, over all of them: each
    moves one operand byte over every row and column port (a dispatcher packs
    them into slots, two to a slot where the lanes allow, but streams the same)."""
    lanes = lanes_table(cfg.pe.kind)
    return sum(int(chans.sum()) for tile in tile_groups(qt, kt, cfg) for _, chans, *_ in _passes(tile, qt, kt, lanes))


def kaleido_tile_slots(qt, kt, cfg: Config, with_matcher: bool) -> tuple[np.ndarray, np.ndarray]:
    """Issued slots and lane work of every pass of every tile group (both
    ``[tiles, 4]``; slots before any drain wait), in the controller's order."""
    tiles = tile_groups(qt, kt, cfg)
    lanes = lanes_table(cfg.pe.kind)
    slots = np.zeros((len(tiles), 4), np.int64)
    work = np.zeros((len(tiles), 4), np.int64)
    for t, tile in enumerate(tiles):
        for mode, chans, nq, nk, sq, sk in _passes(tile, qt, kt, lanes):
            issued = int(chans.sum())
            if mode in PAIRED_MODES:
                issued = dispatched_slots(
                    np.flatnonzero(chans), lambda: pe_needs(mode, sq, sk, cfg.pe.kind).reshape(-1, len(sq), len(sk)),
                    mode, cfg, with_matcher)
            slots[t, mode] = issued
            per_channel = np.einsum("ca,ab,cb->c", nq, lanes[mode], nk)
            work[t, mode] = int(per_channel[chans].sum())
    return slots, work


def tile_lane_needs(qt, kt, cfg: Config):
    """Per tile group, in the controller's order: ``(slots of pass A, {pass: lanes
    [Dg, Rv, Cv]})`` for passes B, C and D, each valid PE's lanes per channel
    (0 where it has nothing to do): the work a dispatcher packs."""
    lanes = lanes_table(cfg.pe.kind)
    for tile in tile_groups(qt, kt, cfg):
        work, a_slots = {}, 0
        for mode, chans, _, _, sq, sk in _passes(tile, qt, kt, lanes):
            if mode == Mode.A:
                a_slots = int(chans.sum())
                continue
            needs = pe_needs(mode, sq, sk, cfg.pe.kind)
            work[mode] = needs.reshape(needs.shape[0], sq.shape[0], sk.shape[0])
        yield a_slots, work


def matcher_trace(qt, kt, cfg: Config, tiles: int = 8) -> tuple:
    """What the matcher is given over ``tiles`` whole tile groups (all ``rows`` by
    ``cols`` pairs valid) spread evenly over a run, in the controller's order: per
    tile group ``(sq, sk, sets)``, its rows' and columns' partner states per channel
    (``sq[r][c]``, ``sk[j][c]``, over the group's channels) and the channels each of
    passes B, C and D streams (a bit mask each). Plain tuples, so that the trace
    keys the gate-level run that measures it (:mod:`synth.actions`)."""
    lanes = lanes_table(cfg.pe.kind)
    # The whole tile groups, counted per group without listing them (a full-size
    # head has tens of millions), in the controller's order: group, Q tile, K tile.
    shape = [(a.pairs // cfg.rows, b.pairs // cfg.cols) for a, b in zip(qt, kt)]
    count = sum(nq * nk for nq, nk in shape)
    if not count:
        return ()
    picks = sorted({round(i * (count - 1) / max(1, tiles - 1)) for i in range(min(tiles, count))})
    out = []
    for i in picks:
        group = 0
        while i >= shape[group][0] * shape[group][1]:
            i -= shape[group][0] * shape[group][1]
            group += 1
        q0, k0 = divmod(i, shape[group][1])
        tile = TileGroup(group, range(q0 * cfg.rows, (q0 + 1) * cfg.rows), range(k0 * cfg.cols, (k0 + 1) * cfg.cols))
        sets = {}
        for mode, chans, _, _, sq, sk in _passes(tile, qt, kt, lanes):
            sets[mode] = int(sum(1 << int(c) for c in np.flatnonzero(chans)))
        out.append((tuple(map(tuple, sq.tolist())), tuple(map(tuple, sk.tolist())),
                    tuple(sets[m] for m in PAIRED_MODES)))
    return tuple(out)


def pass_profile(q: np.ndarray, k: np.ndarray, cfg: Config) -> dict:
    """Where passes A-D spend their slots with ``cfg``'s dispatcher: per pass,
    issued slots and lane use (lane work over the lanes of those slots)."""
    qt, kt = kaleido_tables(q, k, cfg)
    slots, work = kaleido_tile_slots(qt, kt, cfg, cfg.dispatch.parts[1])
    lanes = 2 * cfg.rows * cfg.cols
    return {name: {"slots": int(slots[:, p].sum()),
                   "lane_use": float(work[:, p].sum() / (slots[:, p].sum() * lanes)) if slots[:, p].sum() else 0.0}
            for p, name in enumerate("ABCD")}


def engine_cycles(passes: np.ndarray, cfg: Config) -> int:
    """Cycles of one engine that runs ``passes`` (issued slots per pass, any shape,
    in order): the slots with their drain waits and final drain, and the tail."""
    return drain.drain_slots(np.asarray(passes).ravel(), cfg.rows) + tail_cycles(cfg)


def kaleido_products(qt, kt, cfg: Config) -> dict:
    """How many full (two-lane) and nibble (one-lane) products the engine runs, and its
    tile groups: what an energy model needs beyond the cycle count. Pairing and
    clustering change when products run, never which, so the variant does not matter."""
    full = nibble = 0
    tiles = tile_groups(qt, kt, cfg)
    table = lanes_table(cfg.pe.kind)
    for tile in tiles:
        for mode, chans, nq, nk, _, _ in _passes(tile, qt, kt, table):
            def products(lanes):
                pes = np.einsum("ca,ab,cb->c", nq, (table[mode] == lanes).astype(np.int64), nk)
                return int(pes[chans].sum())
            full += products(2)
            nibble += products(1)
    return {"full_products": full, "nibble_products": nibble, "tiles": len(tiles), "passes": 4}


def dense_products(n_q: int, n_k: int, cfg: Config) -> dict:
    """Products of the dense schedule (the baseline's, and Kaleido's fallback)."""
    return {"full_products": n_q * n_k * cfg.head_dim, "nibble_products": 0,
            "tiles": baseline_cycles(n_q, n_k, cfg).tiles, "passes": 1}


def executed_products(q: np.ndarray, k: np.ndarray, cfg: Config, report: "CycleReport",
                      tables=None) -> dict:
    """Products of what ``report`` says the Kaleido engine ran: passes A-D over the
    variant's pair tables (or ``tables``), or the dense schedule."""
    if report.schedule == "dense":
        return dense_products(q.shape[0], k.shape[0], cfg)
    qt, kt = tables if tables is not None else _tables(q, k, cfg, variant_parts(report.ran_as or report.variant)[0])
    return kaleido_products(qt, kt, cfg)


#: How the Kaleido engine runs a head: ``pairs`` (passes A-D), ``dense`` (the
#: baseline's schedule on the same PEs, over ``Q~`` and ``K~``), or ``auto``, the
#: faster of the two by this model (ties go to ``pairs``).
SCHEDULES = ("auto", "pairs", "dense")


def sub_variants(variant: str) -> list[str]:
    """The variants whose dispatcher parts ``variant`` has (itself first): what its
    driver can run by bypassing the scheduler (pairs in natural order) or the matcher."""
    sch, mat = variant_parts(variant)
    subs = [v for v, (s, m) in VARIANTS.items() if (s <= sch) and (m <= mat) and v != variant]
    return [variant] + subs


def _pair_report(q, k, cfg: Config, as_variant: str, tables) -> CycleReport:
    # Passes A-D on cfg's engine with the dispatcher parts of as_variant.
    with_scheduler, with_matcher = variant_parts(as_variant)
    qt, kt = tables if tables is not None else _tables(q, k, cfg, with_scheduler)
    passes, tile_work = kaleido_tile_slots(qt, kt, cfg, with_matcher)
    engine = engine_cycles(passes, cfg)
    lead = scheduler_lead(q, k, cfg) if with_scheduler else 0
    return CycleReport("kaleido", engine + lead, engine - tail_cycles(cfg), len(passes),
                       int(tile_work.sum()), cfg.rows * cfg.cols, cfg.variant, engine, lead, "pairs",
                       engine + lead, as_variant)


def kaleido_cycles(q: np.ndarray, k: np.ndarray, cfg: Config, tables=None,
                   schedule: str = "auto") -> CycleReport:
    """Cycles and lane work of the Kaleido engine on int8 operands ``[N, D]``,
    with the dispatcher of ``cfg.variant``.

    ``tables`` are the pair tables the variant's scheduler produced (default:
    golden's). ``schedule="pairs"`` runs passes A-D with every part of the
    variant's dispatcher. ``"auto"`` (the driver's choice) takes the fewest
    cycles of: passes A-D with the variant's parts or with some bypassed (the
    scheduler's clusters, at the cost of its lead, or pairs in natural order;
    pairing by the matcher or not), and the dense schedule. So Kaleido is never
    slower than the baseline array, nor a variant slower than one with fewer
    parts. Ties go to the variant itself. ``ran_as`` names what ran,
    ``pair_cycles`` keeps what passes A-D with every part would take.
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; choose one of {', '.join(SCHEDULES)}")
    variant = cfg.variant
    own = _pair_report(q, k, cfg, variant, tables)
    if schedule == "pairs":
        return own
    dense = baseline_cycles(q.shape[0], k.shape[0], cfg)
    dense = CycleReport("kaleido", dense.cycles, dense.slots, dense.tiles, dense.lane_work, dense.pes,
                        variant, dense.engine_cycles, 0, "dense", own.cycles, "dense")
    if schedule == "dense":
        return dense
    options = [own] + [_pair_report(q, k, cfg, sub, tables if variant_parts(sub)[0] else None)
                       for sub in sub_variants(variant)[1:]]
    best = min(options + [dense], key=lambda r: r.cycles)        # the first of equals: own first
    best.pair_cycles = own.cycles
    return best


def split_cycles(passes: np.ndarray, arrays: int, cfg: Config) -> int:
    """Cycles when ``arrays`` engines share the tile groups round-robin, each
    with its own controller (``passes`` is ``[tiles, passes per tile]``): the
    slowest engine's count."""
    return max(engine_cycles(passes[a::arrays], cfg) for a in range(arrays))


def baseline_tile_slots(n_q: int, n_k: int, cfg: Config) -> np.ndarray:
    """Issued slots of every baseline tile (``[tiles, 1]``): all ``D`` channels."""
    tq, tk = -(-n_q // cfg.rows), -(-n_k // cfg.cols)
    return np.full((tq * tk, 1), cfg.head_dim, np.int64)


def baseline_cycles(n_q: int, n_k: int, cfg: Config) -> CycleReport:
    """Cycles and lane work of the baseline engine: dense tiles of R x C tokens."""
    tiles = -(-n_q // cfg.rows) * -(-n_k // cfg.cols)
    cycles = drain.uniform_slots(tiles, cfg.head_dim, cfg.rows) + tail_cycles(cfg)
    return CycleReport("baseline", cycles, cycles - tail_cycles(cfg), tiles,
                       2 * cfg.head_dim * n_q * n_k, cfg.rows * cfg.cols, "pe", cycles, 0, "dense", cycles,
                       "dense")


def gemm_cycles(n_a: int, n_b: int, cfg: Config, design: str, depth: int | None = None) -> CycleReport:
    """Cycles of ``a @ b.T`` on final operands (``[n_a, depth]`` by ``[n_b, depth]``,
    ``depth`` by default ``cfg.head_dim``; no reuse), as ``P V~`` runs: the dense
    schedule, which takes the same cycles on the Kaleido engine as on the baseline's."""
    if depth is not None and depth != cfg.head_dim:
        cfg = cfg.with_(partition=(depth, 0, 0), max_channels=None, acc_bits=None, pe_acc_bits=None)
    dense = baseline_cycles(n_a, n_b, cfg)
    dense.design = design
    return dense
