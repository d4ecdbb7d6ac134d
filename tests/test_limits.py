"""The sizes a reader can hold in mind: no source file over 600 lines, no
function of the RTL over 100 lines, and no path of this machine in a document
the report generates."""

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_FILE_LINES = 600
MAX_HW_FUNCTION_LINES = 100
#: Documents written by ``make report``.
GENERATED = ("docs/results.md",)
#: What a machine's own path looks like in text: an absolute path into a home,
#: root's home, a scratch or work folder, or a cache folder.
MACHINE_PATH = re.compile(r"(/root/|/home/|/tmp/|/work/|/\.cache/|\.\.\./\.cache)")


def python_files():
    out = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / p for p in out.split()]


def long_files(paths, limit=MAX_FILE_LINES):
    return [(p.relative_to(ROOT).as_posix(), n) for p in paths
            if (n := len(p.read_text().splitlines())) > limit]


def long_functions(paths, limit=MAX_HW_FUNCTION_LINES):
    out = []
    for p in paths:
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > limit:
                    out.append((f"{p.relative_to(ROOT).as_posix()}:{node.name}", length))
    return out


def machine_paths(text: str) -> list[str]:
    return [line for line in text.splitlines() if MACHINE_PATH.search(line)]


def test_no_file_is_over_600_lines():
    assert long_files(python_files()) == []


def test_no_hw_function_is_over_100_lines():
    assert long_functions(sorted((ROOT / "hw").rglob("*.py"))) == []


def test_no_generated_document_names_a_path_of_this_machine():
    for doc in GENERATED:
        assert machine_paths((ROOT / doc).read_text()) == [], doc


def test_the_checks_see_what_they_look_for():
    probe = ROOT / ".pytest_limits_probe.py"          # inside ROOT, as the checks name files
    try:
        probe.write_text("def f():\n" + "    x = 1\n" * 120)
        assert long_files([probe], limit=100) == [(probe.name, 121)]
        assert long_functions([probe]) == [(f"{probe.name}:f", 121)]
    finally:
        probe.unlink()
    assert machine_paths("liberty: /root/.cache/osu018/osu018_stdcells.lib") != []
    assert machine_paths("liberty: .../.cache/osu018/x.lib") != []
    assert machine_paths("liberty: the OSU018 library (qflow-tech-osu018)") == []
