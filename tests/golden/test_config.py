import pytest

from golden import Config, ConfigError, model_partition


def test_defaults_are_the_papers():
    cfg = Config()
    assert (cfg.full_bits, cfg.partial_bits) == (5, 3)
    assert (cfg.rows, cfg.cols) == (4, 4)
    assert (cfg.queue_depth, cfg.clusters, cfg.cluster_capacity, cfg.string_bits) == (64, 4, 16, 16)
    assert cfg.head_dim == 128 and cfg.acc_bits == 2 * 8 + 7 + 1


@pytest.mark.parametrize("model, d, expect", [
    ("hunyuanvideo", 128, (16, 56, 56)),
    ("wan2.1", 128, (44, 42, 42)),
    ("turbodiffusion", 128, (44, 42, 42)),
    ("cogvideox", 64, (16, 24, 24)),
    ("wan2.1", 32, (12, 10, 10)),
])
def test_model_presets(model, d, expect):
    assert model_partition(model, d) == expect
    assert Config.for_model(model, d).partition == expect


@pytest.mark.parametrize("kwargs, message", [
    (dict(full_bits=3, partial_bits=5), "partial bits (5) must not exceed full bits (3)"),
    (dict(full_bits=9), "full bits (9) must be between 0 and 8"),
    (dict(partial_bits=-1), "partial bits (-1) must be between 0 and 8"),
    (dict(partition=(1, 2)), "partition needs three groups"),
    (dict(partition=(0, 0, 0)), "no channels"),
    (dict(grid=(0, 4, 4)), "extent below 1"),
    (dict(acc_bits=20), "could overflow"),
    (dict(rows=0), "rows must be between 1 and 256"),
    (dict(lookahead=10**11), "lookahead must be between 1 and 64"),
    (dict(clusters=2), "cannot hold a queue of 64"),
    (dict(issue_window=1), "issue window must be 0 (none) or 2 to 8 channels, got 1"),
    (dict(issue_window=9), "got 9"),
])
def test_bad_configs_say_why(kwargs, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Config(**kwargs)


def test_unknown_model():
    with pytest.raises(ConfigError, match="unknown model"):
        model_partition("sora", 64)


def test_frozen_and_hashable():
    cfg = Config(partition=[4, 2, 2], grid=[2, 2, 2])
    assert cfg.partition == (4, 2, 2)
    assert hash(cfg) == hash(Config(partition=(4, 2, 2), grid=(2, 2, 2)))
    with pytest.raises(AttributeError):
        cfg.rows = 3
    assert cfg.with_(rows=8).rows == 8


def test_group_slices_are_contiguous_t_y_x():
    s = Config(partition=(3, 0, 5)).group_slices
    assert (s["t"], s["y"], s["x"]) == (slice(0, 3), slice(3, 3), slice(3, 8))


def test_kaleido_pe_accumulators_are_sized_by_the_widest_group():
    # Each group drains on its own: 44 channels need 2*8 + 6 + 1 bits, not the 24 that D = 128 needs.
    cfg = Config(partition=(44, 42, 42))
    assert cfg.acc_bits == 24 and cfg.pe_acc_bits == 23
    assert Config(partition=(16, 56, 56)).pe_acc_bits == 2 * 8 + 6 + 1
    with pytest.raises(ConfigError, match="Kaleido PE accumulator of 22 bits could overflow"):
        Config(partition=(44, 42, 42), pe_acc_bits=22)

