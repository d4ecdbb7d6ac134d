"""The FuseSoC core beside an emitted system top: FuseSoC's own Verilator lint target passes on it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sim.cli.main import main
from sim.rtl import runner
from sim.rtl.core_file import core_name


def test_the_core_lints_under_fusesoc(tmp_path):
    if runner.missing("verilator"):
        pytest.skip(runner.missing("verilator"))
    fusesoc = shutil.which("fusesoc") or str(Path(sys.executable).with_name("fusesoc"))
    if not Path(fusesoc).exists():
        pytest.skip("fusesoc is not installed (make setup installs it)")
    out = tmp_path / "ip"
    assert main(["verilog", "--block", "top", "--partition", "4,2,2", "--rows", "2", "--cols", "2",
                 "--grid", "1,2,4", "--out", str(out)]) == 0
    assert {p.name for p in out.iterdir()} == {"kaleido_top.v", "kaleido_top.core", "kaleido_top.f",
                                              "kaleido_top_lint.vlt"}
    lint = [fusesoc, "--cores-root", str(out), "run", "--target", "lint", core_name("kaleido_top")]
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    done = subprocess.run(lint, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert done.returncode == 0 and "Error" not in done.stderr, done.stdout[-2000:] + done.stderr[-2000:]
    # The same lint without the waivers fails: the target really runs Verilator -Wall.
    core = out / "kaleido_top.core"
    core.write_text(core.read_text().replace("filesets: [rtl, lint_waivers]", "filesets: [rtl]"))
    shutil.rmtree(tmp_path / "build", ignore_errors=True)
    failed = subprocess.run(lint, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert failed.returncode != 0 or "Error" in failed.stderr
