"""Static timing of every block at the chip clock: mapped for ``cfg.clock_mhz``,
timed at that period; its critical path, fmax and slack, hold and clock-gating
slack, cached like its area. A block alone is given
:data:`synth.sta.BLOCK_IO_SHARE` of the period on each side for the wiring it
sits in; a whole engine (``hw.blocks.Block.whole``) none, as its ports face registers.

Results are cached under ``.cache/timing/`` by the hash of the block's Verilog,
the liberty file and the clock, so a block is mapped and timed once per clock.
"""

from __future__ import annotations

from pathlib import Path

from golden.config import Config
from hw import blocks
from hw.cache import cached_json, cached_text

from . import clock_tree
from .flow import cache_key, gate_netlist
from .shipped import folder, what
from .sta import BLOCK_IO_SHARE, timing

__all__ = ["block_timing", "timing_path", "block_mapping", "block_netlist", "io_share", "CACHE"]

CACHE = Path(__file__).resolve().parent.parent / ".cache" / "timing"


def block_mapping(name: str, cfg: Config, liberty: str) -> str:
    """The block's gate netlist as Yosys maps it for ``cfg.clock_mhz``, before its
    clock tree (cached beside its timing)."""
    text = blocks.verilog(name, cfg)
    path = CACHE / f"{name}-{cache_key(text, liberty, cfg.clock_mhz, tree=False)}.v"
    return cached_text(path, lambda: gate_netlist(text, blocks.top_name(name), liberty, cfg.clock_mhz,
                                                  tree=False))


def block_netlist(name: str, cfg: Config, liberty: str) -> str:
    """The block's gate netlist, mapped for ``cfg.clock_mhz``, with its clock tree
    (:mod:`synth.clock_tree`), put in afresh on the cached mapping (it takes well
    under a second)."""
    return clock_tree.insert(block_mapping(name, cfg, liberty), blocks.top_name(name), liberty)[0]


def io_share(name: str) -> float:
    """The share of the period block ``name``'s inputs and outputs give its wiring."""
    return 0.0 if blocks.BLOCKS[name].whole else BLOCK_IO_SHARE


def timing_path(name: str, cfg: Config, liberty: str) -> Path:
    """Where block ``name``'s timing at ``cfg`` on ``liberty`` is cached."""
    text = blocks.verilog(name, cfg)
    return CACHE / f"{name}-{cache_key(text, liberty, cfg.clock_mhz)}-io{io_share(name):g}-hold.json"


def block_timing(name: str, cfg: Config, liberty: str) -> dict:
    """``critical_path_ns``, ``fmax_mhz``, ``startpoint``, ``endpoint``, and
    ``slack_ns`` at ``clock_mhz`` (``cfg.clock_mhz``), of one block; its hold and
    clock-gating slacks and its boundary (``io_ns``) as :func:`synth.sta.timing` gives them
    (or as shipped, :mod:`synth.shipped`)."""
    share = io_share(name)

    def make():
        res = timing(block_netlist(name, cfg, liberty), blocks.top_name(name), liberty,
                     period_ns=1e3 / cfg.clock_mhz, io_share=share)
        return {"block": name, "liberty": liberty, "clock_mhz": cfg.clock_mhz, **res}
    return cached_json(timing_path(name, cfg, liberty), make, folder("timing"), what("timing", name, cfg, liberty))
