"""cocotb bench of the system top: the host driver (:mod:`hw.host.host_driver`) runs
products from memory over cocotbext-axi's AXI4-Lite master and AXI4 RAM, with
random back-pressure and latency on every channel of the bus.

Inputs, in ``$KALEIDO_WORK``: ``job.json`` (``what``: ``head`` or ``linear``,
the design, the seed, and for a linear layer the head's design point) and the
tensors (``q.npy``, ``k.npy``, ``v.npy`` or ``x.npy``, ``w.npy``). The checker
holds every result bit for bit against golden and each run's engine counters
against the cycle model. Outputs: ``top.json`` (what each run cost).
"""

from __future__ import annotations

import json
import logging
import os
import random
from pathlib import Path

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, First, RisingEdge
from cocotbext.axi import AxiBus, AxiLiteBus, AxiLiteMaster, AxiRam

from golden.attention import expected_head, expected_scores
from golden.config import Config
from golden.linear import linear_layer
from hw.core.sequencer import GROUP_SLOTS
from hw.host.host_driver import Driver
from hw.system.regmap import ERROR_SHIFT, Ctrl, Error, GroupReg, Reg, Status, group_reg
from tb.harness import design_point, reset, start

WORK = Path(os.environ.get("KALEIDO_WORK", "."))
CFG = design_point()
MEMORY = 1 << 22


def _pauses(rng: random.Random, busy: float):
    """A channel's stalls: each cycle paused with probability ``busy``."""
    while True:
        yield rng.random() < busy


class CocotbPort:
    """:class:`hw.host.host_driver.Port` over cocotbext-axi: the registers through an AXI4-Lite
    master, memory as an AXI4 RAM the top's DMA reads and writes, the interrupt a pin."""

    def __init__(self, dut, rng: random.Random | None = None, busy: float = 0.0):
        self.dut = dut
        self.regs = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil_"), dut.clk, dut.rst)
        self.ram = AxiRam(AxiBus.from_prefix(dut, "m_axi_"), dut.clk, dut.rst, size=MEMORY)
        for agent in (self.regs, self.ram):       # a line a transfer would bury the bench's own
            for log in (getattr(agent, "log", None), getattr(agent.write_if, "log", None),
                        getattr(agent.read_if, "log", None)):
                if log is not None:
                    log.setLevel(logging.WARNING)
        if rng is not None and busy:
            for channel in (self.ram.write_if.aw_channel, self.ram.write_if.w_channel, self.ram.write_if.b_channel,
                            self.ram.read_if.ar_channel, self.ram.read_if.r_channel):
                channel.set_pause_generator(_pauses(random.Random(rng.random()), busy))

    async def read_reg(self, offset: int) -> int:
        return int.from_bytes((await self.regs.read(offset, 4)).data, "little")

    async def write_reg(self, offset: int, value: int) -> None:
        await self.regs.write(offset, int(value).to_bytes(4, "little"))

    async def write_mem(self, addr: int, data: bytes) -> None:
        self.ram.write(addr, data)

    async def read_mem(self, addr: int, length: int) -> bytes:
        return self.ram.read(addr, length)

    async def wait_irq(self, cycles: int) -> bool:
        if self.dut.irq.value:
            return True
        await First(RisingEdge(self.dut.irq), ClockCycles(self.dut.clk, cycles))
        return bool(self.dut.irq.value)


def _check(got, want, what: str) -> None:
    bad = np.argwhere(got != want)
    assert bad.size == 0, (f"{len(bad)} {what} differ from the golden model, first at {tuple(int(i) for i in bad[0])}: "
                           f"RTL {got[tuple(bad[0])]} golden {want[tuple(bad[0])]}")


