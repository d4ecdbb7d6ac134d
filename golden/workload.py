"""Workloads: quantization, the ``.npy``/``.npz`` loader, and a proxy video workload."""

from __future__ import annotations

import math
import os
from typing import NamedTuple

import numpy as np

from .config import Config
from .rope import GROUPS, band_pairs

__all__ = ["Operand", "WorkloadError", "quantize", "load_operand", "proxy_workload",
           "embed_tokens", "token_common", "token_coords", "rope", "INT8_SCALE", "MASSIVE_CHANNELS"]

#: Scale assumed for operands that arrive already as int8: the codes span ±1.
INT8_SCALE = 1.0 / 127


class WorkloadError(ValueError):
    """An operand that cannot be used; the message is meant for a user."""


class Operand(NamedTuple):
    """An int8 operand ``[N, D]`` with its per-tensor scale."""

    data: np.ndarray
    scale: float
    quantized: bool          # True when the file held floats that were quantized here


def quantize(x: np.ndarray) -> tuple[np.ndarray, float]:
    """Per-tensor symmetric int8: ``s = max|x| / 127``, ``q = clip(round(x/s), -128, 127)``."""
    x = np.asarray(x, dtype=np.float64)
    peak = float(np.max(np.abs(x))) if x.size else 0.0
    s = peak / 127 if peak > 0 else 1.0
    return np.clip(np.round(x / s), -128, 127).astype(np.int8), s


def _read(path: str) -> np.ndarray:
    # PATH.npz:key picks one array of an archive; a lone array needs no key.
    # The key is whatever follows the last colon, when the path without it names a file.
    key = None
    if not os.path.exists(path) and ":" in path:
        base, tail = path.rsplit(":", 1)
        if os.path.isfile(base) and tail:
            path, key = base, tail
    if not path:
        raise WorkloadError("an empty file name")
    if os.path.isdir(path):
        raise WorkloadError(f"{path}: is a folder, not an .npy/.npz file")
    if not os.path.exists(path):
        raise WorkloadError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise WorkloadError(f"{path}: is not a regular file (a device, a pipe or a socket), not an .npy/.npz file")
    # numpy takes a file without its header for a pickle, and then says so: read the
    # header first, so a text file is called what it is.
    try:
        with open(path, "rb") as f:
            head = f.read(6)
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot be read ({exc.strerror})") from None
    if head != b"\x93NUMPY" and not head.startswith(b"PK"):
        raise WorkloadError(f"{path}: not a NumPy .npy or .npz file (it has neither's header)")
    try:
        loaded = np.load(path, allow_pickle=False)
    except Exception as exc:                      # numpy raises several types here
        why = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        if "allow_pickle" in why:
            why = "it holds Python objects, not numbers"
        raise WorkloadError(f"{path}: not a readable .npy/.npz file ({why})") from None
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            names = list(loaded.files)
            if key is None:
                if len(names) != 1:
                    raise WorkloadError(
                        f"{path}: archive holds {len(names)} arrays ({', '.join(names) or 'none'}); "
                        f"name one as {path}:KEY")
                key = names[0]
            if key not in names:
                raise WorkloadError(f"{path}: no array {key!r} (has {', '.join(names)})")
            return loaded[key]
    if key is not None:
        raise WorkloadError(f"{path}: a key was given but the file is not an .npz archive")
    return loaded


