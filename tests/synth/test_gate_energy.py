"""Energy of a gate-level run, checked by hand against the OSU018 liberty's own numbers."""

import pytest

from synth.gate_energy import energy, loads
from synth.gatesim import Activity, parse
from synth.liberty import library
from tests.synth.libraries import OSU018_LIB

pytestmark = pytest.mark.skipif(OSU018_LIB is None, reason="needs the OSU018 liberty (make setup)")

#: An inverter into a flip-flop: small enough to add up by hand.
HAND = """module hand(a, clk, y);
  input a;
  input clk;
  output y;
  wire n1;
  INVX1 u1 (
    .A(a),
    .Y(n1)
  );
  DFFPOSX1 u2 (
    .CLK(clk),
    .D(n1),
    .Q(y)
  );
endmodule
"""

# From osu018_stdcells.lib, read by eye:
V = 1.8                                   # nom_voltage
CAP_INV_A, CAP_DFF_D, CAP_DFF_CLK = 0.00932456, 0.00882947, 0.0279235      # pin capacitance, pF
INV_FALL_AT_006 = {0.005: 0.009213, 0.0125: 0.009047}    # INVX1 Y fall_power, slew 0.06 ns, by load
DFF_D_FALL_AT_006 = 0.08841               # DFFPOSX1 D fall_power at 0.06 ns
DFF_CLK_RISE_AT_006 = 0.006865            # DFFPOSX1 CLK rise_power at 0.06 ns
LEAK_INV, LEAK_DFF = 0.0221741, 0.160725  # cell_leakage_power, nW


def test_one_cycle_by_hand():
    lib = library(OSU018_LIB)
    net = parse(HAND, "hand")
    # a rises, so n1 falls; then the clock rises (the flip-flop's Q holds 0 -> y unchanged here).
    run = Activity(events=[{"a": 1, "n1": 0}, {"clk": 1}], cycles=1, outputs=[])
    got = energy(net, run, lib, period_ns=10.0, slew=0.06, output_load=0.0)

    half_cv2 = lambda c: 0.5 * c * V * V
    switching = half_cv2(CAP_INV_A) + half_cv2(CAP_DFF_D) + half_cv2(CAP_DFF_CLK)
    # The inverter's fall at its real load (the D pin), between the table's first two loads.
    lo, hi = INV_FALL_AT_006[0.005], INV_FALL_AT_006[0.0125]
    inv_fall = lo + (hi - lo) * (CAP_DFF_D - 0.005) / (0.0125 - 0.005)
    internal = inv_fall + DFF_D_FALL_AT_006 + DFF_CLK_RISE_AT_006
    leakage = (LEAK_INV + LEAK_DFF) * 10.0 * 1e-6          # nW x ns -> pJ

    assert got["switching_pj"] == pytest.approx(switching, rel=1e-9)
    assert got["internal_pj"] == pytest.approx(internal, rel=1e-9)
    assert got["leakage_pj"] == pytest.approx(leakage, rel=1e-9)
    assert got["total_pj"] == pytest.approx(switching + internal + leakage, rel=1e-9)
    assert got["toggles"] == 3


def test_a_rise_and_a_fall_read_different_tables():
    lib = library(OSU018_LIB)
    net = parse(HAND, "hand")
    fall = energy(net, Activity([{"a": 1, "n1": 0}], 1, []), lib, 10.0, slew=0.06, output_load=0.0)
    rise = energy(net, Activity([{"a": 0, "n1": 1}], 1, []), lib, 10.0, slew=0.06, output_load=0.0)
    assert fall["switching_pj"] == pytest.approx(rise["switching_pj"])
    assert fall["internal_pj"] != pytest.approx(rise["internal_pj"])


def test_an_output_port_carries_its_load():
    lib = library(OSU018_LIB)
    net = parse(HAND, "hand")
    where = loads(net, lib, output_load=0.02)
    assert where.cap["y"] == pytest.approx(0.02)
    assert where.cap["n1"] == pytest.approx(CAP_DFF_D)
    assert where.driver["y"][0] == "DFFPOSX1" and where.driver["n1"][0] == "INVX1"
