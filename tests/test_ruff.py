"""The Python linter's rules (pyproject.toml, ``[tool.ruff]``) hold over the whole tree."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff() -> str | None:
    here = Path(sys.executable).parent / "ruff"
    return str(here) if here.exists() else shutil.which("ruff")


@pytest.mark.skipif(_ruff() is None, reason="ruff is not installed (make setup installs it)")
def test_the_tree_is_ruff_clean():
    run = subprocess.run([_ruff(), "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.skipif(_ruff() is None, reason="ruff is not installed (make setup installs it)")
def test_ruff_sees_an_unused_name(tmp_path):
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "bad.py").write_text("import os\n")
    run = subprocess.run([_ruff(), "check", "--no-cache", "--output-format", "concise", "."], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 1 and "F401" in run.stdout