def load_operand(path: str, cfg: Config | None = None, name: str = "operand", shape: str | None = None) -> Operand:
    """Load an operand file as int8 ``[N, D]``.

    Accepts ``[N, D]`` or ``[T, H, W, D]`` arrays. Integers must fit int8 and are
    taken as codes of scale :data:`INT8_SCALE`; floats are quantized per tensor
    (the returned ``quantized`` flag tells the caller to say so). With ``cfg``
    the shape is checked against its grid and head dimension. ``shape`` names a
    plain matrix's axes (``"[C, O]"``): then only a 2-D array is taken.
    """
    try:
        x = _read(path)
    except WorkloadError as exc:
        raise WorkloadError(f"{name} {exc}") from None
    if shape is not None and x.ndim != 2:       # a weight matrix: no token grid to fold
        raise WorkloadError(f"{name} {path}: shape {x.shape} is not a matrix {shape}")
    if x.ndim == 4:
        if cfg is not None and tuple(x.shape[:3]) != cfg.grid:
            raise WorkloadError(f"{name} {path}: grid {tuple(x.shape[:3])} differs from {cfg.grid}")
        x = x.reshape(-1, x.shape[-1])
    if x.ndim != 2:
        raise WorkloadError(f"{name} {path}: shape {x.shape} is neither [N, D] nor [T, H, W, D]")
    if x.shape[0] == 0 or x.shape[1] == 0:
        raise WorkloadError(f"{name} {path}: empty array of shape {x.shape}")
    if cfg is not None:
        if x.shape[0] != cfg.tokens:
            T, H, W = cfg.grid
            raise WorkloadError(
                f"{name} {path}: {x.shape[0]} tokens, but grid {T}x{H}x{W} has {cfg.tokens}")
        if x.shape[1] != cfg.head_dim:
            raise WorkloadError(
                f"{name} {path}: {x.shape[1]} channels, but the partition sums to {cfg.head_dim}")
    if np.issubdtype(x.dtype, np.floating):
        if not np.all(np.isfinite(x)):
            raise WorkloadError(f"{name} {path}: holds NaN or infinite values")
        q, s = quantize(x)
        return Operand(q, s, True)
    if np.issubdtype(x.dtype, np.integer) and x.dtype != np.uint64:
        if x.size and (x.min() < -128 or x.max() > 127):
            raise WorkloadError(f"{name} {path}: integer values outside int8 [{x.min()}, {x.max()}]")
        return Operand(x.astype(np.int8), INT8_SCALE, False)
    raise WorkloadError(f"{name} {path}: unsupported dtype {x.dtype}")


# -- proxy workload ------------------------------------------------------------------------

def _photo() -> np.ndarray:
    import matplotlib.cbook
    import matplotlib.image

    with matplotlib.cbook.get_sample_data("grace_hopper.jpg") as f:
        img = matplotlib.image.imread(f, format="jpg")
    return img.astype(np.float64) / 255.0


def _bilinear(img: np.ndarray, ys: np.ndarray, xs: np.ndarray) -> np.ndarray:
    # Sample img [Hi, Wi, C] at float coordinates ys [h], xs [w] (clamped to the edge).
    Hi, Wi = img.shape[:2]
    ys = np.clip(ys, 0, Hi - 1)
    xs = np.clip(xs, 0, Wi - 1)
    y0 = np.minimum(np.floor(ys).astype(int), Hi - 2)
    x0 = np.minimum(np.floor(xs).astype(int), Wi - 2)
    fy = (ys - y0)[:, None, None]
    fx = (xs - x0)[None, :, None]
    a = img[y0][:, x0]
    b = img[y0][:, x0 + 1]
    c = img[y0 + 1][:, x0]
    d = img[y0 + 1][:, x0 + 1]
    return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy


def rope(x: np.ndarray, cfg: Config, coords: np.ndarray) -> np.ndarray:
    """3-D RoPE of ``x [N, D]`` at token ``coords [N, 3]`` (t, y, x): each group rotates
    its channel pairs by its own coordinate, frequencies ``10000**(-2i/Dg)``."""
    out = x.copy()
    for axis, name in enumerate(GROUPS):
        sl = cfg.group_slices[name]
        dg = sl.stop - sl.start
        half = dg // 2                     # an odd group leaves its last channel unrotated
        if half == 0:
            continue
        freq = 10000.0 ** (-2 * np.arange(half) / dg)
        ang = coords[:, axis:axis + 1] * freq[None, :]          # [N, half]
        a = x[:, sl.start:sl.start + 2 * half:2]
        b = x[:, sl.start + 1:sl.start + 2 * half:2]
        out[:, sl.start:sl.start + 2 * half:2] = a * np.cos(ang) - b * np.sin(ang)
        out[:, sl.start + 1:sl.start + 2 * half:2] = a * np.sin(ang) + b * np.cos(ang)
    return out


