"""The ``kaleido`` command as a user and an adversary meet it: every refusal is one
line on stderr with exit 2 and nothing left behind, every option is explained,
and the command's modules import each other without a cycle."""

import ast
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sim.cli.main import build_parser, main

#: The design contract lives outside the project; no help text may send a user to it.
SPEC = "DESIGN" + ".md"

SIM = Path(__file__).resolve().parents[3] / "sim"


@pytest.fixture
def place(tmp_path, monkeypatch):
    """A working folder holding an operand file and a plain file named ``afile``."""
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "q.npy", np.zeros((4, 3), np.int8))
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    (tmp_path / "afile").write_text("")
    (tmp_path / "junk.lib").write_text("not a liberty file\n")
    (tmp_path / "text.npy").write_text("hello\n")
    np.save(tmp_path / "w1.npy", np.zeros(3, np.int8))
    np.save(tmp_path / "f.npy", np.ones((4, 3), np.float32))
    for name, text in (("wlist", "[1]"), ("wgrid", '{"grid": [1, "x", 2], "partition": [1, 1, 1]}')):
        (tmp_path / name).mkdir()
        (tmp_path / name / "workload.json").write_text(text)
    return tmp_path


GOLDEN = ["golden", "attention", "--q", "q.npy", "--k", "q.npy", "--grid", "1,2,2", "--partition", "1,1,1"]
SIM_ATT = ["sim", "attention", "--q", "q.npy", "--k", "q.npy", "--grid", "1,2,2", "--partition", "1,1,1",
           "--simulator", "icarus"]
PROXY = ["workload", "proxy", "--grid", "1,2,2", "--partition", "1,1,1"]

