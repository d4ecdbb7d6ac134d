"""cocotb bench of the board top (:mod:`hw.board.board`): the host driver runs a
product over the serial pins, through the link (:mod:`hw.board.link`), the block-RAM
memory and the system top, as it would run it on a board.

Inputs, in ``$KALEIDO_WORK``: ``job.json`` (the design, the line's divisor and
the memory's words) and ``q.npy``, ``k.npy``. The checker holds the scores bit
for bit against golden and the engine's counters against the cycle model; the
link's own checks (a partial word written and read back, a command it does not
know) run first. Outputs: ``board.json`` (the run's counters, the line's bytes).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.queue import Queue
from cocotb.triggers import ClockCycles, FallingEdge

from golden.attention import expected_scores
from hw.board.link import HEADER, Answer
from hw.board.uart import FRAME_BITS
from hw.host.host_driver import Driver
from hw.host.link_port import LinkPort
from hw.system.regmap import MAGIC, Reg
from tb.harness import design_point

WORK = Path(os.environ.get("KALEIDO_WORK", "."))
CFG = design_point()
#: Frames of silence after which an answer is taken as lost.
PATIENCE = 200_000


class PinLink:
    """:class:`hw.host.link_port.ByteLink` on the board's serial pins: a driver that
    frames each byte onto ``rx`` and a monitor that takes bytes off ``tx``."""

    def __init__(self, dut, divisor: int):
        self.dut, self.divisor = dut, divisor
        self.got: Queue[int] = Queue()
        self.sent = self.received = 0
        cocotb.start_soon(self._monitor())

    async def _bit(self, value: int) -> None:
        self.dut.rx.value = value
        await ClockCycles(self.dut.clk, self.divisor)

    async def send(self, data: bytes) -> None:
        for byte in data:
            await self._bit(0)
            for i in range(8):
                await self._bit(byte >> i & 1)
            await self._bit(1)
            self.sent += 1

    async def _monitor(self) -> None:
        dut, d = self.dut, self.divisor
        while True:
            await FallingEdge(dut.tx)
            await ClockCycles(dut.clk, d // 2)
            assert dut.tx.value == 0, "a start bit shorter than half a bit on tx"
            byte = 0
            for i in range(8):
                await ClockCycles(dut.clk, d)
                byte |= int(dut.tx.value) << i
            await ClockCycles(dut.clk, d)
            assert dut.tx.value == 1, f"no stop bit after {byte:#04x} on tx"
            self.got.put_nowait(byte)

    async def receive(self, count: int) -> bytes:
        out = bytearray()
        waited = 0
        while len(out) < count:
            if self.got.empty():
                assert waited < PATIENCE, f"the board answered {len(out)} of {count} bytes"
                await ClockCycles(self.dut.clk, self.divisor * FRAME_BITS)
                waited += 1
                continue
            out.append(self.got.get_nowait())
        self.received += count
        return bytes(out)


async def _link_checks(port: LinkPort, link: PinLink) -> None:
    """The link alone: registers, a partial memory word, a command it does not know."""
    assert await port.read_reg(Reg.ID) == MAGIC, "ID register over the link"
    await port.write_mem(0x40, bytes(range(1, 13)))
    await port.write_mem(0x45, b"\xaa\xbb")                       # inside a word: the rest must stay
    got = await port.read_mem(0x40, 12)
    assert got == bytes([1, 2, 3, 4, 5, 0xaa, 0xbb, 8, 9, 10, 11, 12]), f"memory read back {got.hex()}"
    await link.send(bytes([0]) + bytes(HEADER - 1))               # no command is 0
    assert await link.receive(1) == bytes([Answer.BAD_COMMAND.value]), "an unknown command was not refused"
    assert await port.read_reg(Reg.ID) == MAGIC, "the link did not recover after a refused command"


@cocotb.test()
async def run_over_the_line(dut):
    """S~ (or Q K^T) over the serial line, exact, its counters equal to the cycle model's."""
    job = json.loads((WORK / "job.json").read_text())
    design = job["design"]
    dut._log.info(f"seed {cocotb.RANDOM_SEED} (cocotb's), design {design}, divisor {job['divisor']}")
    dut.rx.value = 1
    Clock(dut.clk, 10, unit="ns").start()
    await ClockCycles(dut.clk, 32)                                # the board's power-on reset
    link = PinLink(dut, job["divisor"])
    port = LinkPort(link, job["mem_words"], job["divisor"])
    await _link_checks(port, link)
    driver = Driver(port, CFG, design)
    await driver.open()
    q, k = np.load(WORK / "q.npy"), np.load(WORK / "k.npy")
    scores, run, model = await driver.attention(q, k)
    want = expected_scores(q, k, CFG, design)
    bad = np.argwhere(scores != want)
    assert bad.size == 0, f"{len(bad)} scores differ from golden, first at {tuple(int(i) for i in bad[0])}"
    assert run.engine_cycles == model.engine_cycles, f"RTL {run.engine_cycles} cycles, model {model.engine_cycles}"
    assert run.lane_work == model.lane_work, f"RTL lane work {run.lane_work}, model {model.lane_work}"
    (WORK / "board.json").write_text(json.dumps({"run": vars(run), "bytes_sent": link.sent,
                                                 "bytes_received": link.received}))
