"""A new dispatcher and a new PE kind through the registries alone
(``tests/toys.py``): each, named by a design point, runs in the engine under
Amaranth's simulator, exact and on its own cycle model, and through a
whole-model estimate on Dask workers."""

import numpy as np
import pytest

from golden import Config, approx_scores
from golden.cycle_model import kaleido_cycles, kaleido_tables
from golden.dispatchers import DISPATCHERS, design_blocks, dispatcher_of
from golden.pe import decode
from golden.pe_contract import register
from golden.pe_encoding import Mode, Need, Target
from golden.pe_kinds import PE_KINDS, PaperPE
from hw.dispatcher.dispatchers import DISPATCHERS as UNITS
from hw.host.engine_image import kaleido_image
from tb.engine_sim import simulate_engine
from tests.adversarial import operands
from tests.toys import Descending, DescendingUnit, WholeProducts


def test_a_design_point_names_the_toy():
    cfg = Config(dispatcher="toy-descending")
    assert DISPATCHERS["toy-descending"] is Descending and UNITS["toy-descending"] is DescendingUnit
    assert dispatcher_of(cfg, True) == "toy-descending" and dispatcher_of(cfg, False) == "in-order"
    assert design_blocks(cfg, "kaleido") == ("pe", "toy-descending", None, "scheduler", False)
    assert dispatcher_of(Config(), True) == "matcher"           # it claims no design point unnamed
    with pytest.raises(ValueError, match="has no issue window"):
        Config(dispatcher="toy-descending", issue_window=4)


def engine_cycles(rng, **design):
    """Run a small head with adversarial partial reuse through the engine under
    Amaranth's simulator; check its scores against the golden model and its
    cycles against the cycle model. Returns the cycles and a function that gives
    the cycle model's count at another design point on the same operands."""
    cfg = Config(partition=(6, 3, 2), grid=(2, 3, 4), rows=2, cols=3, queue_depth=8, clusters=2, cluster_capacity=4,
                 **design)
    q, k = operands("partial", cfg, rng)
    tables = kaleido_tables(q, k, cfg)
    got = simulate_engine(kaleido_image(q, k, cfg, tables), cfg, cfg.tokens, cfg.tokens, matcher=True)
    np.testing.assert_array_equal(got["scores"], approx_scores(q, k, cfg))
    assert got["cycles"] == kaleido_cycles(q, k, cfg, tables, schedule="pairs").engine_cycles

    def model_at(**changes):
        at = cfg.with_(**changes)
        return kaleido_cycles(q, k, at, kaleido_tables(q, k, at), schedule="pairs").engine_cycles
    return got["cycles"], model_at


@pytest.mark.parametrize("variant", ["pe-m", "full"])
def test_the_toy_runs_in_the_engine(variant, rng):
    cycles, model_at = engine_cycles(rng, variant=variant, dispatcher="toy-descending")
    # Its slot count is the in-order one: the variant without a matcher takes as many cycles.
    assert cycles == model_at(variant="pe-sh" if variant == "full" else "pe", dispatcher="")


def test_the_toy_runs_through_an_estimate(tmp_path):
    from sim.chip.estimate import run_estimate
    from tests.sim.chip.test_estimate import CHIP, SIGNS, TINY

    runs = {v: run_estimate(TINY, "480p", CHIP, "proxy", str(tmp_path / v), per_step=1, samples=None, signs=SIGNS,
                            workers=2, steps=1, variant=v, **({"dispatcher": "toy-descending"} if v == "pe-m" else {}))
            for v in ("pe-m", "pe")}
    toy, plain = runs["pe-m"], runs["pe"]
    assert toy["config"]["dispatch"]["dispatcher"] == "toy-descending"
    # The toy issues as the in-order dispatcher does, and it has no unit to price.
    assert toy["designs"]["kaleido"]["time_s"] == pytest.approx(plain["designs"]["kaleido"]["time_s"])


def test_a_design_point_names_the_toy_pe_kind():
    cfg = Config(pe_kind="toy-whole")
    assert PE_KINDS["toy-whole"] is WholeProducts and cfg.pe.kind is WholeProducts
    assert Config().pe.kind is PaperPE                         # it claims no design point unnamed
    assert "toy-whole" not in Config().to_json() and '"pe_kind": "toy-whole"' in cfg.to_json()
    with pytest.raises(ValueError, match="has 3 registers"):
        Config(pe_kind="toy-whole", accumulators=4)
    # A partially reused key costs both lanes in pass B, where the paper's PE takes one.
    assert WholeProducts.step_need(Mode.B, 0, 1)[0] == Need.FULL and PaperPE.step_need(Mode.B, 0, 1)[0] == Need.LO


