import pytest

from golden import Config, ConfigError


def test_defaults_are_the_papers():
    cfg = Config()
    assert (cfg.full_bits, cfg.partial_bits) == (5, 3)
    assert (cfg.rows, cfg.cols) == (4, 4)
    assert (cfg.queue_depth, cfg.clusters, cfg.cluster_capacity, cfg.string_bits) == (64, 4, 16, 16)
    assert cfg.head_dim == 128 and cfg.acc_bits == 2 * 8 + 7 + 1


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



def test_each_knob_lives_in_one_sub_config():
    """A field is declared once, in its part; the design point reads and sets it by
    its own name, and a part given whole is the same design point."""
    from dataclasses import fields

    from golden.config import KNOBS, PARTS, ArrayConfig, ChipConfig
    names = [f.name for cls in PARTS.values() for f in fields(cls)]
    assert len(names) == len(set(names)) and set(KNOBS) <= set(names)
    cfg = Config(rows=2, clock_mhz=150, issue_window=4, full_bits=6)
    assert cfg.array == ArrayConfig(rows=2) and cfg.chip == ChipConfig(clock_mhz=150)
    assert (cfg.rows, cfg.dispatch.issue_window, cfg.reuse.full_bits) == (2, 4, 6)
    assert Config(array=ArrayConfig(rows=2), chip={"clock_mhz": 150}, issue_window=4, full_bits=6) == cfg
    assert cfg.with_(cols=3).array == ArrayConfig(rows=2, cols=3)
    assert Config.from_json(cfg.to_json()) == cfg


def test_a_flat_json_design_point_still_reads():
    # Results written before the sub-configs hold the fields flat.
    import json
    flat = {"partition": [4, 2, 2], "grid": [2, 2, 2], "rows": 2, "cols": 3, "full_bits": 6, "partial_bits": 2,
            "issue_window": 3, "clock_mhz": 150.0, "seed": 7}
    cfg = Config.from_json(json.dumps(flat))
    assert (cfg.rows, cfg.cols, cfg.full_bits, cfg.issue_window, cfg.clock_mhz, cfg.seed) == (2, 3, 6, 3, 150.0, 7)


def test_a_part_refuses_on_its_own_and_a_wrong_part():
    from golden.config import ArrayConfig, DispatchConfig, ReuseConfig
    with pytest.raises(ConfigError, match="rows must be between 1 and 256"):
        ArrayConfig(rows=0)
    with pytest.raises(ConfigError, match="cannot hold a queue"):
        DispatchConfig(clusters=1)
    with pytest.raises(TypeError, match="Config has no field 'row'"):
        Config(row=2)
    with pytest.raises(TypeError,
                       match="Config.array must be ArrayConfig, a dict of its fields or None, not ReuseConfig"):
        Config(array=ReuseConfig())


def test_derived_widths_follow_the_head_of_a_copy():
    """A copy with another head re-derives what its original derived (the help's
    "default: the head dimension", "the least that cannot overflow"), and keeps
    what was given."""
    wide = Config().with_(partition=(88, 84, 84))
    assert wide.max_channels == 256 and wide.acc_bits == Config(partition=(88, 84, 84)).acc_bits
    longer = Config().with_(max_channels=256)
    assert longer.acc_bits == Config(max_channels=256).acc_bits > Config().acc_bits
    assert Config(acc_bits=30).with_(partition=(4, 2, 2)).acc_bits == 30
    assert Config(max_channels=200).with_(seed=3).max_channels == 200


@pytest.mark.parametrize("knob", ["acc_bits", "pe_acc_bits"])
def test_an_accumulator_wider_than_any_simulator_integer_is_refused(knob):
    with pytest.raises(ConfigError, match=rf"{knob.replace('_', ' ')} must be at most 64 .*got 100000"):
        Config(**{knob: 100000})
    assert getattr(Config(**{knob: 64}), knob) == 64
