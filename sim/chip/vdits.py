"""The shapes of the video diffusion transformers the paper evaluates, from their
published configurations, and the token grid each makes of a video.

These are the models' *shapes* only: layers, heads, widths, sampling steps and
how a video becomes tokens. The tensors this project runs through them are its
own workloads (:mod:`golden.workload`, :mod:`golden.video`), never the models'
activations.

A video of ``F`` frames of ``H x W`` pixels becomes, through a causal 3-D VAE
that keeps the first frame and then folds 4 frames and 8x8 pixels into one
latent position, ``(F - 1) / 4 + 1`` latent frames of ``H/8 x W/8``; the
transformer's ``1 x 2 x 2`` patch embedding then makes one token of each
``2 x 2`` latent pixels. All four models share that chain.

Sources (each model's config, as released):

* **Wan2.1 14B**: ``wan/configs/wan_t2v_14B.py`` and ``shared_config.py`` of
  github.com/Wan-Video/Wan2.1 (dim 5120, ffn_dim 13824, 40 heads, 40 layers,
  patch (1, 2, 2), vae_stride (4, 8, 8), text_len 512, 50 sampling steps with
  classifier-free guidance); 480p is 832x480 and 720p 1280x720, 81 frames
  (``generate.py``'s SIZE_CONFIGS and frame_num).
* **HunyuanVideo** (13B): ``hyvideo/modules/models.py``, HYVideo-T/2 of
  github.com/Tencent/HunyuanVideo (hidden_size 3072, 24 heads, 20 double- and
  40 single-stream blocks, mlp_width_ratio 4, rope_dim_list [16, 56, 56], text
  length 256 joined to the video tokens); 129 frames, 720p 1280x720 and 480p
  848x480 (its README's resolution table), 50 steps with embedded guidance.
* **CogVideoX-5B**: ``transformer/config.json`` of THUDM/CogVideoX-5b (48 heads
  of 64, 42 layers, patch 2, temporal compression 4, 226 text tokens joined to
  the video tokens, 4x feed-forward); 49 frames of 720x480, 50 steps with
  classifier-free guidance. It has no 720p setting.
* **Samplers**: Wan2.1 and HunyuanVideo sample by flow matching with a shifted
  schedule (Wan2.1's ``sample_shift`` 5.0, HunyuanVideo's ``--flow-shift`` 7.0);
  CogVideoX samples by DDIM, for which a plain linear schedule (shift 1) stands
  in here; TurboDiffusion keeps Wan2.1's shift.
* **TurboDiffusion**: Wan2.1 14B distilled by rCM to 4 sampling steps without
  guidance (github.com/thu-ml/TurboDiffusion, arXiv 2512.16093; the paper under
  study runs it at 4 steps). Its sparse-linear attention is not modelled:
  attention here is dense, as the paper's accelerator computes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["VDiT", "VDITS", "flow_sigmas", "RESOLUTIONS", "VAE_STRIDE", "PATCH", "vdit", "token_grid", "VDiTError"]

#: Frames, height and width folded into one latent position (t, y, x).
VAE_STRIDE = (4, 8, 8)

#: Latent positions folded into one token (t, y, x).
PATCH = (1, 2, 2)

#: The resolutions a model can be asked for.
RESOLUTIONS = ("480p", "720p")


class VDiTError(ValueError):
    """A model or resolution this module does not know."""


@dataclass(frozen=True)
class VDiT:
    """One model's shape.

    Members
    -------
    name : str
        The name the command line takes; also :data:`golden.config.MODELS`' key
        for its RoPE split of the head dimension.
    layers : int
        Transformer blocks, each with one self-attention (the video tokens, and
        the text tokens where ``joint_text``) and one MLP.
    heads, head_dim : int
        Attention heads per block and channels per head.
    hidden : int
        The model width (``heads * head_dim``).
    mlp : int
        The MLP's inner width.
    steps : int
        Denoising steps of the default sampler.
    passes_per_step : int
        Forward passes per step: 2 with classifier-free guidance, else 1.
    text_tokens : int
        Text tokens: joined to the video tokens in self-attention when
        ``joint_text``, else attended by a cross-attention per block.
    joint_text : bool
        Whether the text tokens join self-attention.
    video : dict
        ``resolution -> (frames, height, width)`` in pixels.
    flow_shift : float
        The shift of the sampler's flow-matching schedule (:func:`flow_sigmas`).
    partition : (int, int, int) or None
        A head's (t, y, x) channels where the model's own RoPE says so (an
        activation archive's model); None: ``name``'s split of ``head_dim``.
    """

    name: str
    layers: int
    heads: int
    head_dim: int
    hidden: int
    mlp: int
    steps: int
    passes_per_step: int
    text_tokens: int
    joint_text: bool
    video: dict = field(default_factory=dict)
    flow_shift: float = 1.0
    partition: tuple | None = None

    def __post_init__(self):
        if self.heads * self.head_dim != self.hidden:
            raise VDiTError(f"{self.name}: {self.heads} heads of {self.head_dim} are not {self.hidden} wide")

    def grid(self, resolution: str) -> tuple[int, int, int]:
        """The token grid ``(T, H, W)`` of a video at ``resolution``."""
        if resolution not in self.video:
            raise VDiTError(f"{self.name} has no {resolution} setting; it has "
                            f"{', '.join(self.video) or 'none'}")
        return token_grid(*self.video[resolution])

    def tokens(self, resolution: str) -> int:
        t, h, w = self.grid(resolution)
        return t * h * w


def token_grid(frames: int, height: int, width: int) -> tuple[int, int, int]:
    """Tokens along t, y and x of ``frames`` frames of ``height x width`` pixels:
    the causal VAE keeps the first frame and folds the rest 4 to 1, then the
    patch embedding folds 2x2 latent pixels."""
    st, sy, sx = VAE_STRIDE
    pt, py, px = PATCH
    if frames < 1 or (frames - 1) % st or height % (sy * py) or width % (sx * px):
        raise VDiTError(f"a {frames}x{height}x{width} video does not fold into whole tokens")
    return ((frames - 1) // st + 1) // pt, height // (sy * py), width // (sx * px)


_WAN_VIDEO = {"480p": (81, 480, 832), "720p": (81, 720, 1280)}

VDITS = {
    "wan2.1": VDiT("wan2.1", layers=40, heads=40, head_dim=128, hidden=5120, mlp=13824, steps=50,
                   passes_per_step=2, text_tokens=512, joint_text=False, video=_WAN_VIDEO, flow_shift=5.0),
    "hunyuanvideo": VDiT("hunyuanvideo", layers=60, heads=24, head_dim=128, hidden=3072, mlp=12288, steps=50,
                         passes_per_step=1, text_tokens=256, joint_text=True,
                         video={"480p": (129, 480, 848), "720p": (129, 720, 1280)}, flow_shift=7.0),
    "cogvideox": VDiT("cogvideox", layers=42, heads=48, head_dim=64, hidden=3072, mlp=12288, steps=50,
                      passes_per_step=2, text_tokens=226, joint_text=True, video={"480p": (49, 480, 720)},
                      flow_shift=1.0),
    "turbodiffusion": VDiT("turbodiffusion", layers=40, heads=40, head_dim=128, hidden=5120, mlp=13824, steps=4,
                           passes_per_step=1, text_tokens=512, joint_text=False, video=_WAN_VIDEO, flow_shift=5.0),
}


def flow_sigmas(steps: int, shift: float) -> list[float]:
    """The noise level ``sigma`` at each of ``steps`` denoising steps of a shifted
    flow-matching sampler: ``s`` falls evenly from 1 towards 0 and
    ``sigma = shift s / (1 + (shift - 1) s)``, so a larger shift spends more steps
    at high noise. A step's latent is ``(1 - sigma) x + sigma eps``."""
    if steps < 1 or shift <= 0:
        raise VDiTError(f"need steps >= 1 and shift > 0, got {steps} and {shift}")
    return [shift * s / (1 + (shift - 1) * s) for s in (1 - i / steps for i in range(steps))]


def vdit(name: str) -> VDiT:
    """A model by name (case-insensitive), or a one-line error naming the choices."""
    try:
        return VDITS[name.lower()]
    except KeyError:
        raise VDiTError(f"unknown model {name!r}; choose one of {', '.join(VDITS)}") from None
