"""``kaleido sim linear`` end to end on Icarus (the quicker build), and its bad inputs."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from golden.config import CHIP_CLOCK_MHZ
from sim.rtl import runner
from tests import reference

KALEIDO = [sys.executable, "-m", "sim"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def run(*args, cwd=None):
    return subprocess.run(KALEIDO + list(args), capture_output=True, text=True, cwd=cwd or ROOT)


def _layer(tmp_path, rng):
    x = rng.integers(-128, 128, (2 * 3 * 4, 12), dtype=np.int8)
    x[1::2] = np.clip(x[::2] + rng.integers(-2, 3, x[::2].shape), -128, 127)
    w = rng.integers(-128, 128, (12, 5), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    return x, w


# make test runs the command end to end on Kaleido; CI on the baseline too.
@pytest.mark.parametrize("design, accumulators", [("kaleido", 4), pytest.param("baseline", 3, marks=pytest.mark.ci)])
def test_sim_linear_end_to_end(tmp_path, rng, design, accumulators):
    why = runner.missing("icarus")
    if why:
        pytest.skip(why)
    x, w = _layer(tmp_path, rng)
    out = tmp_path / "run"
    r = run("sim", "linear", "--x", str(tmp_path / "x.npy"), "--w", str(tmp_path / "w.npy"),
            "--grid", "2,3,4", "--partition", "2,2,2", "--window", "2", "--design", design,
            "--simulator", "icarus", "--out", str(out), "--json",
            *(["--timing", "--clock-mhz", "150"] if design == "baseline" else ["--accumulators", str(accumulators)]))
    assert r.returncode == 0, r.stderr
    stats = json.loads(r.stdout)
    if design == "baseline":         # mapped for the chip clock: a run never exceeds it
        assert stats["chip_clock_mhz"] == 150.0
        if stats["clock_mhz"] is not None:
            assert stats["clock_mhz"] <= 150.0
            assert stats["time_us"] == pytest.approx(stats["cycles"] / stats["clock_mhz"])
    else:
        assert stats["chip_clock_mhz"] == CHIP_CLOCK_MHZ and "clock_mhz" not in stats
    assert stats == json.loads((out / "stats.json").read_text())
    _, xt = reference.window(x.astype(int).tolist(), (2, 3, 4), (2, 2, 2), 5, 3, 2)
    want = (np.array(xt, np.int64) if design == "kaleido" else x.astype(np.int64)) @ w.astype(np.int64)
    np.testing.assert_array_equal(np.load(out / "out.npy"), want)
    assert stats["out_match"] and stats["cycles_match"] and stats["cycles"] <= stats["baseline_cycles"]
    assert stats["dense_macs"] == 24 * 12 * 5 and stats["heads"] == 2
    if design == "kaleido" and stats["schedule"] != "dense":
        assert stats["executed_macs"] == stats["oracle_macs"]      # the exact PE
    assert sorted(p.name for p in out.iterdir()) == ["out.npy", "stats.json"]


@pytest.mark.parametrize("change, message", [
    ({"--window": "5"}, "windows of up to 4"),
    ({"--window": "0"}, "window must be"),
    ({"--partition": "2,2,1"}, "whole number of heads of 5"),
    ({"--grid": "2,3,3"}, "18"),
    ({"--rows": "0"}, "rows must be"),
    ({"--variant": "pe-sh", "--design": "baseline"}, "no dispatcher"),
    ({"--cluster-rule": "weight"}, "unrecognized arguments"),
    ({"--issue-window": "4", "--variant": "pe-sh"}, "--variant pe-sh has none"),
])
def test_sim_linear_bad_inputs(tmp_path, rng, change, message):
    _layer(tmp_path, rng)
    args = {"--x": "x.npy", "--w": "w.npy", "--grid": "2,3,4", "--partition": "2,2,2", "--out": "run"}
    args.update(change)
    r = run("sim", "linear", *[a for kv in args.items() for a in kv], cwd=tmp_path)
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert message in r.stderr and not (tmp_path / "run").exists()
