"""Hold repair: delay cells before the flip-flops whose shortest path is too short."""

import shutil

import pytest

from golden import Config
from synth.flow import default_liberty
from synth.gatesim import instances
from synth.hold import FANOUT, delay_cell, repair, violations
from synth.sta import timing

pytestmark = pytest.mark.skipif(shutil.which("sta") is None or default_liberty() is None,
                                reason="needs OpenSTA (sta) and the default liberty (make setup)")

# Flip-flop a takes the input on the clock's first buffer; the flip-flops b<i>
# take a's output four buffers later: a's new value reaches them before their
# hold ends. (This OpenSTA build crashes on a reference pin straight on the port.)
LATE = 5
# The input arrives late enough that a's own input never fails hold: the ports are timed
# from the first flip-flop OpenSTA lists, and that order is not the same every run.
IO = 0.3


def _skewed(sinks: int) -> str:
    bufs = "".join(f"  CLKBUF_X1 cb{i} (.A({'clk' if i == 0 else f'c{i - 1}'}), .Z(c{i}));\n" for i in range(LATE))
    flops = "".join(f"  DFF_X1 fb{i} (.CK(c{LATE - 1}), .D(a), .Q(q{i}));\n" for i in range(sinks))
    outs = ", ".join(f"q{i}" for i in range(sinks))
    wires = "".join(f"  wire c{i};\n" for i in range(LATE))
    return (f"module skewed(clk, d, {outs});\n  input clk;\n  input d;\n"
            + "".join(f"  output q{i};\n" for i in range(sinks)) + "  wire a;\n" + wires
            + "  DFF_X1 fa (.CK(c0), .D(d), .Q(a));\n" + bufs + flops + "endmodule\n")


def test_a_skewed_path_is_repaired_and_a_clean_one_left_alone():
    lib = default_liberty()
    sinks = FANOUT + 3
    text = _skewed(sinks)
    before = violations(text, "skewed", lib, 2.0, IO)
    late = {(f"fb{i}", "D") for i in range(sinks)}
    assert set(before) == late and all(s < 0 for s in before.values()), before
    fixed, done = repair(text, "skewed", lib, 2.0, IO)
    print(done)
    assert violations(fixed, "skewed", lib, 2.0, IO) == {}
    assert timing(fixed, "skewed", lib, 2.0, IO)["hold_slack_ns"] >= 0
    assert done.unrepaired == 0 and done.worst_ns == 0.0 and done.moved == late and done.pins == sinks
    # The late pins share their net, so cells of FANOUT pins at most: two at least.
    cell = delay_cell(lib)
    added = [c for c in instances(fixed) if c[0] == cell[0] and c[1].startswith("holdfix")]
    assert len(added) == done.cells >= 2
    assert done.area_um2 == pytest.approx(done.cells * cell[3])
    # The clock tree is untouched: only data pins move.
    clock = lambda net: sorted(c for c in instances(net) if c[1].startswith("cb"))
    assert clock(fixed) == clock(text)
    # Repaired, the netlist is left as it is.
    again, none = repair(fixed, "skewed", lib, 2.0, IO)
    assert again == fixed and none.cells == 0 and none.rounds == 0


def test_no_cell_goes_where_setup_cannot_spare_it(monkeypatch):
    import synth.hold as hold
    lib = default_liberty()
    text = _skewed(2)
    # Every violating pin is on the block's worst setup path: a cell would lower fmax.
    monkeypatch.setattr(hold, "_setup", lambda net, top, lib, period, io, pins: ({p: -0.2 for p in pins}, -0.2))
    fixed, done = hold.repair(text, "skewed", lib, 2.0, 0.0)
    assert fixed == text and done.cells == 0 and done.rounds == 0
    assert done.unrepaired >= 2 and done.worst_ns < 0
    # With a cell's delay to spare on the same pins, they are repaired.
    monkeypatch.setattr(hold, "_setup", lambda net, top, lib, period, io, pins: ({p: 0.3 for p in pins}, -0.2))
    fixed, done = hold.repair(text, "skewed", lib, 2.0, 0.0)
    assert done.cells > 0 and done.unrepaired == 0


def test_the_delay_cell_is_the_smallest_buffer():
    from synth.liberty import library
    for lib in filter(None, [default_liberty()]):
        name, a, y, area = delay_cell(lib)
        cell = library(lib).cells[name]
        assert cell.pins[y].function.strip("() ") == a and area == cell.area
        buffers = [c.area for c in library(lib).cells.values()
                   if len(c.pins) == 2 and any(p.function and p.function.strip("() ") in c.pins
                                               for p in c.pins.values())]
        assert area == min(buffers)


def test_both_engines_meet_hold_on_the_default_library():
    """The whole engines failed hold at 720 MHz on NanGate45 (a memory's write data
    straight from a port into flip-flops clocked later); repaired, both close."""
    from synth.timing import block_timing, meets, tree_timing
    lib, cfg = default_liberty(), Config()
    for block in ("engine", "baseline-engine"):
        before, after = tree_timing(block, cfg, lib), block_timing(block, cfg, lib)
        fix = after["hold_repair"]
        print(block, before["hold_slack_ns"], "->", after["hold_slack_ns"], fix and fix["cells"])
        assert after["hold_slack_ns"] >= 0 and fix["unrepaired"] == 0
        # The repair lowers no block's fmax.
        assert after["fmax_mhz"] >= before["fmax_mhz"] - 1e-6
    assert meets(block_timing("baseline-engine", cfg, lib))
