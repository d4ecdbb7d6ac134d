"""AMBA AXI4 and AXI4-Lite interfaces, as the system top (:mod:`hw.system.top`) faces a bus.

Each channel's signals are named as the AXI specification names them
(``awaddr``, ``wlast``...), so the emitted ports read ``s_axil__awaddr`` and
``m_axi__rdata``: the prefix ``s_axil_`` or ``m_axi_`` finds them with the
usual verification libraries (cocotbext-axi's ``from_prefix``). The data bus is
:data:`BUS_BITS` wide; the top moves every tensor element and buffer word in
beats of it. Only what the top uses is declared: one ID (0), incrementing
bursts of :data:`BEAT_SIZE` beats, no locks, caches or QoS (a bus that needs
them ties them off).
"""

from __future__ import annotations

from amaranth.lib import enum, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["BUS_BITS", "BEAT_BYTES", "BEAT_SIZE", "MAX_BURST", "PAGE_BYTES", "Resp", "Burst",
           "AXI4LiteSignature", "AXI4Signature"]

BUS_BITS = 32                  # the data bus, register and memory sides alike
BEAT_BYTES = BUS_BITS // 8
BEAT_SIZE = (BEAT_BYTES - 1).bit_length()     # AxSIZE: log2 of the bytes a beat
MAX_BURST = 16                 # beats a burst: a short one keeps the top's bus share fair
PAGE_BYTES = 4096              # an AXI burst must not cross a 4 KiB boundary
ADDR_BITS = 32


class Resp(enum.Enum, shape=2):
    """xRESP: what a slave answers a transfer."""

    OKAY = 0
    EXOKAY = 1
    SLVERR = 2
    DECERR = 3


class Burst(enum.Enum, shape=2):
    """AxBURST."""

    FIXED = 0
    INCR = 1
    WRAP = 2


class AXI4LiteSignature(wiring.Signature):
    """An AXI4-Lite slave port, from the slave's side (what the bus master drives is ``In``)."""

    def __init__(self, addr_bits: int = 12):
        super().__init__({
            "awaddr": In(addr_bits), "awvalid": In(1), "awready": Out(1),
            "wdata": In(BUS_BITS), "wstrb": In(BEAT_BYTES), "wvalid": In(1), "wready": Out(1),
            "bresp": Out(2), "bvalid": Out(1), "bready": In(1),
            "araddr": In(addr_bits), "arvalid": In(1), "arready": Out(1),
            "rdata": Out(BUS_BITS), "rresp": Out(2), "rvalid": Out(1), "rready": In(1),
        })


class AXI4Signature(wiring.Signature):
    """An AXI4 master port, from the master's side (what it drives is ``Out``)."""

    def __init__(self):
        super().__init__({
            "awid": Out(1), "awaddr": Out(ADDR_BITS), "awlen": Out(8), "awsize": Out(3), "awburst": Out(2),
            "awvalid": Out(1), "awready": In(1),
            "wdata": Out(BUS_BITS), "wstrb": Out(BEAT_BYTES), "wlast": Out(1), "wvalid": Out(1), "wready": In(1),
            "bid": In(1), "bresp": In(2), "bvalid": In(1), "bready": Out(1),
            "arid": Out(1), "araddr": Out(ADDR_BITS), "arlen": Out(8), "arsize": Out(3), "arburst": Out(2),
            "arvalid": Out(1), "arready": In(1),
            "rid": In(1), "rdata": In(BUS_BITS), "rresp": In(2), "rlast": In(1), "rvalid": In(1), "rready": Out(1),
        })
