"""Each board's constraints: every port of the board top placed on a site of its
own, an LED a bit, the clock's frequency stated."""

import re

import pytest

from hw.board.board import LEDS
from synth.boards import BOARDS, lpf


@pytest.mark.parametrize("name", list(BOARDS))
def test_every_pin_of_the_board_top_has_a_site(name):
    board = BOARDS[name]
    text = lpf(board)
    sites = dict(re.findall(r'LOCATE COMP "([^"]+)" SITE "([^"]+)";', text))
    assert set(sites) == {"clk", "rx", "tx", *(f"led[{i}]" for i in range(LEDS))}
    assert len(set(sites.values())) == len(sites), "two ports on one site"
    assert set(re.findall(r'IOBUF PORT "([^"]+)"', text)) == set(sites)
    assert f'FREQUENCY PORT "clk" {board.clock_mhz:g} MHZ;' in text
    assert board.devices and all(d in ("25k", "45k", "85k") for d in board.devices)
