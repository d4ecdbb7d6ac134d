"""``kaleido capture``'s work: a video transformer's denoising loop on a clip's
latent, with hooks that save what the hardware reads.

* **The latent.** The clip's frames on the token grid, through the same
  VAE-like latent as the ``video`` workload (:func:`golden.video.latent`), so a
  capture and the synthetic workload see the same clip.
* **The loop.** A flow-matching sampler over ``total_steps`` steps at the
  family's schedule shift (:func:`sim.chip.vdits.flow_sigmas`). ``denoise``
  (default): the latent starts as the clip noised to the first step's sigma,
  and each step moves it by the model's own velocity (an Euler step), as
  inference does. ``noised``: each step's input is the clip noised to that
  step's sigma, whatever the model predicts (what the ``video`` workload does:
  with random weights the fair side-by-side).
* **Q, K, V.** ``torch.nn.functional.scaled_dot_product_attention`` is wrapped
  while a captured block's self-attention runs, so each is taken exactly as the
  attention kernel receives it: after the projections, the norms and RoPE.
  Text tokens that join the sequence are cut away (they are dense on the chip).
* **Linear inputs.** A forward pre-hook on each role's ``nn.Linear`` takes its
  input, video tokens only.

Each tensor is quantized per tensor to int8 (:func:`golden.quantize`): Q, K and V
per head, a linear input whole. A NaN or infinity stops the capture.
"""

from __future__ import annotations

import contextlib
import json

import numpy as np

from golden import quantize
from golden.archive import QKV, ArchiveWriter
from golden.video import clip_path, latent, read_frames
from sim.chip.vdits import flow_sigmas

from .families import CaptureError, Family

__all__ = ["CaptureError", "capture", "clip_latent", "placed", "prepared", "video_tokens", "attention_kernel"]


def clip_latent(clip: str, grid: tuple[int, int, int], family: Family):
    """The clip's latent for a ``grid`` of tokens, as the family's model takes it."""
    import torch


    t, h, w = grid
    frames = read_frames(clip_path(clip), 4 * t, 16 * h, 16 * w)
    lat = torch.from_numpy(latent(frames).astype(np.float32))         # [T, 2H, 2W, 16]
    lat = lat.permute(3, 0, 1, 2).unsqueeze(0)                          # [1, 16, T, 2H, 2W]
    return lat if family.channels_first else lat.permute(0, 2, 1, 3, 4)


def video_tokens(x, tokens: int, text: str):
    """The video tokens of a sequence (its second-to-last axis) that may hold text."""
    if text == "first":
        return x[..., x.shape[-2] - tokens:, :]
    return x[..., :tokens, :]


def _checked(name: str, x) -> np.ndarray:
    a = x.detach().to("cpu").float().numpy()
    if not np.isfinite(a).all():
        raise CaptureError(f"{name} has NaN or infinite values; nothing was written")
    return a


@contextlib.contextmanager
def attention_kernel(replacement, handles=()):
    """torch's attention kernel (``F.scaled_dot_product_attention``, which every
    family's attention calls) replaced by ``replacement`` while the block runs;
    after it, the kernel is torch's again and the hooks ``handles`` are removed."""
    import torch.nn.functional as F

    original, F.scaled_dot_product_attention = F.scaled_dot_product_attention, replacement
    try:
        yield
    finally:
        F.scaled_dot_product_attention = original
        for h in handles:
            h.remove()


class _Hooks:
    """The hooks of one capture: which block runs, and what it saw."""

    def __init__(self, family: Family, model, tokens: int, layers, heads):
        self.family, self.tokens, self.heads = family, tokens, list(heads)
        self.blocks = family.blocks(model)
        self.layers = list(layers)
        self.current = None
        self.seen: dict = {}
        self.on = False

    @contextlib.contextmanager
    def installed(self):
        import torch.nn.functional as F

        handles = []
        sdpa = F.scaled_dot_product_attention
        for layer in self.layers:
            attn = self.family.attention(self.blocks[layer])
            handles.append(attn.register_forward_pre_hook(lambda m, a, layer=layer: self._enter(layer)))
            handles.append(attn.register_forward_hook(lambda m, a, o: self._enter(None)))
            for role, lin in self.family.linears(self.blocks[layer]).items():
                handles.append(lin.register_forward_pre_hook(
                    lambda m, a, layer=layer, role=role: self._linear(layer, role, a[0])))

        def wrapped(query, key, value, *args, **kwargs):
            if self.on and self.current is not None and (self.current, "q") not in self.seen:
                for role, x in zip(QKV, (query, key, value)):
                    x = video_tokens(x[0], self.tokens, self.family.text)          # [heads, N, D]
                    self.seen[(self.current, role)] = _checked(f"layer {self.current} {role}", x[self.heads])
            return sdpa(query, key, value, *args, **kwargs)

        with attention_kernel(wrapped, handles):
            yield self

    def _enter(self, layer):
        self.current = layer

    def _linear(self, layer: int, role: str, x) -> None:
        if self.on and (layer, role) not in self.seen:
            self.seen[(layer, role)] = _checked(f"layer {layer} {role} input", video_tokens(x[0], self.tokens,
                                                                                           self._text(role)))

    def _text(self, role: str) -> str:
        # Cross-attention's inputs are the video tokens alone; self-attention's and
        # the MLP's carry the text where the family joins it.
        return "none" if role.startswith("cross") else self.family.text


