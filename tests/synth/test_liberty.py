"""The liberty reader (synth/liberty.py): a library in fF and fJ is read in pF and
pJ, a scalar table is one value at any slew, and an arc with one table per
state of the other pins (NanGate's ``when``) is their mean."""

import pytest

from synth.liberty import library

#: A two-cell library in NanGate45's dialect: fF, state-dependent energy, a scalar table.
FF_LIBRARY = """library (tiny_ff) {
  time_unit : "1ns";
  voltage_unit : "1V";
  leakage_power_unit : "1nW";
  capacitive_load_unit (1,ff);
  nom_voltage : 1.10;
  power_lut_template (Power_2_2) {
    variable_1 : input_transition_time;
    variable_2 : total_output_net_capacitance;
    index_1 ("0.01, 0.1");
    index_2 ("1.0, 10.0");
  }
  lu_table_template (Timing_2_2) {
    variable_1 : input_net_transition;
    variable_2 : total_output_net_capacitance;
    index_1 ("0.01, 0.1");
    index_2 ("1.0, 10.0");
  }
  cell (INV_T) {
    area : 0.5;
    cell_leakage_power : 12.0;
    pin (A) { direction : input; capacitance : 2.0; }
    pin (ZN) {
      direction : output;
      function : "!A";
      timing () {
        related_pin : "A";
        cell_rise (Timing_2_2) { values ("0.010, 0.050", "0.020, 0.060"); }
        cell_fall (Timing_2_2) { values ("0.010, 0.050", "0.020, 0.060"); }
        rise_transition (Timing_2_2) { values ("0.01, 0.04", "0.02, 0.05"); }
        fall_transition (Timing_2_2) { values ("0.01, 0.04", "0.02, 0.05"); }
      }
      internal_power () {
        related_pin : "A";
        rise_power (Power_2_2) { values ("1.0, 3.0", "2.0, 4.0"); }
        fall_power (Power_2_2) { values ("0.5, 0.5", "0.5, 0.5"); }
      }
    }
  }
  cell (AND_T) {
    area : 1.0;
    pin (A1) { direction : input; capacitance : 1.0; }
    pin (A2) {
      direction : input;
      capacitance : 1.0;
      internal_power () {
        rise_power (scalar) { values ("0.25"); }
        fall_power (scalar) { values ("0.75"); }
      }
    }
    pin (ZN) {
      direction : output;
      function : "(A1 & A2)";
      internal_power () {
        when : "!A2";
        related_pin : "A1";
        rise_power (Power_2_2) { values ("2.0, 2.0", "2.0, 2.0"); }
        fall_power (Power_2_2) { values ("1.0, 1.0", "1.0, 1.0"); }
      }
      internal_power () {
        when : "A2";
        related_pin : "A1";
        rise_power (Power_2_2) { values ("4.0, 4.0", "4.0, 4.0"); }
        fall_power (Power_2_2) { values ("3.0, 3.0", "3.0, 3.0"); }
      }
    }
  }
}
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("lib") / "tiny_ff.lib"
    path.write_text(FF_LIBRARY)
    return library(str(path))


def test_femtofarads_and_femtojoules_are_read_as_picofarads_and_picojoules(tiny):
    assert tiny.capacitance_pf == pytest.approx(1e-3)
    inv = tiny.cells["INV_T"]
    assert inv.pins["A"].capacitance == pytest.approx(2e-3)
    rise, fall = inv.pins["ZN"].power["A"]
    # The table's first point (0.01 ns, 1 fF) is 1.0 fJ; its load axis is now in pF.
    assert rise.at(0.01, 0.001) == pytest.approx(1e-3)
    assert rise.at(0.1, 0.010) == pytest.approx(4e-3)
    assert fall.at(0.05, 0.005) == pytest.approx(0.5e-3)
    # Delays stay in ns; only their load axis moves to pF.
    assert inv.pins["ZN"].delay["A"][0].at(0.01, 0.010) == pytest.approx(0.050)


def test_a_scalar_table_is_its_value_at_any_slew(tiny):
    rise, fall = tiny.cells["AND_T"].pins["A2"].power[None]
    assert rise.at(0.0) == rise.at(1.0) == pytest.approx(0.25e-3)
    assert fall.at(0.3) == pytest.approx(0.75e-3)


def test_an_arc_with_a_table_per_state_is_their_mean(tiny):
    rise, fall = tiny.cells["AND_T"].pins["ZN"].power["A1"]
    assert rise.at(0.05, 0.005) == pytest.approx(3e-3)
    assert fall.at(0.05, 0.005) == pytest.approx(2e-3)


def test_a_capacitance_unit_it_does_not_know_is_refused(tmp_path):
    path = tmp_path / "nf.lib"
    path.write_text(FF_LIBRARY.replace("(1,ff)", "(1,nf)").replace("tiny_ff", "tiny_nf"))
    with pytest.raises(ValueError, match="capacitance unit 'nf'"):
        library(str(path))


def test_a_parsed_library_is_kept_and_read_back_the_same(tmp_path, monkeypatch):
    """NanGate45's parse takes seconds in every process that signs off: it is kept, by
    the file's content, and read back equal; an edited file is parsed again."""
    import pickle

    import synth.liberty as liberty
    monkeypatch.setattr(liberty, "PARSED", tmp_path / "parsed")
    path = tmp_path / "tiny.lib"
    path.write_text(FF_LIBRARY)
    liberty.library.cache_clear()
    first = liberty.library(str(path))
    assert len(list((tmp_path / "parsed").glob("*.pickle"))) == 1
    liberty.library.cache_clear()
    again = liberty.library(str(path))
    assert again is not first and pickle.dumps(again) == pickle.dumps(first)
    path.write_text(FF_LIBRARY.replace("area : ", "area : 1"))      # every area another number
    liberty.library.cache_clear()
    edited = liberty.library(str(path))
    assert len(list((tmp_path / "parsed").glob("*.pickle"))) == 2
    assert [c.area for c in edited.cells.values()] != [c.area for c in first.cells.values()]
    liberty.library.cache_clear()
