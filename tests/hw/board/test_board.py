"""The board top's own rules: the memory it needs for a top's buffers, laid out
as the driver lays them out, and the arguments it refuses before any part exists."""

import warnings

import pytest

from golden import Config
from golden.errors import ConfigError
from hw.board.board import BoardTop, memory_words
from hw.system.top import top_beats

CFG = Config(partition=(2, 1, 1), grid=(1, 2, 2), rows=2, cols=2, max_channels=4, vector_lanes=2)


@pytest.mark.parametrize("q_words, k_words, out_rows", [(4, 4, 8), (64, 64, 256), (1000, 3, 1)])
def test_the_memory_holds_what_one_run_moves(q_words, k_words, out_rows):
    words = memory_words(CFG, "kaleido", q_words, k_words, out_rows)
    beats = top_beats(CFG, "kaleido")
    need = 0x1000 + 4 * (q_words * beats["q"] + k_words * beats["k"] + out_rows * beats["out"])
    assert words & (words - 1) == 0 and need <= 4 * words < 2 * need + 3 * 64


@pytest.mark.parametrize("kwargs, error, message", [
    ({"divisor": 3}, ValueError, "divisor must be an integer of at least 4"),
    ({"mem_words": 3000}, ValueError, "memory words must be a power of two"),
    ({"design": "other"}, ValueError, "design must be 'kaleido' or 'baseline'"),
    ({"q_words": 0}, ValueError, "q_words must be 1..65535"),
])
def test_bad_arguments_are_refused_before_any_part_exists(kwargs, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no part left made and never elaborated
        with pytest.raises(error, match=message):
            BoardTop(CFG, **kwargs)


def test_a_design_point_the_top_refuses_is_refused_here():
    big = Config(grid=(16, 64, 64))         # a valid design point, whose scores outgrow the top's 32-bit words
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ConfigError, match="do not fit a 32-bit word"):
            BoardTop(big)
