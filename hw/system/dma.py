"""The system top's DMA: an AXI4 master that reads and writes runs of beats.

A read takes ``(addr, beats)`` and hands the beats out as a stream, in order; a
write takes ``(addr, beats)`` and sends the beats a stream brings. Both cut a
run into incrementing bursts of at most :data:`hw.system.axi.MAX_BURST` beats that
never cross a 4 KiB page (the AXI rule), so an address need only be
beat-aligned. Each direction keeps one burst in flight: the next address goes
out once the last beat (a read) or the response (a write) is in. That leaves
the bus idle for its latency between bursts; the engine's own run dwarfs it on
every product the top runs (docs/system.md, "What the DMA costs").

Back-pressure both ways is the bus's and the stream's: ``rready`` is the read
stream's ``ready``, ``wvalid`` the write stream's ``valid``. A response other
than OKAY sets the direction's ``error`` (until its next start); the run still
completes every beat the bus owes, so a bad response never hangs the bus.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal
from amaranth.lib import enum, stream, wiring
from amaranth.lib.wiring import In, Out

from .axi import ADDR_BITS, BEAT_BYTES, BEAT_SIZE, BUS_BITS, MAX_BURST, PAGE_BYTES, AXI4Signature, Burst, Resp

__all__ = ["Dma", "RUN_BITS"]

RUN_BITS = 24                  # beats one run may move: 64 MiB


class _Phase(enum.Enum, shape=2):
    IDLE = 0
    ADDR = 1                   # the burst's address is offered
    DATA = 2                   # its beats move
    RESP = 3                   # a write waits for its response


class Dma(wiring.Component):
    """One AXI4 master port, a read run and a write run that proceed independently.

    Members
    -------
    bus : Out(AXI4Signature())
        The master port.
    rd_start, rd_addr, rd_beats : In
        Start a read of ``rd_beats`` beats from byte ``rd_addr`` (beat-aligned).
    rd_busy, rd_error : Out(1)
        The read is under way; some beat came back with a response other than OKAY.
    rd_data : Out(stream.Signature(BUS_BITS))
        The beats read, in address order.
    wr_start, wr_addr, wr_beats, wr_busy, wr_error : likewise, for a write.
    wr_data : In(stream.Signature(BUS_BITS))
        The beats to write, in address order.
    """

    def __init__(self):
        run = {f"{d}_{name}": port for d in ("rd", "wr") for name, port in (
            ("start", In(1)), ("addr", In(ADDR_BITS)), ("beats", In(RUN_BITS)), ("busy", Out(1)), ("error", Out(1)))}
        super().__init__({
            "bus": Out(AXI4Signature()),
            **run,
            "rd_data": Out(stream.Signature(BUS_BITS)),
            "wr_data": In(stream.Signature(BUS_BITS)),
        })

    def elaborate(self, platform):
        m = Module()
        bus = self.bus
        m.d.comb += [bus.arsize.eq(BEAT_SIZE), bus.awsize.eq(BEAT_SIZE), bus.arburst.eq(Burst.INCR),
                     bus.awburst.eq(Burst.INCR), bus.wstrb.eq((1 << BEAT_BYTES) - 1)]
        self._read(m)
        self._write(m)
        return m

    def _run(self, m, d: str):
        """A run's address, the beats still to ask for, and this burst's length."""
        addr = Signal(ADDR_BITS, name=f"{d}_next_addr")
        left = Signal(RUN_BITS, name=f"{d}_left")
        length = Signal(range(MAX_BURST + 1), name=f"{d}_length")
        # The beats to the end of the page, the run's rest, or a whole burst: the least.
        page = Signal(range(PAGE_BYTES // BEAT_BYTES + 1), name=f"{d}_page_left")
        m.d.comb += page.eq((PAGE_BYTES - addr[:PAGE_BYTES.bit_length() - 1]) >> BEAT_SIZE)
        shorter = Mux(left < page, left, page)
        m.d.comb += length.eq(Mux(shorter < MAX_BURST, shorter, MAX_BURST))
        with m.If(getattr(self, f"{d}_start")):
            m.d.sync += [addr.eq(getattr(self, f"{d}_addr")), left.eq(getattr(self, f"{d}_beats"))]
        return addr, left, length

    def _read(self, m):
        bus, out = self.bus, self.rd_data
        addr, left, length = self._run(m, "rd")
        phase = Signal(_Phase, name="rd_phase")
        m.d.comb += [self.rd_busy.eq(phase != _Phase.IDLE), bus.araddr.eq(addr), bus.arlen.eq(length - 1),
                     out.payload.eq(bus.rdata)]
        with m.If(self.rd_start):
            m.d.sync += self.rd_error.eq(0)
        with m.Switch(phase):
            with m.Case(_Phase.IDLE):
                with m.If(self.rd_start & (self.rd_beats != 0)):
                    m.d.sync += phase.eq(_Phase.ADDR)
            with m.Case(_Phase.ADDR):
                m.d.comb += bus.arvalid.eq(1)
                with m.If(bus.arready):
                    m.d.sync += [addr.eq(addr + (length << BEAT_SIZE)), left.eq(left - length),
                                 phase.eq(_Phase.DATA)]
            with m.Case(_Phase.DATA):
                m.d.comb += [out.valid.eq(bus.rvalid), bus.rready.eq(out.ready)]
                with m.If(bus.rvalid & out.ready):
                    with m.If(bus.rresp != Resp.OKAY):
                        m.d.sync += self.rd_error.eq(1)
                    with m.If(bus.rlast):
                        m.d.sync += phase.eq(Mux(left == 0, _Phase.IDLE, _Phase.ADDR))

    def _write(self, m):
        bus, src = self.bus, self.wr_data
        addr, left, length = self._run(m, "wr")
        phase = Signal(_Phase, name="wr_phase")
        beats = Signal(range(MAX_BURST + 1), name="wr_burst_left")
        m.d.comb += [self.wr_busy.eq(phase != _Phase.IDLE), bus.awaddr.eq(addr), bus.awlen.eq(length - 1),
                     bus.wdata.eq(src.payload), bus.wlast.eq(beats == 1)]
        with m.If(self.wr_start):
            m.d.sync += self.wr_error.eq(0)
        with m.Switch(phase):
            with m.Case(_Phase.IDLE):
                with m.If(self.wr_start & (self.wr_beats != 0)):
                    m.d.sync += phase.eq(_Phase.ADDR)
            with m.Case(_Phase.ADDR):
                m.d.comb += bus.awvalid.eq(1)
                with m.If(bus.awready):
                    m.d.sync += [addr.eq(addr + (length << BEAT_SIZE)), left.eq(left - length),
                                 beats.eq(length), phase.eq(_Phase.DATA)]
            with m.Case(_Phase.DATA):
                m.d.comb += [bus.wvalid.eq(src.valid), src.ready.eq(bus.wready)]
                with m.If(src.valid & bus.wready):
                    m.d.sync += beats.eq(beats - 1)
                    with m.If(beats == 1):
                        m.d.sync += phase.eq(_Phase.RESP)
            with m.Case(_Phase.RESP):
                m.d.comb += bus.bready.eq(1)
                with m.If(bus.bvalid):
                    with m.If(bus.bresp != Resp.OKAY):
                        m.d.sync += self.wr_error.eq(1)
                    m.d.sync += phase.eq(Mux(left == 0, _Phase.IDLE, _Phase.ADDR))
