"""Where a command may write (the third adversary pass): never into the project's own
sources, never over a file of another kind, and one run a folder at a time."""

import fcntl
from pathlib import Path

import numpy as np
import pytest

from sim.cli.main import main
from sim.cli.outputs import RUN_LOCK

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ["golden", "attention", "--grid", "1,2,2", "--partition", "2,1,1"]


@pytest.fixture
def operands(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "q.npy", np.arange(16, dtype=np.int8).reshape(4, 4))
    return ["--q", str(tmp_path / "q.npy"), "--k", str(tmp_path / "q.npy")]


def _refused(capsys, argv, *words):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err, err
    for word in words:
        assert word in err, err


def test_golden_never_overwrites_a_source_file(operands, capsys):
    source = ROOT / "golden" / "errors.py"
    before = source.read_bytes()
    _refused(capsys, [*GOLDEN, *operands, "--out", str(source)], "inside the project's own source (golden/)")
    assert source.read_bytes() == before


@pytest.mark.parametrize("argv, folder", [
    (["sim", "attention", "--grid", "1,2,2", "--partition", "2,1,1", "--simulator", "icarus"], "hw"),
    (["workload", "proxy", "--grid", "1,2,2", "--partition", "2,1,1"], "tb"),
])
def test_no_output_folder_in_the_sources(operands, capsys, argv, folder):
    target = ROOT / folder / "kaleido_out_test"
    args = [*argv, *(operands if argv[0] == "sim" else []), "--out", str(target)]
    _refused(capsys, args, f"({folder}/)")
    assert not target.exists()


def test_a_file_of_another_kind_is_not_replaced(operands, tmp_path, capsys):
    mine = tmp_path / "notes.txt"
    mine.write_text("mine")
    _refused(capsys, [*GOLDEN, *operands, "--out", str(mine)], "not a .npz file")
    assert mine.read_text() == "mine"


def test_two_runs_into_one_folder_are_refused(operands, tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    with open(out / RUN_LOCK, "w") as lock:           # a run in progress holds the folder
        fcntl.flock(lock, fcntl.LOCK_EX)
        _refused(capsys, ["sim", "attention", *operands, "--grid", "1,2,2", "--partition", "2,1,1",
                          "--simulator", "icarus", "--out", str(out)], "another kaleido run is writing there")
    assert sorted(p.name for p in out.iterdir()) == [RUN_LOCK]


@pytest.mark.parametrize("argv, words", [
    (["report", "--jobs", "10000", "--out", "r"], ["--jobs 10000", "cores"]),
    (["report", "--out", "r", "--publish", "r"], ["--publish r is --out itself"]),
    (["timing", "--block", "pe", "--model", "wan2.1", "--head-dim", "5"], ["5 channels", "at least 6"]),
])
def test_sizes_and_lists_checked_before_any_work(tmp_path, monkeypatch, capsys, argv, words):
    monkeypatch.chdir(tmp_path)
    _refused(capsys, argv, *words)
    assert list(tmp_path.iterdir()) == []


def test_capture_never_writes_into_the_sources(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    target = ROOT / "hw" / "kaleido_capture_test"
    _refused(capsys, ["capture", "--model", "wan2.1", "--grid", "5,16,16", "--out", str(target)], "(hw/)")
    assert not target.exists()


def test_a_dangling_link_is_named(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    _refused(capsys, ["verilog", "--block", "pe", "--out", "gone"], "symbolic link to nothing")


def test_a_top_whose_scores_do_not_fit_a_word_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _refused(capsys, ["verilog", "--block", "top", "--grid", "300,300,300", "--out", "v"], "32-bit word")
    assert list(tmp_path.iterdir()) == []


def test_a_big_array_says_it_will_take_long(capsys):
    from sim.cli.blocks_cmd import block_config
    from sim.cli.main import build_parser

    block_config(build_parser().parse_args(["synth", "--block", "array", "--rows", "256", "--cols", "256"]))
    assert "65536 PEs" in capsys.readouterr().err
    block_config(build_parser().parse_args(["synth", "--block", "array"]))
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("tail", ["n" * 300, "/".join(["d" * 200] * 20)], ids=["name", "path"])
def test_an_over_long_out_is_refused_and_leaves_nothing(operands, tmp_path, capsys, tail):
    out = tmp_path / "made" / tail
    _refused(capsys, ["sim", "attention", *operands, "--grid", "1,2,2", "--partition", "2,1,1",
                      "--simulator", "icarus", "--out", str(out)], "--out: ")
    assert not (tmp_path / "made").exists()


def test_a_run_folder_that_cannot_be_set_up_leaves_nothing(tmp_path, monkeypatch):
    """Past the checks, a failure to make its scratch still takes back the folders a run made."""
    import tempfile

    from sim.cli.outputs import run_folder

    def refuse(*args, **kwargs):
        raise OSError(36, "File name too long")
    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    with pytest.raises(OSError):
        with run_folder(str(tmp_path / "a" / "b"), ("x.json",)):
            pass
    assert list(tmp_path.iterdir()) == []


def test_an_estimate_rerun_starts_without_the_last_figures(tmp_path):
    """An interrupted rerun must not leave the last run's summary and plots to be
    read as its own; the shards stay, to resume from."""
    from sim.cli.estimate_cmd import OUTPUTS, claimed

    out = tmp_path / "est"
    (out / "shards").mkdir(parents=True)
    for name in (*OUTPUTS, "shards/s1.json"):
        (out / name).write_text("from the last run")
    with pytest.raises(KeyboardInterrupt):
        with claimed(str(out)):
            raise KeyboardInterrupt
    assert sorted(p.name for p in out.iterdir()) == ["shards"] and (out / "shards" / "s1.json").exists()


def test_a_map_into_an_estimate_s_folder_keeps_its_summary(tmp_path):
    from sim.cli.estimate_cmd import claimed
    from sim.cli.explore_cmd import OUTPUTS

    for name in ("summary.json", "explore.json"):
        (tmp_path / name).write_text("from the last run")
    with claimed(str(tmp_path), OUTPUTS):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]