@cocotb.test()
async def run_from_memory(dut):
    """A head or a linear layer through the driver, exact, with the counters equal to the models."""
    job = json.loads((WORK / "job.json").read_text())
    design, seed = job["design"], cocotb.RANDOM_SEED
    rng = random.Random(seed)
    dut._log.info(f"seed {seed} (cocotb's random seed), bus busy {job['busy']}")
    await start(dut)
    port = CocotbPort(dut, rng, job["busy"])
    out = {"runs": []}
    if job["what"] == "head":
        driver = Driver(port, CFG, design)
        await driver.open()
        q, k, v = (np.load(WORK / f"{n}.npy") for n in "qkv")
        res = await driver.head(q, k, v, job["scale"], job.get("schedule", "auto"))
        _check(res["scores"], expected_scores(q, k, CFG, design), "scores")
        out["qk_schedule"] = res["qk"][1].schedule
        probs, want = expected_head(q, k, v, CFG, design, job["scale"])
        _check(res["probs"], probs, "P codes")
        _check(res["out"], want, "outputs")
        run, model = res["qk"]
        assert run.engine_cycles == model.engine_cycles, \
            f"S~: RTL {run.engine_cycles} cycles, model {model.engine_cycles}"
        assert run.lane_work == model.lane_work, f"S~: RTL lane work {run.lane_work}, model {model.lane_work}"
        for got, want_cycles in zip(res["pv"]["runs"], res["pv"]["model_cycles"]):
            assert got.engine_cycles == want_cycles, f"P V~: RTL {got.engine_cycles} cycles, model {want_cycles}"
        out.update(qk_model=model.engine_cycles, pv_schedule=res["pv"]["schedule"])
    else:
        head_cfg = Config.from_json(job["head_config"])
        driver = Driver(port, CFG, design)
        await driver.open()
        x, w = np.load(WORK / "x.npy"), np.load(WORK / "w.npy")
        got, run, model = await driver.linear(x, w, head_cfg)
        layer = linear_layer(x, w, head_cfg)
        _check(got, layer.approx if design == "kaleido" else layer.exact, "outputs")
        assert run.engine_cycles == model.engine_cycles, f"RTL {run.engine_cycles} cycles, model {model.engine_cycles}"
        assert run.lane_work == model.lane_work, f"RTL lane work {run.lane_work}, model {model.lane_work}"
    out["runs"] = [vars(r) for r in driver.runs]
    (WORK / "top.json").write_text(json.dumps(out))


async def _refused(port, registers: dict, want: Error, what: str) -> None:
    """Start with ``registers`` on top of a good run's; the top must answer ``want``."""
    for offset, value in registers.items():
        await port.write_reg(offset, value)
    await port.write_reg(Reg.CTRL, Ctrl.IRQ_ENABLE | Ctrl.START)
    assert await port.wait_irq(100_000), f"{what}: no interrupt"
    status = await port.read_reg(Reg.STATUS)
    got = Error((status >> ERROR_SHIFT) & 0xF)
    await port.write_reg(Reg.STATUS, Status.DONE)
    assert got == want, f"{what}: the top answered {got.name}, expected {want.name}"
    assert not status & Status.BUSY, f"{what}: still busy"


