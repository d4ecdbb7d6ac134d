"""The video transformers ``kaleido capture`` runs, one :class:`Family` each:
what it takes to build one, call it, and find the modules whose inputs the
hardware reads.

Every family is a real ``diffusers`` class run through its own code. What a
family knows is where things are in that code:

* the transformer blocks, in order (HunyuanVideo: its dual-stream blocks, then
  its single-stream ones);
* each block's self-attention module, and whether text tokens join its
  sequence before the video tokens (CogVideoX), after them (HunyuanVideo) or
  not at all (Wan2.1, whose text comes in through a cross-attention);
* each block's linear layers by role (:data:`golden.archive.LINEAR_ROLES`);
* how its latent is laid out and its timestep given;
* its RoPE split of a head (the partition the archive records).

``tiny`` configurations are random-weight models small enough for a test: two
blocks, two heads, a head wide enough that each channel group holds the
array's 2R channels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["Family", "FAMILIES", "family", "TINY_TEXT", "CaptureError", "folder_class"]

#: Text tokens of the random prompt a tiny model attends to.
TINY_TEXT = 8


class CaptureError(ValueError):
    """A capture that cannot go on (the message is one line)."""


def folder_class(model_path: str) -> tuple[str | None, str | None]:
    """The subfolder holding a pipeline's transformer (or None: the folder itself)
    and the ``diffusers`` class its ``config.json`` names (None where it names none)."""
    import json
    import os

    sub = "transformer" if os.path.isdir(os.path.join(model_path, "transformer")) else None
    config = os.path.join(model_path, sub or "", "config.json")
    try:
        with open(config) as fh:
            return sub, json.load(fh).get("_class_name")
    except (OSError, ValueError, AttributeError):
        return sub, None


@dataclass(frozen=True)
class Family:
    """One model class ``capture`` knows (see the module notes).

    Members
    -------
    name : str
        The name the command line takes (the chip model's name for its shape).
    cls : str
        The ``diffusers`` class.
    text : str
        Where text tokens sit in self-attention's sequence: ``"none"``,
        ``"first"`` or ``"last"``.
    tiny : dict
        The class's keyword arguments of a test-sized model.
    flow_shift : float
        The sampler's schedule shift (as the chip model's shapes have it).
    blocks : callable
        ``model -> [block, ...]`` in order.
    attention : callable
        ``block -> self-attention module``.
    linears : callable
        ``block -> {role: nn.Linear}``.
    call : callable
        ``(model, latent, sigma, text) -> velocity``: one forward pass.
    rope_split : callable
        ``model -> (t, y, x)``: a head's channels as the class's own RoPE splits them.
    text_dim : callable
        ``model -> width`` of the text embeddings it takes.
    text_tokens : int
        The released model's prompt length (a tiny model takes :data:`TINY_TEXT`).
    channels_first : bool
        Whether the latent is ``[B, C, F, H, W]`` (else ``[B, F, C, H, W]``).
    """

    name: str
    cls: str
    text: str
    tiny: dict
    flow_shift: float
    blocks: Callable
    attention: Callable
    linears: Callable
    call: Callable
    rope_split: Callable
    text_dim: Callable
    text_tokens: int
    channels_first: bool = True

    def load(self, model_path: str | None, seed: int):
        """The model: its weights from ``model_path`` (local files only, never the
        network), or the tiny configuration with seeded random weights."""

        import diffusers
        import torch

        # Its own notes (no `accelerate`, defaults taken) would break the one-line contract.
        diffusers.utils.logging.set_verbosity_error()
        cls = getattr(diffusers, self.cls)
        if model_path:
            sub, named = folder_class(model_path)
            if named is not None and named != self.cls:
                # Another family's weights would not fit this class: say whose they are.
                theirs = next((f.name for f in FAMILIES.values() if f.cls == named), None)
                raise CaptureError(f"--model-path {model_path} holds a {named}"
                                   f"{f' (--model {theirs})' if theirs else ''}, not --model {self.name}'s "
                                   f"{self.cls}")
            # diffusers loads a model that keeps some modules in float32 (Wan's) only
            # through accelerate's low-memory path, which the capture extra installs.
            model = cls.from_pretrained(model_path, subfolder=sub, local_files_only=True, torch_dtype=torch.float32)
        else:
            torch.manual_seed(seed)
            model = cls(**self.tiny)
        return model.eval()

    def shape(self, model, tiny: bool) -> dict:
        """The archive's ``shape``: layers, heads, widths and text tokens."""
        c = model.config
        heads, head_dim = c.num_attention_heads, c.attention_head_dim
        blocks = self.blocks(model)
        mlp = max(lin.out_features for lin in [self.linears(b).get("mlp1") for b in blocks] if lin is not None)
        return {"layers": len(blocks), "heads": heads, "head_dim": head_dim, "hidden": heads * head_dim,
                "mlp": mlp, "text_tokens": TINY_TEXT if tiny else self.text_tokens, "joint_text": self.text != "none"}

    def partition(self, model) -> tuple[int, int, int]:
        """The (t, y, x) channels of a head, as the class's own RoPE splits it."""
        return tuple(int(v) for v in self.rope_split(model))


