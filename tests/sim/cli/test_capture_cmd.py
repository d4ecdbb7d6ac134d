"""``kaleido capture``: a tiny random-weight model into an archive; bad input is
one line, exit 2, nothing written; ``estimate --activations`` refuses an
archive that is not one the same way."""

import json
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("diffusers")

KALEIDO = [sys.executable, "-m", "sim"]


def test_capture_writes_an_archive_that_says_what_it_is(tmp_path):
    out = tmp_path / "a"
    r = subprocess.run(KALEIDO + ["capture", "--model", "cogvideox", "--grid", "2,4,4", "--steps", "3", "--at", "0,2",
                                  "--heads", "1", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "RANDOM weights" in r.stdout and "steps 0,2 of 3" in r.stdout
    m = json.loads((out / "manifest.json").read_text())
    assert m["heads"] == [1] and m["model"]["class"] == "CogVideoXTransformer3DModel" and not m["model"]["trained"]


@pytest.mark.parametrize("args, message", [
    (["--model", "sora"], "invalid choice: 'sora'"),
    (["--model", "wan2.1", "--at", "10"], "--at 10: steps run from 0 to 9"),
    (["--model", "wan2.1", "--at", "x"], "a comma list of integers"),
    (["--model", "wan2.1", "--layers", "4"], "--layers 4: the model has 2"),
    (["--model", "wan2.1", "--heads", "0,0"], "name each index once"),
    (["--model", "wan2.1", "--steps", "0"], "--steps 0 must be at least 1"),
    (["--model", "wan2.1", "--grid", "0,4,4"], "grid"),
    (["--model", "wan2.1", "--clip", "/nowhere.mp4"], "no such file"),
    (["--model", "wan2.1", "--model-path", "/nowhere"], "--model-path /nowhere: no such folder"),
])
def test_bad_input_is_one_line(tmp_path, args, message):
    out = tmp_path / "a"
    r = subprocess.run(KALEIDO + ["capture"] + args + ["--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_model_folder_without_weights_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    r = subprocess.run(KALEIDO + ["capture", "--model", "wan2.1", "--model-path", str(tmp_path / "empty"),
                                  "--out", str(tmp_path / "a")], capture_output=True, text=True)
    assert r.returncode == 2 and "--model-path" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("command", ["estimate", "explore"])
def test_estimate_refuses_what_is_not_an_archive(tmp_path, command):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "manifest.json").write_text('{"format": "something else"}')
    for args, message in ((["--activations", str(tmp_path / "notes")], "not a kaleido-activations archive"),
                          (["--activations", str(tmp_path / "none")], "no such folder"),
                          (["--activations", str(tmp_path / "notes"), "--model", "wan2.1"], "give one"),
                          ([], "name a model (--model) or bring its activations")):
        out = tmp_path / "out"
        r = subprocess.run(KALEIDO + [command] + args + ["--out", str(out)], capture_output=True, text=True)
        assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert not out.exists()


@pytest.mark.parametrize("command, model, theirs", [("capture", "cogvideox", "WanTransformer3DModel"),
                                                    ("quality", "hunyuanvideo", "CogVideoXTransformer3DModel")])
def test_a_model_folder_of_another_family_is_named(tmp_path, command, model, theirs):
    """It used to end in `TypeError: empty()` deep in diffusers."""
    import json
    (tmp_path / "m" / "transformer").mkdir(parents=True)
    (tmp_path / "m" / "transformer" / "config.json").write_text(json.dumps({"_class_name": theirs}))
    r = subprocess.run(KALEIDO + [command, "--model", model, "--model-path", str(tmp_path / "m"),
                                  "--out", str(tmp_path / "a")], capture_output=True, text=True)
    assert r.returncode == 2 and f"holds a {theirs}" in r.stderr and f"not --model {model}'s" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "a").exists()
