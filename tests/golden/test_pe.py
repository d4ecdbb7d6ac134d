"""The golden PE model: its decode is docs/design.md, "How the PE works" table, and the four passes
run through it give exactly the four S~ entries of a 2x2 tile group."""

import numpy as np
import pytest

from golden import Config, pair_reuse
from golden.opcount import oracle_macs
from golden.pe import ColIn, PEModel, RowIn, decode, step_need, wrap
from golden.pe_encoding import Load, Mode, Need
from golden.reuse import hi, lo


def run_tile_group(q0, q1t, k0, k1t, sq, sk, acc_bits=32, accumulators=3, lanes=None):
    """Drive one PE through passes A..D for one 2x2 tile group; return [T0, T1, T2, T3].
    ``lanes`` (a list) collects the lanes each cycle turns on."""
    pe = PEModel(acc_bits, accumulators)
    drained = []

    def tick(row, col):
        pe.tick(row, col)
        if lanes is not None:
            dec = decode(row.mode, row.steps, row.sq0, col.sk0, row.sq1, col.sk1, accumulators)
            lanes.append(sum(l.on for l in dec.lanes))
        if pe.out_valid:
            drained.append(pe.out)

    channels = range(len(q0))
    passes = [
        (Mode.A, Load.CLEAR, False, q0, k0, lambda c: True),
        (Mode.B, Load.R1, True, q0, k1t, lambda c: sk[c] != 2),
        (Mode.C, Load.R2, True, q1t, k0, lambda c: sq[c] != 2),
        (Mode.D, Load.R1, True, q1t, k1t,
         lambda c: step_need(Mode.D, sq[c], sk[c], accumulators)[0] != Need.NONE),
    ]
    for mode, load, drain, a, b, streamed in passes:
        first = True
        for c in channels:
            if not streamed(c):
                continue
            tick(RowIn(a0=int(a[c]), sq0=int(sq[c]), mode=mode, steps=1,
                       load=load if first else Load.KEEP, drain=drain and first),
                 ColIn(b0=int(b[c]) & 0xFF, sk0=int(sk[c])))
            first = False
        if first:       # nothing streamed: the hand-over still happens, on an idle cycle
            tick(RowIn(mode=mode, steps=0, load=load, drain=drain), ColIn())
    tick(RowIn(load=Load.CLEAR, drain=True), ColIn())
    return drained


@pytest.mark.parametrize("accumulators", [3, 4])
@pytest.mark.parametrize("F, P", [(5, 3), (3, 1), (8, 8), (6, 4), (2, 2), (0, 0), (8, 0)])
def test_four_passes_give_the_four_scores(rng, F, P, accumulators):
    # Two tokens along x (t-group channels pair along x), 1x1x2 grid, many channels.
    D = 24
    cfg = Config(partition=(D, 0, 0), grid=(1, 1, 2), full_bits=F, partial_bits=P)
    for _ in range(200):
        base = rng.integers(-128, 128, (1, D))
        q = np.clip(base + rng.integers(-40, 41, (2, D)) * rng.integers(0, 2, (2, D)), -128, 127).astype(np.int8)
        k = np.clip(base + rng.integers(-40, 41, (2, D)) * rng.integers(0, 2, (2, D)), -128, 127).astype(np.int8)
        rq, rk = pair_reuse(q, cfg), pair_reuse(k, cfg)
        lanes = []
        got = run_tile_group(rq.approx[0], rq.approx[1], rk.approx[0], rk.approx[1],
                             rq.states[1], rk.states[1], accumulators=accumulators, lanes=lanes)
        s = rq.approx.astype(np.int64) @ rk.approx.astype(np.int64).T
        assert got == [s[0, 0], s[0, 1], s[1, 0], s[1, 1]]
        oracle = oracle_macs(rq.states, rk.states)
        if accumulators == 4:       # the exact PE: lane work is the oracle count, no more
            assert sum(lanes) == 2 * oracle
        else:
            assert sum(lanes) >= 2 * oracle


def test_decode_is_the_design_table():
    # Single steps: (lanes on, high-lane, enables) straight from docs/design.md, "How the PE works".
    d = decode(Mode.A, 1, 2, 1, 0, 0)
    assert [l.on for l in d.lanes] == [True, True]
    assert d.enable == ((True, True), (False, True), (True, True))   # R1 gets H only
    d = decode(Mode.B, 1, 2, 1, 0, 0)
    assert [l.on for l in d.lanes] == [True, False] and d.enable[1] == (True, False)
    assert decode(Mode.B, 1, 0, 2, 0, 0).lanes[0].on is False
    assert decode(Mode.C, 1, 2, 0, 0, 0).enable == ((False, False),) * 3
    table_d = {(2, 2): (True, True), (2, 1): (False, True), (2, 0): (False, False),
               (0, 2): (False, False), (1, 1): (True, False), (0, 0): (True, True)}
    for (sq, sk), lanes in table_d.items():
        d = decode(Mode.D, 1, sq, sk, 0, 0)
        assert (d.lanes[0].on, d.lanes[1].on) == lanes
        assert d.enable[1] == d.enable[2] == (False, False)
    # Paired, both steps with work here: step 1's low nibble on lane 0, step 2's high on lane 1.
    d = decode(Mode.D, 3, 0, 1, 2, 1)
    assert d.lanes[0].on and not d.lanes[0].high and d.lanes[1].on and d.lanes[1].high
    assert d.lanes[1].second and not d.lanes[0].second
    # Two partial rows of pass C pair in the exact PE: a ROW product on each lane.
    # R1 (T3) takes step 1's tap (sk=1) and step 2's whole product (sk=2).
    d = decode(Mode.C, 3, 1, 1, 1, 2, kind=4)
    assert [(l.on, l.row, l.second) for l in d.lanes] == [(True, True, False), (True, True, True)]
    assert d.enable[0] == (True, True) and d.enable[1] == (False, True) and d.tap[1] == (True, False)
    # Paired, only one step with work here: it runs whole, on its own operands.
    d = decode(Mode.B, 3, 0, 2, 0, 0)
    assert [(l.on, l.high, l.second) for l in d.lanes] == [(True, False, True), (True, True, True)]
    # A full product cannot ride one lane: dropped when both steps have work.
    assert decode(Mode.A, 3, 0, 0, 0, 0).lanes[0].on is False


def test_lane_products_and_wrap():
    pe = PEModel(acc_bits=8)
    pe.tick(RowIn(a0=-128, mode=Mode.A, steps=1, load=Load.CLEAR), ColIn(b0=0x80))
    assert pe.r[0] == wrap(16384, 8) == 0
    pe = PEModel(acc_bits=24)
    pe.tick(RowIn(a0=-3, a1=5, mode=Mode.D, steps=3, sq0=0, sq1=2, load=Load.CLEAR),
            ColIn(b0=0x3F, b1=0x9C, sk0=1, sk1=1))   # lane 0: -3*lo(0x3F); lane 1: 16*5*hi(0x9C)
    assert pe.r[0] == -3 * 15 + 16 * 5 * int(hi(np.int8(-0x64))) and int(lo(0x3F)) == 15
    pe = PEModel(acc_bits=24, kind=4)
    pe.tick(RowIn(a0=0x37, a1=-0x25, mode=Mode.C, steps=3, sq0=1, sq1=1, load=Load.CLEAR),
            ColIn(b0=-5 & 0xFF, b1=0x7F, sk0=0, sk1=2))       # two ROW products: b * lo(a)
    assert pe.r[0] == -5 * 7 + 127 * int(lo(np.int8(-0x25)))
