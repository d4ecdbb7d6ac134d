"""What the testbench loads into the attention engine, and how it reads the
drained scores back: buffer images, the controller's group settings, and the
scoreboard that plays the accumulation buffer.

The accumulation buffer lives here, in the testbench, on purpose: it is an
SRAM with an adder beside the array (the paper's "accumulation buffer"), and
modelling it in Python keeps the simulated RTL to what this project designs
(PEs, array, controller) while every partial score still comes out of the RTL.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from golden.config import Config
from golden.cycle_model import variant_parts
from golden.reuse import State, pair_reuse, window_reuse
from golden.tiling import accumulate, dense_tiles, pair_tables, tile_groups
from golden.windows import accumulate_windows, linear_config, window_tables, window_tiles
from hw.core.buffers import word_layout
from hw.core.sequencer import GROUP_SLOTS

__all__ = ["EngineImage", "kaleido_image", "baseline_image", "driver_image", "Scoreboard", "linear_image",
           "check_run"]


@dataclass
class EngineImage:
    design: str
    q_words: list[int]
    k_words: list[int]
    groups: int
    dg: list[int]
    q_tiles: list[int]
    k_tiles: list[int]
    q_base: list[int]
    k_base: list[int]
    # (what each drained score is, in the order one column emits them)
    tiles: list = field(default_factory=list)
    schedule: str = "pairs"         # passes A-D over pairs, or dense tiles of tokens
    unpaired: bool = False          # the matcher bypassed (one step per slot)
    linear: bool = False            # windows of a linear layer (a LINEAR pass, then B per partner)
    partners: list = field(default_factory=list)      # linear: partners per group

    @staticmethod
    def drains(tile) -> int:
        """Drains one column makes for a tile: T0..T3 of pairs, a window's members,
        or the one score of a dense tile."""
        if tile[0] == "windows":
            return tile[2].partners + 1
        return 4 if tile[0] == "pairs" else 1

    def settings(self) -> dict:
        """Values of the engine's static input ports."""
        pad = GROUP_SLOTS - len(self.dg)
        out = {"groups": self.groups, "dg": self.dg + [0] * pad,
               "q_tiles": self.q_tiles + [0] * pad, "k_tiles": self.k_tiles + [0] * pad,
               "q_base": self.q_base + [0] * pad, "k_base": self.k_base + [0] * pad}
        if self.design == "kaleido":
            out["dense"] = int(self.schedule == "dense")
            out["unpaired"] = int(self.unpaired)
            out["linear"] = int(self.linear)
            out["partners"] = self.partners + [0] * (GROUP_SLOTS - len(self.partners))
        return out


def _pack(design: str, entries: list[dict], size: int) -> int:
    """One buffer word of ``size`` entries as an integer, laid out by the engine's own layout."""
    return word_layout(design, size).const(entries).as_bits()


