"""The host link: a byte protocol over a serial line that reaches the system top's
registers (as an AXI4-Lite master) and the board's memory (:mod:`hw.system.bus_memory`).

Every request is a :data:`HEADER` of seven bytes, little-endian: a
:class:`Command`, a byte address and a count of 32-bit words; a write brings
its words after it. Every answer is the words a read asks for, least
significant byte first, then one :class:`Answer` byte. The host waits for the
answer before it sends the next request, so the link needs no flow control
(and the bridge is ready for each byte long before a serial line brings it). :mod:`hw.host.link_port` is the
host's end; the command and answer codes are written once, here, for both.
"""

from __future__ import annotations

from amaranth import Cat, Module, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from ..system.axi import BEAT_BYTES, BEAT_SIZE, BUS_BITS, AXI4LiteSignature
from ..system.top import REG_ADDR_BITS

__all__ = ["Command", "Answer", "Header", "HEADER", "MAX_COUNT", "HostBridge"]


class Command(enum.Enum, shape=8):
    """What a request asks; printable, so a line can be read in a terminal."""

    READ_REG = ord("R")        # one register: answers its word
    WRITE_REG = ord("W")       # one register: brings its word
    READ_MEM = ord("r")        # ``count`` words of memory from ``addr``
    WRITE_MEM = ord("w")       # ``count`` words of memory to ``addr``
    IRQ = ord("i")             # answers one word: the top's interrupt line


class Answer(enum.Enum, shape=8):
    """The last byte of every answer: the register port's AXI response, or a refusal."""

    OKAY = 0
    SLVERR = 2
    DECERR = 3
    BAD_COMMAND = 0xFF


#: A request's first bytes, in the order they arrive.
Header = data.StructLayout({"command": Command, "addr": 32, "count": 16})
HEADER = Header.size // 8                 # bytes
MAX_COUNT = (1 << 16) - 1                 # words a memory request may move


