"""An AXI4-Lite slave that turns bus transfers into register strobes.

A write needs its address and its data; AXI4-Lite lets a master send them in
either order or together, so each is held as it comes (its ``ready`` falls
until the pair is used), and the register is written once both are in and no
response is waiting. A read latches the register's value on its address
handshake and holds it until the master takes it. One transfer of each kind is
in flight at a time, which a register port needs no more than. Every response
is OKAY: a write to a read-only or unknown offset is ignored, a read of an
unknown offset returns 0 (docs/system.md, "Register map").
"""

from __future__ import annotations

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .axi import BUS_BITS, AXI4LiteSignature, Resp

__all__ = ["AxiLiteSlave"]


class AxiLiteSlave(wiring.Component):
    """Register strobes from an AXI4-Lite port.

    Parameters
    ----------
    addr_bits : int
        Width of the byte address the port decodes.

    Members
    -------
    bus : Out(AXI4LiteSignature(addr_bits))
        The slave port.
    wr_en, wr_addr, wr_data : Out
        One cycle: write ``wr_data`` to the register at ``wr_addr`` (every byte
        strobe is taken as set: the registers are written whole).
    rd_addr : Out(addr_bits), rd_data : In(BUS_BITS)
        The offset being read, and the register's value (combinational).
    """

    def __init__(self, addr_bits: int = 12):
        if addr_bits < 2:
            raise ValueError("a register port needs at least 2 address bits")
        self.addr_bits = addr_bits
        super().__init__({
            "bus": Out(AXI4LiteSignature(addr_bits)),
            "wr_en": Out(1), "wr_addr": Out(addr_bits), "wr_data": Out(BUS_BITS),
            "rd_addr": Out(addr_bits), "rd_data": In(BUS_BITS),
        })

    def elaborate(self, platform):
        m = Module()
        bus = self.bus
        have_addr, have_data = Signal(), Signal()
        m.d.comb += [bus.awready.eq(~have_addr), bus.wready.eq(~have_data), bus.bresp.eq(Resp.OKAY),
                     bus.rresp.eq(Resp.OKAY)]
        with m.If(bus.awvalid & bus.awready):
            m.d.sync += [have_addr.eq(1), self.wr_addr.eq(bus.awaddr)]
        with m.If(bus.wvalid & bus.wready):
            m.d.sync += [have_data.eq(1), self.wr_data.eq(bus.wdata)]
        # Both halves in and the last response taken: write, and answer.
        m.d.comb += self.wr_en.eq(have_addr & have_data & ~bus.bvalid)
        with m.If(self.wr_en):
            m.d.sync += [have_addr.eq(0), have_data.eq(0), bus.bvalid.eq(1)]
        with m.Elif(bus.bvalid & bus.bready):
            m.d.sync += bus.bvalid.eq(0)

        m.d.comb += [bus.arready.eq(~bus.rvalid), self.rd_addr.eq(bus.araddr)]
        with m.If(bus.arvalid & bus.arready):
            m.d.sync += [bus.rvalid.eq(1), bus.rdata.eq(self.rd_data)]
        with m.Elif(bus.rvalid & bus.rready):
            m.d.sync += bus.rvalid.eq(0)
        return m
