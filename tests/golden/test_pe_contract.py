"""The contract a PE kind's table must keep with the engine's passes: the
built-in kinds keep it, and a table that counts on a step the engine may leave
out, or that adds a linear partner's share twice, is named with the entry
where its result goes wrong, and never registered."""

import pytest

from golden.pe_contract import register, violation
from golden.pe_encoding import Mode, Need, Target
from golden.pe_kinds import PE_KINDS, ExactPE, PaperPE

X, A_, H = Target.NO, Target.ALL, Target.HIGH


def test_the_built_in_kinds_keep_the_contract():
    assert violation(PaperPE) is None and violation(ExactPE) is None


class WorkInB(PaperPE):
    """T1 of a fully reused key computed in pass B instead of reused in A: B
    streams no channel where every key of the tile group is fully reused."""
    name = "kp-work-in-b"

    @classmethod
    def step_need(cls, mode, sq, sk):
        if mode == Mode.A and sk == 2:
            need, t = super().step_need(mode, sq, sk)
            return need, (t[0], X, t[2])
        if mode == Mode.B and sk == 2:
            return Need.FULL, (A_, X, X)
        return super().step_need(mode, sq, sk)


class WholeInD(PaperPE):
    """A partially reused key's share of T3 computed whole in pass D, and not in
    C: a different schedule, and still exact."""
    name = "kp-whole-in-d"

    @classmethod
    def step_need(cls, mode, sq, sk):
        if mode in (Mode.C, Mode.D) and sk == 1 and sq != 2:
            return Need.FULL, (A_, X, X)
        return super().step_need(mode, sq, sk)


class LinearTwice(PaperPE):
    """Partial reuse left unused in passes A-D only: a linear layer's partner
    passes run pass B's table, which now computes the whole product, while its
    LINEAR pass still adds the high part into the partner's register."""
    name = "kp-linear-twice"

    @classmethod
    def step_need(cls, mode, sq, sk):
        if mode != Mode.LINEAR:
            sq, sk = (0 if s == 1 else s for s in (sq, sk))
        return super().step_need(mode, sq, sk)


class LostInC(PaperPE):
    """A fully reused query's T2 left to pass C, which streams no channel whose rows are all full reuses."""
    name = "kp-lost-in-c"

    @classmethod
    def step_need(cls, mode, sq, sk):
        if mode == Mode.A and sq == 2:
            need, t = super().step_need(mode, sq, sk)
            return need, (t[0], t[1], X)
        if mode == Mode.C and sq == 2:
            return Need.FULL, (A_, A_ if sk == 2 else H if sk == 1 else X, X)
        return super().step_need(mode, sq, sk)


@pytest.mark.parametrize("kind, words", [
    (WorkInB, ["(sq=0, sk=2)", "pass B left out", "T1 comes out as"]),
    (LostInC, ["(sq=2, sk=0)", "pass C left out", "T2 comes out as"]),
    (LinearTwice, ["linear layer", "state 1", "partner 1's output"]),
])
def test_a_table_the_engine_would_compute_wrongly_is_refused(kind, words):
    why = violation(kind)
    assert why is not None and "\n" not in why
    for word in words:
        assert word in why, why
    with pytest.raises(ValueError, match=f"PE kind '{kind.name}' computes a wrong result"):
        register(kind)
    assert kind.name not in PE_KINDS


def test_another_exact_schedule_is_registered():
    assert violation(WholeInD) is None
    try:
        assert register(WholeInD) is WholeInD and PE_KINDS[WholeInD.name] is WholeInD
    finally:
        PE_KINDS.pop(WholeInD.name, None)
