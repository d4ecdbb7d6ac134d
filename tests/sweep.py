"""Sweeps with one representative point in `make test` and the rest in `make test-all`
(or, for the points named ``ci``, in CI's `make test-ci`).

A property that holds at one size holds, or fails, the same way at the next, so
``make test`` runs a few chosen points of each sweep and marks the others
``slow``; ``make test-all`` runs them all. The points kept are chosen so that
every value of every axis still appears at least once (a Latin walk over the
axes), unless the caller names them.
"""

import itertools

import pytest

__all__ = ["sweep", "latin", "cover", "ident"]


def ident(value) -> str:
    """A readable test id for one parameter: a tuple's parts joined by dashes."""
    if isinstance(value, tuple):
        return "-".join(ident(v) for v in value)
    return str(value)


def latin(*axes):
    """Points of the product of ``axes`` such that every value of every axis appears:
    point i takes value i mod len(axis) of each axis."""
    n = max(len(a) for a in axes)
    return [tuple(a[i % len(a)] for a in axes) for i in range(n)]


def cover(cases, *axes):
    """Fewer points than :func:`latin` where the first axis is a list of cases: every
    value of every other axis appears once, on cases taken evenly across the list
    (a case shows what it shows under any variant; the variants are what differ)."""
    n = max(len(a) for a in axes)
    pick = [round(i * (len(cases) - 1) / max(1, n - 1)) for i in range(n)]     # first to last
    return [(cases[pick[i]], *(a[i % len(a)] for a in axes)) for i in range(n)]


def sweep(argnames: str, *axes, keep=None, ci=(), ids=None):
    """``pytest.mark.parametrize(argnames, ...)`` over the product of ``axes``, every
    point not in ``keep`` marked ``slow``. ``keep`` defaults to :func:`latin` of the
    axes; with one axis (whose values are whole points), to its first value. The points
    in ``ci`` are marked ``ci`` instead: CI runs them after ``make test``."""
    names = [n.strip() for n in argnames.split(",")]
    if len(axes) == 1:
        points = list(axes[0])
        fast = points[:1] if keep is None else list(keep)
    else:
        if len(axes) != len(names):
            raise ValueError(f"{len(axes)} axes for {len(names)} names")
        points = list(itertools.product(*axes))
        fast = latin(*axes) if keep is None else list(keep)
    missing = [p for p in (*fast, *ci) if p not in points]
    if missing:
        raise ValueError(f"kept points not in the sweep: {missing}")
    def marks(p):
        return () if p in fast else pytest.mark.ci if p in ci else pytest.mark.slow
    params = [pytest.param(*(p if len(names) > 1 else (p,)), marks=marks(p)) for p in points]
    return pytest.mark.parametrize(argnames, params, ids=ids or ident)
