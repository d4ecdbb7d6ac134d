"""Each head's Q K^T schedule chosen for the chip: a schedule the pipeline hides
is taken for the products it saves; the chip's time never grows from the
choice; the steps that fill the pipeline run each head's fastest."""

from dataclasses import replace

import numpy as np
import pytest

from golden.softmax import row_cycles, softmax_spec
from sim.chip.chip import baseline_head
from sim.chip.estimate import layer_pricer, run_shard, shard_config, summarize
from sim.chip.layer import fill_share
from sim.chip.qk_schedule import as_option, choose, fastest, parse_objective

from .test_estimate import CHIP, SIGNS, TINY

# Many blocks of queries a layer (a small accumulation buffer), banks wide enough
# that it never bounds Q K^T, and a vector unit that sets the pipeline's pace.
HIDDEN = replace(CHIP, arrays=16, acc_buffer_mib=0.01, sram_bank_bits=8192, softmax_lanes=4)
CFG = shard_config(TINY, "480p", HIDDEN)


def _costly(sign, by=100.0):
    # PEs whose products dominate a layer's energy (the tiny model's otherwise
    # goes to DRAM's standing power), so that the products a schedule saves count.
    return replace(sign, pe=replace(sign.pe, energy_pj={k: v * by for k, v in sign.pe.energy_pj.items()}))


COSTLY = {name: _costly(sign) for name, sign in SIGNS.items()}


@pytest.fixture(scope="module")
def shards():
    return [run_shard(TINY, CFG, "proxy", (step, layer, 0), None) for step in range(3) for layer in range(2)]


def _dense_first(results, by=0.99):
    """Each head with its dense schedule just faster than its fastest paired one:
    on its own, every head runs dense."""
    out = []
    for r in results:
        h = r["head"]
        options = {n: dict(o) for n, o in h["qk_options"].items()}
        best = min(o["slots"] + o["lead"] for n, o in options.items() if n != "dense")
        options["dense"]["slots"] = options["dense"]["slots_low"] = options["dense"]["slots_high"] = by * best
        head = as_option({**h, "qk_options": options}, "dense")
        out.append({**r, "head": head})
    return out


def _pricer(chip):
    tokens = CFG.tokens
    assert not TINY.joint_text                  # rows a video long, and the cross-attention's a text long
    per_row = row_cycles(softmax_spec(tokens, CFG.acc_bits), CFG.vector_lanes)
    cross = row_cycles(softmax_spec(TINY.text_tokens, CFG.acc_bits), CFG.vector_lanes)
    return layer_pricer(TINY, tokens, chip, COSTLY, baseline_head(tokens, TINY.head_dim, chip.rows, chip.cols),
                        per_row, cross)


def test_objectives_parse_or_say_why():
    assert parse_objective("chip") == "chip" and parse_objective("head") == "head"
    assert parse_objective("1.5") == 1.5 and parse_objective("0") == 0.0
    for bad in ("fast", "-1", "nan", "inf", ""):
        with pytest.raises(ValueError, match="not an objective"):
            parse_objective(bad)


def test_a_schedule_the_pipeline_hides_is_taken_for_its_products(shards):
    results = _dense_first(shards)
    head = summarize(TINY, "480p", HIDDEN, CFG, results, COSTLY, objective="head")
    chip = summarize(TINY, "480p", HIDDEN, CFG, results, COSTLY, objective="chip")
    assert all(v["ran"] == {"dense": 2} for v in head["reuse"]["schedules"].values())
    for v in chip["reuse"]["schedules"].values():
        assert v["fastest"] == {"dense": 2} and "dense" not in v["ran"]         # every head paired
        assert v["bound"] == "softmax" and v["arrays_share"] < 1
    k, h = chip["designs"]["kaleido"], head["designs"]["kaleido"]
    assert k["time_s"] == pytest.approx(h["time_s"], rel=1e-12)
    assert k["energy_j"] < h["energy_j"]
    assert chip["qk_operation_reduction"]["hardware"] > head["qk_operation_reduction"]["hardware"] == 0


