"""``kaleido check-plugin``: the toys run exact and on their cycle models through
the simulated engine, a dispatcher whose slot model its component does not
keep fails in the cycle count, and a run that a plugin did not take part in
says so."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from golden import Config, pair_reuse
from sim.rtl import runner
from sim.rtl.plugin_check import mixed_operands, unused_plugins
from tests.toys import Descending, WholeProducts

ROOT = Path(__file__).resolve().parents[3]
TOYS = ROOT / "tests" / "toys.py"

#: A dispatcher that claims a slot fewer a pass than its component (the toy's) takes.
SHORT = '''
from golden.dispatchers import DispatcherModel, register
from hw.dispatcher.dispatchers import register as register_unit
from toys import DescendingUnit


@register
class Short(DispatcherModel):
    name = "kp-short"

    @staticmethod
    def slots(chans, needs, mode, cfg):
        return max(1, len(chans) - 1)


@register_unit
class ShortUnit(DescendingUnit):
    model = Short
'''


def _check(*plugins):
    argv = [sys.executable, "-m", "sim"]
    for p in plugins:
        argv += ["--plugin", str(p)]
    r = subprocess.run(argv + ["check-plugin", "--simulator", "icarus", "--json"], capture_output=True, text=True,
                       cwd=ROOT)
    return r, json.loads(r.stdout) if r.stdout.strip() else None


def test_the_mixed_operands_reach_every_reuse_state(rng):
    cfg = Config(partition=(4, 2, 2), grid=(2, 4, 4))
    states = pair_reuse(mixed_operands(rng, cfg.tokens, cfg.head_dim), cfg).states
    assert {0, 1, 2} <= set(np.unique(states).tolist())


def test_a_run_without_the_plugin_says_so():
    kind, unit = Config(pe_kind=WholeProducts.name), Config(dispatcher=Descending.name)
    assert "PE kind toy-whole did not run" in unused_plugins(kind, "dense")
    assert unused_plugins(kind, "full") is None and unused_plugins(Config(), "dense") is None
    assert "dispatcher toy-descending did not run" in unused_plugins(unit, "pe-sh")
    assert unused_plugins(unit, "pe-m") is None


@pytest.mark.skipif(bool(runner.missing("icarus")), reason="needs icarus")
def test_the_toys_pass_and_a_wrong_slot_model_fails(tmp_path):
    r, res = _check(TOYS)
    assert r.returncode == 0 and res["ok"], r.stderr
    ran = {(x["plugin"], x["product"], x["variant"]) for x in res["runs"]}
    assert ran == {("PE kind toy-whole", "attention", "pe"), ("PE kind toy-whole", "attention", "full"),
                   ("PE kind toy-whole", "linear", "full"), ("dispatcher toy-descending", "attention", "pe-m"),
                   ("dispatcher toy-descending", "attention", "full"), ("dispatcher toy-descending", "linear", "pe-m")}
    assert all(x["ran_as"] != "dense" and min(x["states"]) > 0 for x in res["runs"])
    (tmp_path / "kp_short.py").write_text(SHORT)
    r, res = _check(TOYS, tmp_path / "kp_short.py")
    short = [x for x in res["runs"] if x["plugin"] == "dispatcher kp-short"]
    assert r.returncode == 1 and not res["ok"] and short and not any(x["ok"] for x in short)
    assert all("cycles" in x["error"] for x in short), short
    assert all(x["ok"] for x in res["runs"] if x["plugin"] != "dispatcher kp-short")


def test_nothing_to_check_is_refused():
    r = subprocess.run([sys.executable, "-m", "sim", "check-plugin"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "no plugin is registered" in r.stderr and len(r.stderr.splitlines()) == 1
