"""Energy per action of a PE, a dispatcher block or the softmax unit, from
gate-level activity on the netlist that timing reads.

Method. A directed bench (:func:`synth.actions.stimulus`) repeats one action on the
RTL in Amaranth's simulator and records every input bit on every cycle, and
every output after each clock edge. The same input vectors drive the mapped
netlist, clock tree included (:mod:`synth.clock_tree`), under Icarus with the
library's cell models (:mod:`synth.gatesim`) twice:

- zero delay, whose outputs must equal the RTL's on every cycle, or the run stops;
- timed, with the cell delays OpenSTA computes for each net's load and each
  input's transition (:func:`synth.sta.delays`, an SDF), at the chip clock. A
  cell's module paths are inertial in Icarus: a pulse shorter than its delay
  does not pass. What the timed run settles to each cycle must equal the
  zero-delay run's.

Every transition of the timed run, glitches included, then costs its
switching and internal energy from the liberty's tables at each net's load
(pins and the kit's wire-load model, :class:`synth.kits.CellKit`) and transition
(:func:`synth.gate_energy.slews`), and leakage is added over the run
(:mod:`synth.gate_energy`). An action's energy is the run's total over its
cycles, in pJ per cycle. The zero-delay run, costed the same way
(``zero_delay_pj``) and as the method before this one costed it (``ideal_pj``:
every table at the kit's fixed transition, pin loads only), is given beside it.

It replaces a method built on OpenSTA's ``report_power`` (one activity for all
toggling nets, no propagation through logic, rise and fall internal energy
summed, the baseline's logic counted twice), which favoured the Kaleido PE: see
the project's design notes for the figures before and after.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from golden.config import Config
from hw import blocks
from hw.cache import cached_json

from . import actions as _benches
from . import clock_tree
from .actions import ACTIONS, actions, stimulus
from .flow import cache_key
from .gate_energy import energy, leakage_nw, loads, slews
from .gatesim import GateSimError, cell_models, parse, simulate
from .liberty import library
from .shipped import folder, what
from .sta import BLOCK_IO_SHARE, delays, timing
from .timing import CACHE, REPAIR, block_netlist, block_timing, needs_repair, tree_timing

__all__ = ["TRACE_TILES", "TRACE_CYCLES", "energy_per_action", "energy_path", "METHOD", "ACTIONS"]


#: What a dispatcher block's busy energy replays of a run: tile groups (the
#: matcher) and bench cycles (both), for :func:`energy_per_action`'s ``cycles``
#: and trace; the RTL runs' energy and the chip model's sign-off both use them.
TRACE_TILES, TRACE_CYCLES = 8, 768

METHOD = ("gate-level, timed: the Yosys netlist that timing reads (clock gates and a clock tree of "
          f"the library's clock buffer to a fan-out of {clock_tree.FANOUT} included), its cell delays written by "
          "OpenSTA as an SDF (each net's load with the wire-load model, each input's transition) and "
          "annotated in Icarus, whose module paths are inertial, at the chip clock (a block that misses it "
          "at 1.02 times the least period its paths meet with its ports given their share of that period) "
          "with inputs arriving "
          f"{BLOCK_IO_SHARE:g} of a period after the clock reaches the flip-flops; every transition, "
          "glitches included, on each action's bench stimulus costs C V^2 / 2 on the net's pin and wire "
          "load (plus the library's output load on an output port) and the driving cell's internal-energy table "
          "of the arc whose input changed last, at that input's transition and the net's load, and the "
          "clock and data pins' own tables at the net's transition (each net's transition from its "
          "driver's tables at its load); leakage over the run. Cross-checks: the same netlist zero-delay "
          "(outputs checked against the RTL every cycle, and the timed run's settled outputs against "
          "it), costed alike (zero_delay_pj) and costed as before at a fixed "
          "transition (the library's input slew) without wires (ideal_pj)")


def energy_path(block: str, cfg: Config, liberty: str, cycles: int = 256, trace=None) -> Path:
    """Where :func:`energy_per_action`'s result is cached."""
    names = ("run",) if trace is not None else actions(block, cfg)
    text = blocks.verilog(block, cfg)
    # The method, the actions and their benches are in the key: a change to any
    # of them measures again. So is a trace, whole.
    # A block repaired for hold is measured on its repaired netlist: the repair is in the key.
    repaired = f"hold repair {REPAIR}" if needs_repair(tree_timing(block, cfg, liberty)) else ""
    key = cache_key(text + METHOD + " ".join(names) + inspect.getsource(_benches)
                    + ("" if trace is None else repr(trace)) + repaired, liberty, cfg.clock_mhz)
    return CACHE / f"{block}-{key}-energy-{cycles}.json"


