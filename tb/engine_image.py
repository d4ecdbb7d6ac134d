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
from golden.tiling import accumulate, dense_tiles, pair_tables, tile_groups
from hw.engine import GROUP_SLOTS, word_layout

__all__ = ["EngineImage", "kaleido_image", "baseline_image", "Scoreboard"]


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

    def settings(self) -> dict:
        """Values of the engine's static input ports."""
        pad = GROUP_SLOTS - len(self.dg)
        return {"groups": self.groups, "dg": self.dg + [0] * pad,
                "q_tiles": self.q_tiles + [0] * pad, "k_tiles": self.k_tiles + [0] * pad,
                "q_base": self.q_base + [0] * pad, "k_base": self.k_base + [0] * pad}


def _pack(design: str, entries: list[dict], size: int) -> int:
    """One buffer word of ``size`` entries as an integer, laid out by the engine's own layout."""
    return word_layout(design, size).const(entries).as_bits()


def kaleido_image(q: np.ndarray, k: np.ndarray, cfg: Config, tables=None) -> EngineImage:
    """Buffer images of the pair tables of ``q`` and ``k`` (int8 ``[N, D]``);
    ``tables`` replaces their natural order (the scheduler's clusters)."""
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
    img.tiles = [("kaleido", tile, qt[tile.group], kt[tile.group]) for tile in tile_groups(qt, kt, cfg)]
    return img


def baseline_image(q: np.ndarray, k: np.ndarray, cfg: Config) -> EngineImage:
    """Buffer images for the baseline engine: R (or C) tokens per word, all D channels."""
    D = q.shape[1]
    img = EngineImage("baseline", [], [], 1, [D], [], [], [0], [0])
    for x, words, n, tiles in ((q, img.q_words, cfg.rows, img.q_tiles), (k, img.k_words, cfg.cols, img.k_tiles)):
        count = -(-x.shape[0] // n)
        tiles.append(count)
        for t in range(count):
            members = range(t * n, min((t + 1) * n, x.shape[0]))
            for c in range(D):
                words.append(_pack("baseline", [{"x": int(x[p, c]), "valid": 1} for p in members], n))
    img.tiles = [("baseline", tq, tk) for tq, tk in dense_tiles(q.shape[0], k.shape[0], cfg)]
    return img


class Scoreboard:
    """The accumulation buffer: turns each column's stream of drained scores
    into the ``N x N`` result, in the order the controller finishes them."""

    def __init__(self, image: EngineImage, cfg: Config, n_q: int, n_k: int):
        self.image, self.cfg = image, cfg
        self.scores = np.zeros((n_q, n_k), np.int64)
        self.per_tile = (4 if image.design == "kaleido" else 1) * cfg.rows
        self.columns = [[] for _ in range(cfg.cols)]

    def push(self, column: int, value: int) -> None:
        self.columns[column].append(value)

    @property
    def expected_per_column(self) -> int:
        return len(self.image.tiles) * self.per_tile

    def result(self) -> np.ndarray:
        """The accumulated scores; raises if any column drained the wrong count."""
        R, C = self.cfg.rows, self.cfg.cols
        for j, col in enumerate(self.columns):
            if len(col) != self.expected_per_column:
                raise AssertionError(f"column {j} drained {len(col)} scores, "
                                     f"expected {self.expected_per_column}")
        out = self.scores.copy()
        for t, tile in enumerate(self.image.tiles):
            block = np.array([col[t * self.per_tile:(t + 1) * self.per_tile] for col in self.columns],
                             np.int64).T                            # [per_tile, C]
            if tile[0] == "kaleido":
                _, tg, qtab, ktab = tile
                accumulate(out, tg, qtab, ktab, block.reshape(4, R, C))
            else:
                _, rows, cols = tile
                out[np.ix_(list(rows), list(cols))] += block[:len(rows), :len(cols)]
        return out
