"""The chip clock: the highest clock at which the baseline array closes timing.

A chip has one clock. Kaleido and the baseline accelerator are compared at the
same one, set by the baseline's own array under the same timing-driven flow
(:func:`synth.flow.gate_netlist` at a target clock, then OpenSTA at that
period): neither design is given a clock its competitor could not reach.

The search maps the array once for an unreachable target (abc then returns the
fastest netlist it finds), and steps down from that netlist's fmax, 1 MHz at a
time, until a netlist mapped for the target meets it (abc's result is not
monotonic in the target, so each candidate is mapped and timed). Every step is
cached like any other timing.

``python -m synth.clock`` prints the search; its result is
:data:`golden.config.CHIP_CLOCK_MHZ`, the default of ``Config.clock_mhz``.
"""

from __future__ import annotations

import math
import sys

from golden.config import Config

from .timing import block_timing

__all__ = ["closes", "highest_clock"]


def closes(block: str, cfg: Config, liberty: str, mhz: float) -> tuple[bool, dict]:
    """Whether ``block`` mapped for ``mhz`` meets ``mhz``; and its timing there."""
    t = block_timing(block, cfg.with_(clock_mhz=mhz), liberty)
    return t["slack_ns"] >= 0, t


def highest_clock(block: str, cfg: Config, liberty: str, say=print) -> float:
    """The highest whole-MHz clock at which ``block`` closes timing under the flow."""
    _, best = closes(block, cfg, liberty, 2000.0)
    mhz = math.floor(best["fmax_mhz"])
    say(f"{block}: fastest mapping {best['critical_path_ns']:.3f} ns ({best['fmax_mhz']:.1f} MHz)")
    while mhz > 1:
        ok, t = closes(block, cfg, liberty, float(mhz))
        say(f"{block} mapped for {mhz} MHz: slack {t['slack_ns']:+.3f} ns -> {'closes' if ok else 'fails'}")
        if ok:
            return float(mhz)
        mhz -= 1
    raise RuntimeError(f"{block} closes at no clock")


if __name__ == "__main__":       # python -m synth.clock [liberty]
    from .flow import default_liberty
    liberty = sys.argv[1] if len(sys.argv) > 1 else default_liberty()
    if not liberty:
        sys.exit("no liberty: run make setup")
    print(f"chip clock: {highest_clock('baseline-array', Config(), liberty):g} MHz")
