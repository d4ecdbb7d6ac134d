"""The output folder of a run: a killed run's scratch goes with the next run, a
live run's stays."""

import os
import subprocess
import sys

from sim.cli.outputs import run_folder


def test_a_killed_runs_scratch_goes_with_the_next_run(tmp_path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = tmp_path / f".work-{gone.stdout.strip()}-abc"      # left by a SIGKILL
    live = tmp_path / f".work-{os.getppid()}-def"              # a run still going (our parent)
    stray = tmp_path / ".work-notapid-x"                       # not ours to judge
    for d in (dead, live, stray):
        d.mkdir()
    with run_folder(str(tmp_path), ("stats.json",)) as (out, work):
        assert work.name.startswith(f".work-{os.getpid()}-") and work.is_dir()
    assert not dead.exists() and live.exists() and stray.exists()
    assert not work.exists()
