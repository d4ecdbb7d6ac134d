"""docs/plugins.md's worked examples, run as the page gives them: its PE kind and
its dispatcher pass ``kaleido check-plugin``, and its wrong PE kind gets, word
for word, the refusal the page shows."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sim.rtl import runner

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "plugins.md"


def blocks(tag: str) -> dict[str, str]:
    """The fenced block after each ``<!-- tag: NAME -->`` line, by NAME."""
    text = PAGE.read_text()
    return {m[1]: m[2] for m in re.finditer(rf"<!-- {tag}: (\S+) -->\n```[a-z]*\n(.*?)```", text, re.S)}


def test_the_page_has_its_examples():
    assert set(blocks("file")) == {"kp_doc_kind.py", "kp_doc_wrong.py", "kp_doc_dispatcher.py"}
    assert set(blocks("refusal")) == {"kp_doc_wrong.py"}


def test_the_wrong_kind_is_refused_as_the_page_says(tmp_path):
    (tmp_path / "kp_doc_wrong.py").write_text(blocks("file")["kp_doc_wrong.py"])
    np.save(tmp_path / "q.npy", np.arange(16, dtype=np.int8).reshape(4, 4))
    r = subprocess.run([sys.executable, "-m", "sim", "--plugin", "kp_doc_wrong.py", "golden", "attention", "--q",
                        "q.npy", "--k", "q.npy", "--grid", "1,2,2", "--partition", "2,1,1", "--out", "o.npz"],
                       capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2 and r.stderr.strip() == blocks("refusal")["kp_doc_wrong.py"].strip(), r.stderr
    assert not (tmp_path / "o.npz").exists()


@pytest.mark.ci          # check-plugin's end-to-end run is tests/sim/rtl/test_plugin_check.py's; this is the docs'
@pytest.mark.skipif(bool(runner.missing("icarus")), reason="needs icarus")
def test_the_examples_pass_check_plugin(tmp_path):
    files = blocks("file")
    argv = [sys.executable, "-m", "sim"]
    for name in ("kp_doc_kind.py", "kp_doc_dispatcher.py"):
        (tmp_path / name).write_text(files[name])
        argv += ["--plugin", str(tmp_path / name)]
    r = subprocess.run(argv + ["check-plugin", "--simulator", "icarus"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("  ok   ") == 6 and "6 of 6 runs exact" in r.stdout, r.stdout


def test_the_built_in_step_tables_are_the_kinds_own():
    """The page's tables of the paper's and the exact kind are what their step_need gives."""
    from golden.pe_encoding import Mode
    from golden.pe_kinds import ExactPE, PaperPE

    text = PAGE.read_text()
    for name, kind in (("paper", PaperPE), ("exact", ExactPE)):
        rows = re.search(rf"<!-- table: {name} -->\n((?:\|.*\n)+)", text)[1].splitlines()[2:]
        for mode, row in zip(Mode, rows, strict=True):
            cells = [c.strip() for c in row.strip("|").split("|")]
            assert cells[0] == mode.name
            for (sq, sk), cell in zip([(a, b) for a in range(3) for b in range(3)], cells[1:], strict=True):
                need, targets = kind.step_need(mode, sq, sk)
                assert cell == f"{need.name} " + ",".join(t.name for t in targets), (name, mode.name, sq, sk)
