"""The system top on a board: a serial line to a host, the DMA's memory in block
RAM, a clock pin and a few LEDs; everything a bitstream needs and nothing a
board must bring beyond them (docs/fpga.md, "A bitstream").

The host speaks :mod:`hw.board.link`'s protocol over the line; :class:`hw.host.link_port.LinkPort`
is its end, so :class:`hw.host.host_driver.Driver` runs products on a board as it
runs them on the cocotb bench. The board's clock drives everything; a counter
holds the design in reset for its first cycles, as no reset pin is needed.
"""

from __future__ import annotations

from amaranth import ClockDomain, ClockSignal, Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect

from golden.config import Config

from ..system.axi import BEAT_BYTES
from ..system.bus_memory import BusMemory, check_words
from ..system.top import TOP_ROWS, TOP_WORDS, SystemTop, top_beats
from .link import HostBridge
from .uart import UartRx, UartTx, check_divisor

__all__ = ["BoardTop", "LEDS", "BOARD_MEM_WORDS", "HEARTBEAT_BIT", "memory_words"]

LEDS = 8
BOARD_MEM_WORDS = 1 << 14      # 64 KiB: 32 of an ECP5's 18-kbit block RAMs
HEARTBEAT_BIT = 24             # LED 0 toggles every 2^24 clocks: ~1.5 Hz at 25 MHz, the clock is alive
_POWER_ON_CYCLES = 16


def memory_words(cfg: Config, design: str, q_words: int, k_words: int, out_rows: int, base: int = 0x1000,
                 align: int = 64) -> int:
    """The smallest memory (a power of two of words) that holds what one engine run
    moves, laid out as the driver lays it out: from ``base``, each region aligned."""
    beats = top_beats(cfg, design)
    regions = (q_words * beats["q"], k_words * beats["k"], out_rows * beats["out"])
    end = base + sum(-(-r * BEAT_BYTES // align) * align for r in regions)
    return 1 << (-(-end // BEAT_BYTES) - 1).bit_length()


class BoardTop(wiring.Component):
    """A system top, its memory and a host link, on a board's pins.

    Parameters
    ----------
    cfg : Config
        The design point.
    design : "kaleido" or "baseline"
    divisor : int
        Board clocks a bit of the serial line (the clock over the baud rate).
    mem_words : int
        Words of block RAM the DMA reads and writes (a power of two).
    q_words, k_words, out_rows : int
        The top's buffers, as :class:`hw.system.top.SystemTop` takes them.

    Members
    -------
    clk : In(1)
        The board's clock.
    rx : In(1)
        The serial line from the host.
    tx : Out(1)
        The serial line to the host.
    led : Out(LEDS)
        0: heartbeat; 1: the top's interrupt; 2: a byte was lost on the line.
    """

    def __new__(cls, cfg: Config, design: str = "kaleido", divisor: int = 25, mem_words: int = BOARD_MEM_WORDS,
                q_words: int = TOP_WORDS, k_words: int = TOP_WORDS, out_rows: int = TOP_ROWS):
        # Every part's arguments are checked before any part exists (an elaboratable
        # never elaborated warns when it is collected).
        SystemTop._validate(cfg, design, q_words, k_words, out_rows)
        check_divisor(divisor)
        check_words(mem_words)
        return super().__new__(cls, src_loc_at=1)

    def __init__(self, cfg: Config, design: str = "kaleido", divisor: int = 25, mem_words: int = BOARD_MEM_WORDS,
                 q_words: int = TOP_WORDS, k_words: int = TOP_WORDS, out_rows: int = TOP_ROWS):
        self.top = SystemTop(cfg, design, q_words, k_words, out_rows)
        self.memory = BusMemory(mem_words)
        self.bridge = HostBridge(mem_words)
        self.uart_rx, self.uart_tx = UartRx(divisor), UartTx(divisor)
        self.cfg, self.design, self.divisor, self.mem_words = cfg, design, divisor, mem_words
        super().__init__({"clk": In(1), "rx": In(1, init=1), "tx": Out(1, init=1), "led": Out(LEDS)})

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = ClockDomain()
        m.domains.por = ClockDomain(reset_less=True)
        m.d.comb += [ClockSignal("sync").eq(self.clk), ClockSignal("por").eq(self.clk)]
        # Flip-flops start at their initial values on an FPGA: count a few cycles, then release reset.
        power_on = Signal(range(_POWER_ON_CYCLES + 1))
        with m.If(power_on != _POWER_ON_CYCLES):
            m.d.por += power_on.eq(power_on + 1)
        m.d.comb += ResetSignal("sync").eq(power_on != _POWER_ON_CYCLES)

        m.submodules.top = top = self.top
        m.submodules.memory = memory = self.memory
        m.submodules.bridge = bridge = self.bridge
        m.submodules.uart_rx = rx = self.uart_rx
        m.submodules.uart_tx = tx = self.uart_tx
        connect(m, top.m_axi, memory.bus)
        connect(m, bridge.axil, top.s_axil)
        connect(m, rx.data, bridge.rx)
        connect(m, bridge.tx, tx.data)
        m.d.comb += [rx.rx.eq(self.rx), self.tx.eq(tx.tx), bridge.irq.eq(top.irq),
                     memory.host_addr.eq(bridge.mem_addr), memory.host_re.eq(bridge.mem_re),
                     memory.host_we.eq(bridge.mem_we), memory.host_wdata.eq(bridge.mem_wdata),
                     bridge.mem_rdata.eq(memory.host_rdata)]
        beat = Signal(HEARTBEAT_BIT + 1)
        m.d.sync += beat.eq(beat + 1)
        m.d.comb += self.led.eq(beat[-1] | top.irq << 1 | rx.overrun << 2)
        return m