@cocotb.test()
async def bad_input(dut):
    """Each bad setting answered by its error code, nothing written; a start while busy
    flagged; a reset mid-run; then a good run still exact."""
    job = json.loads((WORK / "job.json").read_text())
    design = job["design"]
    await start(dut)
    port = CocotbPort(dut)
    driver = Driver(port, CFG, design)
    info = await driver.open()
    q, k = np.load(WORK / "q.npy"), np.load(WORK / "k.npy")
    scores, run, model = await driver.attention(q, k)          # a good run leaves its registers set
    good = {offset: await port.read_reg(offset) for offset in
            (Reg.OP, Reg.SRC_ADDR, Reg.K_ADDR, Reg.DST_ADDR, Reg.Q_LEN, Reg.K_LEN, Reg.OUT_LEN, Reg.GROUPS,
             *(group_reg(g, r) for g in range(GROUP_SLOTS) for r in GroupReg))}
    dst, rows = good[Reg.DST_ADDR], good[Reg.OUT_LEN]
    port.ram.write(dst, bytes(rows * CFG.cols * 4))
    cases = [
        ({Reg.Q_LEN: 0}, Error.SIZE, "an empty Q image"),
        ({Reg.Q_LEN: info["q_words"] + 1}, Error.SIZE, "a Q image longer than the buffer"),
        ({Reg.K_LEN: 1 << 20}, Error.SIZE, "a K image of 2**20 words"),
        ({Reg.OUT_LEN: info["out_rows"] + 1}, Error.SIZE, "more rows than the scratchpad holds"),
        ({Reg.GROUPS: GROUP_SLOTS + 1}, Error.SIZE, "more groups than the controller has"),
        ({Reg.GROUPS: 0}, Error.SIZE, "no group"),
        ({group_reg(0, GroupReg.DG): 1 << 16}, Error.SIZE, "a group wider than a pass"),
        ({group_reg(0, GroupReg.DG): 0}, Error.SIZE, "a group of no channels"),
        ({group_reg(0, GroupReg.Q_TILES): 0}, Error.SIZE, "a group of no tiles"),
        ({group_reg(0, GroupReg.Q_BASE): good[Reg.Q_LEN]}, Error.SIZE, "a group past the Q image"),
        ({group_reg(0, GroupReg.PARTNERS): 9}, Error.SIZE, "nine partners"),
        ({Reg.SRC_ADDR: good[Reg.SRC_ADDR] + 2}, Error.ADDRESS, "an unaligned address"),
        ({Reg.DST_ADDR: good[Reg.SRC_ADDR]}, Error.ADDRESS, "results over the Q image"),
        ({Reg.DST_ADDR: good[Reg.K_ADDR] + 4}, Error.ADDRESS, "results over the K image"),
        ({Reg.DST_ADDR: 0xFFFF_FFF0}, Error.ADDRESS, "results that wrap past 4 GiB"),
        ({Reg.SRC_ADDR: 0xFFFF_FFFC}, Error.ADDRESS, "a Q image that wraps past 4 GiB"),
        ({Reg.OP: 3}, Error.OP, "an operation the top lacks"),
        ({Reg.OUT_LEN: rows - 1}, Error.COUNT, "one row fewer than the engine drains"),
        ({Reg.OUT_LEN: rows + 1}, Error.COUNT, "one row more than the engine drains"),
        ({Reg.OP: 1, Reg.OUT_LEN: 0}, Error.SIZE, "a softmax of no rows"),
        ({Reg.OP: 1, Reg.OUT_LEN: 2, Reg.SRC_ADDR: 0x100, Reg.DST_ADDR: 0x104}, Error.ADDRESS,
         "softmax codes over its scores"),
    ]
    for registers, want, what in cases:
        await _refused(port, {**good, **registers}, want, what)
        assert port.ram.read(dst, rows * CFG.cols * 4) == bytes(rows * CFG.cols * 4), f"{what}: results written"
    # A start while a run is under way: that run goes on, and ends flagged.
    for offset, value in good.items():
        await port.write_reg(offset, value)
    await port.write_reg(Reg.CTRL, Ctrl.IRQ_ENABLE | Ctrl.START)
    await port.write_reg(Reg.CTRL, Ctrl.IRQ_ENABLE | Ctrl.START)
    assert await port.wait_irq(100_000), "a start while busy: no interrupt"
    status = await port.read_reg(Reg.STATUS)
    assert Error((status >> ERROR_SHIFT) & 0xF) == Error.BUSY, f"a start while busy: STATUS {status:#x}"
    await port.write_reg(Reg.STATUS, Status.DONE)
    # Reset while the engine runs (the bus is quiet then): the top is ready for the next start.
    await port.write_reg(Reg.CTRL, Ctrl.IRQ_ENABLE | Ctrl.START)
    loads = good[Reg.Q_LEN] * info["beats"]["q"] + good[Reg.K_LEN] * info["beats"]["k"]
    while await port.read_reg(Reg.READ_BEATS) < loads:          # the DMA done, the engine running
        pass
    assert (await port.read_reg(Reg.STATUS)) & Status.BUSY, "the run ended before the reset"
    await reset(dut)
    assert not (await port.read_reg(Reg.STATUS)) & Status.BUSY, "busy after a reset"
    driver = Driver(port, CFG, design)
    await driver.open()
    again, _, _ = await driver.attention(q, k)
    _check(again, scores, "scores after a reset")
    _check(scores, expected_scores(q, k, CFG, design), "scores")
    try:
        await driver.softmax(np.zeros((1, CFG.tokens + 1)), 1.0)
    except ValueError:
        pass
    else:
        raise AssertionError("a softmax row of the wrong length was taken")
