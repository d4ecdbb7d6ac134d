"""golden/presets.py: each named design point is the default with its own changes,
and the command line starts from one with every input and knob given over it."""

import argparse

import pytest

from golden import Config
from golden.presets import FRAGMENTS, PRESETS, preset
from sim.cli.options import add_knobs, add_preset, design_point, preset_knobs
from sim.experiments import SPEED_DISPATCHERS
from sim.experiments.report import default_sizes


def test_each_preset_changes_only_what_it_names():
    assert preset("default") == Config()
    assert preset("exact") == Config(accumulators=4)
    assert preset("paper") == Config(pe_stages=1, cluster_rule="pivots")
    assert preset("demo") == Config.for_model("wan2.1", 32, grid=(2, 8, 8))
    assert all(PRESETS[name].description for name in PRESETS)
    with pytest.raises(ValueError, match="unknown preset"):
        preset("nope")


def test_the_report_and_the_studies_use_the_named_points():
    sizes = default_sizes(7)
    assert sizes["cycle_model"] == Config.for_model("wan2.1", 64, grid=(4, 8, 8), seed=7)
    assert sizes["area"] == Config(seed=7)
    assert SPEED_DISPATCHERS == ((0, "pivots"), (4, "pivots"), (4, "weight"), (8, "weight"))
    assert FRAGMENTS["window8-weight"].knobs == {"issue_window": 8, "cluster_rule": "weight"}


def _parse(*argv):
    p = argparse.ArgumentParser()
    add_knobs(p, "accumulators", "pe_stages", "rows")
    add_preset(p)
    return p.parse_args(list(argv))


def test_given_inputs_and_knobs_go_over_the_preset():
    args = _parse("--preset", "paper", "--pe-stages", "2")
    cfg = design_point(args, grid=(2, 4, 4), partition=None)
    assert (cfg.pe_stages, cfg.cluster_rule, cfg.grid, cfg.partition) == (2, "pivots", (2, 4, 4), (44, 42, 42))
    assert design_point(_parse("--rows", "2")) == Config(rows=2)
    assert preset_knobs(_parse("--preset", "exact", "--rows", "2")) == {"accumulators": 4, "rows": 2}
    assert preset_knobs(_parse()) == {}
