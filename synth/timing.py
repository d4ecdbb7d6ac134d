"""Static timing of every block: its critical path and fmax, cached like its area.

Results are cached under ``.cache/timing/`` by the hash of the block's Verilog
and the liberty file, so a block is mapped and timed once.
"""

from __future__ import annotations

from pathlib import Path

from golden.config import Config
from hw import blocks

from .cache import cached_json, cached_text
from .flow import cache_key, gate_netlist
from .sta import timing

__all__ = ["block_timing", "block_netlist", "CACHE"]

CACHE = Path(__file__).resolve().parent.parent / ".cache" / "timing"


def block_netlist(name: str, cfg: Config, liberty: str) -> str:
    """The block's gate netlist (cached beside its timing)."""
    text = blocks.verilog(name, cfg)
    path = CACHE / f"{name}-{cache_key(text, liberty)}.v"
    return cached_text(path, lambda: gate_netlist(text, blocks.top_name(name), liberty))


def block_timing(name: str, cfg: Config, liberty: str) -> dict:
    """``critical_path_ns``, ``fmax_mhz``, ``startpoint``, ``endpoint`` of one block."""
    text = blocks.verilog(name, cfg)
    path = CACHE / f"{name}-{cache_key(text, liberty)}.json"
    def make():
        res = timing(block_netlist(name, cfg, liberty), blocks.top_name(name), liberty)
        return {"block": name, "liberty": liberty, **res}
    return cached_json(path, make)