def proxy_workload(cfg: Config, patch: int = 4, token_px: float = 6.0, pan: float = 2.0,
                   zoom: float = 0.01, seed: int | None = None) -> dict:
    """Q, K, V (float ``[N, D]``) of a **proxy** video workload.

    This is a proxy, not a video diffusion transformer's activations: a real
    photograph (matplotlib's ``grace_hopper.jpg``) is panned by ``pan`` pixels
    and zoomed by ``zoom`` per frame, cut into ``patch x patch`` pixel patches on
    the ``(T, H, W)`` grid, embedded by a fixed seeded random projection, mapped
    to Q, K and V by seeded random weights, and given 3-D RoPE per the
    partition. It has the spatio-temporal correlation that reuse feeds on, which
    is the property the figures need; absolute error figures will differ from a
    real model's. Each token covers ``token_px`` pixels of the photograph, so
    the grid's size decides how much of the picture the clip shows.
    """
    rng = np.random.default_rng(cfg.seed if seed is None else seed)
    T, H, W = cfg.grid
    img = _photo()
    Hi, Wi = img.shape[:2]
    frames = []
    for t in range(T):
        z = 1.0 + zoom * t
        ch = min(H * token_px, Hi - 2) / z
        cw = min(W * token_px, Wi - 2) / z
        cy, cx = Hi / 2, Wi / 2 - (T - 1) * pan / 2 + pan * t
        ys = cy - ch / 2 + (np.arange(H * patch) + 0.5) * ch / (H * patch)
        xs = cx - cw / 2 + (np.arange(W * patch) + 0.5) * cw / (W * patch)
        frames.append(_bilinear(img, ys, xs))
    video = np.stack(frames)                                       # [T, H*p, W*p, 3]
    tokens = video.reshape(T, H, patch, W, patch, 3).transpose(0, 1, 3, 2, 4, 5)
    tokens = tokens.reshape(T * H * W, patch * patch * 3) - 0.5
    return embed_tokens(tokens, cfg, rng)


def token_coords(grid: tuple[int, int, int]) -> np.ndarray:
    """Each token's ``(t, y, x)``, t-major (docs/concepts.md's token order), as float ``[N, 3]``."""
    T, H, W = grid
    t, y, xx = np.meshgrid(np.arange(T), np.arange(H), np.arange(W), indexing="ij")
    return np.stack([t.ravel(), y.ravel(), xx.ravel()], axis=1).astype(np.float64)


#: Hidden channels that carry the token-common part (the "massive activations"
#: of a trained DiT: a handful of channels, the same for every token).
MASSIVE_CHANNELS = 4

#: Frequencies of the sinusoidal timestep embedding that modulates them, as a
#: DiT's timestep embedder feeds its adaLN (timestep ``1000 * sigma``).
TIME_FREQUENCIES = 8


def _timestep_embedding(sigma: float) -> np.ndarray:
    t = 1000.0 * sigma
    freq = 10000.0 ** (-np.arange(TIME_FREQUENCIES) / TIME_FREQUENCIES)
    return np.concatenate([np.cos(t * freq), np.sin(t * freq)])


def _scaled(v: np.ndarray, energy: float) -> np.ndarray:
    norm = float(np.sum(v * v))
    return v * math.sqrt(energy / norm) if norm > 0 else v


