"""How a head's channels split into groups: the groups, the grid axis each
reuses along, and each model's 3-D RoPE split of a head (docs/concepts.md,
"Channel groups and reuse directions")."""

from __future__ import annotations

from .errors import ConfigError

__all__ = ["GROUPS", "DIRECTIONS", "MODELS", "model_partition", "BANDS", "band_pairs"]

#: Channel groups in the order they sit inside a head (docs/concepts.md, "Channel groups and reuse directions").
GROUPS = ("t", "y", "x")

#: The grid axis (0 = t, 1 = y, 2 = x) along which each group reuses (paper §4.1):
#: t-channels reuse along x, y-channels along t, x-channels along y.
DIRECTIONS = {"t": 2, "y": 0, "x": 1}


#: RoPE frequency bands of a channel group, by name: its channel pairs ``i``
#: (frequency ``10000**(-2i/Dg)``, fastest first) split in thirds, ``high`` the
#: fastest-turning, ``low`` the slowest; ``all`` every pair.
BANDS = ("low", "mid", "high", "all")


def band_pairs(width: int, band: str) -> range:
    """The channel pairs of a group of ``width`` channels that ``band`` holds
    (pair ``i`` is channels ``2i`` and ``2i+1`` of the group). Thirds are cut at
    ``round(half/3)`` and ``round(2*half/3)``; a group of one pair is all bands."""
    half = width // 2
    cuts = (0, round(half / 3), round(2 * half / 3), half)
    if band == "all" or half <= 1:
        return range(half)
    index = {"high": 0, "mid": 1, "low": 2}[band]
    return range(cuts[index], cuts[index + 1])


def _hunyuan(d: int) -> tuple[int, int, int]:
    # rope_dim_list = [16, 56, 56] at d = 128: an eighth for time, the rest halved.
    t = d // 8
    y = (d - t) // 2
    return t, y, d - t - y


def _wan(d: int) -> tuple[int, int, int]:
    # Wan2.1's rope_params: d - 4*(d//6) for time, 2*(d//6) each for height and width.
    return d - 4 * (d // 6), 2 * (d // 6), 2 * (d // 6)


def _cogvideox(d: int) -> tuple[int, int, int]:
    # CogVideoX: d/4 for time, 3d/8 each for height and width.
    t = d // 4
    y = 3 * d // 8
    return t, y, d - t - y


MODELS = {
    "hunyuanvideo": _hunyuan,
    "wan2.1": _wan,
    "turbodiffusion": _wan,
    "cogvideox": _cogvideox,
}


def model_partition(model: str, head_dim: int) -> tuple[int, int, int]:
    """The ``(Dt, Dy, Dx)`` split a model's 3-D RoPE uses for ``head_dim`` channels."""
    try:
        rule = MODELS[model.lower()]
    except KeyError:
        raise ConfigError(
            f"unknown model {model!r}; choose one of {', '.join(sorted(MODELS))}") from None
    if head_dim < 1:
        raise ConfigError(f"head dimension must be positive, got {head_dim}")
    split = rule(head_dim)
    if 0 in split:
        least = next(d for d in range(2, 64) if 0 not in rule(d))
        raise ConfigError(f"a head of {head_dim} channels leaves {model}'s 3-D RoPE an axis without channels "
                          f"{split}; give at least {least}")
    return split
