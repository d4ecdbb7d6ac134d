"""A netlist simulated with the library's cell models: its outputs, and the settled changes it counts."""

import shutil

import pytest

from synth.flow import default_liberty
from synth.gatesim import GateSimError, cell_models, parse, simulate
from tests.synth.test_gate_energy import HAND

pytestmark = pytest.mark.skipif(default_liberty() is None or shutil.which("iverilog") is None,
                                reason="needs the OSU018 liberty and cell models, and Icarus (make setup)")


def test_parse_finds_ports_and_cells():
    net = parse(HAND, "hand")
    assert net.inputs == ["a", "clk"] and net.outputs == ["y"]
    assert [(kind, pins) for kind, _, pins in net.cells] == [
        ("INVX1", {"A": "a", "Y": "n1"}), ("DFFPOSX1", {"CLK": "clk", "D": "n1", "Q": "y"})]


def test_the_flip_flop_takes_the_inverted_input_at_each_edge():
    a = [0, 1, 1, 0, 1]
    run = simulate(HAND, "hand", [{"a": v} for v in a], cell_models(default_liberty()))
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
        simulate(HAND, "hand", [{"b": 0}], cell_models(default_liberty()))
