"""Systolic arrays of PEs (docs/design.md, "How the array runs attention"): Kaleido's and the baseline.

R x C PEs, output-stationary. Row bundles enter at the left and move one PE
to the right per cycle; column bundles enter at the top and move one PE down
per cycle. The array applies the usual input skew itself (row ``i`` is delayed
``i`` cycles, column ``j`` is delayed ``j``), so its users present one channel
step on every edge in the same cycle. Finished scores leave at the top of each
column through the PEs' drain chains.

Besides the scores, the array reports its activity: ``lane_work`` is the
number of 4x8 lanes doing useful work this cycle (a full product is two), in
PEs whose column carries a real operand. Columns carry a validity bit for that
purpose, skewed with their data; rows need none, since an invalid row simply
has no steps.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.config import Config, require_config
from golden.pe import activity_lag

from .baseline_pe import BaselinePE, baseline_row_layout
from .pe import LANES, PE, col_layout, drain_signature, row_layout
from .window_pe import WindowPE, window_col_layout, window_row_layout

__all__ = ["KaleidoArray", "BaselineArray"]


def _skewed(m, signal, delay, name):
    """``signal`` delayed by ``delay`` registers."""
    for k in range(delay):
        reg = Signal.like(signal, name=f"{name}_skew{k}")
        m.d.sync += reg.eq(signal)
        signal = reg
    return signal


def _popcount(bits):
    total = 0
    for b in bits:
        total = total + b
    return total


class _Array(wiring.Component):
    """R x C PEs with skewed inputs and one drain chain per column.

    Members
    -------
    row_in : In(row shape).array(rows)
        One channel step per row, all rows in the same cycle (the array skews them).
    col_in : In(column shape).array(cols)
        One channel step per column, likewise.
    col_valid : In(1).array(cols)
        The column carries a real operand (for ``lane_work`` only).
    drain : Out(drain_signature(width)).array(cols)
        Each column's drain chain, leaving its top PE.
    lane_work : Out(range(LANES * rows * cols + 1))
        4x8 lanes doing useful work this cycle.
    """

    pe_class = None
    row_shape = None
    col_shape = None

    def __init__(self, cfg: Config):
        self.cfg = require_config(cfg, self)
        R, C = cfg.rows, cfg.cols
        super().__init__({
            "row_in": In(self.row_shape).array(R),
            "col_in": In(self.col_shape).array(C),
            "col_valid": In(1).array(C),
            "drain": Out(drain_signature(self.width(cfg))).array(C),
            "lane_work": Out(range(LANES * R * C + 1)),
        })

    @staticmethod
    def width(cfg: Config) -> int:
        """Bits of a score as the PEs hold it."""
        raise NotImplementedError

    def _lanes(self, pe, col_valid):
        raise NotImplementedError

    @staticmethod
    def lanes_lag(cfg: Config) -> int:
        """Cycles a PE's activity outputs lag the operands it receives."""
        return 0

    def elaborate(self, platform):
        m = Module()
        R, C = self.cfg.rows, self.cfg.cols
        pes = [[self.pe_class(self.cfg) for _ in range(C)] for _ in range(R)]
        for i in range(R):
            for j in range(C):
                m.submodules[f"pe_{i}_{j}"] = pes[i][j]
        work = []
        for j in range(C):
            col = _skewed(m, self.col_in[j], j, f"col{j}")
            valid = _skewed(m, self.col_valid[j], j, f"colvalid{j}")
            for i in range(R):
                pe = pes[i][j]
                m.d.comb += pe.col_in.eq(col)
                col = pe.col_out
                work.append(self._lanes(pe, _skewed(m, valid, self.lanes_lag(self.cfg), f"lanevalid_{i}_{j}")))
                if i < R - 1:            # validity moves down with the column data
                    nxt = Signal(name=f"colvalid_{i + 1}_{j}")
                    m.d.sync += nxt.eq(valid)
                    valid = nxt
            # Drain chain: each PE takes the drain of the PE below (the bottom one's
            # input stays idle); the top PE's is the column's.
            for i in range(R - 1):
                wiring.connect(m, pes[i + 1][j].drain_out, pes[i][j].drain_in)
            wiring.connect(m, pes[0][j].drain_out, wiring.flipped(self.drain[j]))
        for i in range(R):
            row = _skewed(m, self.row_in[i], i, f"row{i}")
            for j in range(C):
                m.d.comb += pes[i][j].row_in.eq(row)
                row = pes[i][j].row_out
        m.d.comb += self.lane_work.eq(_popcount(work))
        return m


class KaleidoArray(_Array):
    """R x C augmented PEs (:class:`hw.core.pe.PE`).

    Parameters
    ----------
    cfg : Config
        Takes ``rows``, ``cols`` and ``pe_acc_bits``; with ``issue_window`` the PEs
        are :class:`hw.core.window_pe.WindowPE` and the ports its wide layouts.
    """

    pe_class = PE
    row_shape = row_layout
    col_shape = col_layout

    def __init__(self, cfg: Config):
        if require_config(cfg, self).issue_window:
            # A channel window's PEs pick their steps from wide ports (hw.core.window_pe).
            self.pe_class = WindowPE
            self.row_shape = window_row_layout(cfg.issue_window)
            self.col_shape = window_col_layout(cfg.issue_window)
        super().__init__(cfg)

    @staticmethod
    def width(cfg: Config) -> int:
        return cfg.pe_acc_bits

    @staticmethod
    def lanes_lag(cfg: Config) -> int:
        return activity_lag(cfg.pe_stages)

    def _lanes(self, pe, col_valid):
        # ``lanes`` is a 2-bit mask of the lanes multiplying this cycle.
        return Mux(col_valid, pe.lanes[0] + pe.lanes[1], 0)


class BaselineArray(_Array):
    """R x C baseline PEs (:class:`hw.core.pe.BaselinePE`); a full product is two lanes of work.

    Parameters
    ----------
    cfg : Config
        Takes ``rows``, ``cols`` and ``acc_bits``.
    """

    pe_class = BaselinePE
    row_shape = baseline_row_layout
    col_shape = signed(8)

    @staticmethod
    def width(cfg: Config) -> int:
        return cfg.acc_bits

    def _lanes(self, pe, col_valid):
        return Mux(pe.row_in.valid & col_valid, 2, 0)
