"""Workloads from real video: the bundled clips, a user's own file, and every bad input."""

import numpy as np
import pytest

from golden import Config, pair_reuse, quantize
from golden.video import (
    CLIPS,
    TEMPORAL_STRIDE,
    TOKEN_PIXELS,
    clip_path,
    latent,
    pixels_needed,
    read_frames,
    video_workload,
)
from golden.workload import WorkloadError

av = pytest.importorskip("av")


def encode(path, frames: np.ndarray, rate: int = 25) -> None:
    """Write uint8 RGB frames ``[F, H, W, 3]`` as an H.264 mp4 with PyAV."""
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=rate)
        stream.height, stream.width = frames.shape[1:3]
        stream.pix_fmt = "yuv420p"
        stream.options = {"crf": "0"}           # lossless luma keeps the test's tolerances tight
        for f in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(f, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


@pytest.fixture
def gradient(tmp_path):
    """A horizontal gradient that moves right by 2 pixels a frame, over a frame-numbered
    brightness ramp: frame i is i*8 brighter, so frame order is visible in its mean."""
    F, H, W = 12, 48, 64
    x = np.arange(W)[None, None, :] - 2 * np.arange(F)[:, None, None]
    img = (x % 64) * 2 + 8 * np.arange(F)[:, None, None]
    img = np.broadcast_to(img, (F, H, W)).astype(np.uint8)
    frames = np.repeat(img[..., None], 3, axis=-1)
    path = tmp_path / "gradient.mp4"
    encode(path, frames)
    return path, frames


def test_bundled_clips_exist():
    for name in CLIPS:
        assert clip_path(name).endswith(".mp4")


def test_user_file_reads_back_in_order(gradient):
    path, frames = gradient
    got = read_frames(str(path), 4, 32, 32, start=3, crop=(16, 8))
    want = frames[3:7, 8:40, 16:48].astype(np.float64) / 255
    # H.264 at crf 0 with 4:2:0 chroma: grey frames come back within a few codes.
    assert np.abs(got - want).mean() < 3 / 255
    means = got.mean(axis=(1, 2, 3))
    assert np.all(np.diff(means) > 0), "frames out of order"


def test_bundled_clip_end_to_end():
    cfg = Config.for_model("wan2.1", 32, grid=(2, 2, 2))
    w = video_workload(cfg, "carphone")
    assert set(w) == {"q", "k", "v", "x"}
    for name, x in w.items():
        # x, the embedding Q, K and V are projected from, is at least 64 channels wide.
        assert x.shape == (cfg.tokens, max(64, cfg.head_dim) if name == "x" else cfg.head_dim)
        assert x.dtype == np.float32 and np.all(np.isfinite(x)) and x.std() > 0
    again = video_workload(cfg, "carphone")
    for n in w:
        np.testing.assert_array_equal(w[n], again[n])     # seeded: the same every time
    other = video_workload(cfg, "carphone", seed=2)
    assert not np.array_equal(w["q"], other["q"])


def test_noise_lowers_reuse(gradient):
    # Pure noise has no motion to reuse: its full-reuse share must fall below the clean clip's.
    path, _ = gradient
    cfg = Config(partition=(4, 4, 4), grid=(2, 2, 4))
    def full_share(sigma):
        q = quantize(video_workload(cfg, str(path), noise=sigma)["q"])[0]
        return np.mean(pair_reuse(q, cfg).states == 2)
    assert full_share(1.0) < full_share(0.0)


def test_latent_of_a_constant_block_is_constant():
    frames = np.full((TEMPORAL_STRIDE * 2, 32, 32, 3), 0.25)
    frames[TEMPORAL_STRIDE:] = 0.75                      # the second latent frame is brighter
    z = latent(frames)
    assert z.shape == (2, 4, 4, 16)
    # uniform within a latent frame
    np.testing.assert_allclose(z[0], np.broadcast_to(z[0, :1, :1], z[0].shape), atol=1e-9)
    assert not np.allclose(z[0], z[1])


def test_pixels_needed():
    assert pixels_needed(Config(grid=(3, 2, 5))) == (3 * TEMPORAL_STRIDE, 2 * TOKEN_PIXELS, 5 * TOKEN_PIXELS)


@pytest.mark.parametrize("grid, kwargs, message", [
    ((4, 1, 1), {}, "frames, but the grid needs 16"),
    ((1, 4, 2), {}, "too small for the grid"),
    ((1, 1, 1), {"start": 11}, "from frame 11"),
    ((1, 1, 1), {"crop": (60, 0)}, "leaves the 64x48 frame"),
    ((1, 1, 1), {"start": -1}, "negative"),
    ((1, 1, 1), {"noise": 1.5}, r"\[0, 1\]"),
])
def test_bad_requests(gradient, grid, kwargs, message):
    path, _ = gradient
    with pytest.raises(WorkloadError, match=message):
        video_workload(Config(partition=(2, 2, 2), grid=grid), str(path), **kwargs)


def test_bad_files(tmp_path):
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"\x00not a video" * 100)
    cfg = Config(partition=(2, 2, 2), grid=(1, 1, 1))
    with pytest.raises(WorkloadError, match="not a video PyAV can read"):
        video_workload(cfg, str(junk))
    with pytest.raises(WorkloadError, match="no such file"):
        video_workload(cfg, str(tmp_path / "missing.mp4"))
    with pytest.raises(WorkloadError, match="directory"):
        video_workload(cfg, str(tmp_path))
