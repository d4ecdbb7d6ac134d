"""One name, one registration, in every registry (golden/registry.py)."""

import pytest

from golden import dispatchers
from golden.pe_contract import register
from golden.pe_kinds import PE_KINDS, PaperPE
from golden.registry import claim


def _kind(module: str):
    # A kind as a plugin module would define it: the same name, from its own module.
    return type("Twice", (PaperPE,), {"name": "twice-kind", "__module__": module})


def test_a_name_is_registered_once():
    first = register(_kind("plugin_a"))
    try:
        with pytest.raises(ValueError, match=r"PE kind 'twice-kind' is plugin_a.Twice's name; a name is "
                                             r"registered once: give plugin_b.Twice another"):
            register(_kind("plugin_b"))
        assert PE_KINDS["twice-kind"] is first
        # The same class again, as a worker process rebuilds it: the same entry.
        assert register(_kind("plugin_a")) and PE_KINDS["twice-kind"].__module__ == "plugin_a"
    finally:
        PE_KINDS.pop("twice-kind", None)


def test_a_built_in_name_is_refused_in_every_registry():
    with pytest.raises(ValueError, match="'paper' is a built-in name"):
        register(type("Mine", (PaperPE,), {"name": "paper", "__module__": "mine"}))
    with pytest.raises(ValueError, match="'matcher' is a built-in name"):
        dispatchers.register(type("Mine", (dispatchers.Matcher,), {"name": "matcher", "__module__": "mine"}))


def test_claim_takes_a_free_name_and_the_same_class():
    table = {}
    entry = type("E", (), {"__module__": "m"})
    claim(table, "x", entry, "thing")
    table["x"] = entry
    claim(table, "x", entry, "thing")
    with pytest.raises(ValueError, match="thing 'x' is m.E's name"):
        claim(table, "x", type("F", (), {"__module__": "n"}), "thing")


@pytest.mark.parametrize("name", ["full", "pe-m"])
def test_a_variants_name_is_kept_for_the_variant(name):
    with pytest.raises(ValueError, match=rf"'{name}' is a dispatcher variant's name"):
        register(type("Mine", (PaperPE,), {"name": name, "__module__": "mine"}))
    with pytest.raises(ValueError, match=rf"'{name}' is a dispatcher variant's name"):
        dispatchers.register(type("Mine", (dispatchers.Matcher,), {"name": name, "__module__": "mine"}))
