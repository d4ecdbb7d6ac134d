"""The host's driver of the system top (:mod:`hw.system.top`): numpy arrays in, results out.

It lays a product's operands out in memory as the engine's buffer images, writes
the register map (:mod:`hw.system.regmap`), starts the top, waits for its interrupt,
and reads the results back; what the engine drained it sums into scores with
:mod:`golden`'s map of the partial products (the accumulation buffer, which
this top leaves to the host). A bus is anything with the four coroutines of
:class:`Port`: the cocotb bench gives one over cocotbext-axi
(:mod:`tb.top_tb`), a board would give one over its own bus. Every error the
top reports becomes a :class:`DeviceError` with one line that names it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from golden import pair_reuse
from golden.attention import expected_head
from golden.config import Config
from golden.cycle_model import baseline_cycles, gemm_cycles, kaleido_cycles, kaleido_tables
from golden.head_cycles import pv_config, pv_cycles
from golden.linear_cycles import baseline_linear_cycles, kaleido_linear_cycles
from golden.softmax import softmax_scale
from golden.windows import linear_config
from hw.core.sequencer import GROUP_SLOTS
from hw.host.engine_image import EngineImage, Scoreboard, baseline_image, driver_image, gemm_image, linear_image
from hw.system.axi import BEAT_BYTES
from hw.system.regmap import (
    BEATS,
    DESIGN,
    ERROR_TEXT,
    MAGIC,
    OP,
    SOFTMAX,
    STATUS,
    Ctrl,
    Error,
    GroupReg,
    Op,
    Reg,
    Status,
    group_reg,
)

__all__ = ["Port", "DeviceError", "Driver", "Run", "attention_image"]

ALIGN = 64                 # where the driver puts each tensor: a burst's worth


class Port(Protocol):
    """What the driver needs of a bus: the top's registers, its memory, its interrupt."""

    async def read_reg(self, offset: int) -> int: ...
    async def write_reg(self, offset: int, value: int) -> None: ...
    async def write_mem(self, addr: int, data: bytes) -> None: ...
    async def read_mem(self, addr: int, length: int) -> bytes: ...
    async def wait_irq(self, cycles: int) -> bool: ...


class DeviceError(RuntimeError):
    """The top refused a run, or its bus failed it."""


@dataclass
class Run:
    """What one start cost, from the top's counters."""
    engine_cycles: int
    lane_work: int
    run_cycles: int
    read_beats: int
    write_beats: int
    bus_wait: int


def _words_bytes(words: list[int], beats: int) -> bytes:
    """Buffer words as ``beats`` little-endian bus beats each."""
    return b"".join(w.to_bytes(beats * BEAT_BYTES, "little") for w in words)


