"""The boards a bitstream can be made for: each says what the flow needs of it
(its ECP5 parts and package, its clock, the sites of the board top's pins), so
the constraints file is written from it and nothing matches on a board's name.

The pins are :class:`hw.board.board.BoardTop`'s: ``clk``, ``rx`` (from the host), ``tx``
(to the host) and ``led`` (``hw.board.board.LEDS`` of them).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Board", "BOARDS", "lpf"]


class Board(NamedTuple):
    name: str
    description: str
    devices: tuple[str, ...]        # the ECP5 parts the board is sold with, by nextpnr's flag
    package: str
    clock_mhz: float
    pins: dict                      # the board top's port -> a site, or a site a bit
    io_type: str = "LVCMOS33"


BOARDS = {
    "ulx3s": Board(
        "ulx3s", "Radiona ULX3S: its 25 MHz oscillator, the FT231X's serial line (USB port US1), eight LEDs",
        ("25k", "45k", "85k"), "CABGA381", 25.0,
        # The FTDI's own names are from its side: ftdi_txd (M1) is what the FPGA receives.
        {"clk": "G2", "rx": "M1", "tx": "L4", "led": ("B2", "C2", "C1", "D2", "D1", "E2", "E1", "H3")}),
}


def lpf(board: Board) -> str:
    """The board's constraints, in Lattice's LPF, for the board top's ports."""
    lines = [f"# {board.description}", "# Written by kaleido-rtl from synth/boards.py.",
             "SYSCONFIG CONFIG_IOVOLTAGE=3.3 COMPRESS_CONFIG=ON;"]
    for port, site in board.pins.items():
        sites = site if isinstance(site, tuple) else (site,)
        for i, s in enumerate(sites):
            name = f"{port}[{i}]" if isinstance(site, tuple) else port
            lines.append(f'LOCATE COMP "{name}" SITE "{s}";')
            lines.append(f'IOBUF PORT "{name}" IO_TYPE={board.io_type};')
    lines.append(f'FREQUENCY PORT "clk" {board.clock_mhz:g} MHZ;')
    return "\n".join(lines) + "\n"
