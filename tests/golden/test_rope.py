"""Each model's 3-D RoPE split of a head into its t-, y- and x-channels."""

import pytest

from golden import Config, ConfigError
from golden.rope import DIRECTIONS, GROUPS, model_partition


@pytest.mark.parametrize("model, d, expect", [
    ("hunyuanvideo", 128, (16, 56, 56)),
    ("wan2.1", 128, (44, 42, 42)),
    ("turbodiffusion", 128, (44, 42, 42)),
    ("cogvideox", 64, (16, 24, 24)),
    ("wan2.1", 32, (12, 10, 10)),
])
def test_model_presets(model, d, expect):
    assert model_partition(model, d) == expect
    assert Config.for_model(model, d).partition == expect


def test_unknown_model():
    with pytest.raises(ConfigError, match="unknown model"):
        model_partition("sora", 64)


def test_each_group_reuses_along_another_axis():
    assert GROUPS == ("t", "y", "x") and sorted(DIRECTIONS.values()) == [0, 1, 2]
    assert all(DIRECTIONS[g] != axis for axis, g in enumerate(GROUPS))