def token_common(cfg: Config, rng: np.random.Generator, sigma: float, x: np.ndarray, q: np.ndarray,
                 k: np.ndarray) -> dict:
    """The token-common part of the hidden state ``x`` and of ``q`` and ``k``
    (before RoPE): ``{"x": [C], "q": [D], "k": [D]}``, each one vector shared by
    every token, of ``cfg.common_strength`` times the mean token's energy of the
    content it joins.

    :data:`MASSIVE_CHANNELS` hidden channels carry it, with amplitudes a fixed
    random map of the timestep embedding at ``sigma`` modulates (each within a
    factor of 3 of its base). ``W_q`` and ``W_k`` take those channels into
    ``cfg.common_band``'s channel pairs of every group (one random map, so that
    K's part lies along Q's), so only the pairs of that band carry Q's and K's
    common part. Draws from
    ``rng`` after everything else, so the content is the same at any strength.
    """
    D, C = q.shape[1], x.shape[1]
    channels = rng.choice(C, MASSIVE_CHANNELS, replace=False)
    base = rng.choice((-1.0, 1.0), MASSIVE_CHANNELS) * (1.0 + rng.random(MASSIVE_CHANNELS))
    modulation = rng.standard_normal((2 * TIME_FREQUENCIES, MASSIVE_CHANNELS)) / math.sqrt(TIME_FREQUENCIES)
    amplitude = base * (1.0 + 0.5 * np.tanh(_timestep_embedding(sigma) @ modulation))
    in_band = np.zeros(D, bool)
    for name in GROUPS:
        sl = cfg.group_slices[name]
        for i in band_pairs(sl.stop - sl.start, cfg.common_band):
            in_band[sl.start + 2 * i: sl.start + 2 * i + 2] = True
    # One map for both: K's common part sits in Q's pairs at Q's phases, so q_c . R(d) k_c, a sum of
    # cos(theta_i d) over the band's pairs, peaks at d = 0: attention favours near tokens, as a trained
    # model's does (the paper's Fig. 5). Independent maps would put that peak anywhere.
    shared = rng.standard_normal((MASSIVE_CHANNELS, D)) * in_band
    hidden = np.zeros(C)
    hidden[channels] = amplitude
    s = cfg.common_strength

    def energy(m):
        return s * float(np.mean(np.sum(m * m, axis=1)))
    return {"x": _scaled(hidden, energy(x)), "q": _scaled(amplitude @ shared, energy(q)),
            "k": _scaled(amplitude @ shared, energy(k))}


def embed_tokens(tokens: np.ndarray, cfg: Config, rng: np.random.Generator, sigma: float = 0.0) -> dict:
    """Q, K, V (float32 ``[N, D]``) of patch vectors ``tokens [N, P]``, t-major,
    and ``x``, the embedded tokens they are projected from (``[N, max(64, D)]``).

    The synthetic model every workload shares: a seeded random patch embedding
    to ``max(64, D)`` channels, normalized; seeded random ``W_q``, ``W_k``,
    ``W_v``; 3-D RoPE on Q and K per the partition (V has none, as in the
    models). ``rng`` is drawn from in a fixed order, so a seed fixes the model.

    With ``cfg.common_strength`` above 0 the hidden state carries a
    token-common part (:func:`token_common`, modulated by the step's noise
    level ``sigma``): ``x`` and so ``V`` have it, and Q and K have theirs in
    ``cfg.common_band`` before RoPE turns it with each token's position. At 0
    nothing is added and nothing more is drawn: the workloads of before.
    """
    D = cfg.head_dim
    model_dim = max(64, D)
    embed = rng.standard_normal((tokens.shape[1], model_dim)) / math.sqrt(tokens.shape[1])
    x = tokens @ embed
    x = (x - x.mean(axis=0)) / (x.std() + 1e-6)
    wq, wk, wv = (rng.standard_normal((model_dim, D)) / math.sqrt(model_dim) for _ in range(3))
    coords = token_coords(cfg.grid)
    q, k = x @ wq, x @ wk
    if cfg.common_strength > 0:
        common = token_common(cfg, rng, sigma, x, q, k)
        x, q, k = x + common["x"], q + common["q"], k + common["k"]
    q = rope(q, cfg, coords)
    k = rope(k, cfg, coords)
    return {"q": q.astype(np.float32), "k": k.astype(np.float32), "v": (x @ wv).astype(np.float32),
            "x": x.astype(np.float32)}
