"""``kaleido estimate``'s refusals, and ``kaleido explore``'s (the same checks):
one line, exit 2, nothing written."""

import subprocess
import sys

import pytest

KALEIDO = [sys.executable, "-m", "sim", "estimate"]
EXPLORE = [sys.executable, "-m", "sim", "explore"]


@pytest.mark.parametrize("args, message", [
    (["--model", "sora"], "invalid choice: 'sora'"),
    (["--model", "cogvideox", "--resolution", "720p"], "cogvideox has no 720p setting"),
    (["--model", "wan2.1", "--chip", "nowhere.json"], "neither a preset"),
    (["--model", "wan2.1", "--sample", "0"], "at least one head"),
    (["--model", "wan2.1", "--tile-samples", "-1"], "--tile-samples -1"),
    (["--model", "wan2.1", "--variant", "pe-sh", "--lookahead", "3"], "--variant pe-sh has none"),
    (["--model", "wan2.1", "--variant", "pe", "--cluster-rule", "pivots"], "--cluster-rule sets the scheduler"),
    (["--model", "wan2.1", "--issue-window", "4", "--lookahead", "3"], "channel window in its place"),
    (["--model", "wan2.1", "--accumulators", "5"], "invalid choice: 5"),
    (["--model", "wan2.1", "--qk-objective", "fast"], "--qk-objective 'fast' is not an objective"),
    (["--model", "wan2.1", "--qk-objective", "-1"], "a weight W >= 0 of energy x time^W"),
    (["--model", "wan2.1", "--workload", "proxy", "--clip", "bikes"], "--workload proxy pans a photograph"),
    (["--activations", "anywhere", "--resolution", "720p"], "--resolution 720p and --activations"),
])
@pytest.mark.parametrize("command", [KALEIDO, EXPLORE], ids=["estimate", "explore"])
def test_bad_input_is_one_line(tmp_path, command, args, message):
    out = tmp_path / "out"
    r = subprocess.run(command + args + ["--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists()


def test_a_bad_chip_file_names_its_fault(tmp_path):
    chip = tmp_path / "chip.json"
    chip.write_text('{"arrays": 16, "clock": 1}')
    r = subprocess.run(KALEIDO + ["--model", "wan2.1", "--chip", str(chip), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "unknown field(s) clock" in r.stderr


def test_out_must_be_a_folder(tmp_path):
    f = tmp_path / "file"
    f.write_text("keep")
    r = subprocess.run(KALEIDO + ["--model", "wan2.1", "--out", str(f)], capture_output=True, text=True)
    assert r.returncode == 2 and "is a file" in r.stderr and f.read_text() == "keep"


@pytest.mark.parametrize("fields, message", [
    ('{"clock_mhz": Infinity}', "chip clock_mhz must be a number above 0 and at most"),
    ('{"clock_mhz": 1e308}', "chip clock_mhz must be a number above 0 and at most"),
    ('{"clock_mhz": "fast"}', "chip clock_mhz must be a number"),
    ('{"arrays": true}', "chip arrays must be an integer"),
    ('{"node_nm": 45, "vdd": 2.0}', "chip vdd 2 V is outside the range"),
    # No Kaleido array: it ran, then stopped on a StopIteration.
    ('{"kaleido_share": 0}', "kaleido_share 0 leaves no Kaleido array"),
])
def test_a_chip_out_of_range_is_refused(tmp_path, fields, message):
    chip = tmp_path / "chip.json"
    chip.write_text(fields)
    out = tmp_path / "o"
    r = subprocess.run(KALEIDO + ["--model", "wan2.1", "--chip", str(chip), "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists()


@pytest.mark.parametrize("args, message", [
    (["--workers", "10000"], "a local cluster takes at most"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "--workers sizes the local cluster"),
    (["--clip", "/nonexistent/clip.mp4"], "no such file"),
    (["--scheduler", "notaurl"], "--scheduler notaurl: no Dask scheduler answered"),
    (["--scheduler", "tcp://127.0.0.1:1"], "no Dask scheduler answered"),
])
def test_run_options_are_checked_before_anything_runs(tmp_path, args, message):
    out = tmp_path / "out"
    r = subprocess.run(KALEIDO + ["--model", "wan2.1"] + args + ["--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists()


@pytest.mark.parametrize("liberty, message", [
    ("nangate", "or name a library: nangate45, osu018"),
    ("{tmp}/junk.lib", "not a Liberty file"),
])
def test_a_bad_liberty_is_refused_before_anything_is_written(tmp_path, liberty, message):
    (tmp_path / "junk.lib").write_text("not a liberty file\n")
    out = tmp_path / "out"
    r = subprocess.run(KALEIDO + ["--model", "wan2.1", "--liberty", liberty.format(tmp=tmp_path), "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists()