def test_where_the_arrays_set_the_pace_the_fastest_stays(shards):
    results = _dense_first(shards)
    for chip in (replace(HIDDEN, softmax_lanes=4096), replace(HIDDEN, schedule="serial")):
        s = summarize(TINY, "480p", chip, CFG, results, COSTLY, objective="chip")
        assert all(v["ran"] == {"dense": 2} for v in s["reuse"]["schedules"].values())
    # Energy alone takes the pairs whatever they cost in time.
    s = summarize(TINY, "480p", replace(HIDDEN, schedule="serial"), CFG, results, COSTLY, objective=0.0)
    assert all("dense" not in v["ran"] for v in s["reuse"]["schedules"].values())


@pytest.mark.parametrize("seed", range(6))
def test_the_chosen_schedule_never_lengthens_the_critical_path(shards, seed):
    """Random chips and heads' margins: against each head at its fastest, the
    chip's choice never takes longer, and at equal time never more energy; the
    energy-delay weighting never does worse on its own product."""
    rng = np.random.default_rng(seed)
    print(f"seed {seed}")
    chip = replace(HIDDEN, softmax_lanes=int(rng.choice([4, 16, 64, 4096])),
                   sram_bank_bits=int(rng.choice([64, 512, 8192])),
                   schedule=str(rng.choice(["pipelined", "serial"])), acc_buffer_mib=float(rng.choice([0.01, 1.0])))
    results = [{**r, "head": h["head"]} for r, h in zip(shards, _dense_first(shards, rng.uniform(0.9, 1.1)))]
    cost = _pricer(chip)
    for step in range(3):
        heads = [r for r in results if r["shard"][0] == step]
        fill = [as_option(r["head"], fastest(r["head"])) for r in heads]
        before = cost(fill, fill)
        for objective in ("chip", 0.0, 1.0, 3.0):
            after, decided = choose(heads, cost, objective)
            layer = cost([r["head"] for r in after], fill)
            assert decided[step]["time_s"] == [before["time_s"], layer["time_s"]]
            if objective == "chip":
                assert layer["time_s"] <= before["time_s"] * (1 + 1e-12)
                if layer["time_s"] >= before["time_s"] * (1 - 1e-12):
                    assert layer["energy_j"] <= before["energy_j"]
            else:
                w = objective
                assert layer["energy_j"] * layer["time_s"] ** w <= before["energy_j"] * before["time_s"] ** w


def test_the_blocks_that_fill_the_pipeline_run_the_fastest(shards):
    results = _dense_first(shards)
    cost = _pricer(HIDDEN)
    heads = [r["head"] for r in results if r["shard"][0] == 0]
    fastest_heads = [as_option(h, fastest(h)) for h in heads]
    paired = [as_option(h, "pe") for h in heads]
    # With its fill at the fastest, the paired layer takes the fastest's time.
    assert cost(paired, fastest_heads)["time_s"] == pytest.approx(cost(fastest_heads, fastest_heads)["time_s"])
    assert cost(paired, paired)["time_s"] > cost(paired, fastest_heads)["time_s"]
    # Two blocks fill the pipeline; with two blocks in all, every Q K^T does.
    assert fill_share(2) == 1 and fill_share(100) == pytest.approx(0.02)


def test_an_array_without_a_dispatcher_runs_the_fastest_schedule_that_needs_none():
    from sim.chip.qk_schedule import alone, as_option, needs_dispatcher

    option = lambda slots, lead=0, matcher=False, busy=0: {
        "slots": slots, "slots_low": slots, "slots_high": slots, "full_products": slots, "nibble_products": 0,
        "passes": 1, "lead": lead, "scheduler_busy": busy, "matcher": matcher, "paired": True}
    options = {"full": option(50, lead=5, matcher=True, busy=9), "pe-m": option(60, matcher=True),
               "pe": option(80), "dense": option(90)}
    options["dense"]["paired"] = False
    head = as_option({"qk_options": options}, "full")
    assert needs_dispatcher(head) and alone(head)["qk_ran_as"] == "pe"
    slower = {**options, "pe": option(95)}
    assert alone(as_option({"qk_options": slower}, "pe-m"))["qk_ran_as"] == "dense"
    # A schedule that needs no dispatcher stays; a head without options is left as it is.
    assert alone(as_option({"qk_options": options}, "dense"))["qk_ran_as"] == "dense"
    bare = {"slots": 3, "matcher": True}
    assert alone(bare) is bare
