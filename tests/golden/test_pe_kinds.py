"""The PE kinds' registry: the built-in kinds, how a design point picks one, and
what a kind's table must fit before it is registered."""

import pytest

from golden import Config
from golden.pe_contract import register
from golden.pe_encoding import Mode, Need, Target
from golden.pe_kinds import ACCUMULATORS, PE_KINDS, ExactPE, PaperPE, pe_kind_of


def test_the_built_in_kinds_are_picked_by_their_registers():
    assert list(PE_KINDS)[:2] == ["paper", "exact"] and ACCUMULATORS == (3, 4)
    for what in (3, "paper", PaperPE, Config(), Config().pe):
        assert pe_kind_of(what) is PaperPE
    for what in (4, "exact", ExactPE, Config(accumulators=4), Config(accumulators=4, pe_kind="exact")):
        assert pe_kind_of(what) is ExactPE
    assert ExactPE.taps and not PaperPE.taps and ExactPE.actions and not PaperPE.actions


def test_a_design_point_refuses_a_kind_it_cannot_build():
    with pytest.raises(ValueError, match="unknown PE kind 'nine'"):
        Config(pe_kind="nine")
    with pytest.raises(ValueError, match="has 4 registers: give it accumulators=4"):
        Config(pe_kind="exact")


def test_every_table_fits_its_registers():
    for kind in (PaperPE, ExactPE):
        for mode in Mode:
            for sq in range(3):
                for sk in range(3):
                    need, targets = kind.step_need(mode, sq, sk)
                    assert need in Need and len(targets) == kind.registers
                    assert kind.taps or not ({Target.TAPS, Target.HIGH_TAP} & set(targets) or need == Need.ROW)


def test_register_refuses_a_kind_that_does_not_fit():
    class Five(PaperPE):
        name = "five"
        registers = 5

    class Short(PaperPE):
        name = "short"

        @classmethod
        def step_need(cls, mode, sq, sk):
            need, targets = super().step_need(mode, sq, sk)
            return need, targets[:2]

    class Rowing(PaperPE):
        name = "rowing"

        @classmethod
        def step_need(cls, mode, sq, sk):
            need, targets = super().step_need(mode, sq, sk)
            return (Need.ROW if mode == Mode.C and sq == 1 else need), targets

    for kind, message in ((Five, "has 3 or 4 registers, not 5"), (Short, "2 targets"), (Rowing, "has no taps")):
        with pytest.raises(ValueError, match=message):
            register(kind)
        assert kind.name not in PE_KINDS


def test_a_step_table_of_the_wrong_type_is_named_by_the_encodings_names():
    class Numbers(PaperPE):
        name = "numbers-kind"

        @classmethod
        def step_need(cls, mode, sq, sk):
            return 9, ()

    with pytest.raises(ValueError, match=r"a Need is one of Need.NONE, Need.LO, .*a Target one of Target.NO, "):
        register(Numbers)
    assert "numbers-kind" not in PE_KINDS
