"""The action benches: an action moves what it says and nothing else, on the
inputs the gate netlist is driven with and the outputs it is checked against."""

import re

import numpy as np
import pytest

from golden import Config
from synth.actions import ACTIONS, EXACT_ACTIONS, actions, stimulus

CFG = Config(partition=(2, 1, 1))


def moving(samples):
    """The bits that change at least once over a run's cycles."""
    return {n for n in samples[0] if any(s[n] != t[n] for s, t in zip(samples, samples[1:]))}


def test_idle_moves_no_input():
    for block in ACTIONS:
        run = stimulus(block, CFG, "idle", cycles=32)
        assert not moving(run["inputs"]), block
        if block in ("pe", "baseline-pe"):
            # Every register of a PE is an output port: an idle PE holds them all.
            assert not moving(run["outputs"][1:]), block


def test_busy_units_move_their_outputs():
    for block in ("scheduler", "matcher", "channel-window", "softmax"):
        run = stimulus(block, CFG.with_(grid=(1, 2, 5)), "busy", cycles=64)
        assert moving(run["inputs"]) and moving(run["outputs"]), block


def test_full_mac_moves_operands_not_control():
    run = stimulus("pe", CFG, "full_mac", cycles=64)
    a0 = {f"row_in_{i}_" for i in range(8)}                  # a0 is the row's first byte
    b = {f"col_in_{i}_" for i in range(8)}
    assert moving(run["inputs"]) == a0 | b
    outs = moving(run["outputs"])
    assert any(n.startswith("r0_") for n in outs) and not any(n.startswith("r2_") for n in outs)


def test_drain_shift_moves_only_the_chain():
    run = stimulus("pe", CFG, "drain_shift", cycles=64)
    assert all(n.startswith("drain_in") for n in moving(run["inputs"]))
    assert all(n.startswith("drain_out") for n in moving(run["outputs"]))


def test_names_are_the_netlists():
    run = stimulus("baseline-pe", CFG, "full_mac", cycles=8)
    names = set(run["inputs"][0]) | set(run["outputs"][0])
    assert all(re.match(r"^[a-z_0-9]+$", n) for n in names)
    assert {"drain_in__valid", "drain_out__valid", "acc_0_"} <= names
    assert run["cycles"] == len(run["inputs"]) == len(run["outputs"]) == 8


def test_unknown_action_and_block():
    with pytest.raises(ValueError, match="has no action"):
        stimulus("baseline-pe", CFG, "nibble_mac")
    with pytest.raises(ValueError, match="not 'array'"):
        actions("array", CFG)


def test_exact_pe_actions_reach_its_own_parts():
    exact = CFG.with_(accumulators=4)
    assert actions("pe", exact) == ACTIONS["pe"] + EXACT_ACTIONS
    assert actions("pe", CFG) == ACTIONS["pe"] and actions("baseline-pe", exact) == ACTIONS["baseline-pe"]
    regs = lambda run: {n.split("_")[0] for n in moving(run["outputs"]) if re.match(r"r\d_", n)}
    # Pass A with sq = sk = 1: every register collects, R2 and R3 from the taps.
    assert regs(stimulus("pe", exact, "tapped_mac", cycles=64)) == {"r0", "r1", "r2", "r3"}
    # A ROW step adds one lane into R0 alone.
    assert regs(stimulus("pe", exact, "row_nibble", cycles=64)) == {"r0"}
    with pytest.raises(ValueError, match="has no action"):
        stimulus("pe", CFG, "row_nibble")


def test_matcher_bench_runs_the_engines_passes():
    """The matcher's busy bench is the engine's protocol: pass A writes every
    channel's entry, one a slot; each of B, C and D opens on a set and then
    takes one or two channels a slot from what the slot before left."""
    cfg = Config(partition=(8, 4, 4))
    G = cfg.group_width
    run = stimulus("matcher", cfg, "busy", cycles=160)

    def word(sample, name, width):
        return sum(sample[f"{name}_{i}_"] << i for i in range(width))

    modes = [word(s, "mode", 3) for s in run["inputs"]]
    passes = [(mode, [s for s, m in zip(run["inputs"], modes) if m == mode]) for mode in (0, 1, 2, 3)]
    first_a = passes[0][1][:G]
    assert [s["wr_en"] for s in first_a] == [1] * G and [word(s, "wr_chan", 3) for s in first_a] == list(range(G))
    starts = [t for t in range(1, len(modes)) if modes[t] != modes[t - 1]] + [len(modes)]
    checked = 0
    for begin, end in zip(starts, starts[1:]):
        if modes[begin] == 0 or end == len(modes):
            continue                                     # pass A, or a pass the run cut short
        slots = run["inputs"][begin:end]
        sets = [word(s, "sets__0", G) for s in slots]
        assert slots[0]["opening"] and sets[0] == word(slots[0], "recorded", G)
        assert not any(s["opening"] for s in slots[1:]) and all(s["advance"] for s in slots[1:])
        assert len(sets) == 2 or sets[1] == sets[0]
        for before, after in zip(sets[1:], sets[2:]):
            assert after & ~before == 0 and 1 <= bin(before).count("1") - bin(after).count("1") <= 2
        checked += 1
    assert checked >= 3


