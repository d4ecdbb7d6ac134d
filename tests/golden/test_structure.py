"""The structure statistic (golden.structure) and the synthetic model's
token-common part (golden.workload.token_common): the knob reproduces today's
workloads at 0, and the mechanism the paper names shows as the strength rises."""

import hashlib

import numpy as np
import pytest

from golden import Config, proxy_workload, quantize
from golden.config import ConfigError
from golden.opcount import dense_macs, oracle_macs
from golden.reuse import pair_reuse
from golden.rope import BANDS, band_pairs
from golden.structure import common_share, derotate, structure, structured_reuse
from golden.workload import rope, token_coords


def _digest(w: dict) -> str:
    h = hashlib.sha256()
    for k in sorted(w):
        h.update(k.encode())
        h.update(np.ascontiguousarray(w[k]).tobytes())
    return h.hexdigest()[:16]


def test_strength_zero_is_the_model_of_before():
    # Digests of the workloads as the code before the knob made them (949e8e1, same arguments).
    cfg = Config.for_model("wan2.1", 32, grid=(2, 4, 6))
    assert _digest(proxy_workload(cfg, seed=3)) == "169c0ff6845e8703"
    assert _digest(proxy_workload(cfg.with_(common_strength=0.0, common_band="high"), seed=3)) == "169c0ff6845e8703"
    pytest.importorskip("av")
    from golden.video import video_workload
    assert _digest(video_workload(cfg, "bikes", noise=0.4, seed=5)) == "cd45099d045bc54e"
    # And the design point of before: nothing new in its JSON, its repr (the Verilog's header) unchanged.
    assert "workload" not in cfg.to_json() and "common" not in repr(cfg)
    assert "common_strength" in cfg.with_(common_strength=1.0).to_json()
    assert repr(cfg.with_(common_strength=1.0)) == repr(cfg)


@pytest.mark.parametrize("value", [-0.5, float("nan"), float("inf"), "1"])
def test_a_bad_strength_is_refused(value):
    with pytest.raises(ConfigError, match="common strength"):
        Config(common_strength=value)
    with pytest.raises(ConfigError, match="common band"):
        Config(common_band="ultraviolet")


def test_bands_split_each_group_in_thirds():
    for width in (1, 2, 7, 16, 42, 44):
        half = width // 2
        bands = BANDS[:-1] if half > 1 else ("all",)
        got = sorted(i for b in bands for i in band_pairs(width, b))
        assert got == list(range(half)), width
    assert list(band_pairs(42, "high")) == list(range(0, 7)) and list(band_pairs(42, "low")) == list(range(14, 21))


@pytest.mark.parametrize("strength", [0.25, 1.0, 4.0])
@pytest.mark.parametrize("band", BANDS)
def test_the_knob_sets_the_common_share_before_rope(strength, band):
    cfg = Config.for_model("wan2.1", 64, grid=(3, 6, 6), common_strength=strength, common_band=band)
    w = proxy_workload(cfg, seed=2)
    for op in ("q", "k"):
        share = common_share(derotate(w[op], cfg), cfg)
        # The content is centred, so its mean adds nothing: the share is s / (1 + s).
        assert share["all"] == pytest.approx(strength / (1 + strength), abs=1e-4)
        for g, found in share["groups"].items():
            for b, v in found["bands"].items():
                if band not in ("all", b) and v is not None:
                    assert v < 1e-6, (op, g, b, v)       # nothing common outside its band


def test_derotate_undoes_rope(rng):
    cfg = Config(partition=(6, 5, 9), grid=(2, 3, 4))
    x = rng.standard_normal((cfg.tokens, cfg.head_dim))
    assert np.allclose(derotate(rope(x, cfg, token_coords(cfg.grid)), cfg), x)


def test_structured_reuse_is_the_oracle_less_a_shuffled_one(rng, seed):
    cfg = Config(partition=(4, 4, 4), grid=(2, 4, 4))
    q = rng.integers(-128, 128, (cfg.tokens, cfg.head_dim)).astype(np.int8)
    k = rng.integers(-128, 128, (cfg.tokens, cfg.head_dim)).astype(np.int8)
    found = structured_reuse(q, k, cfg, seed)
    order = np.random.default_rng(seed).permutation(cfg.tokens)
    dense = dense_macs(cfg.tokens, cfg.tokens, cfg.head_dim)
    shuffled = 1 - oracle_macs(pair_reuse(q[order], cfg).states, pair_reuse(k[order], cfg).states) / dense
    assert found["shuffled"] == shuffled and found["seed"] == seed
    assert found["structured"] == pytest.approx(found["oracle"] - shuffled)


def _local_mass(q, k, cfg) -> float:
    """Mean attention of a query on the keys within one step of it along every axis."""
    s = q.astype(np.float64) @ k.T.astype(np.float64) / np.sqrt(cfg.head_dim)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    c = token_coords(cfg.grid)
    near = np.abs(c[:, None, :] - c[None, :, :]).max(axis=-1) <= 1
    return float((p * near).sum(axis=1).mean())


def test_the_mechanism_rises_with_the_strength():
    """Attention near the diagonal, the oracle and the structured reuse all rise
    with the strength of a common part that RoPE turns (band all), on noised
    content; on tokens with no order the structured reuse stays near 0."""
    pytest.importorskip("av")
    from golden.video import video_workload
    rows = []
    for s in (0.0, 0.25, 1.0, 4.0):
        cfg = Config.for_model("wan2.1", 128, grid=(4, 12, 12), common_strength=s, common_band="all")
        w = video_workload(cfg, "bikes", noise=0.9, seed=3)
        q, k = quantize(w["q"])[0], quantize(w["k"])[0]
        found = structure(q, k, cfg)["reuse"]
        rows.append((_local_mass(w["q"], w["k"], cfg), found["oracle"], found["structured"]))
        # Control: the same values with the tokens in a random order carry no structure to find.
        order = np.random.default_rng(7).permutation(cfg.tokens)
        assert abs(structure(q[order], k[order], cfg, seed=11)["reuse"]["structured"]) < 0.01
    print("local attention, oracle, structured:", rows)
    for column in range(3):
        values = [r[column] for r in rows]
        assert all(b > a for a, b in zip(values, values[1:])), (column, values)
    assert rows[-1][0] > 5 * rows[0][0] and rows[-1][2] > rows[0][2] + 0.01
