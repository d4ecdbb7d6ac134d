import pytest

from golden import Config
from hw import blocks
from sim import lint, runner


@pytest.mark.parametrize("block", list(blocks.BLOCKS))
def test_verilator_lint_clean(tmp_path, block):
    why = runner.missing("verilator")
    if why:
        pytest.skip(why)
    assert lint.lint(block, Config(), tmp_path) == []
