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


# -- no module imports one that imports it back ---------------------------------------------

def _module(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def import_graph(root: Path, packages=OURS) -> dict[str, set[str]]:
    """``{module: modules of ours it imports}`` over ``packages`` under ``root``:
    every import, deferred ones inside functions too, but not those under ``if
    TYPE_CHECKING:`` (never run: annotations only). ``from pkg import name``
    counts as an import of ``pkg.name`` when that is a module, else of ``pkg``.
    Only the named module counts: importing ``a.b.c`` runs ``a`` and ``a.b`` too,
    and a package's ``__init__`` that gathers its own modules would otherwise
    close a circle with each of them (``tests/sim/cli/test_main.py`` follows those
    for the command line's packages)."""
    files = {_module(p, root): p for pkg in packages for p in (root / pkg).rglob("*.py")}
    graph = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(), str(path))
        skip = {id(n) for t in ast.walk(tree) if _type_checking(t) for b in t.body for n in ast.walk(b)}
        edges = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            else:
                continue
            edges |= {t for t in targets if t in files and t != name}
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle():
    found = cycles(import_graph(ROOT))
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_check_sees_a_planted_circle(tmp_path):
    pkg = tmp_path / "golden"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import f\n")
    (pkg / "b.py").write_text("def f():\n    from golden import a\n")          # deferred: still a circle
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n")
    (pkg / "d.py").write_text("from . import c\n")
    graph = import_graph(tmp_path, ("golden",))
    assert graph["golden.b"] == {"golden.a"} and graph["golden.c"] == set()
    assert cycles(graph) == [["golden.a", "golden.b"]]
