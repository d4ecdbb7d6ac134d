"""``kaleido quality``'s work: one denoising loop run three ways from the same
noise, so what reuse costs the model's output can be told from what int8 costs.

* **float**: the model as it is.
* **int8**: the products the arrays compute take int8 operands, as the arrays
  do: every attention's ``Q K^T`` and ``P V`` (each head's ``Q``, ``K``, ``V``
  quantized per tensor, video and text rows apart, the scores exact integers,
  the softmax in floating point), and with ``where="all"`` every linear layer of
  the transformer blocks (input and weight per tensor, the product exact).
* **reuse**: the int8 run with Kaleido's reuse on the video tokens' operands,
  through the golden model's own functions: ``Q~``, ``K~`` and ``V~`` by
  :func:`golden.pair_reuse` in self-attention, and with ``where="all"`` every
  linear layer's input ``X~`` by :func:`golden.window_reuse`. Text tokens and
  cross-attention's text keys run dense, as on the chip.

The int8 and reuse runs share one code path, so where the thresholds reuse
nothing the two are equal bit for bit. The reuse run's operation reduction is
measured on its own int8 operands with the estimate's own per-head model
(:func:`sim.chip.estimate.shard_work`, :func:`sim.chip.reuse_where.reuse_where`),
so ``estimate --activations`` on the archive the run writes gives the same
figures.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np

from golden import Config, int_gemm, pair_reuse, quantize, window_reuse
from golden.archive import QKV, ArchiveWriter
from golden.attention import quality as compare
from sim.chip.activations import head_slices
from sim.chip.estimate import shard_work
from sim.chip.reuse_where import reuse_where
from sim.chip.vdits import flow_sigmas

from .families import Family
from .run import CaptureError, attention_kernel, prepared

__all__ = ["WHERE", "Arithmetic", "QualityRun", "run_loop", "measure_reduction", "quality_config", "prepared",
           "output_quality", "write_archive", "archive_manifest"]

#: Where the int8 and reuse runs change the model: attention's products, or every
#: linear layer of the blocks too (the paper's Fig. 20).
WHERE = ("attention", "all")


@dataclass(frozen=True)
class Arithmetic:
    """How one run computes the arrays' products, with int8 operands: ``cfg`` the
    reuse design point (None: int8 alone), ``where`` (:data:`WHERE`). A float
    run has none."""

    cfg: Config | None = None
    where: str = "attention"


@dataclass
class QualityRun:
    """One run's output: each step's velocity and the final latent (numpy), and
    for a reuse run the int8 operands its reduction is measured on
    (``{(step, layer): {"q"|"k"|"v": [(int8 [N, D], scale), ...] per head,
    role: (int8 [N, C], scale)}}``)."""

    velocities: list
    latent: np.ndarray
    operands: dict


def quality_config(family: Family, model, grid, window: int | None = None) -> Config:
    """The design point of the model's heads at ``grid``: the class's own RoPE
    split, the default thresholds (and ``window`` if given)."""
    cfg = Config(partition=family.partition(model), grid=tuple(grid))
    return cfg if window is None else cfg.with_(window=window)


def _rows(length: int, tokens: int, text: str) -> slice | None:
    """The video tokens' rows of a sequence of ``length``, None if it holds none
    as the hardware sees them (cross-attention's text keys)."""
    if length == tokens:
        return slice(0, tokens)
    if text == "first" and length > tokens:
        return slice(length - tokens, length)
    if text == "last" and length > tokens:
        return slice(0, tokens)
    return None


def _quantized(x: np.ndarray, rows: slice | None) -> tuple[np.ndarray, np.ndarray]:
    """int8 ``x`` [L, C] and each row's scale: the video rows per tensor (as
    ``capture`` quantizes them), the other rows per tensor apart."""
    q, s = np.empty(x.shape, np.int8), np.empty(x.shape[0])
    video = np.zeros(x.shape[0], bool)
    if rows is not None:
        video[rows] = True
    for part in (video, ~video):
        if part.any():
            q[part], s[part] = quantize(x[part])
    return q, s


class _Arrays:
    """The hooks that make a model's products int8 (and reused): installed for
    one forward pass at a time, recording the operands a reuse run measures."""

    def __init__(self, family: Family, model, tokens: int, arith: Arithmetic):
        self.family, self.tokens, self.arith = family, tokens, arith
        self.blocks = family.blocks(model)
        self.layer = None           # the block whose self-attention runs, if any
        self.seen: dict = {}
        self.roles = {id(lin): (i, role) for i, b in enumerate(self.blocks)
                      for role, lin in family.linears(b).items()}

    @contextlib.contextmanager
    def installed(self):
        handles = []
        for i, block in enumerate(self.blocks):
            attn = self.family.attention(block)
            handles.append(attn.register_forward_pre_hook(lambda m, a, i=i: setattr(self, "layer", i)))
            handles.append(attn.register_forward_hook(lambda m, a, o: setattr(self, "layer", None)))
            if self.arith.where == "all":
                for lin in block.modules():
                    if type(lin).__name__ == "Linear":
                        handles.append(lin.register_forward_hook(self._linear))

        def wrapped(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **kw):
            if is_causal or dropout_p or kw.get("enable_gqa"):
                raise CaptureError("quality: a causal, dropout or grouped-query attention is not an array's")
            return self._attention(query, key, value, attn_mask, scale)

        with attention_kernel(wrapped, handles):
            yield self

    def _attention(self, query, key, value, mask, scale):
        import torch

        q, k, v = (t.detach().to("cpu", torch.float64).numpy() for t in (query, key, value))
        b, heads, length, d = q.shape
        scale = 1 / math.sqrt(d) if scale is None else scale
        m = None if mask is None else mask.detach().to("cpu").numpy()
        self_attn = self.layer is not None and k.shape[2] == length
        qrows = _rows(length, self.tokens, self.family.text)
        krows = _rows(k.shape[2], self.tokens, self.family.text) if self_attn else None
        out = np.empty(q.shape[:3] + (v.shape[-1],))
        for n in range(b):
            for h in range(heads):
                qi, qs = _quantized(q[n, h], qrows if self_attn else None)
                ki, ks = _quantized(k[n, h], krows)
                vi, vs = _quantized(v[n, h], krows)
                if self_attn and krows is not None:
                    self._keep_qkv(h, qi[qrows], qs[qrows][0], ki[krows], ks[krows][0], vi[krows], vs[krows][0])
                    if self.arith.cfg is not None:
                        for x, rows in ((qi, qrows), (ki, krows), (vi, krows)):
                            x[rows] = pair_reuse(x[rows], self.arith.cfg).approx
                z = int_gemm(qi, ki) * np.outer(qs, ks) * scale
                if m is not None:
                    mh = np.broadcast_to(m, (b, heads, length, k.shape[2]))[n, h]
                    z = np.where(mh, z, -np.inf) if mh.dtype == bool else z + mh
                z -= z.max(axis=1, keepdims=True)
                p = np.exp(z)
                p /= p.sum(axis=1, keepdims=True)
                out[n, h] = p @ (vi * vs[:, None])
        return torch.from_numpy(out).to(query.device, query.dtype)

    def _keep_qkv(self, head, q, sq, k, sk, v, sv):
        kept = self.seen.setdefault(self.layer, {r: [] for r in QKV})
        if len(kept["q"]) == head:
            for role, pair in zip(QKV, ((q.copy(), sq), (k.copy(), sk), (v.copy(), sv))):
                kept[role].append(pair)

    def _linear(self, module, inputs, output):
        import torch

        x = inputs[0].detach().to("cpu", torch.float64).numpy()
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        # A sequence of one sample: its video rows reuse; a conditioning vector does not.
        rows = _rows(shape[-2], self.tokens, self.family.text) if len(shape) == 3 and shape[0] == 1 else None
        role = self.roles.get(id(module))
        xi, xs = _quantized(x, rows)
        w, sw = quantize(module.weight.detach().to("cpu", torch.float64).numpy())
        if rows is not None:
            if role is not None:
                self.seen.setdefault(role[0], {r: [] for r in QKV}).setdefault(role[1], (xi[rows].copy(), xs[rows][0]))
            cfg = self.arith.cfg
            if cfg is not None and shape[-1] % cfg.head_dim == 0:
                xi[rows] = window_reuse(xi[rows], cfg).approx
        y = int_gemm(xi, w) * (xs[:, None] * sw)
        if module.bias is not None:
            y = y + module.bias.detach().to("cpu", torch.float64).numpy()
        return torch.from_numpy(y.reshape(*shape[:-1], -1)).to(output.device, output.dtype)


def run_loop(family: Family, model, x0, noise, text, total_steps: int, tokens: int, arith: Arithmetic | None,
             progress=None) -> QualityRun:
    """The denoising loop (Euler steps on the model's own velocity) from
    ``(1 - sigma_0) x0 + sigma_0 noise``, with ``arith``'s products (None: float)."""
    sigmas = flow_sigmas(total_steps, family.flow_shift) + [0.0]
    latent = (1 - sigmas[0]) * x0 + sigmas[0] * noise
    velocities, operands = [], {}
    arrays = _Arrays(family, model, tokens, arith) if arith else None
    with arrays.installed() if arrays else contextlib.nullcontext():
        for i in range(total_steps):
            if arrays:
                arrays.seen = {}
            velocity = family.call(model, latent, sigmas[i], text)
            velocities.append(velocity.detach().to("cpu").double().numpy())
            if arrays:
                operands.update({(i, layer): kept for layer, kept in arrays.seen.items()})
            latent = latent + (sigmas[i + 1] - sigmas[i]) * velocity
            if progress:
                progress(i + 1, total_steps)
    return QualityRun(velocities, latent.detach().to("cpu").double().numpy(), operands)


def _head_operands(kept: dict, head: int, head_dim: int) -> tuple:
    (q, sq), (k, sk), (v, _) = kept["q"][head], kept["k"][head], kept["v"][head]
    inputs = {role: x for role, (x, _) in kept.items() if role not in QKV}
    return q, k, v, sq * sk / math.sqrt(head_dim), head_slices(inputs, head, head_dim) if inputs else None


def measure_reduction(run: QualityRun, cfg: Config) -> dict:
    """The reuse run's operation reduction, from its own int8 operands: per step
    and over the run, ``{op: {oracle, hardware}}`` (:func:`reuse_where`'s)."""
    results = []
    for (step, layer), kept in sorted(run.operands.items()):
        for head in range(len(kept["q"])):
            results.append(shard_work(cfg, (step, layer, head), _head_operands(kept, head, cfg.head_dim), None))
    where = reuse_where(results, cfg.tokens, cfg.head_dim)
    steps = where["by_step"]
    ops = sorted({op for v in steps.values() for op in v})
    total = {op: {kind: (None if any(v[op][kind] is None for v in steps.values() if op in v) else
                         float(np.mean([v[op][kind] for v in steps.values() if op in v])))
                  for kind in ("oracle", "hardware")} for op in ops}
    return {"by_step": steps, "total": total}


def write_archive(run: QualityRun, out: str, manifest: dict) -> None:
    """The reuse run's operands as an activation archive (what ``capture`` writes)."""
    with ArchiveWriter(out) as writer:
        for (step, layer), kept in sorted(run.operands.items()):
            for role in QKV:
                writer.add(step, layer, role, np.stack([x for x, _ in kept[role]]), [s for _, s in kept[role]])
            for role, (x, s) in sorted((r, v) for r, v in kept.items() if r not in QKV):
                writer.add(step, layer, role, x, [s])
        writer.finish(manifest)


def archive_manifest(family: Family, model, shape: dict, grid, total_steps: int, clip: str = "bikes", seed: int = 0,
                     dtype: str = "float32", model_path: str | None = None, run: str = "reuse") -> dict:
    """The manifest of a run's archive: ``capture``'s, every step captured."""
    import json

    sigmas = flow_sigmas(total_steps, family.flow_shift)
    return {"model": {"family": family.name, "class": family.cls,
                      "config": json.loads(json.dumps(dict(model.config), default=str)),
                      "weights": model_path or f"random (seed {seed})", "trained": bool(model_path)},
            "shape": shape, "grid": list(grid), "partition": list(family.partition(model)),
            "steps": [{"index": i, "sigma": s, "timestep": s * 1000.0} for i, s in enumerate(sigmas)],
            "total_steps": total_steps, "flow_shift": family.flow_shift, "layers": list(range(shape["layers"])),
            "heads": list(range(shape["heads"])), "clip": clip, "loop": f"denoise, kaleido quality's {run} run",
            "seed": seed, "text": "seeded random prompt embeddings", "dtype": dtype}


def output_quality(run: QualityRun, reference: QualityRun) -> dict:
    """PSNR and cosine of ``run`` against the float run: the final latent, and
    each step's transformer output."""
    latent = compare(reference.latent, run.latent)
    steps = [compare(r, v) for r, v in zip(reference.velocities, run.velocities)]
    return {"latent": {"psnr_db": latent["psnr_db"], "cosine": latent["cosine"]},
            "steps": [{"psnr_db": s["psnr_db"], "cosine": s["cosine"]} for s in steps]}
