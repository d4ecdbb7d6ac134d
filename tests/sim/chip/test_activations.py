"""An estimate on a captured archive, on a two-worker Dask LocalCluster: the
shards come from what was captured, every product whose input was captured
reuses at its own level, and each step says which heads ran dense and why."""

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("diffusers")

from sim.capture import capture, family  # noqa: E402
from sim.chip.activations import RESOLUTION, archive, archive_model  # noqa: E402
from sim.chip.estimate import ACTIVATIONS, plan_shards, run_estimate  # noqa: E402
from sim.chip.layer import HIDDEN_ROLES  # noqa: E402
from sim.chip.reuse_where import format_steps, schedule_line  # noqa: E402

from .test_estimate import CHIP, SIGNS  # noqa: E402

GRID = (3, 8, 8)


@pytest.fixture(scope="module")
def estimated(tmp_path_factory):
    root = tmp_path_factory.mktemp("act")
    path = str(root / "wan")
    capture(family("wan2.1"), path, GRID, 4, [0, 3], None, [1], "bikes", loop="noised")
    model = archive_model(archive(path))
    summary = run_estimate(model, RESOLUTION, CHIP, ACTIVATIONS, str(root / "est"), 2, None, SIGNS, workers=2,
                           clip=path)
    return path, model, summary


def test_the_model_is_the_archives(estimated):
    path, model, _ = estimated
    a = archive(path)
    assert (model.layers, model.heads, model.head_dim, model.steps) == (2, 2, 48, 4)
    assert model.grid(RESOLUTION) == GRID and model.partition == a.partition


def test_only_captured_heads_are_drawn(estimated):
    path, model, s = estimated
    from sim.chip.activations import captured_cells
    plan = plan_shards(model, 5, captured=captured_cells(archive(path)))
    assert plan == [(0, 0, 1), (0, 1, 1), (3, 0, 1), (3, 1, 1)]
    assert s["computed_steps"] == [0, 3] and s["shards"] == 4


def test_every_captured_product_reuses(estimated):
    _, _, s = estimated
    for step, ops in s["reuse"]["by_step"].items():
        assert set(ops) == {"qk", "pv", "qkv", "out", "mlp1", "mlp2", "cross_q", "cross_out"}
        for op, v in ops.items():
            assert v["oracle"] is not None and 0 < v["oracle"] < 0.75, (op, v)
            assert v["hardware"] <= v["oracle"] + 1e-12, (op, v)
        assert all(ops[r]["hardware"] > 0 for r in ("out", "mlp2", "cross_out"))   # inputs no workload had
    assert set(s["linear"]["by_role"]) == {"qkv", "out", "mlp1", "mlp2", "cross_q", "cross_out"}
    assert "captured" in s["scope"] and "random" in s["scope"]


def test_the_layers_run_on_their_own_inputs(estimated):
    """The chip prices each linear layer by its own captured input: taking the
    roles away (the hidden-state layers then dense too) costs the Kaleido chip
    time on the linear layers."""
    from dataclasses import replace

    from sim.chip.chip import baseline_head
    from sim.chip.estimate import _combine
    from sim.chip.kinds import kinds_of
    from sim.chip.layer import layer_cost

    path, model, s = estimated
    import glob
    import json
    results = [json.loads(open(f).read()) for f in sorted(glob.glob(f"{path}/../est/shards/*.json"))]
    head = _combine(results, model, 1.96)[0]
    base = baseline_head(model.tokens(RESOLUTION), model.head_dim, CHIP.rows, CHIP.cols)

    def linear_slots(h):
        kinds = kinds_of("kaleido", CHIP, {"kaleido": h, "baseline": base}, SIGNS)
        return layer_cost(model, model.tokens(RESOLUTION), kinds, CHIP, 10)["ops"]["linear"]["time_s"]
    with_roles = linear_slots(head)
    without = linear_slots(replace(head, linear_roles=None))
    assert with_roles < without
    assert set(HIDDEN_ROLES) <= set(head.linear_roles)


def test_each_step_says_which_schedule_its_heads_ran(estimated):
    _, _, s = estimated
    lines = format_steps(s["reuse"], {0: 1.0, 3: 0.5})
    assert len(lines) == 2 and lines[0].startswith("step 0 sigma 1.000:")
    for line, (step, sched) in zip(lines, s["reuse"]["schedules"].items()):
        assert sched["heads"] == 2 == sum(sched["ran"].values()) == sum(sched["fastest"].values())
        assert "Q K^T of 2 heads: " in line and "against dense" in line and "bounds it" in line
        for name, n in sched["ran"].items():
            assert f"{n} {name}" in line
    assert np.isfinite(s["speedup"]) and np.isfinite(s["energy_ratio"])
    total = schedule_line(s)
    assert total.startswith("Q K^T schedules (chip): ") and "each head on its own: " in total
    ran = sum(n for v in s["reuse"]["schedules"].values() for n in v["ran"].values())
    assert ran == 4 == sum(int(part.split()[0]) for part in total.split(": ")[1].split(";")[0].split(", "))


def test_a_layer_type_some_blocks_lack_still_reuses(tmp_path):
    """HunyuanVideo's single-stream blocks have no output projection or second
    MLP layer of their own: the dual-stream blocks' inputs price those layers."""
    path = str(tmp_path / "hy")
    capture(family("hunyuanvideo"), path, GRID, 2, [1], None, None, "bikes", loop="noised")
    a = archive(path)
    assert set(a.roles(1, 0)) == {"qkv", "out", "mlp1", "mlp2"} and set(a.roles(1, 1)) == {"qkv", "mlp1"}
    s = run_estimate(archive_model(a), RESOLUTION, CHIP, ACTIVATIONS, str(tmp_path / "est"), 4, None, SIGNS,
                     workers=2, clip=path)
    assert set(s["linear"]["by_role"]) == {"qkv", "out", "mlp1", "mlp2"}
    assert all(v["slot_reduction"] > 0 for v in s["linear"]["by_role"].values())
