"""Pieces every cocotb bench here shares."""

from __future__ import annotations

from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

__all__ = ["start", "reset"]


async def start(dut, edges: int = 2) -> None:
    """Start a 10 ns clock on ``dut.clk``, then :func:`reset`."""
    Clock(dut.clk, 10, unit="ns").start()
    await reset(dut, edges)


async def reset(dut, edges: int = 2) -> None:
    """Hold reset for ``edges`` rising edges; return at a falling edge with reset
    released. Two edges, because Icarus evaluates a combinational block only
    once one of its inputs changes."""
    dut.rst.value = 1
    for _ in range(edges):
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
