"""``kaleido quality``: a tiny random-weight model's runs, table, JSON and plot,
labelled as random; bad input is one line, exit 2, nothing written."""

import json
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("diffusers")

from sim.cli.quality_cmd import parse_thresholds  # noqa: E402
from sim.errors import UserError  # noqa: E402

KALEIDO = [sys.executable, "-m", "sim"]


def test_a_sweep_writes_its_table_json_and_plot(tmp_path):
    out = tmp_path / "q"
    r = subprocess.run(KALEIDO + ["quality", "--model", "wan2.1", "--grid", "2,4,4", "--steps", "2",
                                  "--thresholds", "5,3", "4,2", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "RANDOM weights" in r.stdout and "reuse 4,2" in r.stdout
    data = json.loads((out / "quality.json").read_text())
    assert [row["run"] for row in data["runs"]] == ["int8", "reuse 5,3", "reuse 4,2"]
    assert not data["trained"] and "RANDOM" in data["scope"]
    by = {row["run"]: row for row in data["runs"]}
    assert by["reuse 4,2"]["reduction"]["total"]["qk"]["oracle"] > by["reuse 5,3"]["reduction"]["total"]["qk"]["oracle"]
    assert (out / "quality.png").stat().st_size > 0


@pytest.mark.parametrize("args, message", [
    (["--model", "sora"], "invalid choice: 'sora'"),
    (["--model", "wan2.1", "--thresholds", "9,3"], "--thresholds 9,3: full bits (9) must be between 0 and 8"),
    (["--model", "wan2.1", "--thresholds", "3,5"], "partial bits (5) must not exceed full bits (3)"),
    (["--model", "wan2.1", "--thresholds", "5"], "--thresholds 5: two integers F,P"),
    (["--model", "wan2.1", "--thresholds", "5,3", "5,3"], "named twice"),
    # A negative pair reaches the thresholds' own check (it was "expected at least one argument").
    (["--model", "wan2.1", "--thresholds", "-1,2"], "--thresholds -1,2: full bits (-1) must be between 0 and 8"),
    (["--model", "wan2.1", "--thresholds", "5,3", "-1,2"], "--thresholds -1,2: full bits (-1)"),
    # The window is the linear layers': with reuse in attention alone nothing read it.
    (["--model", "wan2.1", "--archive", "OUT"], "overlap; the archive goes into a new folder of its own"),
    (["--model", "wan2.1", "--archive", "OUT/a"], "overlap"),
    (["--model", "wan2.1", "--window", "2"], "--window 2 is the linear layers' issue window: it goes with --where all"),
    (["--model", "wan2.1", "--steps", "0"], "--steps 0 must be at least 1"),
    (["--model", "wan2.1", "--device", "cuda:3"], "--device cpu"),
    (["--model", "wan2.1", "--device", "tpu9"], "device 'tpu9'"),
    (["--model", "wan2.1", "--model-path", "/nowhere"], "--model-path /nowhere: no such folder"),
])
def test_bad_input_is_one_line(tmp_path, args, message):
    out = tmp_path / "q"
    args = [a.replace("OUT", str(out)) for a in args]
    r = subprocess.run(KALEIDO + ["quality"] + args + ["--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert list(tmp_path.iterdir()) == []


def test_thresholds_parse_in_order():
    assert parse_thresholds(["5,3", "4,2", "8,8"]) == [(5, 3), (4, 2), (8, 8)]
    with pytest.raises(UserError, match="two integers"):
        parse_thresholds(["a,b"])
