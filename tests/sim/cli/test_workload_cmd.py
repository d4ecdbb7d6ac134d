"""``kaleido workload proxy|video|stats``: files other commands accept, and one-line errors."""

import json

import numpy as np
import pytest

from sim.cli.main import main

pytest.importorskip("av")

SMALL = ["--grid", "2,2,2", "--partition", "4,2,2"]


def test_video_files_feed_the_golden_model(tmp_path, capsys):
    out = tmp_path / "wl"
    assert main(["workload", "video", "--clip", "carphone", *SMALL, "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["k.npy", "q.npy", "v.npy", "workload.json"]
    meta = json.loads((out / "workload.json").read_text())
    assert meta["source"] == "video" and meta["clip"] == "carphone" and meta["grid"] == [2, 2, 2]
    assert np.load(out / "q.npy").shape == (8, 8)
    args = ["golden", "attention", "--q", str(out / "q.npy"), "--k", str(out / "k.npy"),
            "--v", str(out / "v.npy"), *SMALL, "--out", str(tmp_path / "o.npz"), "--json"]
    capsys.readouterr()
    assert main(args) == 0
    golden = json.loads(capsys.readouterr().out)
    assert main(["workload", "stats", str(out), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["oracle_reduction"] == pytest.approx(golden["oracle_reduction"])
    assert set(stats["operands"]) == {"q", "k", "v"}
    assert stats["source"]["clip"] == "carphone"


def test_proxy_json_is_its_stats(tmp_path, capsys):
    out = tmp_path / "p"
    assert main(["workload", "proxy", *SMALL, "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert main(["workload", "stats", str(out), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert printed["operands"] == again["operands"]
    assert main(["workload", "stats", str(out)]) == 0
    table = capsys.readouterr().out
    assert "oracle reduction" in table and table.count("%") >= 9


@pytest.mark.parametrize("args, message", [
    (["video", "--clip", "carphone", "--grid", "2,10,2", "--partition", "4,2,2"], "too small"),
    (["video", "--clip", "carphone", "--grid", "40,1,1", "--partition", "4,2,2"], "needs 160"),
    # The clip's own length, not the start frame, when --start is past its end (bikes has 250).
    (["video", "--clip", "bikes", "--grid", "2,2,2", "--partition", "4,2,2", "--start", "300"],
     "bikes: 250 frames, so frame 300 is past its end"),
    (["video", "--clip", "bikes", "--grid", "2,2,2", "--partition", "4,2,2", "--start", "246"],
     "bikes: 250 frames, but the grid needs 8 from frame 246"),
    (["video", "--clip", "nowhere.mp4", *SMALL], "no such file"),
    (["video", "--clip", "carphone", "--grid", "0,2,2", "--partition", "4,2,2"], "extent below 1"),
    (["video", "--clip", "carphone", *SMALL, "--noise", "2"], "--noise"),
    (["video", "--clip", "carphone", *SMALL, "--crop", "1"], "--crop"),
    (["video", "--clip", "carphone", *SMALL, "--seed", "-1"], "--seed"),
    (["proxy", *SMALL, "--seed", "-1"], "--seed"),
])
def test_errors_are_one_line_and_write_nothing(tmp_path, capsys, args, message):
    out = tmp_path / "wl"
    assert main(["workload", *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("kaleido")
    assert not out.exists()


def test_stats_needs_a_shape(tmp_path, capsys):
    np.save(tmp_path / "q.npy", np.zeros((8, 8), np.int8))
    np.save(tmp_path / "k.npy", np.zeros((8, 8), np.int8))
    assert main(["workload", "stats", str(tmp_path)]) == 2
    assert "give --grid" in capsys.readouterr().err
    assert main(["workload", "stats", str(tmp_path), *SMALL]) == 0


def test_a_later_file_that_cannot_be_written_leaves_none(tmp_path, capsys):
    out = tmp_path / "w"
    (out / "v.npy").mkdir(parents=True)          # v.npy cannot be written: a folder has its name
    assert main(["workload", "proxy", "--grid", "1,2,2", "--partition", "1,1,1", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "v.npy" in err[0]
    assert sorted(p.name for p in out.iterdir()) == ["v.npy"]


def test_a_workload_of_zeros_is_said(tmp_path, capsys):
    assert main(["workload", "video", "--grid", "1,1,1", "--partition", "1,1,1",
                 "--out", str(tmp_path / "w")]) == 0
    err = capsys.readouterr().err
    assert "warning" in err and "is 0" in err
    assert not np.any(np.load(tmp_path / "w" / "q.npy"))
