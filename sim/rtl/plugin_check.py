"""A plugin's golden model, RTL and cycle model held equal: ``kaleido check-plugin``.

Registration already refuses a PE kind whose table the engine would compute
wrongly (:mod:`golden.pe_contract`). What it cannot see is the plugin's own
code in the other layers: a dispatcher's component against its slot model, a
kind's decode in the RTL. :func:`check` runs each dispatcher and PE kind
registered beyond the built-in ones through the simulated engine on a small
head and a small linear layer, always on passes A-D (``schedule="pairs"``: on
inputs this small the driver's ``auto`` would often pick the dense schedule,
and the plugin would never run), with operands that put every channel's
tokens in all three reuse states. The benches compare every score with
golden and the cycles with the cycle model; a run that differs fails.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from golden import Config, ConfigError, dispatchers, pair_reuse, pe_contract, pe_kinds, plugins
from golden.variants import VARIANTS
from hw.dispatcher.dispatchers import DISPATCHERS as UNITS
from sim.errors import UserError
from sim.rtl.linear import simulate_linear
from sim.rtl.simulate import simulate

__all__ = ["Run", "mixed_operands", "plan", "check", "unused_plugins"]

#: The head the check runs: 32 tokens of 8 channels on a 2x4 array (a grid on
#: which a partial-reuse table that is wrong shows on some tile group).
SMALL = dict(partition=(4, 2, 2), grid=(2, 4, 4), rows=2, cols=4)
#: Heads and outputs of the linear layer it runs.
LINEAR_HEADS, LINEAR_OUTPUTS = 2, 4


class Run(NamedTuple):
    """One simulation of the check: what runs, at which design point."""
    plugin: str          # "PE kind NAME" or "dispatcher NAME"
    product: str         # "attention" or "linear"
    cfg: Config


def mixed_operands(rng: np.random.Generator, tokens: int, channels: int) -> np.ndarray:
    """int8 ``[tokens, channels]`` around one value per channel: each token
    differs from it in its low three bits (a full reuse of its neighbour at
    the default thresholds), in bits 3-4 (partial) or above (compute)."""
    base = rng.integers(0, 256, (1, channels))
    level = rng.choice(3, (tokens, channels), p=[0.5, 0.3, 0.2])
    low = np.array([0, 8, 32])[level]
    high = np.array([8, 32, 256])[level]
    mask = rng.integers(low, high)
    return ((base ^ mask) & 0xFF).astype(np.uint8).view(np.int8)


def _added(admits) -> list:
    """What plugins registered through ``admits`` (the module whose ``register``
    admitted them), beyond the built-in entries."""
    return [entry for where, entry in plugins.added() if where == admits.__name__]


def _point(**knobs) -> Config:
    cfg = Config(**SMALL, queue_depth=8, clusters=2, cluster_capacity=4)
    try:
        return cfg.with_(**knobs)
    except ConfigError:
        # A dispatcher that needs the issue window (as the channel window does) gets one.
        return cfg.with_(issue_window=4, **knobs)


def plan(loaded=()) -> list[Run]:
    """The runs for every plugin registered: each PE kind on variants ``pe`` and
    ``full`` and in a linear layer; each dispatcher on ``pe-m`` and ``full`` and
    in a linear layer. Refused (UserError) if there is none (``loaded``: the
    ``--plugin`` modules, named in the refusal), or a dispatcher has no component."""
    kinds, units = _added(pe_contract), _added(dispatchers)
    if not kinds and not units and loaded:
        raise UserError(f"--plugin {', '.join(loaded)} registered no PE kind or dispatcher: a plugin module calls "
                        f"golden.pe_contract.register or golden.dispatchers.register (docs/plugins.md)")
    if not kinds and not units:
        raise UserError("no plugin is registered: name its module with kaleido --plugin MODULE check-plugin")
    runs = []
    for kind in kinds:
        at = dict(pe_kind=kind.name, accumulators=kind.registers)
        runs += [Run(f"PE kind {kind.name}", "attention", _point(variant="pe", **at)),
                 Run(f"PE kind {kind.name}", "attention", _point(variant="full", **at)),
                 Run(f"PE kind {kind.name}", "linear", _point(variant="full", **at))]
    for unit in units:
        if unit.name not in UNITS:
            raise UserError(f"dispatcher {unit.name!r} has a golden model but no component: register a "
                            f"hw.dispatcher.dispatch.Dispatcher for it with hw.dispatcher.dispatchers.register")
        runs += [Run(f"dispatcher {unit.name}", "attention", _point(variant="pe-m", dispatcher=unit.name)),
                 Run(f"dispatcher {unit.name}", "attention", _point(variant="full", dispatcher=unit.name)),
                 Run(f"dispatcher {unit.name}", "linear", _point(variant="pe-m", dispatcher=unit.name))]
    return runs


def _one(run: Run, rng, simulator: str, work: Path) -> dict:

    cfg = run.cfg
    if run.product == "attention":
        q = mixed_operands(rng, cfg.tokens, cfg.head_dim)
        k = mixed_operands(rng, cfg.tokens, cfg.head_dim)
        states = np.concatenate([pair_reuse(q, cfg).states.ravel(), pair_reuse(k, cfg).states.ravel()])
        rtl = simulate(cfg, q, k, "kaleido", simulator, work, schedule="pairs",
                       label=f"{run.plugin}: S~, variant {cfg.variant} ({simulator})")
    else:
        x = mixed_operands(rng, cfg.tokens, cfg.head_dim * LINEAR_HEADS)
        w = rng.integers(-128, 128, (x.shape[1], LINEAR_OUTPUTS), dtype=np.int8)
        states = np.concatenate([pair_reuse(x[:, h * cfg.head_dim:(h + 1) * cfg.head_dim], cfg).states.ravel()
                                 for h in range(LINEAR_HEADS)])
        rtl = simulate_linear(cfg, x, w, "kaleido", simulator, work, schedule="pairs",
                              label=f"{run.plugin}: X~ W, variant {cfg.variant} ({simulator})")
    model = rtl["model"]
    return {"plugin": run.plugin, "product": run.product, "variant": cfg.variant, "ok": True,
            "cycles": rtl["cycles"], "model_cycles": model["cycles"], "ran_as": model["ran_as"],
            "lane_work": rtl["lane_work"], "states": [int((states == s).sum()) for s in range(3)]}


def check(simulator: str, seed: int, say: Callable[[dict], None] = lambda r: None) -> list[dict]:
    """Run :func:`plan` on ``simulator`` from ``seed``; one result a run (``ok``
    False and ``error`` where the bench found the RTL off golden or its model),
    each also given to ``say`` as it ends."""
    rng = np.random.default_rng(seed)
    out = []
    with tempfile.TemporaryDirectory(prefix="kaleido-check-plugin-") as tmp:
        for i, run in enumerate(plan()):
            try:
                r = _one(run, rng, simulator, Path(tmp) / f"run{i}")
            except UserError as exc:
                r = {"plugin": run.plugin, "product": run.product, "variant": run.cfg.variant, "ok": False,
                     "error": str(exc)}
            out.append(r)
            say(r)
    return out


def unused_plugins(cfg: Config, ran_as: str) -> str | None:
    """A warning when ``cfg`` names a plugin that a run did not use (the driver
    took the dense schedule, or bypassed the unit the plugin is), else None."""
    names = []
    kind = pe_kinds.PE_KINDS.get(cfg.pe_kind or "")
    if kind in _added(pe_contract) and ran_as == "dense":
        names.append(f"PE kind {kind.name}")
    unit = dispatchers.DISPATCHERS.get(cfg.dispatcher or "")
    if unit in _added(dispatchers) and not VARIANTS.get(ran_as, (False, False))[1]:    # no matcher part ran
        names.append(f"dispatcher {unit.name}")
    if not names:
        return None
    how = "the dense schedule" if ran_as == "dense" else f"passes A-D as variant {ran_as}"
    return (f"kaleido: warning: the driver ran {how} (fewer cycles), so {' and '.join(names)} did not run; "
            f"--schedule pairs runs {'them' if len(names) > 1 else 'it'}")