class Driver:
    """Run products, softmax rows, heads and linear layers on a system top.

    Parameters
    ----------
    port : Port
    cfg : Config
        The design point the top was built for (its ``ID`` and ``DESIGN`` are checked
        against it by :meth:`open`).
    design : "kaleido" or "baseline"
    base : int
        The first byte of memory the driver may use.
    timeout : int
        Cycles to wait for a run's interrupt before giving up.
    """

    def __init__(self, port: Port, cfg: Config, design: str = "kaleido", base: int = 0x1000,
                 timeout: int = 2_000_000):
        self.port, self.cfg, self.design, self.base, self.timeout = port, cfg, design, base, timeout
        self.runs: list[Run] = []
        self.info: dict | None = None           # what open() read of the top

    def _opened(self) -> None:
        # Every run lays out its images by the top's sizes, which open() reads.
        if self.info is None:
            raise DeviceError("the driver is not open: call open() first, which reads the top's sizes")

    async def open(self) -> dict:
        """Read the top's identity and sizes; refuse a top that is not this design point's."""
        if await self.port.read_reg(Reg.ID) != MAGIC:
            raise DeviceError("no Kaleido top answers at this port (ID register)")
        design = DESIGN.from_bits(await self.port.read_reg(Reg.DESIGN))
        want = (self.design == "kaleido", self.cfg.rows, self.cfg.cols, self.cfg.vector_lanes)
        got = (bool(design.kaleido), design.rows, design.cols, design.lanes)
        if got != want:
            raise DeviceError(f"the top is (kaleido, rows, cols, lanes) = {got}, the driver's design point {want}")
        beats = BEATS.from_bits(await self.port.read_reg(Reg.BEATS))
        self.info = {"q_words": await self.port.read_reg(Reg.Q_WORDS), "k_words": await self.port.read_reg(Reg.K_WORDS),
                     "out_rows": await self.port.read_reg(Reg.OUT_ROWS),
                     "beats": {"q": beats.q, "k": beats.k, "out": beats.out}}
        await self.port.write_reg(Reg.CTRL, Ctrl.IRQ_ENABLE)
        return self.info

    # -- one start ------------------------------------------------------------------------

    async def _start(self, registers: dict) -> Run:
        for offset, value in registers.items():
            await self.port.write_reg(offset, value)
        await self.port.write_reg(Reg.CTRL, Ctrl.IRQ_ENABLE | Ctrl.START)
        if not await self.port.wait_irq(self.timeout):
            raise DeviceError(f"no interrupt within {self.timeout} cycles (STATUS "
                              f"{await self.port.read_reg(Reg.STATUS):#x})")
        status = STATUS.from_bits(await self.port.read_reg(Reg.STATUS))
        await self.port.write_reg(Reg.STATUS, Status.DONE)
        error = status.error
        if error != Error.NONE:
            raise DeviceError(f"the top refused the run: {error.name} ({ERROR_TEXT[error]})")
        read = self.port.read_reg
        run = Run(await read(Reg.CYCLES_LO) | await read(Reg.CYCLES_HI) << 32,
                  await read(Reg.WORK_LO) | await read(Reg.WORK_HI) << 32, await read(Reg.RUN_CYCLES),
                  await read(Reg.READ_BEATS), await read(Reg.WRITE_BEATS), await read(Reg.BUS_WAIT))
        self.runs.append(run)
        return run

    def _place(self, *sizes: int) -> list[int]:
        """Addresses for regions of ``sizes`` bytes, one after the other from ``base``."""
        out, at = [], self.base
        for size in sizes:
            out.append(at)
            at += -(-max(size, 1) // ALIGN) * ALIGN
        return out

    async def engine(self, image: EngineImage) -> tuple[list[list[int]], Run]:
        """Run one engine image; return each column's drained scores and the run's counters."""
        self._opened()
        cfg, b = self.cfg, self.info["beats"]
        rows = sum(image.drains(t) for t in image.tiles) * cfg.rows
        # The top would refuse these (SIZE), but only after the images and settings crossed the bus.
        for what, need, holds in (("Q words", len(image.q_words), self.info["q_words"]),
                                  ("K words", len(image.k_words), self.info["k_words"]),
                                  ("drained rows", rows, self.info["out_rows"])):
            if need > holds:
                raise DeviceError(f"the run needs {need:,} {what} and the top holds {holds:,}: the top would refuse "
                                  "it (SIZE); split the run or build the top larger")
        q_bytes, k_bytes = _words_bytes(image.q_words, b["q"]), _words_bytes(image.k_words, b["k"])
        q_at, k_at, out_at = self._place(len(q_bytes), len(k_bytes), rows * b["out"] * BEAT_BYTES)
        await self.port.write_mem(q_at, q_bytes)
        await self.port.write_mem(k_at, k_bytes)
        s = image.settings()
        op = OP.const({"op": Op.ENGINE, **{f: s.get(f, 0) for f in ("dense", "unpaired", "linear")}}).as_bits()
        regs = {Reg.OP: op,
                Reg.SRC_ADDR: q_at, Reg.K_ADDR: k_at, Reg.DST_ADDR: out_at, Reg.Q_LEN: len(image.q_words),
                Reg.K_LEN: len(image.k_words), Reg.OUT_LEN: rows, Reg.GROUPS: s["groups"]}
        fields = {GroupReg.DG: "dg", GroupReg.Q_TILES: "q_tiles", GroupReg.K_TILES: "k_tiles",
                  GroupReg.Q_BASE: "q_base", GroupReg.K_BASE: "k_base", GroupReg.PARTNERS: "partners"}
        for g in range(GROUP_SLOTS):
            for reg, name in fields.items():
                regs[group_reg(g, reg)] = s.get(name, [0] * GROUP_SLOTS)[g]
        run = await self._start(regs)
        raw = np.frombuffer(await self.port.read_mem(out_at, rows * cfg.cols * BEAT_BYTES), "<i4")
        drained = raw.reshape(rows, cfg.cols)
        return [drained[:, j].tolist() for j in range(cfg.cols)], run

    async def product(self, image: EngineImage, cfg: Config, n_a: int, n_b: int) -> tuple[np.ndarray, Run]:
        """An engine image's result, summed as the accumulation buffer would (``n_a x n_b``)."""
        columns, run = await self.engine(image)
        return Scoreboard(image, cfg, n_a, n_b).result(columns), run

    # -- what a user calls ----------------------------------------------------------------

    async def attention(self, q: np.ndarray, k: np.ndarray, schedule: str = "auto"):
        """``S~`` (Kaleido) or ``Q K^T`` (baseline) of int8 ``q``, ``k``; with the cycle model's report."""
        cfg = self.cfg
        image, model = attention_image(q, k, cfg, self.design, schedule)
        scores, run = await self.product(image, cfg, q.shape[0], k.shape[0])
        return scores, run, model

    async def softmax(self, scores: np.ndarray, scale: float) -> tuple[np.ndarray, Run]:
        """P codes of each row of ``scores`` (``[rows, tokens]``) through the softmax unit."""
        self._opened()
        cfg = self.cfg
        scores = np.asarray(scores)
        if scores.ndim != 2:
            raise ValueError(f"scores must be [rows, tokens], not of shape {scores.shape}")
        rows, n = scores.shape
        if n != cfg.tokens:
            raise ValueError(f"the softmax unit takes rows of {cfg.tokens} scores, not {n}")
        # The unit reads acc_bits of each 32-bit beat: a score beyond them would be read wrapped.
        lo, hi = -(1 << (cfg.acc_bits - 1)), (1 << (cfg.acc_bits - 1)) - 1
        if rows and (scores.min() < lo or scores.max() > hi):
            raise ValueError(f"scores must be within the softmax unit's {cfg.acc_bits}-bit range "
                             f"[{lo}, {hi}], not [{scores.min()}, {scores.max()}]")
        width = -(-n // cfg.vector_lanes) * cfg.vector_lanes
        padded = np.zeros((rows, width), "<i4")
        padded[:, :n] = scores
        mult, shift = softmax_scale(scale)
        src, dst = self._place(padded.nbytes, padded.nbytes)
        await self.port.write_mem(src, padded.tobytes())
        run = await self._start({Reg.OP: OP.const({"op": Op.SOFTMAX}).as_bits(), Reg.SRC_ADDR: src,
                                 Reg.DST_ADDR: dst, Reg.OUT_LEN: rows,
                                 Reg.SOFTMAX: SOFTMAX.const({"mult": mult, "shift": shift}).as_bits()})
        codes = np.frombuffer(await self.port.read_mem(dst, padded.nbytes), "<i4").reshape(rows, width)
        return codes[:, :n].astype(np.int8), run

    async def pv(self, probs: np.ndarray, v: np.ndarray, schedule: str = "auto") -> tuple[np.ndarray, dict]:
        """``P V~`` as the head's driver runs it: the shared multiply's tiles or the dense product."""
        cfg, n = self.cfg, probs.shape[0]
        pv = pv_config(cfg)
        plan = pv_cycles(probs, v, cfg, schedule) if self.design == "kaleido" else None
        if plan is None or plan["schedule"] == "dense":
            values = pair_reuse(v, cfg).approx if self.design == "kaleido" else v
            image = gemm_image(self.design, probs, np.ascontiguousarray(values.T), pv)
            out, run = await self.product(image, pv, n, cfg.head_dim)
            model = gemm_cycles(n, cfg.head_dim, pv, self.design)
            return out, {"schedule": "dense", "runs": [run], "model_cycles": [model.engine_cycles]}
        out = np.zeros((n, cfg.head_dim), np.int64)
        runs, models = [], []
        for tile in plan["tiles"]:
            image = gemm_image("kaleido", probs[:, tile.keys], np.ascontiguousarray(tile.v.T), pv, tile.fold)
            part, run = await self.product(image, pv, n, len(tile.channels))
            out[:, tile.channels] = part
            runs.append(run)
            models.append(gemm_cycles(n, len(tile.channels), pv, "kaleido", depth=len(tile.keys)).engine_cycles)
        return out, {"schedule": "shared", "runs": runs, "model_cycles": models}

    async def head(self, q, k, v, scale: float, schedule: str = "auto") -> dict:
        """The whole head: ``S~``, its P codes, then ``P V~``."""
        scores, run, model = await self.attention(q, k, schedule)
        probs, soft = await self.softmax(scores, scale)
        out, pv = await self.pv(probs, v)
        return {"scores": scores, "probs": probs, "out": out, "qk": (run, model), "softmax": soft, "pv": pv}

    async def linear(self, x: np.ndarray, w: np.ndarray, head_cfg: Config, schedule: str = "auto"):
        """``X~ W`` of a linear layer (``x [N, heads*D]``, ``w [heads*D, outputs]``); the top must
        be built for :func:`golden.windows.linear_config` of ``head_cfg`` (Kaleido)."""
        self._opened()
        if x.ndim != 2 or w.ndim != 2 or w.shape[0] != x.shape[1]:
            raise ValueError(f"x [N, channels] and w [channels, outputs] must agree on their channels, "
                             f"not {x.shape} and {w.shape}")
        n, outputs = x.shape[0], w.shape[1]
        heads = x.shape[1] // head_cfg.head_dim
        if self.design == "kaleido":
            model = kaleido_linear_cycles(x, outputs, head_cfg, schedule)
            image = linear_image(x, w, head_cfg, model)
            engine_cfg = linear_config(head_cfg, heads)
        else:
            model = baseline_linear_cycles(n, outputs, head_cfg, heads)
            image, engine_cfg = baseline_image(np.ascontiguousarray(w.T), x, self.cfg), self.cfg
        out, run = await self.product(image, engine_cfg, outputs, n)
        return out.T, run, model



def attention_image(q, k, cfg: Config, design: str, schedule: str = "auto"):
    """The engine image of ``S~`` (Kaleido) or ``Q K^T`` (baseline), and the cycle model's report of it."""
    if design == "kaleido":
        tables = kaleido_tables(q, k, cfg)
        model = kaleido_cycles(q, k, cfg, tables, schedule)
        return driver_image(q, k, cfg, model, tables), model
    return baseline_image(q, k, cfg), baseline_cycles(q.shape[0], k.shape[0], cfg)


def head_images(q, k, v, cfg: Config, design: str, scale: float, schedule: str = "auto") -> list[EngineImage]:
    """The engine images a head's run loads, from golden's own results (to size a top for it)."""

    probs, _ = expected_head(q, k, v, cfg, design, scale)
    pv = pv_config(cfg)
    if design == "kaleido":
        tables = kaleido_tables(q, k, cfg)
        images = [driver_image(q, k, cfg, kaleido_cycles(q, k, cfg, tables, schedule), tables)]
        plan = pv_cycles(probs, v, cfg)
        if plan["schedule"] == "dense":
            images.append(gemm_image(design, probs, np.ascontiguousarray(pair_reuse(v, cfg).approx.T), pv))
        else:
            images += [gemm_image(design, probs[:, t.keys], np.ascontiguousarray(t.v.T), pv, t.fold)
                       for t in plan["tiles"]]
        return images
    return [baseline_image(q, k, cfg), gemm_image(design, probs, np.ascontiguousarray(v.T), pv)]


def top_size(images: list[EngineImage], cfg: Config, softmax_rows: int = 0) -> dict:
    """Buffer words and result rows a top needs to run ``images`` (and softmax rows)."""
    return {"q_words": max(len(i.q_words) for i in images), "k_words": max(len(i.k_words) for i in images),
            "out_rows": max(max(sum(i.drains(t) for t in i.tiles) * cfg.rows for i in images), softmax_rows)}
