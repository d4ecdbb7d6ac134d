"""What another process needs to know of the dispatchers and PE kinds registered
here, and how it imports them."""

import sys
from pathlib import Path

import pytest

from golden import plugins
from golden.pe_kinds import PE_KINDS


def test_added_names_what_a_module_registered():
    import tests.toys  # registers a dispatcher and a PE kind
    added = plugins.added()
    assert ("golden.dispatchers", tests.toys.Descending) in added
    assert ("golden.pe_contract", tests.toys.WholeProducts) in added
    assert all(entry.__module__ not in ("golden.dispatchers", "golden.pe_kinds") for _, entry in added)
    assert "tests.toys" in plugins.modules()
    # tests.toys imports from the checkout's root, its top package's parent.
    assert str(Path(tests.toys.__file__).resolve().parents[1]) in plugins.roots()


def test_load_from_env_imports_the_modules_it_names(monkeypatch, tmp_path):
    (tmp_path / "kaleido_env_plugin.py").write_text(
        "from golden.pe_contract import register\nfrom golden.pe_kinds import PaperPE\n\n"
        "@register\nclass Mine(PaperPE):\n    name = 'toy-env'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(plugins.ENV, "kaleido_env_plugin")
    try:
        plugins.load_from_env()
        assert PE_KINDS["toy-env"].__module__ == "kaleido_env_plugin"
        assert "kaleido_env_plugin" in plugins.modules() and str(tmp_path.resolve()) in plugins.roots()
    finally:
        PE_KINDS.pop("toy-env", None)
        sys.modules.pop("kaleido_env_plugin", None)


def test_a_module_that_cannot_be_imported_is_named():
    with pytest.raises(ImportError, match="cannot import plugin module 'no_such_kaleido_plugin'"):
        plugins.load(["no_such_kaleido_plugin"])


def test_a_plugin_on_the_old_import_is_told_where_register_went(tmp_path, monkeypatch):
    """`from golden.pe_kinds import register` used to get "cannot import name" alone."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "kaleido_old_plugin.py").write_text("from golden.pe_kinds import register\n")
    try:
        with pytest.raises(ImportError, match=r"\(register is golden.pe_contract.register now\)"):
            plugins.load([str(tmp_path / "kaleido_old_plugin.py")])
    finally:
        sys.modules.pop("kaleido_old_plugin", None)


def test_a_plugin_file_named_like_an_imported_module_is_refused(tmp_path, monkeypatch):
    # load() puts a plugin's folder on the path: give it back, so that no later
    # process of this one (a simulator, a Dask worker) imports a file left here.
    monkeypatch.setattr(sys, "path", list(sys.path))
    # Imported by its stem, clash/json.py would be the json module already loaded: never run.
    (tmp_path / "clash").mkdir()
    (tmp_path / "clash" / "json.py").write_text("raise RuntimeError('never reached')\n")
    with pytest.raises(ImportError, match=r"it is named like module 'json'.*rename the file"):
        plugins.load([str(tmp_path / "clash" / "json.py")])
    assert str(tmp_path / "clash") not in sys.path
    # The same file loaded again is its own module, not a clash.
    (tmp_path / "kaleido_twice_plugin.py").write_text("X = 1\n")
    try:
        plugins.load([str(tmp_path / "kaleido_twice_plugin.py")] * 2)
        assert sys.modules["kaleido_twice_plugin"].X == 1
    finally:
        sys.modules.pop("kaleido_twice_plugin", None)
