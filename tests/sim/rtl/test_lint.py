import pytest

from golden import Config
from hw import blocks
from sim.rtl import lint, runner
from tests.sweep import sweep


# make test: every block but the channel window, whose lint alone takes most of a minute.
@sweep("block", blocks.UNITS, keep=[b for b in blocks.UNITS if b != "channel-window"])
def test_verilator_lint_clean(tmp_path, block):
    why = runner.missing("verilator")
    if why:
        pytest.skip(why)
    assert lint.lint(block, Config(), tmp_path) == []


def test_verilator_lint_clean_weight_rule(tmp_path):
    # The scheduler's rank (the weight rule) is other RTL than its pivots.
    why = runner.missing("verilator")
    if why:
        pytest.skip(why)
    assert lint.lint("scheduler", Config(cluster_rule="weight"), tmp_path) == []
