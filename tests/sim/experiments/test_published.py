"""The published figures have one source: every figure README.md and docs/*.md
quote through a marker equals docs/figures.json (no synthesis: a read and a
compare), and a figure typed by hand into a generated table, or a marker the
file lacks, is caught."""

import pytest

from sim.experiments import published as figures

DATA = {"chip": {"command": "kaleido estimate --record chip", "commit": "abc", "date": "2026-12-05",
                 "figures": {"speedup": "1.013x"},
                 "tables": {"chips": [["chip", "time s"], ["kaleido", "1162.0"], ["baseline", "1177.6"]]}}}


def test_every_quoted_figure_is_the_source_s():
    data = figures.load()
    assert data, "docs/figures.json is missing"
    wrong = []
    for path in figures.DOCS:
        try:
            wrong += [f"{path.name}: {key} reads {found.strip()!r}, the source has {want.strip()!r}"
                      for key, found, want in figures.drift(path.read_text(), data)]
        except KeyError as exc:             # a marker the file lacks
            wrong.append(f"{path.name}: {exc.args[0]}")
    assert not wrong, "\n".join(wrong) + "\n(make docs rewrites them from docs/figures.json)"


def test_the_headline_is_quoted_not_typed():
    text = (figures.ROOT / "README.md").read_text()
    for key in ("chip.speedup", "chip.energy", "chip.iso_speedup", "head.bikes.time", "head.bikes.energy"):
        assert f"<!-- fig {key} -->" in text, key


def test_a_figure_rendered_and_a_planted_one():
    text = ("as fast: <!-- fig chip.speedup -->9.9x<!-- /fig -->\n<!-- table chip.chips -->\n"
            "| old |\n<!-- /table -->\n")
    assert [k for k, _, _ in figures.drift(text, DATA)] == ["chip.chips", "chip.speedup"]
    good = figures.render(text, DATA)
    assert "<!-- fig chip.speedup -->1.013x<!-- /fig -->" in good and "| kaleido | 1162.0 |" in good
    assert figures.drift(good, DATA) == []
    planted = good.replace("| 1162.0 |", "| 1100.0 |")       # typed over, in a generated table
    assert [k for k, _, _ in figures.drift(planted, DATA)] == ["chip.chips"]
    with pytest.raises(KeyError, match="chip.nothing: no such figure"):
        figures.drift("<!-- fig chip.nothing -->1<!-- /fig -->", DATA)


def test_record_writes_the_command_and_commit(tmp_path):
    path = tmp_path / "f.json"
    figures.record("head.bikes", {"time": "0.74x"}, {"t": [["a"], ["1"]]}, command="bench head", path=path)
    figures.record("chip", {"speedup": "1.01x"}, command="estimate", path=path)
    data = figures.load(path)
    assert data["head.bikes"]["figures"] == {"time": "0.74x"} and data["head.bikes"]["command"] == "bench head"
    assert data["chip"]["commit"] and data["chip"]["date"]
    with pytest.raises(ValueError, match="an area is a lowercase name"):
        figures.area_name("Chip Figures")


def test_a_record_never_clobbers_another_commands_area(tmp_path):
    """`kaleido quality --record chip` used to replace the estimate's figures, and
    `make docs` then failed on every quote of them."""
    path = tmp_path / "f.json"
    figures.record("chip", {"speedup": "1.01x"}, command="kaleido estimate --model wan2.1 --record chip", path=path)
    figures.record("chip", {"speedup": "1.02x"}, command="kaleido estimate --record chip --steps 5", path=path)
    with pytest.raises(ValueError, match="holds `kaleido estimate`'s figures"):
        figures.record("chip", {"psnr": "40"}, command="kaleido quality --record chip", path=path)
    with pytest.raises(ValueError, match="kaleido explore --strengths"):
        figures.check_record("chip", "kaleido explore --strengths 0,1 --record chip", path)
    assert figures.load(path)["chip"]["figures"] == {"speedup": "1.02x"}
    assert figures.owner("python -m sim.experiments.bench head --record head.bikes") == \
        "python -m sim.experiments.bench head"


def test_the_command_line_refuses_a_clobbering_record_before_any_work():
    import subprocess
    import sys
    before = figures.FIGURES.read_text()
    r = subprocess.run([sys.executable, "-m", "sim", "quality", "--model", "wan2.1", "--out", "out/never",
                        "--record", "chip"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--record chip: that area holds `kaleido estimate`'s figures" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and figures.FIGURES.read_text() == before


def test_a_module_run_records_under_its_own_name(tmp_path):
    """`python -m sim.experiments.bench head --record head.bikes` wrote `python head ...`
    (a module's argv names its file alone), so it could never record its own area again."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    code = "from sim.experiments.published import this_command; print(this_command())"
    mod = tmp_path / "probe_cmd.py"
    mod.write_text(code + "\n")
    out = subprocess.run([sys.executable, "-m", "probe_cmd", "head", "--record", "x"], cwd=tmp_path,
                         capture_output=True, text=True, env={**os.environ,
                                                              "PYTHONPATH": str(Path(__file__).parents[3])})
    assert out.stdout.strip() == "python -m probe_cmd head --record x", out.stderr
    assert figures.owner(out.stdout.strip().replace("probe_cmd", "sim.experiments.bench")) == \
        figures.owner("python -m sim.experiments.bench head --record head.bikes")