def kaleido_image(q: np.ndarray, k: np.ndarray, cfg: Config, tables=None,
                  schedule: str = "pairs") -> EngineImage:
    """Buffer images of the pair tables of ``q`` and ``k`` (int8 ``[N, D]``);
    ``tables`` replaces their natural order (the scheduler's clusters). With
    ``schedule="dense"``, the Kaleido engine's dense schedule instead: tokens of
    ``Q~`` and ``K~`` tiled like the baseline's (``S~`` is ``Q~ K~^T``)."""
    if schedule == "dense":
        return _dense_image("kaleido", pair_reuse(q, cfg).approx, pair_reuse(k, cfg).approx, cfg)
    if schedule != "pairs":
        raise ValueError(f"unknown schedule {schedule!r}")
    qt, kt = tables if tables is not None else (pair_tables(q, cfg), pair_tables(k, cfg))
    img = EngineImage("kaleido", [], [], len(qt), [], [], [], [], [])
    for side, tables, words, n in (("q", qt, img.q_words, cfg.rows), ("k", kt, img.k_words, cfg.cols)):
        for table in tables:
            getattr(img, f"{side}_base").append(len(words))
            tiles = -(-table.pairs // n)
            getattr(img, f"{side}_tiles").append(tiles)
            for t in range(tiles):
                members = range(t * n, min((t + 1) * n, table.pairs))
                for c in range(table.width):
                    entries = [{"x0": int(table.x0[p, c]), "x1": int(table.x1[p, c]),
                                "state": int(table.state[p, c]), "valid": 1} for p in members]
                    words.append(_pack("kaleido", entries, n))
    img.dg = [t.width for t in qt]
    img.tiles = [("pairs", tile, qt[tile.group], kt[tile.group]) for tile in tile_groups(qt, kt, cfg)]
    return img


def driver_image(q: np.ndarray, k: np.ndarray, cfg: Config, report, tables=None) -> EngineImage:
    """The image of what the cycle model's ``report`` says the driver runs on
    ``cfg``'s engine (its variant's dispatcher): the dense schedule, or passes A-D over the scheduler's
    clusters (``tables``, when it ran with the scheduler) or over pairs in natural
    order, with the matcher bypassed when it ran without it."""
    if report.schedule == "dense":
        return kaleido_image(q, k, cfg, schedule="dense")
    with_scheduler, with_matcher = variant_parts(report.ran_as)
    img = kaleido_image(q, k, cfg, tables if with_scheduler else None)
    img.unpaired = cfg.dispatch.parts[1] and not with_matcher
    return img


def gemm_image(design: str, a: np.ndarray, b: np.ndarray, cfg: Config, fold: np.ndarray | None = None) -> EngineImage:
    """Either engine's dense schedule on final operands (int8 ``[Na, K]`` and
    ``[Nb, K]``, no reuse applied): what ``P V~`` runs as, ``a @ b.T``. Kaleido:
    ``fold`` (``[Na, K]``, codes or 0) rides in ``x1`` and, where it is nonzero,
    the entry is a folded key (state ``FULL``): the engine multiplies ``a + fold``
    (:mod:`golden.pv_tiles`), so the product is ``(a + fold) @ b.T``."""
    return _dense_image(design, a, b, cfg, fold)


def linear_image(x: np.ndarray, w: np.ndarray, cfg: Config, report) -> EngineImage:
    """The image of ``Y~^T = W^T X~^T`` as the linear cycle model's ``report`` says
    the driver runs it: windows (:mod:`golden.windows`), matcher bypassed or
    not, or the dense schedule on ``X~``; the engine is built for
    :func:`golden.windows.linear_config`. The Scoreboard's result is ``Y~^T``."""
    heads = x.shape[1] // cfg.head_dim
    lcfg = linear_config(cfg, heads)
    if report.schedule == "dense":
        return _dense_image("kaleido", np.ascontiguousarray(w.T), window_reuse(x, cfg).approx, lcfg)
    tables = window_tables(x, cfg)
    img = EngineImage("kaleido", [], [], len(tables), [t.width for t in tables], [], [], [], [],
                      linear=True, partners=[t.partners for t in tables],
                      unpaired=report.ran_as == "pe" and variant_parts(report.variant)[1])
    outputs = w.shape[1]
    for table in tables:
        img.q_base.append(len(img.q_words))
        img.q_tiles.append(-(-outputs // lcfg.rows))
        for o0 in range(0, outputs, lcfg.rows):
            for c in table.channels:
                img.q_words.append(_pack("kaleido", [{"x0": int(w[c, o]), "x1": 0, "state": 0, "valid": 1}
                                                     for o in range(o0, min(o0 + lcfg.rows, outputs))],
                                         lcfg.rows))
        img.k_base.append(len(img.k_words))
        img.k_tiles.append(-(-table.windows // lcfg.cols))
        for w0 in range(0, table.windows, lcfg.cols):
            wins = range(w0, min(w0 + lcfg.cols, table.windows))
            # One run of the group's channels per partner (a reference alone: one run).
            for p in range(max(1, table.partners)):
                for c in range(table.width):
                    img.k_words.append(_pack("kaleido", [
                        {"x0": int(table.x0[j, c]),
                         "x1": int(table.x1[j, p, c]) if table.partners else 0,
                         "state": int(table.state[j, p, c]) if table.partners else 0, "valid": 1}
                        for j in wins], lcfg.cols))
    img.tiles = [("windows", tile, tables[tile.group]) for tile in window_tiles(tables, outputs, lcfg)]
    return img


def baseline_image(q: np.ndarray, k: np.ndarray, cfg: Config) -> EngineImage:
    """Buffer images for the baseline engine: R (or C) tokens per word, all D channels."""
    return _dense_image("baseline", q, k, cfg)


def _dense_image(design: str, q: np.ndarray, k: np.ndarray, cfg: Config,
                 fold: np.ndarray | None = None) -> EngineImage:
    # A token as a Kaleido entry: its value in x0, state 0 (pass A then adds the
    # product into R0 alone), x1 unused; or a folded key: state FULL, x1 added.
    if fold is not None and design != "kaleido":
        raise ValueError("only the Kaleido engine folds keys")
    def entry(v, x1=0):
        if design == "baseline":
            return {"x": v, "valid": 1}
        return {"x0": v, "x1": x1, "state": int(State.FULL) if x1 else 0, "valid": 1}

    D = q.shape[1]
    img = EngineImage(design, [], [], 1, [D], [], [], [0], [0], schedule="dense")
    for x, x1, words, n, tiles in ((q, fold, img.q_words, cfg.rows, img.q_tiles),
                                   (k, None, img.k_words, cfg.cols, img.k_tiles)):
        count = -(-x.shape[0] // n)
        tiles.append(count)
        for t in range(count):
            members = range(t * n, min((t + 1) * n, x.shape[0]))
            for c in range(D):
                words.append(_pack(design, [entry(int(x[p, c]), 0 if x1 is None else int(x1[p, c]))
                                            for p in members], n))
    img.tiles = [("dense", tq, tk) for tq, tk in dense_tiles(q.shape[0], k.shape[0], cfg)]
    return img


class Scoreboard:
    """The accumulation buffer: turns each column's stream of drained scores
    into the ``N x N`` result, in the order the controller finishes them.

    Two drains of different parity share the drain chain (:mod:`golden.drain`),
    so their scores reach the top of a column interleaved: a drain's R scores
    leave on every other cycle, all on cycles of one parity. The buffer keeps
    one stream per cycle parity, cuts each into drains of R scores (row 0
    first), and orders the drains by their first score's cycle.
    """

    def __init__(self, image: EngineImage, cfg: Config, n_q: int, n_k: int):
        self.image, self.cfg = image, cfg
        self.scores = np.zeros((n_q, n_k), np.int64)
        self.offsets = np.cumsum([0] + [image.drains(t) * cfg.rows for t in image.tiles])
        self.arrivals = [[] for _ in range(cfg.cols)]          # (cycle, value) per column

    def push(self, column: int, value: int, cycle: int) -> None:
        self.arrivals[column].append((cycle, value))

    @property
    def columns(self) -> list[list[int]]:
        """Each column's scores, drain by drain in the controller's order, row 0 first."""
        R = self.cfg.rows
        out = []
        for arrivals in self.arrivals:
            drains = []
            for parity in (0, 1):
                stream = [(t, v) for t, v in arrivals if t % 2 == parity]
                drains += [stream[i:i + R] for i in range(0, len(stream), R)]
            drains.sort(key=lambda d: d[0][0])
            out.append([v for d in drains for _, v in d])
        return out

    @property
    def expected_per_column(self) -> int:
        return int(self.offsets[-1])

    def result(self, columns: list[list[int]] | None = None) -> np.ndarray:
        """The accumulated scores of ``columns`` (each column's drained scores in the
        controller's order; by default what :meth:`push` collected); raises if any
        column drained the wrong count."""
        R, C = self.cfg.rows, self.cfg.cols
        columns = self.columns if columns is None else columns
        for j, col in enumerate(columns):
            if len(col) != self.expected_per_column:
                raise AssertionError(f"column {j} drained {len(col)} scores, "
                                     f"expected {self.expected_per_column}")
        out = self.scores.copy()
        for t, tile in enumerate(self.image.tiles):
            block = np.array([col[self.offsets[t]:self.offsets[t + 1]] for col in columns],
                             np.int64).T                            # [drains * R, C]
            if tile[0] == "pairs":
                _, tg, qtab, ktab = tile
                accumulate(out, tg, qtab, ktab, block.reshape(4, R, C))
            elif tile[0] == "windows":
                _, tg, table = tile
                accumulate_windows(out, tg, table, block.reshape(-1, R, C))
            else:
                _, rows, cols = tile
                out[np.ix_(list(rows), list(cols))] += block[:len(rows), :len(cols)]
        return out


def check_run(got: np.ndarray, want: np.ndarray, rtl: dict, model, what: str = "scores") -> None:
    """The checker of an engine run: the result bit for bit against golden, the
    cycle counter on the last output, and cycles and lane work equal to the
    cycle model's ``model``."""
    bad = np.argwhere(got != want)
    assert bad.size == 0, (f"{len(bad)} {what} differ from the golden model, first at "
                           f"{tuple(int(i) for i in bad[0])}: RTL {got[tuple(bad[0])]} golden {want[tuple(bad[0])]}")
    assert rtl["cycles"] == rtl["last_out"], f"cycle counter {rtl['cycles']} != last output {rtl['last_out']}"
    assert rtl["cycles"] == model.engine_cycles, f"RTL {rtl['cycles']} cycles, model {model.engine_cycles}"
    assert rtl["lane_work"] == model.lane_work, f"RTL lane work {rtl['lane_work']}, model {model.lane_work}"
