"""The activation archive: what a writer writes a reader reads back, and every
way an archive can be wrong is one line naming the fault."""

import json
import os

import numpy as np
import pytest

from golden.archive import ArchiveError, ArchiveWriter, open_archive, tensor_name

SHAPE = {"layers": 2, "heads": 2, "head_dim": 24, "hidden": 48, "mlp": 96, "text_tokens": 4, "joint_text": False}
GRID = (2, 3, 4)


def _manifest():
    return {"model": {"family": "wan2.1", "class": "WanTransformer3DModel", "trained": False,
                      "weights": "random (seed 0)"},
            "shape": SHAPE, "grid": list(GRID), "partition": [8, 8, 8],
            "steps": [{"index": 1, "sigma": 0.5, "timestep": 500.0}], "total_steps": 3, "layers": [1],
            "heads": [0, 1], "flow_shift": 5.0}


def _write(path, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(GRID))
    arrays = {}
    with ArchiveWriter(str(path)) as w:
        for role in ("q", "k", "v"):
            arrays[role] = rng.integers(-128, 128, (2, n, 24), dtype=np.int8)
            w.add(1, 1, role, arrays[role], [0.5, 0.25])
        arrays["mlp2"] = rng.integers(-128, 128, (n, 96), dtype=np.int8)
        w.add(1, 1, "mlp2", arrays["mlp2"], [0.125])
        w.finish(_manifest())
    return arrays


def test_what_is_written_reads_back(tmp_path):
    path = tmp_path / "a"
    arrays = _write(path)
    a = open_archive(str(path))
    q, sq, k, sk, v, sv = a.operands(1, 1, 1)
    assert np.array_equal(q, arrays["q"][1]) and np.array_equal(v, arrays["v"][1]) and (sq, sk, sv) == (.25,) * 3
    x, s = a.linear_input(1, 1, "mlp2")
    assert np.array_equal(x, arrays["mlp2"]) and s == 0.125
    assert a.roles(1, 1) == ["mlp2"] and a.steps == [1] and a.partition == (8, 8, 8) and not a.trained
    assert sorted(os.listdir(tmp_path)) == ["a"]            # the scratch folder was renamed, not copied


def _edit(path, change):
    m = json.loads((path / "manifest.json").read_text())
    change(m)
    (path / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("spoil, message", [
    (lambda p: os.remove(p / tensor_name(1, 1, "k")), "step001/layer001/k.npy is missing"),
    (lambda p: np.save(p / tensor_name(1, 1, "v"), np.zeros((2, 20, 24), np.int8)), "is [2, 20, 24], the manifest"),
    (lambda p: np.save(p / tensor_name(1, 1, "q"), np.zeros((2, 24, 24), np.float32)), "is float32, not int8"),
    (lambda p: _edit(p, lambda m: m["tensors"][tensor_name(1, 1, "q")].update(shape=[2, 24, 20])),
     "the archive's heads and grid make it [2, 24, 24]"),
    (lambda p: _edit(p, lambda m: m["tensors"][tensor_name(1, 1, "k")].update(scales=[float("nan"), 1.0])),
     "scales must be 2 finite positive numbers"),
    (lambda p: _edit(p, lambda m: m["tensors"][tensor_name(1, 1, "mlp2")].update(scales=[float("inf")])),
     "scales must be 1 finite positive numbers"),
    (lambda p: _edit(p, lambda m: m.update(complete=False)), "did not finish"),
    (lambda p: _edit(p, lambda m: m.update(version=7)), "archive version 7"),
    (lambda p: _edit(p, lambda m: m.update(heads=[0, 2])), "are not distinct indices below 2"),
    (lambda p: _edit(p, lambda m: m.update(partition=[8, 8, 9])), "does not split a head of 24"),
    (lambda p: _edit(p, lambda m: m.pop("grid")), "manifest.json lacks 'grid'"),
    (lambda p: _edit(p, lambda m: m["shape"].update(heads="2")), "manifest shape 'heads' must be a int"),
    (lambda p: _edit(p, lambda m: m["tensors"].pop(tensor_name(1, 1, "v"))), "manifest names no step001/layer001/v"),
    (lambda p: (p / "manifest.json").write_text("{not json"), "does not read as JSON"),
    (lambda p: (p / "manifest.json").write_text("[" * 200_000 + "]" * 200_000), "nests deeper than a manifest"),
    (lambda p: _edit(p, lambda m: m["model"].update(family="sora")), "names model family 'sora', which this"),
    (lambda p: os.remove(p / "manifest.json"), "no manifest.json"),
    (lambda p: (p / tensor_name(1, 1, "q")).write_bytes(b"garbage"), "is not an .npy file"),
])
def test_a_spoilt_archive_is_one_line(tmp_path, spoil, message):
    path = tmp_path / "a"
    _write(path)
    spoil(path)
    with pytest.raises(ArchiveError) as exc:
        open_archive(str(path))
    assert message in str(exc.value) and "\n" not in str(exc.value), str(exc.value)


def test_an_interrupted_writer_leaves_nothing(tmp_path):
    path = tmp_path / "a"
    with pytest.raises(KeyboardInterrupt):
        with ArchiveWriter(str(path)) as w:
            w.add(0, 0, "q", np.zeros((1, 4, 4), np.int8), [1.0])
            raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []


def test_a_scratch_folder_never_reads_as_an_archive(tmp_path):
    w = ArchiveWriter(str(tmp_path / "a"))
    w.add(0, 0, "q", np.zeros((1, 4, 4), np.int8), [1.0])
    with pytest.raises(ArchiveError, match="no manifest.json"):
        open_archive(w.scratch)
    w.discard()


def test_the_writer_refuses_what_the_format_has_not(tmp_path):
    _write(tmp_path / "a")
    with pytest.raises(ArchiveError, match="already exists"):
        ArchiveWriter(str(tmp_path / "a"))
    w = ArchiveWriter(str(tmp_path / "b"))
    with pytest.raises(ValueError, match="int8 only"):
        w.add(0, 0, "q", np.zeros((1, 4, 4), np.float32), [1.0])
    w.discard()
