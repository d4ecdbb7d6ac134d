"""``kaleido structure DIR``: on a workload folder and on a capture archive, its
figures equal golden.structure's, and bad input is one line with nothing written."""

import json

import numpy as np
import pytest

from golden import Config
from golden.structure import structure
from golden.workload import load_operand
from sim.cli.main import main

pytest.importorskip("av")

SMALL = ["--grid", "2,4,4", "--model", "wan2.1", "--head-dim", "32"]


def test_a_workload_folders_structure(tmp_path, capsys):
    wl = tmp_path / "wl"
    assert main(["workload", "video", "--clip", "bikes", *SMALL, "--common-strength", "1", "--common-band", "high",
                 "--noise", "0.5", "--out", str(wl)]) == 0
    meta = json.loads((wl / "workload.json").read_text())
    assert meta["common_strength"] == 1.0 and meta["common_band"] == "high"
    capsys.readouterr()
    out = tmp_path / "st"
    assert main(["structure", str(wl), "--seed", "4", "--json", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    found = json.loads(captured.out)
    assert "shuffle seed 4" in captured.err
    assert (out / "structure.json").exists() and (out / "structure.png").stat().st_size > 1000
    cfg = Config(partition=meta["partition"], grid=meta["grid"])
    q = load_operand(str(wl / "q.npy"), cfg).data
    k = load_operand(str(wl / "k.npy"), cfg).data
    want = structure(q, k, cfg, 4)
    assert found["heads"][0]["reuse"] == pytest.approx(want["reuse"])
    # The knob shows: half the energy before RoPE is common (quantized to int8, so near it).
    assert found["mean"]["q"]["derotated"]["all"] == pytest.approx(0.5, abs=0.02)
    assert found["source"]["common_strength"] == 1.0


def test_an_archives_structure(tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("diffusers")
    from sim.capture import capture, family
    path = tmp_path / "wan"
    capture(family("wan2.1"), str(path), (2, 4, 4), 3, [0, 2], None, [0, 1], "bikes", loop="noised")
    assert main(["structure", str(path), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["source"]["kind"] == "archive" and found["source"]["trained"] is False
    assert {(h["step"], h["head"]) for h in found["heads"]} >= {(0, 0), (2, 1)}
    for h in found["heads"]:
        assert h["reuse"]["structured"] == pytest.approx(h["reuse"]["oracle"] - h["reuse"]["shuffled"])
        assert 0.0 <= h["q"]["derotated"]["all"] <= 1.0


@pytest.mark.parametrize("make, message", [
    (lambda d: None, "neither an activation archive"),
    (lambda d: (d / "workload.json").write_text('{"grid": [1, 4, 4], "partition": [4, 2, 2]}'),
     "fewer than two tokens along T=1"),
    (lambda d: (d / "workload.json").write_text("not json"), "not a workload description"),
])
def test_bad_input_is_one_line(tmp_path, capsys, make, message):
    d = tmp_path / "in"
    d.mkdir()
    make(d)
    if (d / "workload.json").exists() and "grid" in (d / "workload.json").read_text():
        for name in ("q", "k"):
            np.save(d / f"{name}.npy", np.zeros((16, 8), np.int8))
    out = tmp_path / "out"
    assert main(["structure", str(d), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err
    assert not out.exists()