def energy_per_action(block: str, cfg: Config, liberty: str, cycles: int = 256, trace=None) -> dict:
    """``energy_pj`` per action (dynamic, pJ per cycle, timed; its ``split_pj``),
    the cross-checks ``zero_delay_pj`` and ``ideal_pj``, ``leakage_uw``,
    ``clock_mhz`` (the clock the netlist was mapped for), ``measured_at_mhz`` (the
    clock its timed run took: ``clock_mhz`` when the block meets it, else its
    own, :func:`settling_period`; ``at_chip_clock`` says which) and ``method`` of a PE,
    dispatcher block or the softmax unit. With a ``trace`` of a run's data
    (:data:`synth.actions.TRACED` blocks), the one action measured is ``run``."""
    names = ("run",) if trace is not None else actions(block, cfg)
    path = energy_path(block, cfg, liberty, cycles, trace)

    def make():
        period = 1e3 / cfg.clock_mhz
        lib = library(liberty)
        top = blocks.top_name(block)
        netlist_text = block_netlist(block, cfg, liberty)
        netlist = parse(netlist_text, top)
        models = cell_models(liberty)
        # A block that misses the chip clock runs at its own (a little slower, so the
        # timed run settles as the zero-delay one does): what it switches per cycle.
        timed_period = settling_period(netlist_text, top, liberty, period,
                                       block_timing(block, cfg, liberty)["critical_path_ns"])
        sdf, latency = delays(netlist_text, top, liberty, timed_period, BLOCK_IO_SHARE)
        arrive = latency + BLOCK_IO_SHARE * timed_period
        result, split, zero, ideal = {}, {}, {}, {}
        # Each net's load with its wire, and its transition: the same for every run.
        where = loads(netlist, lib, wire=True)
        real = where, slews(netlist, lib, where)
        for action in names:
            run = stimulus(block, cfg, action, cycles, trace=trace)
            flat = simulate(netlist_text, top, run["inputs"], models)
            _check(block, action, flat.outputs, run["outputs"])
            timed = simulate(netlist_text, top, run["inputs"], models, delays=sdf, period_ns=timed_period,
                             arrive_ns=arrive)
            _check(block, action, timed.settled, flat.settled, "its zero-delay run")
            e = energy(netlist, timed, lib, period, prepared=real)
            # Dynamic energy per cycle; leakage goes by time, so it is given apart (leakage_uw).
            result[action] = e["switching_pj"] + e["internal_pj"]
            split[action] = {k: e[k] for k in ("switching_pj", "internal_pj", "leakage_pj", "toggles",
                                               "clock_tree_pj")}
            z = energy(netlist, flat, lib, period, prepared=real)
            zero[action] = z["switching_pj"] + z["internal_pj"]
            split[action]["zero_delay_toggles"] = z["toggles"]
            i = energy(netlist, flat, lib, period)
            ideal[action] = i["switching_pj"] + i["internal_pj"]
        return {"block": block, "liberty": liberty, "energy_pj": result, "split_pj": split,
                "zero_delay_pj": zero, "ideal_pj": ideal, "clock_latency_ns": latency, "timed_period_ns": timed_period,
                "leakage_uw": leakage_nw(netlist, lib) * 1e-3, "clock_mhz": cfg.clock_mhz,
                "measured_at_mhz": 1e3 / timed_period, "at_chip_clock": timed_period == period,
                "method": METHOD, "bench_cycles": len(run["inputs"])}
    # A trace ships whole, as its text (what the key hashes), so that its name can be checked again.
    traced = {} if trace is None else {"trace": repr(trace)}
    return cached_json(path, make, folder("energy"), what("energy", block, cfg, liberty, cycles=cycles, **traced))


#: How much slower than its least period a block that misses the chip clock is run,
#: so that its timed run settles as its zero-delay run does.
SETTLE_MARGIN = 1.02


#: What OpenSTA's reports resolve (they print picoseconds): a period within it of the
#: target is the target, or the rounding of each report would step it up forever.
_STA_RESOLUTION_NS = 1e-3


def settling_period(netlist: str, top: str, liberty: str, period: float, critical: float) -> float:
    """The period a block's timed run takes: the chip's ``period`` when its
    critical path (``critical``, timed at that period) meets it with
    :data:`SETTLE_MARGIN` to spare; else :data:`SETTLE_MARGIN` times the least
    period at which every path meets its check with the block's inputs and
    outputs given :data:`BLOCK_IO_SHARE` of *that* period, as the timed run gives
    them. A path through a port grows with the period it is timed at (its input
    arrives a share of it late), so the chip period's critical path is not
    enough: the period is timed again until it holds (each round, the ports'
    shares are at most a fifth of the step, so a few rounds do)."""
    for _ in range(8):
        if SETTLE_MARGIN * critical <= period + _STA_RESOLUTION_NS:
            return period
        period = SETTLE_MARGIN * critical
        critical = timing(netlist, top, liberty, period_ns=period, io_share=BLOCK_IO_SHARE)["critical_path_ns"]
    raise GateSimError(f"{top}: no period found at which its paths settle (last tried {period:.3f} ns)")


def _check(block: str, action: str, gate: list, rtl: list, against: str = "its RTL") -> None:
    """The netlist did what the reference did: every output bit that the gate run
    resolved (a register without a reset reads X until written) equals the
    reference's, every cycle."""
    if len(gate) != len(rtl):
        raise GateSimError(f"{block} netlist gave {len(gate)} cycles under {action}, {against} {len(rtl)}")
    for cycle, (g, r) in enumerate(zip(gate, rtl)):
        wrong = [n for n, v in g.items() if v is not None and n in r and r[n] != v]
        if wrong:
            raise GateSimError(f"{block} netlist differs from {against} under {action} at cycle {cycle}: "
                               f"{', '.join(wrong[:4])}")