def _feed_forward(ff) -> dict:
    # diffusers' FeedForward: net = [activation with its projection, dropout, linear, ...].
    return {"mlp1": ff.net[0].proj, "mlp2": ff.net[2]}


def _wan_call(model, latent, sigma, text):
    import torch
    return model(hidden_states=latent, timestep=torch.tensor([sigma * 1000.0]), encoder_hidden_states=text,
                 return_dict=False)[0]


def _cog_call(model, latent, sigma, text):
    import torch
    from diffusers.models.embeddings import get_3d_rotary_pos_embed

    c = model.config
    _, frames, _, h, w = latent.shape
    grid = (h // c.patch_size, w // c.patch_size)
    rope = None
    if c.use_rotary_positional_embeddings:
        # As the CogVideoX pipeline makes it, for a sample the size of the model's own.
        rope = get_3d_rotary_pos_embed(c.attention_head_dim, ((0, 0), grid), grid, frames)
    t = torch.tensor([int(round(sigma * 999))])
    return model(hidden_states=latent, encoder_hidden_states=text, timestep=t, image_rotary_emb=rope,
                 return_dict=False)[0]


def _hunyuan_call(model, latent, sigma, text):
    import torch
    c = model.config
    mask = torch.ones(text.shape[:2], dtype=torch.bool)
    pooled = torch.zeros(1, c.pooled_projection_dim)
    kwargs = {"guidance": torch.tensor([6.0 * 1000.0])} if c.guidance_embeds else {}
    return model(hidden_states=latent, timestep=torch.tensor([sigma * 1000.0]), encoder_hidden_states=text,
                 encoder_attention_mask=mask, pooled_projections=pooled, return_dict=False, **kwargs)[0]


def _cog_partition(model):
    d = model.config.attention_head_dim
    # get_3d_rotary_pos_embed: a quarter of the head for time, 3/8 each for height and width.
    return d // 4, d // 8 * 3, d // 8 * 3


def _wan_partition(model):
    r = model.rope
    return r.t_dim, r.h_dim, r.w_dim


def _hunyuan_blocks(model):
    return list(model.transformer_blocks) + list(model.single_transformer_blocks)


def _hunyuan_linears(block):
    out = {"qkv": block.attn.to_q}
    if hasattr(block, "ff"):                   # a dual-stream block
        out.update(out=block.attn.to_out[0], **_feed_forward(block.ff))
    else:                                       # single-stream: the MLP beside attention; its proj_out takes both
        out["mlp1"] = block.proj_mlp
    return out


FAMILIES = {
    "wan2.1": Family(
        "wan2.1", "WanTransformer3DModel", "none",
        dict(patch_size=(1, 2, 2), num_attention_heads=2, attention_head_dim=48, in_channels=16, out_channels=16,
             text_dim=32, freq_dim=32, ffn_dim=192, num_layers=2, cross_attn_norm=True, qk_norm="rms_norm_across_heads",
             rope_max_seq_len=64),
        5.0, lambda m: list(m.blocks), lambda b: b.attn1,
        lambda b: {"qkv": b.attn1.to_q, "out": b.attn1.to_out[0], "cross_q": b.attn2.to_q,
                   "cross_out": b.attn2.to_out[0], **_feed_forward(b.ffn)},
        call=_wan_call, rope_split=_wan_partition, text_dim=lambda m: m.config.text_dim, text_tokens=512),
    "cogvideox": Family(
        "cogvideox", "CogVideoXTransformer3DModel", "first",
        dict(num_attention_heads=2, attention_head_dim=64, in_channels=16, out_channels=16, time_embed_dim=32,
             text_embed_dim=32, num_layers=2, sample_width=16, sample_height=16, sample_frames=9, patch_size=2,
             max_text_seq_length=TINY_TEXT, use_rotary_positional_embeddings=True),
        1.0, lambda m: list(m.transformer_blocks), lambda b: b.attn1,
        lambda b: {"qkv": b.attn1.to_q, "out": b.attn1.to_out[0], **_feed_forward(b.ff)},
        call=_cog_call, rope_split=_cog_partition, text_dim=lambda m: m.config.text_embed_dim, text_tokens=226,
        channels_first=False),
    "hunyuanvideo": Family(
        "hunyuanvideo", "HunyuanVideoTransformer3DModel", "last",
        dict(in_channels=16, out_channels=16, num_attention_heads=2, attention_head_dim=64, num_layers=1,
             num_single_layers=1, num_refiner_layers=1, text_embed_dim=32, pooled_projection_dim=16,
             rope_axes_dim=(8, 28, 28), guidance_embeds=False),
        7.0, _hunyuan_blocks, lambda b: b.attn, _hunyuan_linears,
        call=_hunyuan_call, rope_split=lambda m: m.config.rope_axes_dim,
        text_dim=lambda m: m.config.text_embed_dim, text_tokens=256),
}


def family(name: str) -> Family:
    """A family by name (case-insensitive), or a one-line error naming the choices."""
    try:
        return FAMILIES[name.lower()]
    except KeyError:
        raise ValueError(f"capture knows no model {name!r}; it knows {', '.join(FAMILIES)}") from None
