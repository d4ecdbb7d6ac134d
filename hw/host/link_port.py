"""The host's end of the board's link (:mod:`hw.board.link`): a
:class:`hw.host.host_driver.Port` over any byte channel, so the driver runs products
on a board as it runs them on the simulated bus.

A channel is anything with the two coroutines of :class:`ByteLink`: the cocotb
bench gives one that drives the serial pins (:mod:`tb.board_tb`), and
:class:`SerialLink` one over a USB-serial port (``pyserial``).
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from ..board.link import HEADER, MAX_COUNT, Answer, Command
from ..board.uart import FRAME_BITS
from ..system.axi import BEAT_BYTES
from ..system.regmap import REG_BYTES

__all__ = ["ByteLink", "LinkError", "LinkPort", "SerialLink"]


class ByteLink(Protocol):
    """A byte channel to the board."""

    async def send(self, data: bytes) -> None: ...
    async def receive(self, count: int) -> bytes: ...


class LinkError(RuntimeError):
    """The board answered what no request asks, or refused one."""


class LinkPort:
    """The top's registers, the board's memory and its interrupt over a :class:`ByteLink`.

    Parameters
    ----------
    link : ByteLink
    mem_words : int
        Words of the board's memory: an address beyond it is refused here (the board
        would wrap it onto data the driver placed lower).
    divisor : int
        Board clocks a bit of the line: :meth:`wait_irq` counts the clocks its polls take.
    """

    def __init__(self, link: ByteLink, mem_words: int, divisor: int):
        for name, v in (("mem_words", mem_words), ("divisor", divisor)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"LinkPort {name} must be a positive integer, got {v!r}")
        self.link, self.mem_bytes, self.divisor = link, mem_words * BEAT_BYTES, divisor

    @staticmethod
    def _word(what: str, v) -> int:
        # Every field the link sends is a 32-bit word: refused here, before a byte goes out.
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 1 << 32:
            raise ValueError(f"{what} must be an integer from 0 to 2**32 - 1, got {v!r}")
        return v

    @classmethod
    def _register(cls, offset) -> int:
        cls._word("a register offset", offset)
        if offset % REG_BYTES:
            raise ValueError(f"register offset {offset:#x} is not {REG_BYTES}-byte aligned")
        return offset

    async def _request(self, command: Command, addr: int = 0, count: int = 0, words: bytes = b"",
                       answer_words: int = 0) -> bytes:
        head = bytes([command.value]) + addr.to_bytes(4, "little") + count.to_bytes(2, "little")
        await self.link.send(head + words)
        reply = await self.link.receive(answer_words * BEAT_BYTES + 1)
        status = reply[-1]
        if status != Answer.OKAY.value:
            known = {a.value: a.name for a in Answer}
            raise LinkError(f"{command.name} at {addr:#x}: the board answered {known.get(status, hex(status))}")
        return reply[:-1]

    async def read_reg(self, offset: int) -> int:
        offset = self._register(offset)
        return int.from_bytes(await self._request(Command.READ_REG, offset, 1, answer_words=1), "little")

    async def write_reg(self, offset: int, value: int) -> None:
        offset, value = self._register(offset), self._word("a register value", value)
        await self._request(Command.WRITE_REG, offset, 1, value.to_bytes(4, "little"))

    def _span(self, addr: int, length: int) -> tuple[int, int]:
        """The whole words that hold bytes ``addr`` to ``addr + length``: first byte, count."""
        for what, v in (("a memory address", addr), ("a length", length)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{what} must be an integer of 0 or more, got {v!r}")
        first = addr - addr % BEAT_BYTES
        end = -(-(addr + length) // BEAT_BYTES) * BEAT_BYTES
        if addr < 0 or end > self.mem_bytes:
            raise LinkError(f"memory {addr:#x}..{addr + length:#x} is beyond the board's {self.mem_bytes:,} bytes")
        return first, (end - first) // BEAT_BYTES

    async def read_mem(self, addr: int, length: int) -> bytes:
        first, words = self._span(addr, length)
        out = bytearray()
        for at in range(0, words, MAX_COUNT):
            n = min(MAX_COUNT, words - at)
            out += await self._request(Command.READ_MEM, first + at * BEAT_BYTES, n, answer_words=n)
        return bytes(out[addr - first:addr - first + length])

    async def write_mem(self, addr: int, data: bytes) -> None:
        first, words = self._span(addr, len(data))
        # Words the data covers only in part keep their other bytes: read them first.
        whole = bytearray(await self.read_mem(first, words * BEAT_BYTES)) if (
            first != addr or len(data) % BEAT_BYTES) else bytearray(words * BEAT_BYTES)
        whole[addr - first:addr - first + len(data)] = data
        for at in range(0, words, MAX_COUNT):
            n = min(MAX_COUNT, words - at)
            chunk = bytes(whole[at * BEAT_BYTES:(at + n) * BEAT_BYTES])
            await self._request(Command.WRITE_MEM, first + at * BEAT_BYTES, n, chunk)

    async def wait_irq(self, cycles: int) -> bool:
        # Each poll is a header out and a word and an answer back: that many frames of the line.
        poll = (HEADER + BEAT_BYTES + 1) * FRAME_BITS * self.divisor
        for _ in range(max(1, -(-cycles // poll))):
            if int.from_bytes(await self._request(Command.IRQ, answer_words=1), "little"):
                return True
        return False


class SerialLink:
    """A :class:`ByteLink` over a serial port (a board's USB-serial bridge), with
    ``pyserial`` (``pip install pyserial``).

    Parameters
    ----------
    device : str
        The port, e.g. ``/dev/ttyUSB0``.
    baud : int
        The board's clock over the bitstream's divisor (``kaleido fpga --bitstream`` says it).
    timeout : float
        Seconds to wait for an answer before giving up.
    """

    def __init__(self, device: str, baud: int, timeout: float = 5.0):
        try:
            import serial
        except ImportError:
            raise LinkError("a serial port needs pyserial: pip install pyserial") from None
        self.port = serial.Serial(device, baud, timeout=timeout)

    async def send(self, data: bytes) -> None:
        await asyncio.to_thread(self.port.write, data)

    async def receive(self, count: int) -> bytes:
        got = await asyncio.to_thread(self.port.read, count)
        if len(got) != count:
            raise LinkError(f"the board answered {len(got)} of {count} bytes before the timeout")
        return got
