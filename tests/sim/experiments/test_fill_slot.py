"""The fill-slot what-if: hiding the slot takes exactly one slot a paired pass
off the exact cycle model, and restores the built value after."""

import golden.matcher as matcher
from golden import Config, proxy_workload, quantize
from golden.cycle_model import kaleido_cycles
from golden.matcher import paired_pass_slots
from sim.experiments.fill_slot import fill_slot_cost, fill_slots


def test_the_slot_is_counted_and_put_back():
    built = matcher.FILL_SLOTS
    with fill_slots(0):
        assert paired_pass_slots(3) == 3
    assert matcher.FILL_SLOTS == built == 1 and paired_pass_slots(3) == 4


def test_hiding_the_slot_saves_what_the_exact_model_says():
    cfg = Config(partition=(12, 10, 10), grid=(2, 8, 8), variant="pe-m")
    w = proxy_workload(cfg, seed=5)
    print("seed 5")
    q, k = quantize(w["q"])[0], quantize(w["k"])[0]
    cost = fill_slot_cost(q, k, cfg)
    for fill in (1, 0):
        with fill_slots(fill):
            exact = kaleido_cycles(q, k, cfg, schedule="pairs")
        assert cost[fill]["paired"]["pe-m"] == exact.cycles and cost[fill]["exact"]
    assert cost[0]["paired"]["pe-m"] < cost[1]["paired"]["pe-m"]
    assert cost[0]["dense"] == cost[1]["dense"]