class HostBridge(wiring.Component):
    """Requests from a byte stream, carried out on the top's register port and the
    board's memory; answers to a byte stream.

    Parameters
    ----------
    mem_words : int
        Words of the board's memory (a power of two); memory addresses wrap at it.

    Members
    -------
    rx : In(stream.Signature(8))
        The request bytes. ``ready`` is low for a cycle or two after a header or a
        word: a serial receiver, whose bytes are ten bit times apart, never meets it.
    tx : Out(stream.Signature(8))
        The answer bytes.
    axil : In(AXI4LiteSignature(REG_ADDR_BITS))
        The master end of the top's register port.
    irq : In(1)
        The top's interrupt.
    mem_addr, mem_re, mem_rdata, mem_we, mem_wdata
        The memory's host port (:class:`hw.system.bus_memory.BusMemory`).
    """

    def __init__(self, mem_words: int):
        self.mem_words = mem_words
        super().__init__({
            "rx": In(stream.Signature(8)), "tx": Out(stream.Signature(8)),
            "axil": In(AXI4LiteSignature(REG_ADDR_BITS)), "irq": In(1),
            "mem_addr": Out(range(mem_words)), "mem_re": Out(1), "mem_rdata": In(BUS_BITS),
            "mem_we": Out(1), "mem_wdata": Out(BUS_BITS),
        })

    def elaborate(self, platform):
        m = Module()
        bus = self.axil
        head = Signal(Header)
        raw = head.as_value()
        got = Signal(range(BEAT_BYTES + HEADER))     # bytes of the header or of a word so far
        word = Signal(BUS_BITS)
        answer = Signal(Answer)
        left = Signal(16)                            # words still to move
        addr = Signal(range(self.mem_words))
        # A byte is taken in the states that wait for one; between them the bridge is
        # busy a cycle or two (a serial receiver's next byte is ten bit times away).
        byte_in = self.rx.valid & self.rx.ready
        m.d.comb += [bus.awaddr.eq(head.addr[:REG_ADDR_BITS]), bus.araddr.eq(head.addr[:REG_ADDR_BITS]),
                     bus.wdata.eq(word), bus.wstrb.eq((1 << BEAT_BYTES) - 1),
                     self.mem_addr.eq(addr), self.mem_wdata.eq(word), self.tx.payload.eq(word[:8])]

        with m.FSM():
            with m.State("HEADER"):
                m.d.comb += self.rx.ready.eq(1)
                with m.If(byte_in):
                    m.d.sync += [raw.eq(Cat(raw[8:], self.rx.payload)), got.eq(got + 1)]
                    with m.If(got == HEADER - 1):
                        m.d.sync += got.eq(0)
                        m.next = "DECODE"
            with m.State("DECODE"):
                m.d.sync += [addr.eq(head.addr[BEAT_SIZE:]), left.eq(head.count), answer.eq(Answer.OKAY)]
                with m.Switch(head.command):
                    with m.Case(Command.WRITE_REG):
                        m.d.sync += left.eq(1)
                        m.next = "GET_WORD"
                    with m.Case(Command.WRITE_MEM):
                        m.next = "GET_WORD"
                    with m.Case(Command.READ_REG):
                        m.next = "REG_READ"
                    with m.Case(Command.READ_MEM):
                        m.next = "MEM_READ"
                    with m.Case(Command.IRQ):
                        m.d.sync += [word.eq(self.irq), got.eq(BEAT_BYTES), left.eq(1)]
                        m.next = "SEND_WORD"
                    with m.Default():
                        m.d.sync += answer.eq(Answer.BAD_COMMAND)
                        m.next = "ANSWER"
            with m.State("GET_WORD"):
                with m.If(left == 0):
                    m.next = "ANSWER"
                with m.Else():
                    m.d.comb += self.rx.ready.eq(1)
                with m.If((left != 0) & byte_in):
                    m.d.sync += [word.eq(Cat(word[8:], self.rx.payload)), got.eq(got + 1)]
                    with m.If(got == BEAT_BYTES - 1):
                        m.d.sync += got.eq(0)
                        with m.If(head.command == Command.WRITE_REG):
                            m.next = "REG_WRITE"
                        with m.Else():
                            m.next = "MEM_WRITE"
            with m.State("MEM_WRITE"):
                m.d.comb += self.mem_we.eq(1)
                m.d.sync += [addr.eq(addr + 1), left.eq(left - 1)]
                m.next = "GET_WORD"
            self._register_states(m, word, answer, left, got)
            with m.State("MEM_READ"):
                with m.If(left == 0):
                    m.next = "ANSWER"
                with m.Else():
                    m.d.comb += self.mem_re.eq(1)
                    m.next = "MEM_DATA"
            with m.State("MEM_DATA"):
                m.d.sync += [word.eq(self.mem_rdata), got.eq(BEAT_BYTES), addr.eq(addr + 1)]
                m.next = "SEND_WORD"
            with m.State("SEND_WORD"):
                m.d.comb += self.tx.valid.eq(1)
                with m.If(self.tx.ready):
                    m.d.sync += [word.eq(word >> 8), got.eq(got - 1)]
                    with m.If(got == 1):
                        m.d.sync += left.eq(left - 1)
                        with m.If(head.command == Command.READ_MEM):
                            m.next = "MEM_READ"
                        with m.Else():
                            m.next = "ANSWER"
            with m.State("ANSWER"):
                m.d.comb += [self.tx.valid.eq(1), self.tx.payload.eq(answer.as_value())]
                with m.If(self.tx.ready):
                    m.next = "HEADER"
        return m

    def _register_states(self, m, word, answer, left, got) -> None:
        """The FSM's states for one register: a write (address and data offered
        together, each dropped once taken, then the response) or a read (the
        address, then the data, sent on as a word)."""
        bus = self.axil
        with m.State("REG_WRITE"):
            # Address and data offered together; each is dropped once taken.
            aw_done, w_done = Signal(), Signal()
            m.d.comb += [bus.awvalid.eq(~aw_done), bus.wvalid.eq(~w_done), bus.bready.eq(1)]
            with m.If(bus.awvalid & bus.awready):
                m.d.sync += aw_done.eq(1)
            with m.If(bus.wvalid & bus.wready):
                m.d.sync += w_done.eq(1)
            with m.If(bus.bvalid):
                m.d.sync += [answer.eq(bus.bresp), aw_done.eq(0), w_done.eq(0), left.eq(0)]
                m.next = "ANSWER"
        with m.State("REG_READ"):
            m.d.comb += bus.arvalid.eq(1)
            with m.If(bus.arready):
                m.next = "REG_DATA"
        with m.State("REG_DATA"):
            m.d.comb += bus.rready.eq(1)
            with m.If(bus.rvalid):
                m.d.sync += [word.eq(bus.rdata), answer.eq(bus.rresp), got.eq(BEAT_BYTES), left.eq(1)]
                m.next = "SEND_WORD"