def placed(device: str, dtype: str):
    """torch's device and dtype of those names, or a :class:`CaptureError` saying
    why this machine has no such device or torch no such floating-point type."""
    import torch

    kind = getattr(torch, dtype, None)
    if not isinstance(kind, torch.dtype) or not kind.is_floating_point:
        raise CaptureError(f"unknown dtype {dtype!r}; choose float32, bfloat16 or float16")
    try:
        place = torch.device(device)
    except RuntimeError as exc:
        raise CaptureError(f"device {device!r}: {str(exc).splitlines()[0]}") from None
    available = {"cuda": torch.cuda.is_available, "mps": lambda: torch.backends.mps.is_available()}
    if place.type in available and not available[place.type]():
        raise CaptureError(f"device {device!r}: this machine's torch has no {place.type.upper()} device; "
                           f"run on --device cpu")
    if place.type == "cuda" and place.index is not None and place.index >= torch.cuda.device_count():
        raise CaptureError(f"device {device!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return place, kind


def prepared(family: Family, grid, clip: str, model_path: str | None, seed: int, device: str, dtype: str):
    """The model, its shape, and the loop's inputs (the clip's latent, the noise,
    the prompt) on ``device``: the noise and the prompt drawn on the CPU, so
    they are the same on every device."""
    import torch

    place, kind = placed(device, dtype)
    torch.set_grad_enabled(False)
    model = family.load(model_path, seed).to(place, kind)
    shape = family.shape(model, tiny=model_path is None)
    x0 = clip_latent(clip, grid, family)
    gen = torch.Generator().manual_seed(seed)
    noise = torch.randn(x0.shape, generator=gen)
    text = torch.randn((1, shape["text_tokens"], family.text_dim(model)), generator=gen)
    x0, noise, text = (t.to(place, kind) for t in (x0, noise, text))
    return model, shape, x0, noise, text


def capture(family: Family, out: str, grid: tuple[int, int, int], total_steps: int, steps: list[int],  # noqa: PLR0913
            layers: list[int] | None, heads: list[int] | None, clip: str, loop: str = "denoise",
            model_path: str | None = None, seed: int = 0, progress=None, device: str = "cpu",
            dtype: str = "float32") -> dict:
    """Run the loop and write the archive at ``out``; the manifest is returned.
    ``layers`` or ``heads`` None: every one. ``device`` and ``dtype`` are
    torch's (a real model wants ``cuda`` and ``bfloat16``); the noise and the
    prompt are drawn on the CPU, so they are the same on every device."""


    if loop not in ("denoise", "noised"):
        raise CaptureError(f"unknown loop {loop!r}; choose denoise or noised")
    if not steps or min(steps) < 0 or max(steps) >= total_steps:
        raise CaptureError(f"captured steps {steps} must lie within the {total_steps} steps")
    model, shape, x0, noise, text = prepared(family, grid, clip, model_path, seed, device, dtype)
    place = x0.device
    layers = list(range(shape["layers"])) if layers is None else layers
    heads = list(range(shape["heads"])) if heads is None else heads
    for what, vals, top in (("--layers", layers, shape["layers"]), ("--heads", heads, shape["heads"])):
        if not vals or min(vals) < 0 or max(vals) >= top:
            raise CaptureError(f"{what} {','.join(map(str, vals))}: the model has {top} (0 to {top - 1})")
    tokens = int(np.prod(grid))
    sigmas = flow_sigmas(total_steps, family.flow_shift) + [0.0]
    hooks = _Hooks(family, model, tokens, layers, heads)
    captured = []
    latent = (1 - sigmas[0]) * x0 + sigmas[0] * noise
    with ArchiveWriter(out) as writer, hooks.installed(), place:
        last = max(steps)
        for i in range(last + 1):
            if loop == "noised":
                latent = (1 - sigmas[i]) * x0 + sigmas[i] * noise
                if i not in steps:
                    continue
            hooks.on, hooks.seen = i in steps, {}
            velocity = family.call(model, latent, sigmas[i], text)
            if i in steps:
                _save(writer, hooks, i, layers, heads)
                captured.append({"index": i, "sigma": sigmas[i], "timestep": sigmas[i] * 1000.0})
            latent = latent + (sigmas[i + 1] - sigmas[i]) * velocity
            if progress:
                progress(i + 1, last + 1)
        part = family.partition(model)
        manifest = {
            "model": {"family": family.name, "class": family.cls,
                      "config": json.loads(json.dumps(dict(model.config), default=str)),
                      "weights": model_path or f"random (seed {seed})", "trained": bool(model_path)},
            "shape": shape, "grid": list(grid), "partition": list(part), "steps": captured,
            "total_steps": total_steps, "flow_shift": family.flow_shift, "layers": layers, "heads": heads,
            "clip": clip, "loop": loop, "seed": seed, "text": "seeded random prompt embeddings",
            "dtype": dtype,
        }
        archive = writer.finish(manifest)
    return archive.manifest


def _save(writer: ArchiveWriter, hooks: _Hooks, step: int, layers, heads) -> None:
    for layer in layers:
        for role in QKV:
            if (layer, role) not in hooks.seen:
                raise CaptureError(f"layer {layer}'s self-attention never reached the attention kernel")
            per_head = [quantize(h) for h in hooks.seen[(layer, role)]]
            writer.add(step, layer, role, np.stack([q for q, _ in per_head]), [s for _, s in per_head])
        for (lay, role), x in sorted(hooks.seen.items()):
            if lay == layer and role not in QKV:
                q, s = quantize(x)
                writer.add(step, layer, role, q, [s])

