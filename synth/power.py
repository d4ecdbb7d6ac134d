"""Energy per action of a PE or a dispatcher block, from OpenSTA's ``report_power``
under the activity of a directed bench (:mod:`tb.actions`), on the gate netlist
that timing uses.

Method. A bench repeats one action and counts, for every input bit and every
flip-flop output, its toggles per cycle and its share of cycles at 1. Debian's
OpenSTA (2019) takes only two activities (see :func:`synth.sta.power`), so
an action's energy per cycle is assembled from two runs, at the block's fmax:

1. **Logic.** The nets that toggled (inputs and flip-flop outputs) drive
   their loads at their mean toggle rate and duty; every other source holds
   still, at the value it holds (0 or 1). This counts the clock, and the logic
   and wires the action moves.
2. **Registers.** The internal energy of a flip-flop whose output toggles
   (beyond its clock) does not show in run 1. A second run toggles every
   flip-flop output at once rate (loads held) and the increase over the
   clock-only figure, scaled by the action's mean flip-flop toggle rate, is
   added.

Limits: one rate for all toggling nets of an action (not per net); no
glitches; an ideal clock; no wire load (pin capacitances only). Leakage is
reported apart, in uW. The energy of an action is its cycle's dynamic power
times the clock period, in pJ.
"""

from __future__ import annotations

from golden.config import Config
from hw import blocks
from tb.actions import ACTIONS, actions, activity

from .sta import flop_outputs, power
from .flow import cache_key
from .cache import cached_json
from .timing import CACHE, block_netlist, block_timing

__all__ = ["energy_per_action", "METHOD", "ACTIONS"]

METHOD = ("OpenSTA report_power on the Yosys gate netlist at the block's fmax, under the activity of a "
          "directed Amaranth-simulator bench per action: the nets that toggle drive their loads at their "
          "mean toggle rate and duty, the rest hold their value; flip-flop output toggling added from a "
          "second run. "
          "One rate per action (this OpenSTA build sets no per-net activity); no glitches, ideal clock, "
          "no wire load")


def _dynamic(p: dict) -> float:
    return p["internal_w"] + p["switching_w"]


def energy_per_action(block: str, cfg: Config, liberty: str, cycles: int = 256) -> dict:
    """``energy_pj`` per action, ``leakage_uw``, ``clock_mhz`` and ``method`` of a PE or dispatcher block."""
    names = actions(block, cfg)
    text = blocks.verilog(block, cfg)
    # The method and the actions are in the key: a change to them measures again.
    path = CACHE / f"{block}-{cache_key(text + METHOD + ' '.join(names), liberty)}-energy-{cycles}.json"

    def make():
        clock = block_timing(block, cfg, liberty)
        netlist = block_netlist(block, cfg, liberty)
        top, period = blocks.top_name(block), clock["critical_path_ns"]
        flops = set(flop_outputs(netlist))
        idle = power(netlist, top, liberty, period)
        # Flip-flop outputs all toggling once a cycle, their loads held: the registers' own share.
        registers = _dynamic(power(netlist, top, liberty, period, tied=flops,
                                   global_activity=(1.0, 0.5))) - _dynamic(idle)
        energy = {}
        for action in names:
            act = activity(block, cfg, action, cycles)
            nets = {**act["inputs"], **{n: v for n, v in act["flops"].items() if n in flops}}
            live = {n: v for n, v in nets.items() if v[0] > 0}
            mean = ((sum(r for r, _ in live.values()) / len(live), sum(d for _, d in live.values()) / len(live))
                    if live else (0.0, 0.0))
            # Sources the action holds at 1 must read as 1, or the logic they enable looks idle.
            high = {n for n, (rate, duty) in nets.items() if rate == 0 and duty == 1}
            logic = _dynamic(power(netlist, top, liberty, period, tied=live, tied_activity=mean,
                                   held_high=high))
            ff_rate = sum(act["flops"][n][0] for n in flops if n in act["flops"]) / max(1, len(flops))
            energy[action] = (logic + registers * ff_rate) * period * 1e3          # W x ns -> pJ
        return {"block": block, "liberty": liberty, "energy_pj": energy,
                "leakage_uw": idle["leakage_w"] * 1e6, "clock_mhz": clock["fmax_mhz"],
                "method": METHOD, "bench_cycles": cycles}
    return cached_json(path, make)
