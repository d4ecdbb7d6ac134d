"""The host's end of the link on its own, against a recorded byte channel: requests
as the protocol frames them, long transfers cut at the count field's limit, a
refusal from the board named in one line, and a serial port without pyserial."""

import asyncio
import importlib.util

import pytest

from hw.board.link import HEADER, MAX_COUNT, Answer, Command
from hw.host.link_port import LinkError, LinkPort, SerialLink


class Recorded:
    """A byte channel that keeps every request and answers each with ``status``
    after the words a read asks for (zeros)."""

    def __init__(self, status=Answer.OKAY):
        self.status, self.requests, self.pending = status, [], b""

    async def send(self, data):
        command = Command(data[0])
        addr, count = int.from_bytes(data[1:5], "little"), int.from_bytes(data[5:7], "little")
        self.requests.append((command, addr, count, len(data) - HEADER))
        words = {Command.READ_MEM: count, Command.READ_REG: 1, Command.IRQ: 1}.get(command, 0)
        self.pending = bytes(4 * words) + bytes([self.status.value])

    async def receive(self, count):
        assert count == len(self.pending), f"asked for {count} bytes, the answer has {len(self.pending)}"
        return self.pending


def test_requests_are_framed_as_the_protocol_says():
    link = Recorded()
    port = LinkPort(link, 1 << 20, 25)
    asyncio.run(port.write_reg(0x14, 7))
    asyncio.run(port.read_reg(0x18))
    asyncio.run(port.write_mem(0x1000, bytes(4 * (MAX_COUNT + 5))))
    assert link.requests == [(Command.WRITE_REG, 0x14, 1, 4), (Command.READ_REG, 0x18, 1, 0),
                             (Command.WRITE_MEM, 0x1000, MAX_COUNT, 4 * MAX_COUNT),
                             (Command.WRITE_MEM, 0x1000 + 4 * MAX_COUNT, 5, 20)]


def test_a_partial_word_is_read_before_it_is_written():
    link = Recorded()
    asyncio.run(LinkPort(link, 1024, 25).write_mem(0x102, b"\x01\x02\x03"))
    assert [r[:3] for r in link.requests] == [(Command.READ_MEM, 0x100, 2), (Command.WRITE_MEM, 0x100, 2)]


def test_a_refusal_names_the_request_and_the_answer():
    port = LinkPort(Recorded(Answer.SLVERR), 1024, 25)
    with pytest.raises(LinkError, match="WRITE_REG at 0x8: the board answered SLVERR"):
        asyncio.run(port.write_reg(8, 1))


@pytest.mark.parametrize("call, says", [
    (lambda p: p.write_reg(-4, 1), "a register offset must be an integer from 0"),
    (lambda p: p.write_reg(1 << 32, 1), "a register offset must be an integer from 0"),
    (lambda p: p.write_reg(0, 1 << 32), "a register value must be an integer from 0"),
    (lambda p: p.write_reg(0, -1), "a register value must be an integer from 0"),
    (lambda p: p.write_reg(0, 1.7), "a register value must be an integer from 0 to 2**32 - 1, got 1.7"),
    (lambda p: p.write_reg(0x15, 1), "register offset 0x15 is not 4-byte aligned"),
    (lambda p: p.read_reg(0x16), "register offset 0x16 is not 4-byte aligned"),
    (lambda p: p.read_mem(0, -8), "a length must be an integer of 0 or more, got -8"),
    (lambda p: p.write_mem(-4, b"1234"), "a memory address must be an integer of 0 or more"),
])
def test_a_bad_request_is_refused_before_anything_is_sent(call, says):
    """Each used to reach the wire, or fail there bare: an OverflowError, 1.7 written as
    1, an unaligned offset sent, b'' for a negative length."""
    link = Recorded()
    with pytest.raises(ValueError, match=says.replace("(", r"\(").replace("*", r"\*")):
        asyncio.run(call(LinkPort(link, 1024, 25)))
    assert link.requests == []


@pytest.mark.parametrize("mem_words, divisor", [(1024, 0), (0, 25), (1024, 2.5)])
def test_a_port_without_a_clock_or_memory_is_refused(mem_words, divisor):
    with pytest.raises(ValueError, match="must be a positive integer"):
        LinkPort(Recorded(), mem_words, divisor)


@pytest.mark.skipif(importlib.util.find_spec("serial") is not None, reason="pyserial is installed here")
def test_a_serial_port_without_pyserial_says_how_to_get_it():
    with pytest.raises(LinkError, match="pip install pyserial"):
        SerialLink("/dev/ttyUSB0", 1_000_000)
