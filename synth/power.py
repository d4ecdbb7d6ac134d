"""Energy per action of a PE, a dispatcher block or the softmax unit, from
gate-level activity on the netlist that timing reads.

Method. A directed bench (:func:`synth.actions.stimulus`) repeats one action on the
RTL in Amaranth's simulator and records every input bit on every cycle, and
every output after each clock edge. The same input vectors drive the mapped
netlist under Icarus with the library's cell models, zero delay
(:mod:`synth.gatesim`); the netlist's outputs must equal the RTL's on every
cycle, or the run stops. Every net's settled changes then cost their
switching, internal and leakage energy from the liberty's tables
(:mod:`synth.gate_energy`). An action's energy is the run's total over its
cycles, in pJ per cycle.

It replaces a method built on OpenSTA's ``report_power`` (one activity for all
toggling nets, no propagation through logic, rise and fall internal energy
summed, the baseline's logic counted twice), which favoured the Kaleido PE: see
the project's design notes for the figures before and after.
"""

from __future__ import annotations

import inspect

from golden.config import Config
from hw import blocks
from . import actions as _benches
from .actions import ACTIONS, actions, stimulus

from hw.cache import cached_json
from .flow import cache_key
from .gate_energy import OUTPUT_LOAD_PF, SLEW_NS, energy, leakage_nw
from .gatesim import GateSimError, cell_models, parse, simulate
from .liberty import library
from .timing import CACHE, block_netlist

__all__ = ["energy_per_action", "METHOD", "ACTIONS"]

METHOD = ("gate-level: the Yosys netlist that timing reads (clock gates included), simulated zero-delay "
          "under Icarus with the liberty's cell models (flip-flops and latches updating once the clock has "
          "settled, from 0) on each action's bench stimulus (outputs checked against the RTL every "
          "cycle); per settled net change, C V^2 / 2 on the net's pin load (plus "
          f"{OUTPUT_LOAD_PF} pF on an output port) and the driving cell's internal-energy table of the "
          f"arc that switched (rise or fall) at that load and a {SLEW_NS} ns input transition, and the "
          "clock and data pins' own tables; leakage over the run. No glitches, no wire load, ideal clock")


def energy_per_action(block: str, cfg: Config, liberty: str, cycles: int = 256) -> dict:
    """``energy_pj`` per action (dynamic, pJ per cycle; its ``split_pj``), ``leakage_uw``,
    ``clock_mhz`` (the clock the netlist was mapped for) and ``method`` of a PE,
    dispatcher block or the softmax unit."""
    names = actions(block, cfg)
    text = blocks.verilog(block, cfg)
    # The method, the actions and their benches are in the key: a change to any
    # of them measures again.
    key = cache_key(text + METHOD + " ".join(names) + inspect.getsource(_benches), liberty, cfg.clock_mhz)
    path = CACHE / f"{block}-{key}-energy-{cycles}.json"

    def make():
        period = 1e3 / cfg.clock_mhz
        lib = library(liberty)
        top = blocks.top_name(block)
        netlist_text = block_netlist(block, cfg, liberty)
        netlist = parse(netlist_text, top)
        models = cell_models(liberty)
        result, split = {}, {}
        for action in names:
            run = stimulus(block, cfg, action, cycles)
            act = simulate(netlist_text, top, run["inputs"], models)
            _check(block, action, act.outputs, run["outputs"])
            e = energy(netlist, act, lib, period)
            # Dynamic energy per cycle; leakage goes by time, so it is given apart (leakage_uw).
            result[action] = e["switching_pj"] + e["internal_pj"]
            split[action] = {k: e[k] for k in ("switching_pj", "internal_pj", "leakage_pj", "toggles")}
        return {"block": block, "liberty": liberty, "energy_pj": result, "split_pj": split,
                "leakage_uw": leakage_nw(netlist, lib) * 1e-3, "clock_mhz": cfg.clock_mhz,
                "method": METHOD, "bench_cycles": len(run["inputs"])}
    return cached_json(path, make)


def _check(block: str, action: str, gate: list, rtl: list) -> None:
    """The netlist did what the RTL did: every output bit that the gate run resolved
    (a register without a reset reads X until written) equals the RTL's, every cycle."""
    for cycle, (g, r) in enumerate(zip(gate, rtl)):
        wrong = [n for n, v in g.items() if v is not None and n in r and r[n] != v]
        if wrong:
            raise GateSimError(f"{block} netlist differs from its RTL under {action} at cycle {cycle}: "
                               f"{', '.join(wrong[:4])}")
