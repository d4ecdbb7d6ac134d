"""``kaleido golden attention`` end to end, and every bad input of the contract."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests import reference

KALEIDO = [sys.executable, "-m", "sim"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def run(*args, cwd=None):
    return subprocess.run(KALEIDO + list(args), capture_output=True, text=True, cwd=cwd or ROOT)


@pytest.fixture
def operands(tmp_path, rng):
    q = rng.integers(-128, 128, (2 * 3 * 4, 6), dtype=np.int8)
    k = np.clip(q + rng.integers(-3, 4, q.shape), -128, 127).astype(np.int8)
    v = rng.standard_normal((24, 6)).astype(np.float32)
    for name, x in dict(q=q, k=k, v=v).items():
        np.save(tmp_path / f"{name}.npy", x)
    from golden import quantize
    np.save(tmp_path / "vq.npy", quantize(v)[0])        # what the command makes of v
    return tmp_path, q, k


def test_golden_attention_end_to_end(operands):
    d, q, k = operands
    out = d / "o.npz"
    r = run("golden", "attention", "--q", str(d / "q.npy"), "--k", str(d / "k.npy"),
            "--v", str(d / "v.npy"), "--grid", "2,3,4", "--partition", "2,2,2",
            "--full-bits", "6", "--partial-bits", "2", "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    assert "quantized to int8" in r.stderr and "--v" in r.stderr
    figures = json.loads(r.stdout)
    assert set(figures) == {"dense_macs", "oracle_macs", "oracle_reduction", "mse", "psnr_db", "cosine",
                            "float_mse", "float_psnr_db", "float_cosine", "pv_dense_macs", "pv_oracle_macs"}
    res = np.load(out)
    assert res["probs"].dtype == np.int8 and res["probs"].min() >= 0 and res["probs"].max() <= 127
    assert res["out"].dtype == np.int64 and res["out"].shape == (24, 6)
    vs, va = reference.reuse(np.load(d / "vq.npy").astype(int).tolist(), (2, 3, 4), (2, 2, 2), 6, 2)
    np.testing.assert_array_equal(res["v_states"], vs)
    np.testing.assert_array_equal(res["out"], reference.matmul_t(res["probs"].astype(int).tolist(),
                                                                 [list(c) for c in zip(*va)]))
    assert figures["pv_oracle_macs"] == reference.pv_oracle(24, vs)
    assert res["scores"].dtype == np.int64 and res["q_states"].dtype == np.int8
    qs, qa = reference.reuse(q.astype(int).tolist(), (2, 3, 4), (2, 2, 2), 6, 2)
    ks, ka = reference.reuse(k.astype(int).tolist(), (2, 3, 4), (2, 2, 2), 6, 2)
    np.testing.assert_array_equal(res["scores"], reference.matmul_t(qa, ka))
    np.testing.assert_array_equal(res["k_states"], ks)
    assert figures["oracle_macs"] == reference.oracle(qs, ks)
    assert figures["dense_macs"] == 24 * 24 * 6


def test_model_preset_and_4d_input(tmp_path, rng):
    q = rng.integers(-128, 128, (2, 2, 2, 32), dtype=np.int8)
    np.save(tmp_path / "q.npy", q)
    r = run("golden", "attention", "--q", str(tmp_path / "q.npy"), "--k", str(tmp_path / "q.npy"),
            "--grid", "2,2,2", "--model", "wan2.1", "--out", str(tmp_path / "o.npz"))
    assert r.returncode == 0, r.stderr
    assert "oracle reduction" in r.stdout


@pytest.mark.parametrize("change, message", [
    ({"--grid": "2,3,5"}, "30"),
    ({"--grid": "2,3"}, "three values"),
    ({"--grid": "a,b,c"}, "three integers"),
    ({"--partition": "2,2,3"}, "partition sums to 7"),
    ({"--partial-bits": "7"}, "partial bits (7) must not exceed full bits (5)"),
    ({"--full-bits": "9"}, "between 0 and 8"),
    ({"--q": "missing.npy"}, "--q missing.npy: no such file"),
    ({"--q": "/dev/null"}, "--q /dev/null: is not a regular file"),
    # The partition comes from --q's width: a --k of another width is the pair's fault, not the partition's.
    ({"--partition": None, "--model": "wan2.1", "--k": "wide.npy"}, "--k wide.npy has 7 channels and --q q.npy 6"),
    ({"--q": "junk.npy"}, "not a NumPy .npy or .npz file"),
    ({"--q": "nan.npy"}, "NaN"),
    ({"--q": "wide.npy"}, "channels"),
    ({"--out": "nofolder/o.npz"}, "does not exist"),
])


def test_bad_inputs_fail_cleanly(operands, change, message):
    d, q, _ = operands
    (d / "junk.npy").write_text("junk")
    np.save(d / "nan.npy", np.full(q.shape, np.nan, np.float32))
    np.save(d / "wide.npy", np.zeros((24, 7), np.int8))
    args = {"--q": "q.npy", "--k": "k.npy", "--grid": "2,3,4", "--partition": "2,2,2",
            "--out": "o.npz"}
    args.update(change)
    flat = [x for kv in args.items() if kv[1] is not None for x in kv]
    r = run("golden", "attention", *flat, cwd=d)
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert message in lines[0] and "Traceback" not in r.stderr
    assert not (d / "o.npz").exists()
    assert not [f for f in os.listdir(d) if f.startswith(".kaleido-")]


def test_missing_argument_is_one_line(operands):
    d, _, _ = operands
    r = run("golden", "attention", "--q", "q.npy", "--grid", "2,3,4", "--partition", "2,2,2",
            "--out", "o.npz", cwd=d)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "--k" in r.stderr


def test_golden_linear_end_to_end(tmp_path, rng):
    x = rng.integers(-128, 128, (2 * 3 * 4, 12), dtype=np.int8)
    x[1::2] = np.clip(x[::2] + rng.integers(-2, 3, x[::2].shape), -128, 127)
    w = rng.integers(-128, 128, (12, 5), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    out = tmp_path / "y.npz"
    r = run("golden", "linear", "--x", str(tmp_path / "x.npy"), "--w", str(tmp_path / "w.npy"),
            "--grid", "2,3,4", "--partition", "2,2,2", "--window", "2", "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    figures = json.loads(r.stdout)
    res = np.load(out)
    _, xt = reference.window(x.astype(int).tolist(), (2, 3, 4), (2, 2, 2), 5, 3, 2)
    np.testing.assert_array_equal(res["out"], np.array(xt, dtype=np.int64) @ w.astype(np.int64))
    np.testing.assert_array_equal(res["exact"], x.astype(np.int64) @ w.astype(np.int64))
    assert figures["dense_macs"] == 24 * 12 * 5 and 0 <= figures["oracle_macs"] <= figures["dense_macs"]


@pytest.mark.parametrize("change, message", [
    ({"--partition": "2,2,1"}, "whole number of heads of 5"),
    ({"--w": "w_rows.npy"}, "11 rows"),
    ({"--grid": "2,3,3"}, "18"),
    ({"--window": "0"}, "window must be"),
])
def test_golden_linear_bad_inputs(tmp_path, rng, change, message):
    np.save(tmp_path / "x.npy", rng.integers(-128, 128, (24, 12), dtype=np.int8))
    np.save(tmp_path / "w.npy", rng.integers(-128, 128, (12, 5), dtype=np.int8))
    np.save(tmp_path / "w_rows.npy", rng.integers(-128, 128, (11, 5), dtype=np.int8))
    args = {"--x": "x.npy", "--w": "w.npy", "--grid": "2,3,4", "--partition": "2,2,2", "--out": "y.npz"}
    args.update(change)
    r = run("golden", "linear", *[a for kv in args.items() for a in kv], cwd=tmp_path)
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert message in r.stderr and not (tmp_path / "y.npz").exists()
