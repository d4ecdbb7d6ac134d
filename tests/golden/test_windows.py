"""Windows of a linear layer on the array: the tables hold X~ as the loop
reference reads docs/concepts.md, "Reuse states", every token is one window's member once per
group, and the PE model running the passes (LINEAR, then B per partner)
drains exactly X~ W, for the 3- and the 4-register PE."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from golden.pe import ColIn, PEModel, RowIn
from golden.pe_encoding import PARTNER_HANDOVER, Load, Mode
from golden.windows import accumulate_windows, linear_config, window_tables, window_tiles
from tests import reference
from tests.strategies import configs, operands


def _draw(data, heads=2):
    cfg = data.draw(configs()).with_(window=data.draw(st.integers(1, 4)),
                                     accumulators=data.draw(st.sampled_from([3, 4])))
    x = data.draw(operands(cfg, heads=heads))
    return cfg, x


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_tables_hold_x_tilde(data):
    cfg, x = _draw(data)
    _, xt = reference.window(x.astype(int).tolist(), cfg.grid, cfg.partition, cfg.full_bits,
                             cfg.partial_bits, cfg.window)
    xt = np.array(xt)
    heads = x.shape[1] // cfg.head_dim
    for table in window_tables(x, cfg):
        seen = table.members[table.members >= 0]
        assert sorted(seen.tolist()) == list(range(cfg.tokens)), "each token in one window"
        np.testing.assert_array_equal(table.x0, xt[np.ix_(table.members[:, 0], table.channels)])
        for p in range(table.partners):
            has = table.members[:, p + 1] >= 0
            tok = table.members[has, p + 1]
            np.testing.assert_array_equal(table.x1[has, p], xt[np.ix_(tok, table.channels)])
            assert (table.state[~has, p] == 2).all(), "a missing member costs nothing"
            if p >= cfg.accumulators - 1:
                assert (table.state[has, p] == 0).all(), "no register: computed whole"
    assert sum(t.width for t in window_tables(x, cfg)) == heads * cfg.head_dim


def _pe_outputs(table, j, wcol, accumulators):
    """Drained R0 of one PE running a window's passes on the golden PE model."""
    pe = PEModel(acc_bits=48, kind=accumulators)
    outs = []
    passes = [(Mode.LINEAR, Load.CLEAR, table.x0[j], table.state[j, 0] if table.partners else
               np.zeros(table.width, int))]
    passes += [(Mode.B, PARTNER_HANDOVER[p], table.x1[j, p], table.state[j, p]) for p in range(table.partners)]
    for n, (mode, load, col, state) in enumerate(passes):
        for c in range(table.width):
            first = c == 0
            pe.tick(RowIn(a0=int(wcol[c]), mode=mode, steps=1, load=load if first else Load.KEEP,
                          drain=first and n > 0), ColIn(b0=int(col[c]) & 0xFF, sk0=int(state[c])))
            if first and n > 0:
                outs.append(pe.out)
    pe.tick(RowIn(drain=True), ColIn())
    outs.append(pe.out)
    return outs


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_pe_passes_drain_x_tilde_w(data):
    cfg, x = _draw(data, heads=data.draw(st.integers(1, 2)))
    outputs = data.draw(st.integers(1, 3))
    w = np.random.default_rng(data.draw(st.integers(0, 999))).integers(-128, 128, (x.shape[1], outputs),
                                                                      dtype=np.int8)
    _, xt = reference.window(x.astype(int).tolist(), cfg.grid, cfg.partition, cfg.full_bits,
                             cfg.partial_bits, cfg.window)
    want = np.array(xt, np.int64) @ w.astype(np.int64)
    tables = window_tables(x, cfg)
    lcfg = linear_config(cfg, x.shape[1] // cfg.head_dim).with_(rows=1, cols=1)
    y_t = np.zeros((outputs, cfg.tokens), np.int64)
    for tile in window_tiles(tables, outputs, lcfg):
        table = tables[tile.group]
        o, j = tile.q_pairs[0], tile.k_pairs[0]
        drained = _pe_outputs(table, j, w[table.channels, o], cfg.accumulators)
        accumulate_windows(y_t, tile, table, np.array(drained, np.int64).reshape(-1, 1, 1))
    np.testing.assert_array_equal(y_t.T, want)


def test_linear_config_gathers_heads():
    from golden import Config
    cfg = Config(partition=(2, 3, 1), grid=(1, 2, 2))
    lcfg = linear_config(cfg, 3)
    assert lcfg.partition == (6, 9, 3) and lcfg.head_dim == 18 and lcfg.grid == cfg.grid
