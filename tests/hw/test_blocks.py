"""The block registry: every component it builds takes a Config and nothing else."""

import pytest

from hw import blocks


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
@pytest.mark.parametrize("name", list(blocks.BLOCKS))
def test_components_refuse_a_non_config(name):
    with pytest.raises(TypeError, match="takes a Config, not dict"):
        blocks.build(name, {"acc_bits": 24})
