"""Pieces every ``kaleido`` subcommand shares: the user-error type, argument
parsing helpers, atomic output files and JSON that stays valid."""

from __future__ import annotations

import json
import math
import os
import tempfile
from contextlib import contextmanager

import numpy as np

__all__ = ["UserError", "triple", "atomic_output", "json_safe", "print_json"]


class UserError(Exception):
    """A problem with the user's input: printed as one line, exit status 2."""


def triple(text: str, what: str) -> tuple[int, int, int]:
    try:
        parts = tuple(int(p) for p in text.split(","))
    except ValueError:
        raise UserError(f"{what} {text!r} must be three integers like 2,4,4") from None
    if len(parts) != 3:
        raise UserError(f"{what} {text!r} must have three values, got {len(parts)}")
    return parts


@contextmanager
def atomic_output(path: str, suffix: str = ""):
    """Yield a temporary path beside ``path``; rename it into place on success only."""
    target = os.path.abspath(path)
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise UserError(f"output folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=".kaleido-", suffix=suffix, dir=folder)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def json_safe(obj):
    """Numbers as JSON can hold them: infinities (a PSNR of identical outputs) become null."""
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return None if not math.isfinite(obj) else float(obj)
    return obj


def print_json(obj) -> None:
    print(json.dumps(json_safe(obj), indent=2, sort_keys=True))
