"""A user's plugin module that is broken, or that would be computed wrongly, is refused
in one line that names it, exit 2, before anything runs (the third adversary pass)."""

import sys

import numpy as np
import pytest

from golden import dispatchers, pe_kinds
from hw.dispatcher import dispatchers as units
from sim.cli.main import main

GOOD_RUN = ["golden", "attention", "--q", "q.npy", "--k", "q.npy", "--grid", "1,2,2", "--partition", "2,1,1"]


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """Write a plugin module; forget what it registered afterwards."""
    before = (dict(pe_kinds.PE_KINDS), dict(dispatchers.DISPATCHERS), dict(units.DISPATCHERS))
    monkeypatch.setattr(sys, "path", list(sys.path))          # --plugin puts folders on it
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "q.npy", np.arange(16, dtype=np.int8).reshape(4, 4))

    def write(name, text):
        (tmp_path / f"{name}.py").write_text(text)
        return name
    yield write
    for table, saved in zip((pe_kinds.PE_KINDS, dispatchers.DISPATCHERS, units.DISPATCHERS), before):
        table.clear()
        table.update(saved)
    for name in [n for n in sys.modules if n.startswith("kp_")]:
        del sys.modules[name]


def _refused(capsys, argv, *words):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "internal error" not in err, err
    for word in words:
        assert word in err, err
    return err


KIND = ("from golden.pe_contract import register\nfrom golden.pe_kinds import PaperPE\n"
        "from golden.pe_encoding import Need, Target\n")


@pytest.mark.parametrize("body, words", [
    ("raise RuntimeError('boom at import')\n", ["kp_case", "boom at import", "kp_case.py:1"]),
    ("def f(:\n", ["kp_case", "syntax error", "kp_case.py:1"]),
    (KIND + "@register\nclass K(PaperPE):\n    name = 'mine'\n    @classmethod\n"
            "    def step_need(cls, mode, sq, sk):\n        return 1 / 0\n", ["'mine'", "ZeroDivisionError"]),
    (KIND + "@register\nclass K(PaperPE):\n    name = 'mine'\n    @classmethod\n"
            "    def step_need(cls, mode, sq, sk):\n        return None\n", ["'mine'", "not (a Need"]),
    (KIND + "@register\nclass K(PaperPE):\n    name = 'mine'\n    @classmethod\n"
            "    def step_need(cls, mode, sq, sk):\n        return 7, (9, 9, 9)\n", ["'mine'", "not (a Need"]),
    (KIND + "@register\nclass K(PaperPE):\n    name = ''\n", ["declares no name"]),
    (KIND + "@register\nclass K(PaperPE):\n    name = 'paper'\n", ["'paper'", "built-in"]),
    ("from golden.dispatchers import Matcher, register\n@register\nclass D(Matcher):\n    name = 'matcher'\n",
     ["'matcher'", "built-in"]),
    ("from golden.dispatchers import DispatcherModel, register\n@register\nclass D(DispatcherModel):\n    pass\n",
     ["declares no name"]),
])
def test_a_broken_plugin_is_refused_in_one_line(plugin, capsys, body, words):
    name = plugin("kp_case", body)
    _refused(capsys, ["--plugin", name, *GOOD_RUN, "--out", "g"], *words)


def test_a_plugin_file_path_is_imported(plugin, capsys, tmp_path):
    plugin("kp_path", KIND + "@register\nclass K(PaperPE):\n    name = 'kp-path'\n")
    assert main(["--plugin", str(tmp_path / "kp_path.py"), *GOOD_RUN, "--out", "g"]) == 0
    assert pe_kinds.PE_KINDS["kp-path"].__module__ == "kp_path"
    # After the subcommand too, as any other option.
    assert main([*GOOD_RUN, "--plugin", str(tmp_path / "kp_path.py"), "--out", "g1"]) == 0
    _refused(capsys, ["--plugin", str(tmp_path / "kp_none.py"), *GOOD_RUN, "--out", "g2"], "no such file")


def test_a_dispatcher_without_a_component_is_refused(plugin, capsys, tmp_path):
    plugin("kp_lonely", "from golden.dispatchers import Matcher, register\n"
                        "@register\nclass D(Matcher):\n    name = 'lonely'\n")
    _refused(capsys, ["--plugin", "kp_lonely", "sim", "attention", "--q", "q.npy", "--k", "q.npy", "--grid", "1,2,2",
                      "--partition", "2,1,1", "--dispatcher", "lonely", "--simulator", "icarus", "--out", "s"],
             "'lonely'", "no RTL component")
    assert not (tmp_path / "s").exists()


def test_a_dispatcher_the_engine_cannot_route_is_refused(plugin, capsys, tmp_path):
    plugin("kp_three", "from golden.dispatchers import Matcher, register\n"
                       "from hw.dispatcher.dispatch import Dispatcher\n"
                       "from hw.dispatcher.dispatchers import register as register_unit\n"
                       "@register\nclass D(Matcher):\n    name = 'kp-three'\n"
                       "@register_unit\nclass U(Dispatcher):\n    model = D\n"
                       "    def __init__(self, cfg):\n        super().__init__(cfg, width=1, groups=3)\n")
    _refused(capsys, ["--plugin", "kp_three", "sim", "attention", "--q", "q.npy", "--k", "q.npy", "--grid", "1,2,2",
                      "--partition", "2,1,1", "--dispatcher", "kp-three", "--simulator", "icarus", "--out", "s"],
             "'kp-three'", "the engine routes one group")
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("argv", [
    ["estimate", "--model", "wan2.1", "--dispatcher", "kp-descending", "--lookahead", "3", "--out", "o"],
    ["sim", "attention", "--q", "q.npy", "--k", "q.npy", "--grid", "1,2,2", "--partition", "2,1,1",
     "--dispatcher", "kp-descending", "--lookahead", "3", "--out", "o"],
])
def test_a_knob_the_plugin_dispatcher_does_not_read_names_the_dispatcher(capsys, plugin, argv):
    # A paired dispatcher that reads no lookahead (the refusal comes before any unit is built).
    plugin("kp_descending", "from golden.dispatchers import DispatcherModel, register\n@register\n"
                            "class D(DispatcherModel):\n    name = 'kp-descending'\n\n    @staticmethod\n"
                            "    def slots(chans, needs, mode, cfg):\n        return len(chans)\n")
    _refused(capsys, ["--plugin", "kp_descending", *argv],
             "--lookahead sets the matcher: --dispatcher kp-descending puts its own unit in its place")


def test_check_plugin_on_a_module_that_registers_nothing_names_it(capsys, plugin):
    # What other tests of this process registered is forgotten here (the fixture gives it back).
    for table, home in ((pe_kinds.PE_KINDS, "golden."), (dispatchers.DISPATCHERS, "golden."),
                        (units.DISPATCHERS, "hw.")):
        for name in [n for n, entry in table.items() if not entry.__module__.startswith(home)]:
            del table[name]
    plugin("kp_nothing", "X = 1\n")
    _refused(capsys, ["--plugin", "kp_nothing", "check-plugin"], "--plugin kp_nothing registered no PE kind")


def test_a_dispatcher_declaring_a_knob_no_config_has_is_refused(capsys, plugin):
    plugin("kp_knobs", "from golden.dispatchers import Matcher, register\n"
                       "@register\nclass D(Matcher):\n    name = 'odd-knobs'\n    knobs = frozenset({'lookahed'})\n")
    _refused(capsys, ["--plugin", "kp_knobs", *GOOD_RUN, "--out", "o.npz"],
             "dispatcher 'odd-knobs' declares knobs 'lookahed', which no Config has")
