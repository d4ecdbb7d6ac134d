"""The report's chip-level section from a tiny estimate: every model's row, the
paper's numbers beside ours, and the two figures."""

from sim.chip.chip import Chip
from sim.chip.estimate import plan_shards, run_shard, shard_config, summarize
from sim.chip.vdits import VDITS, VDiT
from sim.experiments.report import whole_model as report_chip
from tests.sim.chip.test_estimate import SIGNS

TINY = VDiT("wan2.1", layers=2, heads=2, head_dim=64, hidden=128, mlp=256, steps=2, passes_per_step=1,
            text_tokens=16, joint_text=True, video={"480p": (9, 64, 64), "720p": (9, 64, 96)})


def test_the_section_shows_ours_beside_the_papers(tmp_path):
    chip = Chip(name="small", arrays=4, softmax_lanes=16)
    runs = {}
    for res in ("480p", "720p"):
        cfg = shard_config(TINY, res, chip)
        results = [run_shard(TINY, cfg, "proxy", s, 200) for s in plan_shards(TINY, 1)]
        runs[res] = (cfg, results, report_chip.brief(summarize(TINY, res, chip, cfg, results, SIGNS)))
    small = runs["480p"][2]
    data = {"chip": {"quick": report_chip.QUICK, "models": {name: small for name in VDITS},
                     "resolutions": {"wan2.1": {"480p": small, "720p": runs["720p"][2]}},
                     "fig22": report_chip.fig22_grid(TINY, "480p", runs["480p"][0], runs["480p"][1], SIGNS, chip)}}
    assert len(data["chip"]["fig22"]) == len(report_chip.ARRAY_SIDES) * len(report_chip.BUFFERS_MB)
    # More arrays never make a layer slower.
    f22 = data["chip"]["fig22"]
    for mb in report_chip.BUFFERS_MB:
        times = [f22[f"{side}x{mb}"]["kaleido"]["time_s"] for side in report_chip.ARRAY_SIDES]
        assert times == sorted(times, reverse=True)
    data["chip"]["explore"] = report_chip.break_even_map(TINY, runs["480p"][0], runs["480p"][1], SIGNS)
    report_chip.plot(tmp_path, data)
    for name in ("fig18_chip", "fig22_chip", "explore_chip"):
        assert (tmp_path / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    text = "\n".join(report_chip.markdown(data))
    for name, (speedup, saving) in report_chip.PAPER_FIG18.items():
        assert f"| {name} |" in text and f"{speedup}x, {saving}x" in text
    assert "quick sample" in text and "7.9 %" in text and "| 720p |" in text
    # A row per chip and scope: two vector units, each at three Kaleido shares and two more coupled shares.
    assert "break-even map" in text and text.count("| Q K^T |") == text.count("| all |") == 2 * (3 + 2)
