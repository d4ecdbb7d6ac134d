"""Pieces every cocotb bench here shares."""

from __future__ import annotations

import os

from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from golden import plugins
from golden.config import Config

__all__ = ["start", "reset", "design_point"]


def design_point(var: str = "KALEIDO_CONFIG") -> Config:
    """The design point the runner passed in ``$var`` (the default one without),
    after importing the modules that register what it may name beyond the
    built-in dispatchers and PE kinds (:func:`golden.plugins.load_from_env`)."""
    plugins.load_from_env()
    return Config.from_json(os.environ[var]) if var in os.environ else Config()


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