def _word(sample, name, width):
    return sum(sample[f"{name}_{i}_"] << i for i in range(width))


def test_matcher_run_replays_its_trace():
    """``run`` writes the trace's states in pass A and opens B, C and D on the
    trace's sets, tile group after tile group."""
    cfg = Config(partition=(8, 4, 4))
    R, C, G = cfg.rows, cfg.cols, cfg.group_width
    seed = 11
    print("seed", seed)
    rnd = np.random.default_rng(seed)
    trace = tuple((tuple(tuple(int(v) for v in rnd.integers(0, 3, G)) for _ in range(R)),
                   tuple(tuple(int(v) for v in rnd.integers(0, 3, G)) for _ in range(C)),
                   tuple(int(v) for v in rnd.integers(1, 1 << G, 3))) for _ in range(3))
    run = stimulus("matcher", cfg, "run", cycles=240, trace=trace)
    ins = run["inputs"]
    # Per tile group in turn: its writes (pass A), then the sets its passes open on.
    writes, openings = [], []
    for s in ins:
        if s["wr_en"]:
            chan = _word(s, "wr_chan", 3)
            entry = _word(s, "wr_data", 2 * (R + C))       # the layout: sq by row, then sk by column
            sq = [(entry >> 2 * r) & 3 for r in range(R)]
            sk = [(entry >> 2 * (R + j)) & 3 for j in range(C)]
            writes.append((chan, sq, sk))
        if s["opening"]:
            openings.append(_word(s, "recorded", G))
    assert len(writes) >= 2 * G and len(openings) >= 6
    for n, (chan, sq, sk) in enumerate(writes):
        t = trace[(n // G) % len(trace)]
        assert chan == n % G
        assert sq == [t[0][r][chan] for r in range(R)] and sk == [t[1][j][chan] for j in range(C)]
    assert openings == [trace[(n // 3) % len(trace)][2][n % 3] for n in range(len(openings))]


def test_scheduler_run_replays_its_stream():
    cfg = Config(partition=(8, 4, 4))
    strings = tuple(range(1, 9)) * 3
    last = tuple(i % 8 == 7 for i in range(len(strings)))
    run = stimulus("scheduler", cfg, "run", cycles=120, trace=(strings, last))
    W = cfg.entry_bits
    offered = [(_word(s, "in_string", W), s["in_last"]) for s in run["inputs"] if s["in_valid"]]
    assert offered, "the stream offers strings"
    # A string is offered until the queue takes it: collapse the cycles it is held
    # for (the stream has no two equal neighbours).
    seen = [offered[0]] + [b for a, b in zip(offered, offered[1:]) if b != a]
    assert [v for v, _ in seen[:8]] == list(strings[:8]) and [bool(l) for _, l in seen[:8]] == list(last[:8])


def test_a_run_needs_a_trace():
    with pytest.raises(ValueError, match="needs a trace"):
        stimulus("matcher", CFG, "run", cycles=8)
    with pytest.raises(ValueError, match="no action"):
        stimulus("softmax", CFG, "run", cycles=8, trace=((1,), (True,)))


def test_a_kind_without_nibble_steps_is_not_priced_for_them(monkeypatch):
    """``power --pe-kind`` prices the actions the kind takes: a table whose
    nibble stimulus step (pass B, a key in state 1) runs whole has no nibble
    products to price."""
    from golden.pe_encoding import Need, Target
    from golden.pe_kinds import PaperPE
    from synth.actions import NIBBLE_ACTIONS

    assert set(NIBBLE_ACTIONS) <= set(actions("pe", Config()))
    monkeypatch.setattr(PaperPE, "step_need", classmethod(lambda cls, mode, sq, sk:
                                                          (Need.FULL, (Target.ALL, Target.NO, Target.NO))))
    assert not set(NIBBLE_ACTIONS) & set(actions("pe", Config()))
    assert "full_mac" in actions("pe", Config())
