"""The quality loop (sim/capture/quality.py): the int8 and reuse runs share one
path, so thresholds that reuse nothing leave the int8 run as it was, bit for
bit; reuse at the defaults changes the output; the reduction a run reports is
what ``estimate --activations`` finds on the archive of that run; and each
family ``capture`` knows runs through it."""

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("diffusers")

from sim.capture import family  # noqa: E402
from sim.capture.quality import (  # noqa: E402
    Arithmetic,
    archive_manifest,
    measure_reduction,
    output_quality,
    prepared,
    quality_config,
    run_loop,
    write_archive,
)
from sim.chip.activations import RESOLUTION, archive, archive_model  # noqa: E402
from sim.chip.estimate import ACTIVATIONS, run_estimate  # noqa: E402

from ..chip.test_estimate import CHIP, SIGNS  # noqa: E402

GRID, STEPS = (2, 4, 4), 3


def _setup(name: str):
    fam = family(name)
    model, shape, x0, noise, text = prepared(fam, GRID, "bikes", None, 0, "cpu", "float32")
    cfg = quality_config(fam, model, GRID)
    return fam, model, shape, (x0, noise, text), cfg


@pytest.fixture(scope="module")
def wan():
    return _setup("wan2.1")


def _run(setup, arith):
    fam, model, _, (x0, noise, text), _ = setup
    return run_loop(fam, model, x0, noise, text, STEPS, int(np.prod(GRID)), arith)


@pytest.mark.parametrize("where", ["attention", "all"])
def test_thresholds_that_reuse_nothing_leave_the_int8_run_as_it_was(wan, where):
    cfg = wan[4]
    # Full reuse only where the values are equal; a one-token window has no partner.
    nothing = cfg.with_(full_bits=8, partial_bits=8, window=1)
    int8, none = _run(wan, Arithmetic(None, where)), _run(wan, Arithmetic(nothing, where))
    assert np.array_equal(int8.latent, none.latent)
    assert all(np.array_equal(a, b) for a, b in zip(int8.velocities, none.velocities))
    # ... and int8 is not float: the test would see a run that changed nothing.
    float_run = _run(wan, None)
    assert not np.array_equal(float_run.latent, int8.latent)


@pytest.mark.parametrize("where", ["attention", "all"])
def test_reuse_costs_quality_beyond_int8(wan, where):
    # Attention alone changes the output too: a run that skipped Q~, K~, V~ would not.
    float_run = _run(wan, None)
    int8 = output_quality(_run(wan, Arithmetic(None, where)), float_run)
    reuse = output_quality(_run(wan, Arithmetic(wan[4].with_(full_bits=4, partial_bits=2), where)), float_run)
    print(where, "int8", int8["latent"], "reuse 4,2", reuse["latent"])
    assert reuse["latent"]["psnr_db"] < int8["latent"]["psnr_db"]
    assert len(reuse["steps"]) == STEPS and all(s["cosine"] > 0.9 for s in reuse["steps"])


def test_the_reduction_is_the_estimates_on_the_same_steps(wan, tmp_path):
    fam, model, shape, _, cfg = wan
    run = _run(wan, Arithmetic(cfg, "all"))
    mine = measure_reduction(run, cfg)
    path = str(tmp_path / "acts")
    write_archive(run, path, archive_manifest(fam, model, shape, GRID, STEPS))
    est = run_estimate(archive_model(archive(path)), RESOLUTION, CHIP, ACTIVATIONS, str(tmp_path / "est"),
                       shape["layers"] * shape["heads"], None, SIGNS, workers=1, clip=path)
    theirs = est["reuse"]["by_step"]
    assert sorted(theirs) == sorted(mine["by_step"]) == list(range(STEPS))
    for step, ops in mine["by_step"].items():
        assert set(ops) == set(theirs[step]) >= {"qk", "pv", "qkv", "out", "mlp1", "mlp2"}
        for op, v in ops.items():
            assert v == pytest.approx(theirs[step][op], abs=1e-12), (step, op)
    assert 0 < mine["total"]["qk"]["oracle"] < 1


@pytest.mark.parametrize("name", ["cogvideox", "hunyuanvideo"])
def test_every_family_runs_through_the_arrays(name):
    setup = _setup(name)
    float_run = _run(setup, None)
    run = _run(setup, Arithmetic(setup[4], "all"))
    q = output_quality(run, float_run)
    assert np.isfinite(run.latent).all() and 0.9 < q["latent"]["cosine"] < 1.0
    red = measure_reduction(run, setup[4])
    assert {"qk", "pv", "qkv", "mlp1"} <= set(red["total"]) and red["total"]["qk"]["oracle"] > 0