# (issue case, arguments, what the one line must say)
CASES = [
    ("1 --out is a folder", GOLDEN + ["--out", "."], "is a folder; name a file"),
    ("1 --out empty", GOLDEN + ["--out", ""], "--out is empty"),
    ("1 --out empty, folder", PROXY + ["--out", ""], "--out is empty"),
    ("1 --out under a file", GOLDEN + ["--out", "afile/o.npz"], "does not exist"),
    ("1 --out DIR is a file: workload", PROXY + ["--out", "afile"], "is a file; name a folder"),
    ("1 --out DIR is a file: verilog", ["verilog", "--block", "pe", "--out", "afile"], "is a file"),
    ("1 --out DIR is a file: sim", SIM_ATT + ["--out", "afile"], "is a file"),
    ("1 --out DIR is a file: report", ["report", "--no-rtl", "--out", "afile"], "is a file"),
    ("1 --out DIR is a file: demo", ["demo", "--out", "afile"], "is a file"),
    ("2 --jobs 0", ["report", "--jobs", "0", "--out", "r"], "--jobs 0 must be 1 or more"),
    ("2 --jobs -3", ["report", "--jobs", "-3", "--out", "r"], "must be 1 or more"),
    ("3 --seed=-1", PROXY + ["--seed=-1", "--out", "p"], "--seed -1 must be 0 or more"),
    ("4 garbage liberty", ["synth", "--block", "baseline-pe", "--liberty", "junk.lib"], "Liberty file"),
    ("6 a folder as --q", GOLDEN[:3] + ["."] + GOLDEN[4:] + ["--out", "o.npz"], "is a folder, not an"),
    ("6 a key on an .npy", GOLDEN[:3] + ["q.npy:key"] + GOLDEN[4:] + ["--out", "o.npz"],
     "not an .npz archive"),
    ("6 object dtype", GOLDEN[:3] + ["obj.npy"] + GOLDEN[4:] + ["--out", "o.npz"], "Python objects"),
    ("6 a folder as --liberty", ["synth", "--block", "pe", "--liberty", "."], "is a folder"),
    ("7 negative grid", GOLDEN[:7] + ["-2,-4,4"] + GOLDEN[8:] + ["--out", "o.npz"], "extent below 1"),
    ("8 huge grid: golden", GOLDEN[:7] + ["100000,100000,100000"] + GOLDEN[8:] + ["--out", "o.npz"],
     "at most 65,536"),
    ("8 huge grid: proxy", ["workload", "proxy", "--grid", "100000,100000,100000", "--partition", "1,1,1",
                            "--out", "big"], "at most 65,536"),
    ("10 both liberty flags", ["synth", "--block", "pe", "--liberty", "junk.lib", "--no-liberty"],
     "not allowed with"),
    ("11 --head-dim without --model", ["verilog", "--block", "pe", "--head-dim", "16", "--out", "v"],
     "--head-dim goes with --model"),
    # The second adversary pass (its case numbers).
    ("A3 empty --partition: golden", GOLDEN[:9] + ["", "--out", "o.npz"], "three integers"),
    ("A3 empty --partition: sim", SIM_ATT[:9] + ["", "--simulator", "icarus", "--out", "s"], "three integers"),
    ("A3 empty --partition: workload", ["workload", "video", "--grid", "1,2,2", "--partition", "", "--out", "w"],
     "three integers"),
    ("A3 empty --partition: linear", ["golden", "linear", "--x", "q.npy", "--w", "q.npy", "--grid", "1,2,2",
                                      "--partition", "", "--out", "o.npz"], "three integers"),
    ("A3 empty --grid: timing", ["timing", "--block", "pe", "--grid", ""], "three integers"),
    ("A3 empty --partition: power", ["power", "--block", "pe", "--partition", ""], "three integers"),
    ("A8 a clock of 0", ["timing", "--block", "pe", "--clock-mhz", "0"], "between 1 and"),
    ("A7 a text file as --q", GOLDEN[:3] + ["text.npy"] + GOLDEN[4:] + ["--out", "o.npz"],
     "not a NumPy .npy or .npz file"),
    ("A7 a 1-D W", ["golden", "linear", "--x", "q.npy", "--w", "w1.npy", "--grid", "1,2,2", "--partition",
                    "1,1,1", "--out", "o.npz"], "is not a matrix [C, O]"),
    ("A7 a bad --v after float --q and --k", ["golden", "attention", "--q", "f.npy", "--k", "f.npy", "--v", "w1.npy",
                                             "--grid", "1,2,2", "--partition", "1,1,1", "--out", "o.npz"],
     "--v w1.npy"),
    ("A7 an empty --q", GOLDEN[:3] + [""] + GOLDEN[4:] + ["--out", "o.npz"], "an empty file name"),
    ("A7 stats on a file", ["workload", "stats", "afile"], "is a file, not a workload folder"),
    ("A7 workload.json a list", ["workload", "stats", "wlist"], "not a workload description"),
    ("A3 workload.json grid not integers", ["workload", "stats", "wgrid"], "is not three integers"),
    ("A5 a huge lookahead", SIM_ATT + ["--lookahead", "99999999999", "--out", "s"], "between 1 and 64"),
    ("A5 huge rows", SIM_ATT + ["--rows", "100000", "--out", "s"], "between 1 and 256"),
    ("A5 huge rows and cols", SIM_ATT + ["--rows", "100000", "--cols", "100000", "--out", "s"], "between 1 and 256"),
]


