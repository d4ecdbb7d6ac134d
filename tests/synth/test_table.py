"""``python -m synth.table`` (make synth): every input is checked before any
synthesis, each refusal one line with exit 2 (they were tracebacks, or came
after the synthesis)."""

import subprocess
import sys

import pytest


@pytest.mark.parametrize("args, says", [
    (["--liberty", "garbage"], "liberty file garbage does not exist"),
    (["--liberty", "FOLDER"], "does not exist"),
    (["--jobs", "0"], "--jobs 0 must be 1 or more"),
    (["--out", "FILE"], "is a file; name a folder"),
])
def test_bad_input_is_one_line_before_any_work(tmp_path, args, says):
    (tmp_path / "f.md").write_text("mine\n")
    args = [str(tmp_path) if a == "FOLDER" else str(tmp_path / "f.md") if a == "FILE" else a for a in args]
    r = subprocess.run([sys.executable, "-m", "synth.table", *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert (tmp_path / "f.md").read_text() == "mine\n"
