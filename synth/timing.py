"""Static timing of every block at the chip clock: mapped for ``cfg.clock_mhz``,
timed at that period; its critical path, fmax and slack, hold and clock-gating
slack, cached like its area. A block alone is given
:data:`synth.sta.BLOCK_IO_SHARE` of the period on each side for the wiring it
sits in; a whole engine (``hw.blocks.Block.whole``) none, as its ports face registers.

Results are cached under ``.cache/timing/`` by the hash of the block's Verilog,
the liberty file and the clock, so a block is mapped and timed once per clock.

A block whose hold fails on its clock tree is repaired (:mod:`synth.hold`): its
netlist, for timing, area and energy alike, is then the repaired one, and its
results are named by the repair's source as well. A block whose hold is met is
left as it was, and so are its results and their names.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from golden.config import Config
from hw import blocks
from hw.cache import cached_json, cached_text

from . import clock_tree, hold
from .flow import cache_key, gate_netlist
from .shipped import folder, what
from .sta import BLOCK_IO_SHARE, timing

__all__ = ["block_timing", "timing_path", "repaired_path", "block_mapping", "block_netlist", "io_share", "meets",
           "needs_repair", "tree_netlist", "tree_timing", "REPAIR", "CACHE"]

CACHE = Path(__file__).resolve().parent.parent / ".cache" / "timing"

#: The hold repair, by its source: part of the name of every result measured on a repaired netlist.
REPAIR = hashlib.sha256(Path(hold.__file__).read_bytes()).hexdigest()[:12]


def block_mapping(name: str, cfg: Config, liberty: str) -> str:
    """The block's gate netlist as Yosys maps it for ``cfg.clock_mhz``, before its
    clock tree (cached beside its timing)."""
    text = blocks.verilog(name, cfg)
    path = CACHE / f"{name}-{cache_key(text, liberty, cfg.clock_mhz, tree=False)}.v"
    return cached_text(path, lambda: gate_netlist(text, blocks.top_name(name), liberty, cfg.clock_mhz,
                                                  tree=False))


def tree_netlist(name: str, cfg: Config, liberty: str) -> str:
    """The block's gate netlist, mapped for ``cfg.clock_mhz``, with its clock tree
    (:mod:`synth.clock_tree`), put in afresh on the cached mapping (it takes well
    under a second)."""
    return clock_tree.insert(block_mapping(name, cfg, liberty), blocks.top_name(name), liberty)[0]


def block_netlist(name: str, cfg: Config, liberty: str) -> str:
    """The block's signed-off gate netlist: :func:`tree_netlist`, with hold repaired
    where it fails (:mod:`synth.hold`; cached beside its timing)."""
    if not needs_repair(tree_timing(name, cfg, liberty)):
        return tree_netlist(name, cfg, liberty)
    path = repaired_path(name, cfg, liberty).with_suffix(".v")
    return cached_text(path, lambda: _repair(name, cfg, liberty)[0])


def _repair(name: str, cfg: Config, liberty: str) -> tuple[str, hold.HoldRepair]:
    return hold.repair(tree_netlist(name, cfg, liberty), blocks.top_name(name), liberty, 1e3 / cfg.clock_mhz,
                       io_share(name))


def needs_repair(t: dict) -> bool:
    """Whether a timing result (before repair) has a flip-flop path that fails hold."""
    return t["hold_slack_ns"] is not None and t["hold_slack_ns"] < 0


def meets(t: dict) -> bool:
    """Whether a block's timing closes: setup at its clock, hold, and its clock gates' checks."""
    return t["slack_ns"] >= 0 and all(t.get(k) is None or t[k] >= 0 for k in
                                      ("hold_slack_ns", "gating_setup_slack_ns", "gating_hold_slack_ns"))


def io_share(name: str) -> float:
    """The share of the period block ``name``'s inputs and outputs give its wiring."""
    return 0.0 if blocks.BLOCKS[name].whole else BLOCK_IO_SHARE


def timing_path(name: str, cfg: Config, liberty: str) -> Path:
    """Where block ``name``'s timing at ``cfg`` on ``liberty`` is cached."""
    text = blocks.verilog(name, cfg)
    return CACHE / f"{name}-{cache_key(text, liberty, cfg.clock_mhz)}-io{io_share(name):g}-hold.json"


def repaired_path(name: str, cfg: Config, liberty: str) -> Path:
    """Where block ``name``'s timing after hold repair is cached."""
    before = timing_path(name, cfg, liberty)
    return before.with_name(f"{before.stem}-repaired-{REPAIR}.json")


def tree_timing(name: str, cfg: Config, liberty: str) -> dict:
    """:func:`synth.sta.timing` of :func:`tree_netlist`: the block before any hold repair."""
    def make():
        res = timing(tree_netlist(name, cfg, liberty), blocks.top_name(name), liberty,
                     period_ns=1e3 / cfg.clock_mhz, io_share=io_share(name))
        return {"block": name, "liberty": liberty, "clock_mhz": cfg.clock_mhz, **res}
    return cached_json(timing_path(name, cfg, liberty), make, folder("timing"), what("timing", name, cfg, liberty))


def block_timing(name: str, cfg: Config, liberty: str) -> dict:
    """``critical_path_ns``, ``fmax_mhz``, ``startpoint``, ``endpoint``, and
    ``slack_ns`` at ``clock_mhz`` (``cfg.clock_mhz``), of one block; its hold and
    clock-gating slacks and its boundary (``io_ns``) as :func:`synth.sta.timing` gives them
    (or as shipped, :mod:`synth.shipped`), on its signed-off netlist; ``hold_repair``:
    what the repair put in (:class:`synth.hold.HoldRepair`), None where hold was met."""
    before = tree_timing(name, cfg, liberty)
    if not needs_repair(before):
        return {**before, "hold_repair": None}

    def make():
        net, done = _repair(name, cfg, liberty)
        res = timing(net, blocks.top_name(name), liberty, period_ns=1e3 / cfg.clock_mhz, io_share=io_share(name))
        return {"block": name, "liberty": liberty, "clock_mhz": cfg.clock_mhz, **res,
                "hold_repair": {**done.as_dict(), "hold_slack_before_ns": before["hold_slack_ns"],
                                "fmax_before_mhz": before["fmax_mhz"]}}
    return cached_json(repaired_path(name, cfg, liberty), make, folder("timing"),
                       what("timing", name, cfg, liberty, repaired=True))
