"""The bitstream flow end to end at a small point: the Kaleido board top
synthesized, placed on the ULX3S's pins at its clock and packed by ecppack; and
what it refuses before any work."""

import json

import pytest

from golden import Config
from hw.board.board import memory_words
from synth.bitstream import bitstream, divisor_for
from synth.boards import BOARDS
from synth.fpga import FpgaError

#: A 2 x 2 array, channel groups of 4, 4-token softmax rows: the smallest top that runs
#: a head, on the ULX3S's smallest part this flow knows, with 4 KiB of memory.
SMALL = Config(partition=(2, 1, 1), grid=(1, 2, 2), rows=2, cols=2, max_channels=4, full_bits=5, partial_bits=3,
               vector_lanes=2)
SIZES = {"q_words": 4, "k_words": 4, "out_rows": 8}

#: The start of every ECP5 bitstream's configuration data, after its comment block.
PREAMBLE = bytes.fromhex("ffffbdb3")


@pytest.mark.ci          # about 4 minutes of place and route: CI runs it after make test
def test_a_small_kaleido_top_packs_for_the_ulx3s(tmp_path):
    r = bitstream(SMALL, "kaleido", "ulx3s", tmp_path, device="25k", sizes=SIZES, mem_words=1024)
    bit, lpf, report = (tmp_path / f"kaleido_board-ulx3s.{ext}" for ext in ("bit", "lpf", "json"))
    data = bit.read_bytes()
    assert PREAMBLE in data[:4096] and len(data) > 100_000
    assert 'LOCATE COMP "rx" SITE "M1";' in lpf.read_text()
    assert json.loads(report.read_text()) == {k: v for k, v in r.items() if k != "files"}
    # Closed at the board's clock, with the memory and the result scratchpad in block RAM.
    assert r["fmax_mhz"] >= r["clock_mhz"] == 25.0
    assert r["bram"] >= 2 and r["mult18"] > 0 and r["luts"] > 1000
    # The memory asked for is too small for the driver's layout (images from 4 KiB on): it grows to fit.
    assert (r["device"], r["baud"], r["divisor"]) == ("LFE5U-25K", 1_000_000, 25)
    assert r["mem_words"] == memory_words(SMALL, "kaleido", **SIZES) == 2048


@pytest.mark.parametrize("kwargs, message", [
    ({"board": "icebreaker"}, "board 'icebreaker': choose one of ulx3s"),
    ({"device": "12k"}, "the ulx3s comes with the 25k, 45k, 85k parts, not the 12k"),
    ({"baud": 10_000_000}, "--baud 10000000: the ulx3s's 25 MHz clock cannot make it"),
    ({"baud": 7_000_000}, "cannot make it within 2%"),
])
def test_what_it_refuses_before_any_work(tmp_path, kwargs, message):
    args = {"board": "ulx3s", **kwargs}
    with pytest.raises(FpgaError, match=message.replace("(", r"\(")):
        bitstream(SMALL, "kaleido", args.pop("board"), tmp_path / "out", sizes=SIZES, **args)
    assert not (tmp_path / "out").exists()


def test_the_line_rate_is_the_clock_over_a_whole_divisor():
    ulx3s = BOARDS["ulx3s"]
    assert divisor_for(ulx3s, 1_000_000) == 25 and divisor_for(ulx3s, 115_200) == 217
