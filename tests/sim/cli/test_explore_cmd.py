"""``kaleido explore``'s own refusals (the rest are ``estimate``'s, tested there):
one line, exit 2, nothing written."""

import subprocess
import sys

import pytest

EXPLORE = [sys.executable, "-m", "sim", "explore", "--model", "wan2.1"]


@pytest.mark.parametrize("designs, message", [
    ("full,bogus", "unknown design(s) bogus; choose from full, pe-m, pe-sh, pe, exact"),
    (",", "empty entry"),
    ("full,,pe", "empty entry"),
])
def test_an_unknown_design_is_one_line(tmp_path, designs, message):
    out = tmp_path / "out"
    r = subprocess.run(EXPLORE + ["--designs", designs, "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists()


def test_a_design_refuses_a_knob_it_does_not_read(tmp_path):
    # The scheduler-only variant has no matcher: its lookahead is refused, before any run.
    out = tmp_path / "out"
    r = subprocess.run(EXPLORE + ["--designs", "full,pe-sh", "--lookahead", "3", "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--variant pe-sh has none" in r.stderr, r.stderr
    assert not out.exists()


@pytest.mark.parametrize("designs, knob, message", [
    ("full,pe", ["--variant", "pe-m"], "--variant pe-m and --designs full: design full runs --variant full"),
    ("exact", ["--accumulators", "3"], "--accumulators 3 and --designs exact"),
])
def test_a_knob_a_design_overrides_is_refused(tmp_path, designs, knob, message):
    out = tmp_path / "out"
    r = subprocess.run(EXPLORE + ["--designs", designs, *knob, "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists()


@pytest.mark.parametrize("extra, message", [
    (["--strengths", "0,x"], "a comma list of numbers"),
    (["--strengths", "0,-1"], "every strength a finite number of 0 or more"),
    (["--strengths", "0,nan"], "every strength a finite number of 0 or more"),
    (["--strengths", "1"], "at least two strengths"),
    (["--strengths", "0,1", "--common-strength", "2"], "the sweep sets the strength"),
    (["--strengths", "0,1", "--designs", "full"], "--designs and --strengths"),
    (["--common-strength", "-2"], "must be a finite number of 0 or more"),
    (["--common-band", "ir"], "invalid choice: 'ir'"),
])
def test_a_bad_strength_sweep_is_one_line(tmp_path, extra, message):
    out = tmp_path / "out"
    r = subprocess.run(EXPLORE + [*extra, "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists()
