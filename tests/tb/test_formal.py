"""Formal proofs of the PE and the matcher's lists (k-induction with yowasp-sby and Yices 2, or z3). They take
minutes together, so they are marked ``formal`` and run by `make formal` (CI runs it
after `make test`); `make test` proves one of them (``quick_proof``, seconds), so that a
user's run holds a proof too."""

import pytest

from golden import Config
from tb.formal import prove

pytestmark = pytest.mark.formal

CFG = Config(partition=(16, 0, 0))      # max_channels = 16: accumulators of 21 bits


def _check(result):
    assert result.passed, "\n".join(result.log.splitlines()[-15:])
    print(f"{result.name}: proven in {result.seconds:.1f} s")


@pytest.mark.parametrize("stages", [1, 2, 3, 4])
@pytest.mark.parametrize("accumulators", [3, 4])
def test_augmented_equals_baseline_with_flags_off(tmp_path, accumulators, stages):
    _check(prove("equivalence", CFG.with_(accumulators=accumulators, pe_stages=stages), str(tmp_path)))


@pytest.mark.parametrize("accumulators, stages", [
    pytest.param(a, s, marks=[pytest.mark.quick_proof] if (a, s) == (3, 1) else [])
    for a in (3, 4) for s in (1, 2, 3, 4)])
def test_accumulators_never_overflow(tmp_path, accumulators, stages):
    _check(prove("overflow", CFG.with_(accumulators=accumulators, pe_stages=stages), str(tmp_path)))


def test_the_equivalence_proof_can_fail(tmp_path):
    # With reuse flags free, R0 differs from a plain MAC (pass B skips sk=2 steps):
    # the prover must find that.
    result = prove("equivalence", CFG, str(tmp_path), flags_off=False)
    assert not result.passed
    assert "Assert failed" in result.log


def test_the_overflow_proof_can_fail(tmp_path):
    # Five channel steps per channel (80 at a group of 16) can reach 80 * 2**14,
    # past a 21-bit register's 2**20: the narrow PE wraps and the prover must say so.
    result = prove("overflow", CFG, str(tmp_path), steps_per_channel=5)
    assert not result.passed
    assert "Assert failed" in result.log


@pytest.mark.parametrize("lookahead", [1, 2, 4])
def test_the_matchers_lists_hold_each_sets_lowest_channels(tmp_path, lookahead):
    cfg = Config(partition=(8, 0, 0), rows=2, cols=2, lookahead=lookahead)
    _check(prove("lists", cfg, str(tmp_path)))


def test_the_lists_proof_can_fail(tmp_path):
    # Written out of channel order, the first channels written are not the lowest.
    result = prove("lists", Config(partition=(8, 0, 0), rows=2, cols=2, lookahead=2), str(tmp_path), ordered=False)
    assert not result.passed
    assert "Assert failed" in result.log or "FAIL" in result.log
