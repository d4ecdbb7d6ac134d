"""hw/dispatcher/dispatchers.py: every dispatcher, through the one interface the engine uses,
takes the slots of the golden model of the same name."""

import numpy as np
import pytest
from amaranth import ClockDomain, Module
from amaranth.sim import Simulator

from golden import Config
from golden.channel_window import row_groups
from golden.dispatchers import DISPATCHERS as MODELS
from golden.dispatchers import dispatched_slots, dispatcher_of
from golden.matcher import PAIRED_MODES, pe_needs
from hw.dispatcher.dispatch import Dispatcher
from hw.dispatcher.dispatchers import DISPATCHERS, register


def test_the_registries_name_the_same_dispatchers():
    assert set(DISPATCHERS) == set(MODELS)
    assert all(issubclass(unit, Dispatcher) and MODELS[name] is unit.model for name, unit in DISPATCHERS.items())


def test_a_unit_declares_its_model():
    class Anonymous(Dispatcher):
        pass
    with pytest.raises(ValueError, match="declares its golden model"):
        register(Anonymous)


@pytest.mark.parametrize("name", ["in-order", "matcher", "channel-window"])
def test_each_dispatcher_takes_its_models_slots(name, rng):
    """Random reuse states and passes: the unit's slots (sets fed back from ``rest``
    until ``more`` is 0, a clock edge between slots) equal its golden model's, and
    what each group takes leaves its set exactly as ``rest`` says."""
    cfg = Config(partition=(10, 2, 2), rows=2, cols=3, accumulators=4, lookahead=4,
                 issue_window=3 if name == "channel-window" else 0)
    assert dispatcher_of(cfg, name != "in-order") == name
    G, R, C = cfg.group_width, cfg.rows, cfg.cols
    dut = DISPATCHERS[name](cfg)
    sq, sk = rng.integers(0, 3, (R, G)), rng.integers(0, 3, (C, G))
    mask = lambda chans: sum(1 << int(c) for c in chans)

    async def bench(ctx):
        for trial in range(12):
            mode = PAIRED_MODES[trial % 3]
            needs = pe_needs(mode, sq, sk, cfg.accumulators).reshape(G, R, C)
            keep = rng.random(G) < 0.8                 # some channels the pass does not stream
            needs[~keep] = 0
            chans = np.flatnonzero(needs.any(axis=(1, 2)))
            ctx.set(dut.wr_en, 1)                    # pass A writes every channel's entry, and its need bit
            for c in range(G):
                ctx.set(dut.wr_chan, c)
                ctx.set(dut.wr_data, {"sq": sq[:, c].tolist(), "sk": sk[:, c].tolist()})
                ctx.set(dut.wr_need, int(c in chans) << PAIRED_MODES.index(mode))
                await ctx.tick()
            ctx.set(dut.wr_en, 0)
            # A group's set: the channels some PE of it needs (the whole array, or per
            # column in B and D and per row in C for a per-group dispatcher).
            if dut.per_group:
                per = needs.any(axis=2 if row_groups(mode) else 1).T
                sets = [mask(np.flatnonzero(p)) for p in per] + [0] * (len(dut.sets) - len(per))
            else:
                sets = [mask(chans)]
            ctx.set(dut.mode, mode)
            ctx.set(dut.recorded, mask(chans))
            ctx.set(dut.opening, 1)                      # the pass's first slot
            ctx.set(dut.advance, 1)                    # every slot issues
            slots, more = 0, True
            while more:                                # a pass lasts a slot at least
                for g, s in enumerate(sets):
                    ctx.set(dut.sets[g], s)
                window = [ctx.get(dut.chan[w]) for w in range(len(dut.chan))]
                left = []
                for g, s in enumerate(sets):
                    choice = ctx.get(dut.choice[g])
                    took = {window[choice.sel[k]] for k in range(len(choice.sel)) if choice.take >> k & 1}
                    assert ctx.get(dut.rest[g]) == s & ~mask(took), f"trial {trial}, group {g}"
                    left.append(ctx.get(dut.rest[g]))
                more = ctx.get(dut.more)
                # Some are left exactly when more says so, except on a slot that
                # takes nothing and only fills the unit's registers.
                assert more == any(left) or (slots == 0 and not any(ctx.get(dut.found[w]) for w in range(len(window))))
                await ctx.tick()
                ctx.set(dut.opening, 0)
                sets, slots = left, slots + 1
                assert slots <= G + 2, f"trial {trial}: no progress"
            want = max(1, dispatched_slots(chans, lambda: needs, mode, cfg, name != "in-order"))
            assert slots == want, f"trial {trial}"

    top = Module()
    top.submodules.dut = dut
    top.domains.sync = ClockDomain()                 # the in-order dispatcher keeps no table, nor a clock
    sim = Simulator(top)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


def test_a_unit_is_routed_by_its_signature():
    """Each unit's signature says how the engine routes its steps; equal parameters
    give equal signatures, and the engine refuses a unit whose groups it cannot route."""
    from amaranth.back import rtlil

    from hw.core.engine import AttentionEngine
    from hw.dispatcher.dispatch import DispatchSignature

    def signature(name, at):
        unit = DISPATCHERS[name](at)
        unit._MustUse__silence = True            # built for its signature only, never elaborated
        return unit

    cfg = Config(partition=(6, 3, 2), rows=2, cols=3, issue_window=4)
    window, matcher = signature("channel-window", cfg), signature("matcher", cfg.with_(issue_window=0))
    assert window.signature.per_group and not window.signature.paired and window.signature.groups == 3
    assert matcher.signature.paired and matcher.signature.width == 2 and matcher.signature.groups == 1
    assert window.signature == DispatchSignature(cfg, 4, 3, per_group=True) != DispatchSignature(cfg, 4, 3)
    assert not signature("in-order", cfg).signature.paired

    class TwoGroups(Dispatcher):          # neither one group nor one a column or row
        model = MODELS["in-order"]

        def __init__(self, cfg):
            super().__init__(cfg, width=1, groups=2)

    old = DISPATCHERS["in-order"]
    DISPATCHERS["in-order"] = TwoGroups
    try:
        with pytest.raises(TypeError, match="the engine routes one group"):
            rtlil.convert(AttentionEngine(cfg.with_(issue_window=0), "kaleido", 4, 4, matcher=False))
    finally:
        DISPATCHERS["in-order"] = old
