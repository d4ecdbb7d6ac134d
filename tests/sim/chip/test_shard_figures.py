"""A shard's figures do not move when the chip model is made faster.

``data/shards_3a627d7.json`` holds what :func:`sim.chip.estimate.run_shard` gave
at commit 3a627d7, before each head's reuse tables were made once and shared,
the strata batched and the linear layers' matching batched: every case here
must give the same figures to the last digit (the estimate's ``summary.json``
is built from nothing else)."""

import json
from pathlib import Path

import pytest

from golden.config import Config
from sim.chip.chip import chip_from
from sim.chip.estimate import run_shard
from sim.chip.vdits import VDITS

RECORDED = json.loads((Path(__file__).parent / "data" / "shards_3a627d7.json").read_text())

#: (model, grid, tile samples, variant): a sampled and an exact Q K^T, the matcher
#: without the scheduler, no dispatcher, and a head large enough for many strata.
CASES = [("wan2.1", (4, 8, 8), 60, "full"), ("wan2.1", (4, 8, 8), None, "full"),
         ("cogvideox", (2, 8, 16), 40, "pe-m"), ("wan2.1", (2, 6, 10), 30, "pe"),
         ("wan2.1", (8, 16, 16), 3000, "full")]


@pytest.mark.parametrize("name, grid, samples, variant", CASES)
def test_a_shard_gives_the_recorded_figures(name, grid, samples, variant):
    model, chip = VDITS[name], chip_from("paper")
    cfg = Config.for_model(name, model.head_dim, grid=grid, array=chip.array, variant=variant)
    for shard in [(0, 1, 2), (model.steps - 1, 0, 0)]:
        got = run_shard(model, cfg, "video", shard, samples)
        got.pop("seconds")
        # The head's structure came after the recording (golden.structure): a figure of its own, not a moved one;
        # its oracle is the head's.
        found = got.pop("structure")
        got.pop("structure_seconds")
        assert found["reuse"]["oracle"] == pytest.approx(1 - got["head"]["oracle_macs"] / got["head"]["dense_macs"])
        # Each schedule's channels streamed and first passes came after it too (the
        # chip's port and accumulation-buffer prices): figures of their own.
        _new_figures(got["head"], cfg)
        want = RECORDED[f"{name}-{grid}-{samples}-{variant}-{shard}"]
        assert json.loads(json.dumps(got)) == want, f"{name} {grid} {samples} {variant} {shard}"


def _new_figures(head: dict, cfg: Config) -> None:
    """Take the figures that came after the recording out of ``head``, checking them:
    a dense schedule streams every channel of every tile and drains each score
    once; a paired one's passes stream at most what dense would per pass (4 a
    tile group) and its first passes are one channel group's of its passes."""
    for fields in [head, *head["qk_options"].values()]:
        steps, first = fields.pop("channel_steps"), fields.pop("first_passes")
        if not fields["paired"]:
            assert steps == fields["passes"] * cfg.head_dim and first == fields["passes"]
        else:
            assert 0 < first < fields["passes"] and 0 < steps <= fields["passes"] * cfg.head_dim