def test_an_out_that_is_a_device_or_fifo_is_left_alone(place, capsys):
    # A rename over a special file replaces the node itself: run as root, --out
    # /dev/null would have replaced /dev/null. A FIFO stands in for a device here.
    os.mkfifo(place / "fifo")
    for args in (GOLDEN + ["--out", "fifo"], ["golden", "linear", "--x", "q.npy", "--w", "q.npy", "--grid",
                                               "1,2,2", "--partition", "1,1,1", "--out", "fifo"]):
        assert main(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "not a regular file" in err[0], err
        assert stat.S_ISFIFO(os.stat(place / "fifo").st_mode)


@pytest.mark.parametrize("case, args, message", CASES, ids=[c[0] for c in CASES])
def test_refusal_is_one_line_and_leaves_nothing(place, capsys, case, args, message):
    before = sorted(p.name for p in place.iterdir())
    assert main(args) == 2
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("kaleido"), out.err
    assert out.out == ""
    assert sorted(p.name for p in place.iterdir()) == before


def test_a_read_only_place_is_refused(tmp_path, capsys):
    # Root may write anywhere on a writable file system; a read-only mount refuses even root.
    ro = Path("/sys")
    try:
        (ro / "kaleido-probe").write_text("")
    except OSError:
        pass
    else:
        (ro / "kaleido-probe").unlink()
        pytest.skip("no read-only place to write into")
    np.save(tmp_path / "q.npy", np.zeros((4, 3), np.int8))
    args = ["golden", "attention", "--q", str(tmp_path / "q.npy"), "--k", str(tmp_path / "q.npy"),
            "--grid", "1,2,2", "--partition", "1,1,1", "--out", str(ro / "o.npz")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and ("not writable" in err or "cannot write" in err), err


def test_outputs_respect_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        np.save(tmp_path / "q.npy", np.zeros((4, 3), np.int8))
        assert main(["golden", "attention", "--q", str(tmp_path / "q.npy"), "--k", str(tmp_path / "q.npy"),
                     "--grid", "1,2,2", "--partition", "1,1,1", "--out", str(tmp_path / "o.npz")]) == 0
        assert main(["workload", "proxy", "--grid", "1,2,2", "--partition", "1,1,1",
                     "--out", str(tmp_path / "w")]) == 0
    finally:
        os.umask(old)
    for path in [tmp_path / "o.npz", tmp_path / "w" / "q.npy", tmp_path / "w" / "workload.json"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o640, path


def _options(parser, path=("kaleido",)):
    for action in parser._actions:
        if hasattr(action, "choices") and isinstance(action.choices, dict):     # subcommands
            for name, sub in action.choices.items():
                yield from _options(sub, path + (name,))
        elif action.option_strings and action.dest != "help":
            yield " ".join(path), action


def test_every_option_is_explained_without_the_spec():
    for command, action in _options(build_parser()):
        assert action.help, f"{command} {action.option_strings[0]} has no help"
        assert SPEC not in action.help, f"{command} {action.option_strings[0]} cites {SPEC}"
        if action.default not in (None, False) and not action.required:
            assert "default" in action.help, f"{command} {action.option_strings[0]} hides its default"


def test_golden_help_names_npz_keys(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["golden", "attention", "--help"])
    assert "FILE.npz:KEY" in capsys.readouterr().out


def _name(path: Path) -> str:
    """``sim.cli.main`` for sim/cli/main.py, ``sim.experiments.report`` for its __init__.py."""
    parts = path.relative_to(SIM.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(module: Path, names: set[str]) -> set[str]:
    # Every sim module this one imports, at the top or inside a function.
    me = _name(module)
    package = me if module.name == "__init__.py" else me.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            stem = ".".join(filter(None, [base, node.module or ""]))
            modules = {f"{stem}.{a.name}" for a in node.names} & names
            # `from . import fig7` needs the submodule; `from .. import THRESHOLDS`, the package.
            found |= modules if node.module is None and modules else modules | {stem}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m in names} - {me}


def test_sim_has_no_import_cycle():
    files = sorted(SIM.rglob("*.py"))
    names = {_name(p) for p in files}
    graph = {_name(p): _imports(p, names) for p in files}
    print("\n".join(f"{m} -> {', '.join(sorted(d))}" for m, d in sorted(graph.items())))
    assert not {m for m, deps in graph.items() if "sim.cli.main" in deps} - {"sim.cli.entry"}, \
        "only the entry point may import the parser"
    library = {m for m in names if m.count(".") == 1} - {"sim.cli", "sim.experiments", "sim.__main__"}
    assert not {m for m in library if any(d.startswith(("sim.cli", "sim.experiments")) for d in graph[m])}, \
        "the library (sim's own modules) imports neither the command line nor the experiments"
    assert not {m for m in names
                if m.startswith("sim.experiments") and any(d.startswith("sim.cli") for d in graph[m])}, \
        "the experiments never import the command line"
    state = {}

    def visit(m, trail):
        if state.get(m) == "open":
            raise AssertionError("import cycle: " + " -> ".join(trail + [m]))
        if state.get(m) != "done":
            state[m] = "open"
            for d in graph[m]:
                visit(d, trail + [m])
            state[m] = "done"
    for m in graph:
        visit(m, [])


def test_yosys_out_of_memory_is_one_line(tmp_path):
    """Yosys that cannot reserve its memory (here: an address-space limit) is the
    machine's limit, said in one line with exit 2, not an internal error."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))

    # A head no run emits, so that Amaranth emits it here (its own Yosys), not the cache.
    r = subprocess.run([sys.executable, "-m", "sim", "synth", "--block", "scheduler", "--partition", "13,11,7"],
                       capture_output=True, text=True, preexec_fn=limit, cwd=tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "memory" in lines[0] and "internal error" not in lines[0], r.stderr