def test_a_kind_must_fit_its_datapath():
    class Tapless(PaperPE):
        name = "toy-tapless"

        @classmethod
        def step_need(cls, mode, sq, sk):
            need, targets = super().step_need(mode, sq, sk)
            return need, (targets[0], Target.TAPS, targets[2]) if mode == Mode.A else targets

    with pytest.raises(ValueError, match="has no taps"):
        register(Tapless)
    assert "toy-tapless" not in PE_KINDS


@pytest.mark.parametrize("stages", [1, 3])
def test_the_pe_decodes_by_the_toy_kind(stages, seed):
    """The RTL PE at a toy-kind design point follows the toy's table, cycle by
    cycle against the golden PE of that kind; and the stimulus tells the two
    tables apart, so a PE that kept the paper's table would fail."""
    import random

    from tests.hw.core.test_pe import check_random_sequences

    cfg = Config(partition=(2, 1, 1), pe_kind="toy-whole", pe_stages=stages)
    driven = check_random_sequences(cfg, random.Random(seed), cycles=1500)
    assert any(decode(r.mode, r.steps, r.sq0, c.sk0, r.sq1, c.sk1, WholeProducts)
               != decode(r.mode, r.steps, r.sq0, c.sk0, r.sq1, c.sk1, PaperPE) for r, c in driven)


@pytest.mark.parametrize("variant", ["pe-m", "full"])
def test_the_toy_pe_kind_runs_in_the_engine(variant, rng):
    cycles, model_at = engine_cycles(rng, variant=variant, pe_kind="toy-whole")
    # Partial reuse left unused costs cycles: the matcher pairs fewer steps than on the paper's PE.
    assert cycles > model_at(pe_kind="")


def test_the_toy_pe_kind_runs_through_an_estimate(tmp_path):
    from sim.chip.estimate import run_estimate
    from tests.sim.chip.test_estimate import CHIP, SIGNS, TINY

    runs = {kind: run_estimate(TINY, "480p", CHIP, "proxy", str(tmp_path / (kind or "paper")), per_step=1,
                               samples=None, signs=SIGNS, workers=2, steps=1, variant="pe-m", pe_kind=kind)
            for kind in ("toy-whole", "")}
    toy, paper = runs["toy-whole"], runs[""]
    assert toy["config"]["pe"]["pe_kind"] == "toy-whole"
    assert toy["designs"]["kaleido"]["time_s"] > paper["designs"]["kaleido"]["time_s"]


@pytest.mark.parametrize("simulator", ["icarus", "verilator"])
def test_both_toys_run_through_sim_attention(tmp_path, rng, simulator):
    """The command line knows neither toy until ``--plugin`` imports their module;
    the testbench's process then imports it too (golden.plugins)."""
    import json
    import os
    import subprocess
    import sys

    from sim.rtl import runner
    if runner.missing(simulator):
        pytest.skip(runner.missing(simulator))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cfg = Config(partition=(1, 2, 2), grid=(2, 2, 3))
    q, k = operands("partial", cfg, rng)
    np.save(tmp_path / "q.npy", q)
    np.save(tmp_path / "k.npy", k)
    args = ["sim", "attention", "--q", "q.npy", "--k", "k.npy", "--grid", "2,2,3", "--partition", "1,2,2",
            "--simulator", simulator, "--rows", "2", "--cols", "3", "--variant", "pe-m", "--no-energy",
            "--pe-kind", "toy-whole", "--dispatcher", "toy-descending", "--out", "rtl"]
    assert args[-6:-4] == ["--pe-kind", "toy-whole"]
    env = dict(os.environ, PYTHONPATH=root)

    def kaleido(*more):
        return subprocess.run([sys.executable, "-m", "sim", *more], capture_output=True, text=True, cwd=tmp_path,
                              env=env)

    refused = kaleido(*args)
    assert refused.returncode == 2 and "unknown dispatcher 'toy-descending'" in refused.stderr
    refused = kaleido(*args[:-4], "--out", "rtl")          # the PE kind alone
    assert refused.returncode == 2 and "unknown PE kind 'toy-whole'" in refused.stderr
    r = kaleido("--plugin", "tests.toys", *args)
    assert r.returncode == 0, r.stderr
    stats = json.loads((tmp_path / "rtl" / "stats.json").read_text())
    assert stats["scores_match"] and stats["cycles"] == stats["model_cycles"]
    assert stats["simulator"] == simulator and stats["config"]["pe"]["pe_kind"] == "toy-whole"
    assert stats["config"]["dispatch"]["dispatcher"] == "toy-descending"
