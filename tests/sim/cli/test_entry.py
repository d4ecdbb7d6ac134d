"""The entry point: an interrupt is one line and exit 130, while the modules load
and when it lands in a destructor that would otherwise swallow it."""

import builtins
import signal
import sys
import time

import pytest

from sim.cli import entry


@pytest.fixture
def sigint():
    # run() installs its handler for the process: put pytest's back afterwards.
    saved = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, saved)


def test_an_interrupt_while_loading_is_one_line(monkeypatch, capsys, sigint):
    real = builtins.__import__

    def interrupted(name, *args, **kwargs):
        if name == "sim.cli.main":
            raise KeyboardInterrupt
        return real(name, *args, **kwargs)
    monkeypatch.delitem(sys.modules, "sim.cli.main", raising=False)
    monkeypatch.setattr(builtins, "__import__", interrupted)
    assert entry.run(["--help"]) == 130
    assert capsys.readouterr().err == "kaleido: interrupted\n"


class Checked:
    """Stands for an Amaranth elaboratable: the signal arrives while it is collected."""
    hit = []

    def __del__(self):
        try:
            entry.on_interrupt(signal.SIGINT, sys._getframe())
            Checked.hit.append("deferred")
        except KeyboardInterrupt:
            Checked.hit.append("raised in __del__")     # Python would drop this one


def test_an_interrupt_in_a_destructor_comes_again_outside_it(sigint):
    signal.signal(signal.SIGINT, entry.on_interrupt)
    Checked.hit.clear()
    with pytest.raises(KeyboardInterrupt):
        Checked()                        # collected at once: its __del__ takes the signal
        assert Checked.hit == ["deferred"]
        time.sleep(20 * entry.RETRY_S)    # the signal comes again, here
    assert Checked.hit == ["deferred"]


def test_an_interrupt_elsewhere_raises_at_once():
    with pytest.raises(KeyboardInterrupt):
        entry.on_interrupt(signal.SIGINT, sys._getframe())
