"""The block table on every library (sim/experiments/corners.py): its rows and
the Kaleido / baseline ratios, from given sign-offs."""

import pytest

from sim.experiments.corners import BLOCKS, ENERGY_BLOCKS, tables


def _corner(scale: float) -> dict:
    # Made-up sign-offs: every block's area and fmax, and energy where measured.
    energy = {"pe": {"full_mac": 4.0, "nibble_mac": 2.0, "paired_nibbles": 4.5, "idle": 0.3, "hand_over": 6.0,
                     "drain_shift": 0.7},
              "baseline-pe": {"full_mac": 2.0, "idle": 0.4, "hand_over": 2.5, "drain_shift": 0.8},
              "matcher": {"busy": 5.0, "idle": 2.0}, "scheduler": {"busy": 6.0, "idle": 0.8},
              "softmax": {"busy": 40.0, "idle": 4.0}}
    return {b: {"area_um2": scale * (3.0 if not b.startswith("baseline") else 1.0) * (i + 1), "clock_mhz": 720.0,
                "fmax_mhz": 700.0 + i, "met": i % 2 == 0,
                "energy_pj": {a: scale * e for a, e in energy[b].items()} if b in ENERGY_BLOCKS else None}
            for i, b in enumerate(BLOCKS)}


def test_every_block_has_a_row_per_library_and_the_ratios_are_kaleidos_over_the_baselines():
    t = tables({"a": _corner(1.0), "b": _corner(20.0)})
    assert t["blocks"][0][:2] == ["block", "library"] and len(t["blocks"]) == 1 + 2 * len(BLOCKS)
    pe = [r for r in t["blocks"] if r[0] == "pe"]
    assert [r[1] for r in pe] == ["a", "b"]
    assert pe[0][5].startswith("full_mac 4, nibble_mac 2") and pe[1][5].startswith("full_mac 80")
    assert "(missed)" in [r for r in t["blocks"] if r[0] == "baseline-pe"][0][4]
    ratios = {r[0]: r[1:] for r in t["ratios"][1:]}
    # pe is BLOCKS[0] (3 x 1), baseline-pe BLOCKS[1] (1 x 2): 1.5x at any scale.
    assert ratios["PE area"] == ["1.50x", "1.50x"]
    assert ratios["PE full product"] == ["2.00x", "2.00x"] and ratios["PE idle"] == ["0.75x", "0.75x"]
    assert ratios["PE nibble product"] == ["1.00x", "1.00x"]


def test_a_library_not_fetched_is_named_and_left_out(monkeypatch, capsys):
    from sim.experiments import corners
    from synth.kits import LibraryError

    def missing(name):
        raise LibraryError(f"the {name} liberty is not in .cache/{name}; run `make setup`")
    monkeypatch.setattr(corners, "liberty_path", missing)
    assert corners.main(["--liberty", "nangate45"]) == 2
    err = capsys.readouterr().err
    assert "the nangate45 liberty is not in" in err and "no cell library fetched" in err


@pytest.mark.parametrize("bad", ["tsmc16", "OSU018"])
def test_an_unknown_library_is_refused(bad, capsys):
    from sim.experiments import corners

    with pytest.raises(SystemExit):
        corners.main(["--liberty", bad])
    assert "invalid choice" in capsys.readouterr().err
