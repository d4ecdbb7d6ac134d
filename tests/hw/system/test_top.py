"""The system top's construction: every design point it cannot serve is refused
before the object exists, in one line."""

import pytest

from golden.config import Config
from golden.errors import ConfigError
from hw.system.regmap import DESIGN
from hw.system.top import SystemTop


@pytest.mark.parametrize("knobs, says", [
    (dict(rows=256), "rows 256 does not fit the DESIGN register's 8-bit field"),
    (dict(cols=256), "cols 256 does not fit"),
    (dict(vector_lanes=256), "lanes 256 does not fit"),
])
def test_a_shape_the_design_register_cannot_report_is_refused(knobs, says):
    assert DESIGN["rows"].width == 8
    with pytest.raises(ConfigError, match=says):
        SystemTop(Config(grid=(1, 2, 4), **knobs))


def test_the_widest_shape_it_reports_is_taken():
    top = SystemTop(Config(grid=(1, 2, 4), rows=2, cols=255))
    top._MustUse__silence = True        # made to be looked at, never elaborated: no warning when collected
    assert top.cfg.cols == 255


@pytest.mark.parametrize("args, error", [(("nope",), TypeError), ((Config(grid=(1, 2, 4)), "other"), ValueError),
                                         ((Config(grid=(1, 2, 4)), "kaleido", 0), ValueError)])
def test_bad_arguments_are_refused_at_construction(args, error):
    with pytest.raises(error):
        SystemTop(*args)


@pytest.mark.parametrize("grid", [(1, 1, 32768), (128, 16, 16)])
def test_a_head_too_large_to_build_is_refused_at_once(grid):
    with pytest.raises(ConfigError, match="a system top holds at most 32,767 tokens a head, not 32,768"):
        SystemTop(Config(grid=grid))
