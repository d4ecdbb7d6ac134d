"""The block registry: every component it builds takes a Config and nothing else,
and its Verilog depends on the knobs the registry lists and no others."""

import gc

import pytest

from golden import Config, ConfigError
from golden.config import CLUSTER_RULES
from hw import blocks
from tests.sweep import sweep
from tests.toys import Descending, WholeProducts


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
@pytest.mark.parametrize("name", list(blocks.BLOCKS))
def test_components_refuse_a_non_config(name):
    with pytest.raises(TypeError, match="takes a Config, not dict"):
        blocks.build(name, {"acc_bits": 24})
    # Amaranth marks a component unused from its creation, so the one whose __init__
    # refused warns when it is collected: collect it here, under this test's filter.
    gc.collect()


#: Another valid value of each knob a block may read (and the grid, the softmax
#: unit's row length); from a small design point, so that every block emits fast.
SMALL = dict(partition=(4, 2, 2), rows=2, cols=2, grid=(1, 2, 4))
OTHER = dict(max_channels=200, acc_bits=30, accumulators=4, pe_stages=2, rows=3, cols=3,
             cluster_rule=next(r for r in CLUSTER_RULES if r != Config().cluster_rule),
             lookahead=3, issue_window=3, variant="pe", vector_lanes=2, grid=(2, 4, 4), full_bits=6, partial_bits=2,
             window=5, pe_kind=WholeProducts.name, dispatcher=Descending.name)


def _changes(name, plain, knob, value) -> bool:
    """Whether ``knob`` at ``value`` changes block ``name``'s Verilog; a value the
    block refuses (a dispatcher beside the channel window it always has) does not."""
    try:
        return _body(name, **{knob: value}) != plain
    except ConfigError:
        return False


def _body(name, **change):
    # The Verilog without its header, which records the whole Config.
    return blocks.verilog(name, Config(**{**SMALL, **change})).split("\n", 2)[2]


# Each block's whole list is one check; the cheapest block runs in make test, the rest in test-all.
@sweep("name", list(blocks.BLOCKS), keep=["baseline-pe"])
def test_a_block_reads_exactly_its_knobs(name):
    """The registry's knobs are those whose change changes the block's Verilog: a
    command refuses the others, so a missing one would refuse a real knob and an
    extra one would let an ignored option through."""
    plain = _body(name)
    reads = {k for k, v in OTHER.items() if _changes(name, plain, k, v)}
    assert reads == blocks.BLOCKS[name].knobs


def test_emitted_verilog_is_cached_by_what_it_depends_on(tmp_path, monkeypatch):
    """A second emission reads the cache; an edit to the sources (another hash) or
    another Config emits again, so a stale text is never served."""
    monkeypatch.setattr(blocks, "CACHE", tmp_path)
    cfg = Config(**SMALL)
    first = blocks.verilog("baseline-pe", cfg)
    files = sorted(tmp_path.glob("*.v"))
    assert len(files) == 1 and files[0].read_text() == first
    files[0].write_text(first + "// read back\n")      # what a second call returns comes from the file
    assert blocks.verilog("baseline-pe", cfg).endswith("// read back\n")
    blocks.verilog("baseline-pe", cfg.with_(acc_bits=30))
    monkeypatch.setattr(blocks, "_sources", lambda: "an edited tree")
    assert blocks.verilog("baseline-pe", cfg) == first
    assert len(list(tmp_path.glob("*.v"))) == 3


def test_a_kind_edited_under_its_name_is_emitted_again(tmp_path, monkeypatch):
    """The Verilog cache is keyed by a plugin kind's step table, not its name: a
    kind edited and registered again under the same name gets its own RTL."""
    from golden.pe_contract import register
    from golden.pe_encoding import Mode, Need, Target
    from golden.pe_kinds import PE_KINDS, PaperPE

    monkeypatch.setattr(blocks, "CACHE", tmp_path)

    class Plain(PaperPE):                   # the paper's table, as first written
        name = "edited-kind"

    class WholeInD(PaperPE):                # the same name, after an edit (docs/plugins.md's kind)
        name = "edited-kind"

        @classmethod
        def step_need(cls, mode, sq, sk):
            if mode in (Mode.C, Mode.D) and sk == 1 and sq != 2:
                return Need.FULL, (Target.ALL, Target.NO, Target.NO)
            return super().step_need(mode, sq, sk)

    cfg = Config(**SMALL, pe_kind="paper").with_(pe_kind="")
    try:
        register(Plain)
        before = blocks.verilog("pe", cfg.with_(pe_kind="edited-kind"))
        del PE_KINDS["edited-kind"]
        register(WholeInD)
        after = blocks.verilog("pe", cfg.with_(pe_kind="edited-kind"))
    finally:
        PE_KINDS.pop("edited-kind", None)
    assert before != after and len(list(tmp_path.glob("*.v"))) == 2
    # Each is what the kind's own emission gives, not a stale file.
    monkeypatch.setattr(blocks, "CACHE", tmp_path / "fresh")
    try:
        register(WholeInD)
        assert blocks.verilog("pe", cfg.with_(pe_kind="edited-kind")) == after
    finally:
        PE_KINDS.pop("edited-kind", None)


def test_a_blocks_sign_off_key_does_not_follow_a_kind_it_lacks():
    """The softmax unit is the same netlist whatever PE kind the design point names,
    so an estimate with a plugin kind reuses its sign-off (keyed by the netlist)."""
    from golden.pe_contract import register
    from golden.pe_kinds import PE_KINDS, PaperPE
    from synth.flow import cache_key

    class Other(PaperPE):
        name = "softmax-blind-kind"

    try:
        register(Other)
        keys = {cache_key(blocks.verilog("softmax", Config(**SMALL, **knobs)), None, 100.0)
                for knobs in ({}, {"pe_kind": "softmax-blind-kind"}, {"accumulators": 4})}
    finally:
        PE_KINDS.pop("softmax-blind-kind", None)
    assert len(keys) == 1
