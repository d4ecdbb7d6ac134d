"""cocotb bench of the system top: the host driver (:mod:`tb.host_driver`) runs
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

from .common import design_point, start
from .host_driver import DeviceError, Driver

WORK = Path(os.environ.get("KALEIDO_WORK", "."))
CFG = design_point()
MEMORY = 1 << 22


def _pauses(rng: random.Random, busy: float):
    """A channel's stalls: each cycle paused with probability ``busy``."""
    while True:
        yield rng.random() < busy


class CocotbPort:
    """:class:`tb.host_driver.Port` over cocotbext-axi: the registers through an AXI4-Lite
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
    assert bad.size == 0, (f"{len(bad)} {what} differ from the golden model, first at {tuple(bad[0])}: "
                           f"RTL {got[tuple(bad[0])]} golden {want[tuple(bad[0])]}")


def _run_dict(run) -> dict:
    return dict(vars(run))


@cocotb.test()
async def top(dut):
    """A head or a linear layer through the driver, exact, with the counters equal to the models."""
    job = json.loads((WORK / "job.json").read_text())
    design, seed = job["design"], job["seed"]
    rng = random.Random(seed)
    dut._log.info(f"seed {seed}, bus busy {job['busy']}")
    await start(dut)
    port = CocotbPort(dut, rng, job["busy"])
    out = {"runs": []}
    if job["what"] == "head":
        driver = Driver(port, CFG, design)
        await driver.open()
        q, k, v = (np.load(WORK / f"{n}.npy") for n in "qkv")
        res = await driver.head(q, k, v, job["scale"])
        _check(res["scores"], expected_scores(q, k, CFG, design), "scores")
        probs, want = expected_head(q, k, v, CFG, design, job["scale"])
        _check(res["probs"], probs, "P codes")
        _check(res["out"], want, "outputs")
        run, model = res["qk"]
        assert run.engine_cycles == model.engine_cycles, f"S~: RTL {run.engine_cycles} cycles, model {model.engine_cycles}"
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
    out["runs"] = [_run_dict(r) for r in driver.runs]
    (WORK / "top.json").write_text(json.dumps(out))
