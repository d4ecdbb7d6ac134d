"""The drain rule (golden/drain.py) against a register-level model of the upward chain."""

import numpy as np
import pytest

from golden.drain import drain_slots, drain_spacing, group_waits, uniform_slots


def chain_collides(drains: list[int], rows: int) -> bool:
    """Run one column's drain chain: ``out[i]`` takes R0 of row ``i`` when row ``i``
    drains (row ``i`` sees a drain issued at slot ``n`` at ``n + i``), else
    ``out[i + 1]``. A capture that overwrites a score still on its way up collides."""
    out = [None] * (rows + 1)                 # out[rows] is the idle input below the bottom PE
    captures = {(n + i, i) for n in drains for i in range(rows)}
    horizon = max(drains, default=0) + 3 * rows
    for t in range(horizon):
        new = out[:]
        for i in range(rows):
            if (t, i) in captures:
                if out[i + 1] is not None:
                    return True
                new[i] = (t, i)
            else:
                new[i] = out[i + 1]
        out = new
    return False


def issued_drains(lengths, rows):
    """Slots where the controller of golden.drain drains, waits included."""
    spacing, last, n, out = drain_spacing(rows), [-2 * rows, -2 * rows], 0, []
    for p, length in enumerate(list(lengths) + [None]):
        if p:
            while n - last[n & 1] < spacing:
                n += 1
            last[n & 1] = n
            out.append(n)
        if length is not None:
            n += max(length, 1)
    return out, n + 1


@pytest.mark.parametrize("rows", [1, 2, 3, 4, 8])
def test_rule_never_collides_and_counts_slots(rows, rng):
    for _ in range(50):
        lengths = rng.integers(0, 3 * rows, rng.integers(1, 12)).tolist()
        drains, slots = issued_drains(lengths, rows)
        assert not chain_collides(drains, rows)
        assert drain_slots(lengths, rows) == slots


@pytest.mark.parametrize("rows", [2, 3, 4])
def test_rule_is_tight(rows):
    # Different parity: any distance. Same parity: 2R apart, and not one pair closer.
    assert not chain_collides([0, 1], rows)
    assert not chain_collides([0, 2 * rows], rows)
    for gap in range(2, 2 * rows, 2):
        assert chain_collides([0, gap], rows)


def test_long_passes_never_wait():
    assert drain_slots([7, 7, 7], 4) == 22             # 2R - 1 apart: the old floor, no waits
    assert drain_slots([], 4) == 1                     # nothing to run: the final drain alone


@pytest.mark.parametrize("rows", [1, 2, 4, 8])
def test_passes_at_least_the_spacing_long_take_their_sum(rows, rng):
    # drain_slots' closed form (no drain can wait) against the controller's walk.
    for _ in range(20):
        lengths = rng.integers(drain_spacing(rows), 4 * rows + 2, rng.integers(0, 12)).tolist()
        assert drain_slots(lengths, rows) == issued_drains(lengths, rows)[1] == sum(lengths) + 1


@pytest.mark.parametrize("rows", [1, 2, 3, 4, 8])
def test_a_head_is_the_sum_of_its_tile_groups(rows, rng):
    # With every group's first pass at least 2R slots, each group's waits are its own.
    for _ in range(40):
        groups = rng.integers(0, 3 * rows, (int(rng.integers(1, 10)), 4))
        groups[:, 0] = rng.integers(drain_spacing(rows), 3 * rows + 1, len(groups))
        total = int(np.maximum(groups, 1).sum() + group_waits(groups, rows).sum()) + 1
        assert total == drain_slots(groups.ravel(), rows) == issued_drains(groups.ravel().tolist(), rows)[1]


@pytest.mark.parametrize("rows", [1, 2, 4, 8])
def test_uniform_passes_need_no_list(rows):
    # A billion dense tiles are counted, not listed; short ones still wait for their parity.
    for length in (0, 1, 3, 2 * rows - 1, 2 * rows, 5 * rows):
        for count in (0, 1, 2, 7):
            assert uniform_slots(count, length, rows) == drain_slots([length] * count, rows)
    assert uniform_slots(10 ** 9, 128, rows) == 128 * 10 ** 9 + 1
