"""`kaleido demo` (make demo) end to end: the RTL's scores match the golden model's,
both PEs' areas are signed off as `kaleido synth` signs them off (mapped for the
chip clock, cached), and the demo names the library it used."""

import json
import subprocess
import sys

from synth.area import block_area
from synth.flow import default_liberty


def test_the_demo_runs_and_names_its_library(tmp_path):
    r = subprocess.run([sys.executable, "-m", "sim", "demo", "--out", str(tmp_path / "d")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    d = json.loads((tmp_path / "d" / "demo.json").read_text())
    assert d["rtl"]["kaleido"]["scores_match"] and d["rtl"]["baseline"]["scores_match"]
    lib = default_liberty()
    if lib is None:
        assert d["library"] is None and "no liberty file" in r.stdout
        return
    from golden.presets import preset
    assert d["library"] == "nangate45" and "(nangate45)" in r.stdout
    cfg = preset("demo")
    assert d["area"]["pe"]["area_um2"] == block_area("pe", cfg, lib)["area_um2"]
