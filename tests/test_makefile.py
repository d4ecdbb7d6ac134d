"""The Makefile: every target signs off on the command's own default library
(NanGate45). It used to export KALEIDO_LIBERTY=OSU018, so `make demo`, `make test`,
`make synth`, `make bench` and `make report` all signed off at 180 nm while the
README and `kaleido` alone said NanGate45."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ("demo", "test", "sim", "synth", "report", "bench", "lint", "characterize")

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make here")


def _dry(*args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("KALEIDO_LIBERTY", "MAKEFLAGS", "MAKELEVEL")}
    r = subprocess.run(["make", "-n", "-C", str(ROOT), *args], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("target", TARGETS)
def test_every_target_takes_the_commands_default_library(target):
    out = _dry(target)
    assert "--liberty" not in out and "KALEIDO_LIBERTY" not in out


def test_nothing_exports_a_library():
    database = _dry("-p", "help")
    assert not [line for line in database.splitlines() if "KALEIDO_LIBERTY" in line]


def test_the_report_moves_to_another_library_only_when_asked():
    assert "kaleido report --out out/report --publish docs --liberty osu018" in _dry("report", "LIBRARY=osu018")
