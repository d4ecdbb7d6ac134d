"""The packages' layers, as docs/design.md, "Layout", draws them: each imports only those below it.

``golden`` (the reference arithmetic) imports nothing of ours; ``hw`` (the RTL)
only ``golden``; ``tb`` (the cocotb benches) and ``synth`` (synthesis, timing,
energy) ``hw`` and ``golden``, not each other; ``sim`` (the library and the
command line) anything. Every import counts, a deferred one inside a function
too.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = ("golden", "hw", "tb", "synth", "sim")
ALLOWED = {
    "golden": set(),
    "hw": {"golden"},
    "tb": {"golden", "hw"},
    "synth": {"golden", "hw"},
    "sim": {"golden", "hw", "tb", "synth"},
}


def imported(path: Path) -> set[tuple[str, int]]:
    """The packages of ours that ``path`` imports, with the line of each import."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue                     # relative imports stay inside their package
        found |= {(n.split(".")[0], node.lineno) for n in names if n.split(".")[0] in OURS}
    return found


@pytest.mark.parametrize("package", OURS)
def test_a_package_imports_only_the_layers_below(package):
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"no package {package}"
    wrong = [f"{f.relative_to(ROOT)}:{line} imports {other}"
             for f in files for other, line in sorted(imported(f))
             if other != package and other not in ALLOWED[package]]
    assert not wrong, "\n".join(wrong)


def test_the_check_sees_a_wrong_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from tb.actions import stimulus\n")
    assert imported(bad) == {("tb", 2)}
