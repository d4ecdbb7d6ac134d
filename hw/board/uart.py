"""A serial line, 8 data bits, no parity, one stop bit (8N1): what a board's
USB-serial bridge speaks, and all the board top (:mod:`hw.board.board`) needs to
reach a host. Both ends count :attr:`divisor` clocks a bit; the baud rate is
the board's clock over it.
"""

from __future__ import annotations

from amaranth import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

__all__ = ["UartRx", "UartTx", "FRAME_BITS", "MIN_DIVISOR", "check_divisor"]

FRAME_BITS = 10          # a start bit, 8 data bits least significant first, a stop bit
MIN_DIVISOR = 4          # the receiver samples mid-bit: it needs a few clocks a bit to find the middle


def check_divisor(divisor) -> None:
    """Refuse a divisor the receiver cannot sample with."""
    if not isinstance(divisor, int) or divisor < MIN_DIVISOR:
        raise ValueError(f"divisor must be an integer of at least {MIN_DIVISOR} clocks a bit, not {divisor!r}")


class _Line(wiring.Component):
    """An end of the line: ``divisor`` is checked before the object exists (an
    elaboratable made and never elaborated warns when it is collected)."""

    def __new__(cls, divisor: int):
        check_divisor(divisor)
        return super().__new__(cls, src_loc_at=1)


class UartRx(_Line):
    """Bytes from a serial line.

    Parameters
    ----------
    divisor : int
        Clocks a bit.

    Members
    -------
    rx : In(1)
        The line (idle high); synchronized here, it may come straight from a pin.
    data : Out(stream.Signature(8))
        Each byte whose stop bit was high, ``valid`` for one cycle. The line cannot
        wait: a byte its consumer is not ``ready`` for is lost and ``overrun`` is set.
    overrun : Out(1)
        Set when a byte was lost, until reset.
    """

    def __init__(self, divisor: int):
        self.divisor = divisor
        super().__init__({"rx": In(1, init=1), "data": Out(stream.Signature(8)), "overrun": Out(1)})

    def elaborate(self, platform):
        m = Module()
        line = Signal(init=1)
        m.submodules.sync = FFSynchronizer(self.rx, line, init=1)
        count = Signal(range(self.divisor))
        bits = Signal(range(FRAME_BITS))
        shift = Signal(FRAME_BITS - 1)      # the data bits, shifted in from the top (bit 0 unused at the end)
        with m.FSM():
            with m.State("IDLE"):
                with m.If(~line):
                    # Half a bit to the start bit's middle; every later sample is a bit on.
                    m.d.sync += [count.eq(self.divisor // 2 - 1), bits.eq(0)]
                    m.next = "BITS"
            with m.State("BITS"):
                with m.If(count != 0):
                    m.d.sync += count.eq(count - 1)
                with m.Elif((bits == 0) & line):
                    m.next = "IDLE"         # a glitch, not a start bit
                with m.Elif(bits == FRAME_BITS - 1):
                    # The stop bit: a byte if it is high, a broken frame (dropped) if not.
                    # Straight back to IDLE, so a sender whose clock runs fast loses no start bit.
                    m.d.comb += [self.data.payload.eq(shift[1:]), self.data.valid.eq(line)]
                    with m.If(self.data.valid & ~self.data.ready):
                        m.d.sync += self.overrun.eq(1)
                    m.next = "IDLE"
                with m.Else():
                    m.d.sync += [count.eq(self.divisor - 1), bits.eq(bits + 1)]
                    with m.If(bits != 0):
                        m.d.sync += shift.eq(Cat(shift[1:], line))
        return m


class UartTx(_Line):
    """A serial line from bytes.

    Parameters
    ----------
    divisor : int
        Clocks a bit.

    Members
    -------
    data : In(stream.Signature(8))
        Bytes to send; one is taken when the last one's stop bit has ended.
    tx : Out(1)
        The line, idle high.
    """

    def __init__(self, divisor: int):
        self.divisor = divisor
        super().__init__({"data": In(stream.Signature(8)), "tx": Out(1, init=1)})

    def elaborate(self, platform):
        m = Module()
        count = Signal(range(self.divisor))
        left = Signal(range(FRAME_BITS + 1))
        frame = Signal(FRAME_BITS, init=1)
        m.d.comb += [self.tx.eq(frame[0]), self.data.ready.eq(left == 0)]
        with m.If(self.data.valid & self.data.ready):
            m.d.sync += [frame.eq(Cat(0, self.data.payload, 1)), left.eq(FRAME_BITS), count.eq(self.divisor - 1)]
        with m.Elif(left != 0):
            with m.If(count != 0):
                m.d.sync += count.eq(count - 1)
            with m.Else():
                m.d.sync += [frame.eq(Cat(frame[1:], 1)), left.eq(left - 1), count.eq(self.divisor - 1)]
        return m
