"""Energy per PE action: measured, ordered as the work is, and cached."""

import shutil

import pytest

from golden import Config
from synth import timing as timing_module
from synth.flow import default_liberty
from synth.power import ACTIONS, energy_per_action

pytestmark = pytest.mark.skipif(shutil.which("sta") is None or default_liberty() is None,
                                reason="needs OpenSTA (sta) and the OSU018 liberty (make setup)")


@pytest.mark.parametrize("block", list(ACTIONS))
def test_actions_cost_what_they_move(tmp_path, monkeypatch, block):
    monkeypatch.setattr(timing_module, "CACHE", tmp_path)
    monkeypatch.setattr("synth.power.CACHE", tmp_path)
    cfg = Config(partition=(2, 1, 1))
    res = energy_per_action(block, cfg, default_liberty(), cycles=64)
    e = res["energy_pj"]
    assert set(e) == set(ACTIONS[block])
    assert all(v > 0 for v in e.values())
    # Idle is the clock alone; every action that moves data costs more.
    assert min(e, key=e.get) == "idle"
    assert e["full_mac"] > e["drain_shift"] > e["idle"]
    if block == "pe":
        assert e["paired_nibbles"] > e["nibble_mac"]
    assert res["clock_mhz"] > 0 and res["leakage_uw"] > 0 and "OpenSTA" in res["method"]
    # Cached: the second call reads the file.
    assert energy_per_action(block, cfg, default_liberty(), cycles=64) == res
    assert list(tmp_path.glob(f"{block}-*-energy-64.json"))
