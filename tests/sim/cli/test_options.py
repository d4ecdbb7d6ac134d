"""The knobs on the command line: every flag comes from its Config field, and a
knob given where nothing reads it is refused in one line, on every command."""

import argparse
import json

import numpy as np
import pytest

from golden.config import KNOBS, Config, knob_help
from sim.cli.main import build_parser, main
from sim.cli.options import design_knobs, flag


def _subparsers(parser, prefix=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subparsers(sub, prefix + (name,))
    yield prefix, parser


def test_every_knob_flag_is_its_fields():
    seen = set()
    for path, parser in _subparsers(build_parser()):
        for action in parser._actions:
            if action.dest in KNOBS:
                seen.add(action.dest)
                where = " ".join(path) + " " + flag(action.dest)
                assert action.option_strings == [flag(action.dest)], where
                # Left out is "not given": the Config's own default applies. A command
                # may add a sentence of its own after the field's help.
                assert action.default is None and action.help.startswith(knob_help(action.dest)), where
                choices = KNOBS[action.dest].metadata["choices"]
                assert action.choices == choices, where
    assert seen == set(KNOBS)


def test_a_knob_left_out_keeps_the_configs_default(tmp_path):
    assert main(["verilog", "--block", "pe", "--out", str(tmp_path)]) == 0
    assert main(["verilog", "--block", "array", "--pe-stages", "2", "--issue-window", "3", "--rows", "2",
                 "--out", str(tmp_path)]) == 0
    head = (tmp_path / "kaleido_array.v").read_text().splitlines()[1]
    assert "pe_stages=2" in head and "issue_window=3" in head and "rows=2" in head
    assert f"cols={Config().cols}" in head and f"accumulators={Config().accumulators}" in head


def test_what_a_design_point_reads():
    base = design_knobs("baseline", "pe")
    assert {"rows", "cols", "pe_stages", "clock_mhz"} <= base
    assert not base & {"accumulators", "lookahead", "issue_window", "cluster_rule"}
    assert {"accumulators"} <= design_knobs("kaleido", "pe") and "cluster_rule" not in design_knobs("kaleido", "pe")
    assert "cluster_rule" in design_knobs("kaleido", "pe-sh") and "lookahead" not in design_knobs("kaleido", "pe-sh")
    assert {"lookahead", "issue_window"} <= design_knobs("kaleido", "pe-m")
    windowed = design_knobs("kaleido", "full", issue_window=4)
    assert "issue_window" in windowed and "lookahead" not in windowed
    assert "cluster_rule" not in design_knobs("kaleido", "full", linear=True)
    assert "window" in design_knobs("kaleido", "full", linear=True)


OPS = ["--q", "q.npy", "--k", "k.npy", "--grid", "1,2,4", "--partition", "4,2,2", "--out", "run"]
LINEAR = ["--x", "q.npy", "--w", "w.npy", "--grid", "1,2,4", "--partition", "4,2,2", "--out", "run"]


@pytest.mark.parametrize("argv, message", [
    (["timing", "--block", "scheduler", "--issue-window",
      "4"], "--issue-window sets the channel window: --block scheduler has none"),
    (["timing", "--block", "softmax", "--cluster-rule", "weight"], "sets the scheduler: --block softmax has none"),
    (["power", "--block", "pe", "--rows", "3"], "sets an array of PEs: --block pe has none"),
    (["power", "--block", "baseline-pe", "--accumulators", "4"], "sets the Kaleido PE: --block baseline-pe"),
    (["synth", "--block", "pe", "--lookahead", "2"], "sets the matcher: --block pe has none"),
    (["synth", "--block", "pe", "--no-liberty", "--clock-mhz", "100"], "--no-liberty maps it for none"),
    (["timing", "--block", "channel-window", "--issue-window", "0"], "means no channel window"),
    (["verilog", "--block", "pe", "--grid", "2,2,2", "--out", "run"], "--grid sets the softmax unit"),
    (["sim", "attention", *OPS, "--design", "baseline", "--accumulators", "4"], "the baseline has none"),
    (["sim", "attention", *OPS, "--design", "baseline", "--lookahead", "2"], "the baseline has none"),
    (["sim", "attention", *OPS, "--variant", "pe-m", "--cluster-rule", "weight"], "--variant pe-m has none"),
    (["sim", "attention", *OPS, "--variant", "pe-sh", "--issue-window", "4"], "--variant pe-sh has none"),
    (["sim", "attention", *OPS, "--issue-window", "4", "--lookahead", "3"], "puts the channel window in its place"),
    (["sim", "linear", *LINEAR, "--variant", "pe", "--lookahead", "3"], "--variant pe has none"),
    (["sim", "linear", *LINEAR, "--design", "baseline", "--accumulators", "4"], "the baseline has none"),
])
def test_a_knob_nothing_reads_is_refused(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "run").exists()


def test_verilog_takes_no_clock(capsys):
    # RTL has no clock to be mapped for: the option is not there at all.
    assert main(["verilog", "--block", "pe", "--clock-mhz", "100", "--out", "x"]) == 2
    assert "unrecognized arguments: --clock-mhz" in capsys.readouterr().err


def test_workload_stats_grid_must_agree_with_the_folder(tmp_path, capsys):
    rng = np.random.default_rng(3)
    for name in ("q", "k"):
        np.save(tmp_path / f"{name}.npy", rng.integers(-128, 128, (8, 8), dtype=np.int8))
    (tmp_path / "workload.json").write_text(json.dumps({"grid": [1, 2, 4], "partition": [4, 2, 2]}))
    assert main(["workload", "stats", str(tmp_path), "--grid", "1,4,2"]) == 2
    err = capsys.readouterr().err
    assert "contradicts" in err and "1,2,4" in err
    assert main(["workload", "stats", str(tmp_path), "--grid", "1,2,4", "--json"]) == 0
