"""``capture`` on the tiny random-weight configurations of the three diffusers
classes: the archive is complete, and its Q, K and V equal an independent
forward pass that takes the projections' outputs with hooks of its own and
applies the norms and RoPE itself, bit for bit after quantization."""

import dataclasses
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("diffusers")

from golden import quantize  # noqa: E402
from golden.archive import LINEAR_ROLES, open_archive  # noqa: E402
from sim.capture import CaptureError, capture, clip_latent, family  # noqa: E402
from sim.capture.families import TINY_TEXT  # noqa: E402
from sim.chip.vdits import flow_sigmas  # noqa: E402

GRID = (3, 4, 4)
STEPS = 3
ROLES = {"wan2.1": set(LINEAR_ROLES), "cogvideox": {"qkv", "out", "mlp1", "mlp2"},
         "hunyuanvideo": {"qkv", "out", "mlp1", "mlp2"}}


@pytest.fixture(scope="module", params=sorted(ROLES))
def captured(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("cap") / request.param
    capture(family(request.param), str(out), GRID, STEPS, [0, 2], None, None, "bikes", loop="noised", seed=3)
    return request.param, open_archive(str(out))


def test_the_archive_holds_every_captured_input(captured):
    name, a = captured
    assert a.steps == [0, 2] and a.layers == [0, 1] and a.heads == [0, 1] and a.grid == GRID
    n, d = int(np.prod(GRID)), a.shape["head_dim"]
    assert a.partition == tuple(family(name).tiny.get("rope_axes_dim", a.partition))
    for step in a.steps:
        roles = set(a.roles(step, 0))
        assert roles == ROLES[name], roles
        q, sq, k, sk, v, sv = a.operands(step, 1, 1)
        assert q.shape == k.shape == v.shape == (n, d) and min(sq, sk, sv) > 0
        assert np.abs(q).max() == 127 or q.min() == -127         # per-tensor: the peak reaches 127
        x, _ = a.linear_input(step, 0, "mlp2")
        assert x.shape == (n, a.shape["mlp"])
    assert not a.trained and "random" in a.manifest["model"]["weights"]


def _wan_reference(model, latent, sigma, text):
    """Wan's self-attention Q, K, V computed apart from the capture: the
    projections' outputs by forward hooks, then norm, heads, and RoPE here."""
    got = {}
    hooks = [getattr(b.attn1, f"to_{r}").register_forward_hook(
        lambda m, a, o, r=r, i=i: got.setdefault((i, r), o)) for i, b in enumerate(model.blocks) for r in "qkv"]
    cos, sin = model.rope(latent)
    family("wan2.1").call(model, latent, sigma, text)
    for h in hooks:
        h.remove()

    def rope(x):                               # interleaved pairs rotated by the model's own angles
        x1, x2 = x[..., 0::2], x[..., 1::2]
        c, s = cos[..., 0::2], sin[..., 1::2]
        out = torch.empty_like(x)
        out[..., 0::2] = x1 * c - x2 * s
        out[..., 1::2] = x1 * s + x2 * c
        return out

    ref = {}
    for i, b in enumerate(model.blocks):
        q = b.attn1.norm_q(got[(i, "q")]).unflatten(2, (b.attn1.heads, -1))
        k = b.attn1.norm_k(got[(i, "k")]).unflatten(2, (b.attn1.heads, -1))
        v = got[(i, "v")].unflatten(2, (b.attn1.heads, -1))
        ref[i] = {"q": rope(q)[0].transpose(0, 1), "k": rope(k)[0].transpose(0, 1), "v": v[0].transpose(0, 1)}
    return ref


def test_wan_q_k_v_equal_an_independent_forward_pass(tmp_path):
    fam = family("wan2.1")
    out = tmp_path / "a"
    capture(fam, str(out), GRID, STEPS, [1], None, None, "bikes", loop="noised", seed=5)
    a = open_archive(str(out))
    torch.set_grad_enabled(False)
    model = fam.load(None, 5)
    x0 = clip_latent("bikes", GRID, fam)
    gen = torch.Generator().manual_seed(5)
    noise = torch.randn(x0.shape, generator=gen)
    text = torch.randn((1, 8, model.config.text_dim), generator=gen)
    sigma = flow_sigmas(STEPS, fam.flow_shift)[1]
    ref = _wan_reference(model, (1 - sigma) * x0 + sigma * noise, sigma, text)
    differ = 0
    for layer in (0, 1):
        for head in (0, 1):
            got = dict(zip("qkv", a.operands(1, layer, head)[0::2]))
            for r in "qkv":
                want, _ = quantize(ref[layer][r][head].numpy())
                differ += int((want != got[r]).sum())
    assert differ == 0


# Where each class's attention processor joins the text: CogVideoX concatenates
# [text, video], HunyuanVideo [video, text] (written here, not read from the family).
TEXT_SIDE = {"cogvideox": "first", "hunyuanvideo": "last"}


@pytest.mark.parametrize("name", sorted(TEXT_SIDE))
def test_joint_models_keep_the_video_tokens(tmp_path, name):
    """V (no norm, no RoPE) against the V projection's own output: the text
    tokens the family joins first or last are the ones cut away."""
    fam = family(name)
    out = tmp_path / "a"
    capture(fam, str(out), GRID, 1, [0], [0], None, "bikes", loop="noised", seed=2)
    a = open_archive(str(out))
    model = fam.load(None, 2)
    got = {}
    attn = fam.attention(fam.blocks(model)[0])
    hook = attn.to_v.register_forward_hook(lambda m, i, o: got.setdefault("v", o))
    x0 = clip_latent("bikes", GRID, fam)
    gen = torch.Generator().manual_seed(2)
    noise = torch.randn(x0.shape, generator=gen)
    text = torch.randn((1, TINY_TEXT, fam.text_dim(model)), generator=gen)
    with torch.no_grad():
        fam.call(model, noise, 1.0, text)          # sigma 1: the input is the noise
    hook.remove()
    v = got["v"][0]
    n = int(np.prod(GRID))
    if v.shape[0] != n:                             # the joint sequence: cut the text off its side
        v = v[-n:] if TEXT_SIDE[name] == "first" else v[:n]
    v = v.unflatten(1, (attn.heads, -1)).transpose(0, 1)
    for head in (0, 1):
        assert np.array_equal(a.operands(0, 0, head)[4], quantize(v[head].numpy())[0])


def test_nan_stops_the_capture_and_writes_nothing(tmp_path, monkeypatch):
    fam = family("wan2.1")
    real = type(fam).load

    def poisoned(self, path, seed):
        model = real(self, path, seed)
        with torch.no_grad():
            model.blocks[1].attn1.to_out[0].weight.fill_(float("nan"))
        return model
    monkeypatch.setattr(type(fam), "load", poisoned)
    with pytest.raises(CaptureError, match="NaN or infinite"):
        capture(fam, str(tmp_path / "a"), GRID, 2, [1], None, None, "bikes")
    assert os.listdir(tmp_path) == []


def test_an_interrupted_capture_leaves_no_archive(tmp_path):
    def stop(done, total):
        if done == 2:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        capture(family("wan2.1"), str(tmp_path / "a"), GRID, 3, [0, 2], None, None, "bikes", progress=stop)
    assert os.listdir(tmp_path) == []


def test_the_steps_must_lie_in_the_loop(tmp_path):
    with pytest.raises(CaptureError, match="within the 3 steps"):
        capture(family("wan2.1"), str(tmp_path / "a"), GRID, 3, [3], None, None, "bikes")


def test_weights_from_a_local_folder(tmp_path):
    """A model saved in the diffusers layout loads from its folder (local files
    only) and captures what the same weights captured in memory did."""
    fam = family("hunyuanvideo")
    fam.load(None, 4).save_pretrained(str(tmp_path / "model" / "transformer"))
    capture(fam, str(tmp_path / "real"), GRID, 1, [0], None, [0], "bikes", model_path=str(tmp_path / "model"))
    # Weights from a folder are a released model's: its prompt is the released length.
    assert open_archive(str(tmp_path / "real")).shape["text_tokens"] == fam.text_tokens == 256
    # With the tiny prompt length, the same weights from the folder and from memory capture alike.
    short = dataclasses.replace(fam, text_tokens=TINY_TEXT)
    capture(short, str(tmp_path / "a"), GRID, 1, [0], None, None, "bikes", model_path=str(tmp_path / "model"), seed=4)
    capture(short, str(tmp_path / "b"), GRID, 1, [0], None, None, "bikes", seed=4)
    a, b = open_archive(str(tmp_path / "a")), open_archive(str(tmp_path / "b"))
    assert a.trained and not b.trained
    for layer in (0, 1):
        ours, theirs = a.operands(0, layer, 1), b.operands(0, layer, 1)
        # The same weights: the loaded copy's memory layout may order a matmul's
        # sums differently, moving a float by its last bits, so a value that sits
        # on a rounding boundary may land one code away; nothing more.
        for x, y in zip(ours[0::2], theirs[0::2]):
            diff = np.abs(x.astype(int) - y.astype(int))
            assert diff.max() <= 1 and (diff > 0).mean() < 1e-2
        assert ours[1::2] == pytest.approx(theirs[1::2], rel=1e-6)


@pytest.mark.parametrize("name", ["wan2.1", "cogvideox", "hunyuanvideo"])
def test_every_family_captures_from_a_saved_folder(tmp_path, name):
    """`kaleido capture --model-path DIR` on a model saved with save_pretrained, for
    every family (Wan keeps modules in float32, which diffusers loads only through
    accelerate), with the very weights that were saved."""
    import torch

    fam = family(name)
    saved = fam.load(None, 4)
    saved.save_pretrained(str(tmp_path / "model" / "transformer"))
    loaded = fam.load(str(tmp_path / "model"), 0)
    assert all(torch.equal(a, b) for a, b in zip(saved.state_dict().values(), loaded.state_dict().values()))
    short = dataclasses.replace(fam, text_tokens=TINY_TEXT)
    capture(short, str(tmp_path / "a"), GRID, 1, [0], [0], [0], "bikes", model_path=str(tmp_path / "model"))
    assert open_archive(str(tmp_path / "a")).trained


def test_a_device_the_machine_lacks_is_one_line(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    for device in ("cuda", "cuda:7"):
        with pytest.raises(CaptureError, match=rf"device '{device}': this machine's torch has no CUDA device"):
            capture(family("wan2.1"), str(tmp_path / "a"), GRID, 1, [0], None, None, "bikes", device=device)
    assert not (tmp_path / "a").exists()
