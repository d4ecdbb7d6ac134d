"""A netlist simulated with the library's cell models: its outputs, and the settled changes it counts."""

import shutil

import pytest

from synth.gatesim import GateSimError, cell_models, parse, simulate
from tests.synth.libraries import OSU018_LIB
from tests.synth.test_gate_energy import HAND

pytestmark = pytest.mark.skipif(OSU018_LIB is None or shutil.which("iverilog") is None,
                                reason="needs the OSU018 liberty and cell models, and Icarus (make setup)")


def test_parse_finds_ports_and_cells():
    net = parse(HAND, "hand")
    assert net.inputs == ["a", "clk"] and net.outputs == ["y"]
    assert [(kind, pins) for kind, _, pins in net.cells] == [
        ("INVX1", {"A": "a", "Y": "n1"}), ("DFFPOSX1", {"CLK": "clk", "D": "n1", "Q": "y"})]


def test_the_flip_flop_takes_the_inverted_input_at_each_edge():
    a = [0, 1, 1, 0, 1]
    run = simulate(HAND, "hand", [{"a": v} for v in a], cell_models(OSU018_LIB))
    assert [o["y"] for o in run.outputs] == [1 - v for v in a]
    assert run.cycles == len(a)
    # An event is a time step where something changed; the clock changes twice a cycle.
    assert sum(e.get("clk") is not None for e in run.events) == 2 * len(a)
    assert all(e for e in run.events)
    # a changes three times, and n1 with it, in the same event.
    changes = [e for e in run.events if "a" in e]
    assert len(changes) == 3 and all(e["n1"] == 1 - e["a"] for e in changes)


def test_a_stimulus_that_misses_an_input_is_refused():
    with pytest.raises(GateSimError, match="does not drive a"):
        simulate(HAND, "hand", [{"b": 0}], cell_models(OSU018_LIB))


#: Two flip-flops in a row, the second behind a clock gate's AND (enable tied high)
#: and two buffers: a shift register, whichever of the two clocks arrives first.
GATED = """module gated(a, clk, y);
  input a;
  input clk;
  output y;
  wire q1;
  wire g0;
  wire g1;
  wire gclk;
  DFFPOSX1 first (.CLK(clk), .D(a), .Q(q1));
  AND2X2 gate (.A(clk), .B(1'b1), .Y(g0));
  BUFX2 b0 (.A(g0), .Y(g1));
  BUFX2 b1 (.A(g1), .Y(gclk));
  DFFPOSX1 second (.CLK(gclk), .D(q1), .Q(y));
endmodule
"""


def test_a_flip_flop_behind_a_clock_gate_takes_the_old_value():
    # With the library's own models the second flip-flop, three gates further from
    # the clock, takes the value the first has just taken (y = a, no delay).
    a = [1, 0, 1, 1, 0, 0, 1]
    run = simulate(GATED, "gated", [{"a": v} for v in a], cell_models(OSU018_LIB))
    # Flip-flops start at 0, as the RTL's registers do; y is a one cycle behind q1.
    assert [o["y"] for o in run.outputs] == [0] + a[:-1]


def test_a_timed_run_takes_its_delays_from_the_sdf():
    """The inverter switches 0.5 ns after its input, as the SDF says, not after its
    cell model's own delay; and the SDF that OpenSTA writes is read (each value
    with its typical, which Icarus annotates alone)."""
    from synth.sta import delays
    sdf = ('(DELAYFILE (SDFVERSION "3.0") (DESIGN "hand") (DIVIDER /) (TIMESCALE 1ns)\n'
           ' (CELL (CELLTYPE "INVX1") (INSTANCE u1) (DELAY (ABSOLUTE (IOPATH A Y (0.5:0.5:0.5) (0.5:0.5:0.5))))))\n')
    a = [0, 1, 1, 0]
    run = simulate(HAND, "hand", [{"a": v} for v in a], cell_models(OSU018_LIB), delays=sdf,
                   period_ns=5.0, arrive_ns=1.0)
    when = {net: [t for t, e in zip(run.times, run.events) if net in e] for net in ("a", "n1")}
    assert len(when["a"]) == len(when["n1"]) == 2
    assert all(n == pytest.approx(t + 0.5, abs=1e-3) for t, n in zip(when["a"], when["n1"]))
    # What it settles to is what the zero-delay run settles to.
    assert run.settled == simulate(HAND, "hand", [{"a": v} for v in a], cell_models(OSU018_LIB)).settled
    written, latency = delays(HAND, "hand", OSU018_LIB, period_ns=5.0)
    paths = [l for l in written.splitlines() if "IOPATH" in l]
    assert paths and not any("::" in l for l in paths) and latency >= 0


#: A NanGate45-style model (a path per state of the other input) and OpenSTA's SDF for it.
STATEFUL_MODEL = """module XOR_T (A, B, Z);
  input A;
  input B;
  output Z;
  xor(Z, A, B);
  specify
    if((B == 1'b0)) (A => Z) = (0.1, 0.1);
    if((B == 1'b1)) (A => Z) = (0.1, 0.1);
    (B => Z) = (0.1, 0.1);
  endspecify
endmodule
"""
STATEFUL_SDF = """(DELAYFILE
 (CELL
  (CELLTYPE "XOR_T")
  (INSTANCE u1)
  (DELAY
   (ABSOLUTE
    (COND (B == 1'b0)
     (IOPATH A Z (0.0300:0.0310:0.0310) (0.0200:0.0200:0.0200)))
    (COND (B == 1'b1)
     (IOPATH A Z (0.0250:0.0400:0.0400) (0.0100:0.0100:0.0100)))
    (IOPATH B Z (0.0500:0.0500:0.0500) (0.0600:0.0600:0.0600))
   )
  )
 )
)
"""


def test_state_dependent_paths_become_one_path_an_arc_at_their_worst():
    """Icarus leaves a ``COND`` delay unannotated (the model's 0.1 ns stays, silently):
    each arc becomes one plain path, at its states' worst delay."""
    from synth.gatesim import _unconditional_paths, _unconditional_sdf

    model = _unconditional_paths(STATEFUL_MODEL)
    assert "if(" not in model and model.count("(A => Z)") == 1 and model.count("(B => Z)") == 1
    sdf = _unconditional_sdf(STATEFUL_SDF)
    assert "COND" not in sdf
    assert "(IOPATH A Z (0.0300:0.0400:0.0400) (0.0200:0.0200:0.0200))" in sdf
    assert "(IOPATH B Z (0.0500:0.0500:0.0500) (0.0600:0.0600:0.0600))" in sdf
    # An SDF without state-dependent delays (OSU018's) is left as it is.
    plain = STATEFUL_SDF.replace("(COND (B == 1'b0)\n     ", "").split("(COND")[0] + "   )\n  )\n )\n)\n"
    assert _unconditional_sdf(plain) == plain
