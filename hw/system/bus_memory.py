"""Memory on a board: block RAM behind an AXI4 slave, which the system top's DMA
reads and writes, with a word port of its own for the host link (:mod:`hw.board.link`).

The AXI side takes one incrementing burst at a time a direction, a beat a cycle
each way (a read keeps the beat on ``rdata`` while the master holds ``rready``
low: the read port's enable holds its data). Addresses wrap at the memory's
size, whose high bits are not decoded. The host port has the ports first: a
host reaches memory only while the top is idle (the driver does), so the two
never meet, and nothing arbitrates between them.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .axi import BEAT_BYTES, BEAT_SIZE, BUS_BITS, AXI4Signature, Resp

__all__ = ["BusMemory", "check_words"]


def check_words(words) -> None:
    """Refuse a memory size the address decode cannot take: a power of two, at least 2."""
    if not isinstance(words, int) or words < 2 or words & (words - 1):
        raise ValueError(f"memory words must be a power of two of at least 2, not {words!r}")


class BusMemory(wiring.Component):
    """``words`` bus words of block RAM, on an AXI4 slave port and a host port.

    Parameters
    ----------
    words : int
        The memory's size in :data:`hw.system.axi.BUS_BITS`-bit words, a power of two.

    Members
    -------
    bus : In(AXI4Signature())
        The slave port, for the top's DMA.
    host_addr : In(range(words))
        The word the host port reads or writes.
    host_re : In(1), host_rdata : Out(BUS_BITS)
        Read the word; it is on ``host_rdata`` the next cycle.
    host_we : In(1), host_wdata : In(BUS_BITS)
        Write the word, whole.
    """

    def __new__(cls, words: int):
        check_words(words)
        return super().__new__(cls, src_loc_at=1)

    def __init__(self, words: int):
        self.words = words
        super().__init__({
            "bus": In(AXI4Signature()),
            "host_addr": In(range(words)), "host_re": In(1), "host_rdata": Out(BUS_BITS),
            "host_we": In(1), "host_wdata": In(BUS_BITS),
        })

    def elaborate(self, platform):
        m = Module()
        bus = self.bus
        abits = (self.words - 1).bit_length()
        m.submodules.mem = mem = Memory(shape=BUS_BITS, depth=self.words, init=[])
        wr = mem.write_port(granularity=8)
        rd = mem.read_port()

        def word(addr):
            return addr[BEAT_SIZE:BEAT_SIZE + abits]

        # Writes: an address, its beats, a response.
        waddr = Signal(abits)
        in_burst, respond = Signal(), Signal()
        m.d.comb += [bus.awready.eq(~in_burst & ~respond), bus.wready.eq(in_burst & ~self.host_we),
                     bus.bvalid.eq(respond), bus.bresp.eq(Resp.OKAY), bus.bid.eq(0)]
        with m.If(bus.awvalid & bus.awready):
            m.d.sync += [waddr.eq(word(bus.awaddr)), in_burst.eq(1)]
        with m.If(bus.wvalid & bus.wready):
            m.d.sync += waddr.eq(waddr + 1)
            with m.If(bus.wlast):
                m.d.sync += [in_burst.eq(0), respond.eq(1)]
        with m.If(bus.bvalid & bus.bready):
            m.d.sync += respond.eq(0)
        m.d.comb += [wr.addr.eq(Mux(self.host_we, self.host_addr, waddr)),
                     wr.data.eq(Mux(self.host_we, self.host_wdata, bus.wdata)),
                     wr.en.eq(Mux(self.host_we, (1 << BEAT_BYTES) - 1,
                                  Mux(bus.wvalid & bus.wready, bus.wstrb, 0)))]

        # Reads: the address handshake reads the first beat; each beat taken reads the next.
        raddr = Signal(abits)
        left = Signal(8)
        sending = Signal()
        m.d.comb += rd.en.eq(0)         # held unless a read is asked for: a beat waits on rdata
        m.d.comb += [bus.arready.eq(~sending), bus.rvalid.eq(sending), bus.rdata.eq(rd.data),
                     bus.rlast.eq(left == 0), bus.rresp.eq(Resp.OKAY), bus.rid.eq(0),
                     self.host_rdata.eq(rd.data)]
        with m.If(self.host_re):
            m.d.comb += [rd.addr.eq(self.host_addr), rd.en.eq(1)]
        with m.Elif(bus.arvalid & bus.arready):
            m.d.comb += [rd.addr.eq(word(bus.araddr)), rd.en.eq(1)]
            m.d.sync += [raddr.eq(word(bus.araddr) + 1), left.eq(bus.arlen), sending.eq(1)]
        with m.Elif(bus.rvalid & bus.rready):
            m.d.comb += [rd.addr.eq(raddr), rd.en.eq(1)]
            m.d.sync += raddr.eq(raddr + 1)
            with m.If(bus.rlast):
                m.d.sync += [sending.eq(0), left.eq(0)]
            with m.Else():
                m.d.sync += left.eq(left - 1)
        return m
