"""The models' shapes and the token grids their videos make."""

import pytest

from golden.rope import MODELS, model_partition
from sim.chip.vdits import RESOLUTIONS, VDITS, VDiTError, token_grid, vdit


def test_a_480p_wan_video_is_the_head_the_issue_names():
    # 81 frames of 832x480: 21 latent frames of 60x104, 2x2 patches: N = 32,760.
    assert vdit("Wan2.1").grid("480p") == (21, 30, 52)
    assert vdit("wan2.1").tokens("480p") == 32760
    assert vdit("wan2.1").grid("720p") == (21, 45, 80)


def test_every_model_has_its_rope_split_and_a_480p_video():
    for name, model in VDITS.items():
        assert name in MODELS and model.name == name
        assert sum(model_partition(name, model.head_dim)) == model.head_dim
        t, h, w = model.grid("480p")
        assert t * h * w == model.tokens("480p") > 10000
        assert set(model.video) <= set(RESOLUTIONS)


def test_the_vae_keeps_the_first_frame_and_folds_the_rest():
    assert token_grid(1, 16, 16) == (1, 1, 1)
    assert token_grid(5, 16, 32) == (2, 1, 2)
    with pytest.raises(VDiTError, match="whole tokens"):
        token_grid(4, 16, 16)
    with pytest.raises(VDiTError, match="whole tokens"):
        token_grid(5, 20, 16)


def test_unknown_names_and_resolutions_are_refused_in_one_line():
    with pytest.raises(VDiTError, match="choose one of"):
        vdit("sora")
    with pytest.raises(VDiTError, match="no 720p"):
        vdit("cogvideox").grid("720p")


def test_the_flow_schedule_starts_at_pure_noise_and_falls():
    from sim.chip.vdits import flow_sigmas
    plain, shifted = flow_sigmas(4, 1.0), flow_sigmas(50, 5.0)
    assert plain == [1.0, 0.75, 0.5, 0.25]
    assert shifted[0] == 1.0 and all(a > b for a, b in zip(shifted, shifted[1:])) and shifted[-1] > 0
    assert shifted[25] > 0.5                  # a shift keeps the middle steps noisy
