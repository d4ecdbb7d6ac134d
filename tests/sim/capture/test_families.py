"""The model classes capture knows: each tiny configuration builds, reports its
shape, and its RoPE split is the one the chip model's groups use."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("diffusers")

from golden.rope import model_partition  # noqa: E402
from sim.capture import FAMILIES, family  # noqa: E402


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_the_tiny_model_says_its_shape(name):
    fam = family(name)
    model = fam.load(None, 0)
    shape = fam.shape(model, tiny=True)
    assert shape["layers"] == len(fam.blocks(model)) == 2 and shape["heads"] == 2
    assert shape["hidden"] == shape["heads"] * shape["head_dim"]
    assert shape["mlp"] == fam.tiny.get("ffn_dim", 4 * shape["hidden"])
    # The class's own RoPE split is the model's rule at this head width.
    assert fam.partition(model) == model_partition(name, shape["head_dim"])
    assert min(fam.partition(model)) >= 8                  # each group holds an array's 2R channels


def test_an_unknown_class_is_one_line():
    with pytest.raises(ValueError, match="capture knows no model 'sora'; it knows wan2.1"):
        family("sora")
