"""What the tools need from a Liberty file, read with ``liberty-parser``.

Per cell: its area, whether it holds state (an ``ff`` or ``latch`` group inside),
its leakage, and per pin its direction, input capacitance, function and the
internal-energy tables (``rise_power``/``fall_power``), output transition
tables (``rise_transition``/``fall_transition``) and delay tables
(``cell_rise``/``cell_fall``) of each arc. The energy
flow (:mod:`synth.gate_energy`) sums those tables at each switching event; timing and
area take only names and areas.

Units are this module's: time in ns, capacitance in pF, voltage in V (so an
internal-energy table is in pF V^2 = pJ) and leakage in nW. OSU018 states
those; NanGate45 states capacitance in fF, and with it its energy tables in
fJ, which :func:`library` brings to pF and pJ. Other time, voltage or leakage
units are refused.

A pin may have several energy tables for one arc, one per state of the cell's
other pins (NanGate's ``when`` conditions). The flow does not follow those
states, so it takes their mean: the energy of the arc with the other pins at
random.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

__all__ = ["Table", "Pin", "Cell", "Library", "library", "cells", "mean"]


@dataclass(frozen=True)
class Table:
    """One energy or transition table: ``values[i, j]`` at output load ``loads[i]`` (pF) and input
    transition ``slews[j]`` (ns); a one-axis table (an input pin's) has no loads."""

    slews: np.ndarray
    values: np.ndarray
    loads: np.ndarray | None = None

    def at(self, slew: float, load: float = 0.0) -> float:
        """The table at (``load``, ``slew``): bilinear between its points, and
        linear past its ends (as static timing tools extrapolate)."""
        if self.loads is None:
            return _interp(self.slews, self.values, slew)
        return _interp(self.loads, self._at_slew(slew), load)

    def _at_slew(self, slew: float) -> np.ndarray:
        # The column at one slew, per load: an energy run reads every table at the
        # same slew, thousands of times, so it is kept (the same arithmetic either way).
        cache = self.__dict__.setdefault("_columns", {})
        if slew not in cache:
            cache[slew] = np.array([_interp(self.slews, self.values[i], slew) for i in range(len(self.loads))])
        return cache[slew]


def mean(pair: tuple, slew: float, load: float) -> float:
    """The mean of a (rise, fall) pair of tables at (``slew``, ``load``): a delay or a
    transition where the direction is not followed."""
    return (pair[0].at(slew, load) + pair[1].at(slew, load)) / 2


def _interp(xs: np.ndarray, ys: np.ndarray, x: float) -> float:
    if len(xs) == 1:
        return float(ys[0])
    i = int(np.clip(np.searchsorted(xs, x) - 1, 0, len(xs) - 2))
    x0, x1 = xs[i], xs[i + 1]
    return float(ys[i] + (ys[i + 1] - ys[i]) * (x - x0) / (x1 - x0))


@dataclass
class Pin:
    name: str
    direction: str
    capacitance: float = 0.0
    function: str | None = None
    #: related pin (None for an input pin's own energy) -> (rise table, fall table)
    power: dict = field(default_factory=dict)
    #: related pin -> (rise transition table, fall transition table) of an output's arcs
    transition: dict = field(default_factory=dict)
    #: related pin -> (rise delay table, fall delay table): ``cell_rise``/``cell_fall``
    delay: dict = field(default_factory=dict)


@dataclass
class Cell:
    name: str
    area: float
    sequential: bool
    leakage_nw: float
    pins: dict


@dataclass
class Library:
    path: str
    voltage: float
    cells: dict
    #: The file's own capacitance unit in pF (what a tool reading it, OpenSTA, takes a load in).
    capacitance_pf: float = 1.0


def _table(group, templates, scale: tuple = (1.0, 1.0)) -> Table:
    # ``scale``: (the library's capacitance in pF, its table values in this module's units).
    variables = templates.get(group.args[0] if group.args else None, {})
    axes = {}
    for n in (1, 2):
        # A table without its own index takes its template's.
        index = group.get_array(f"index_{n}")[0] if f"index_{n}" in group else variables.get(f"index_{n}")
        if index is not None:
            axes[variables.get(f"variable_{n}", "")] = index
    values = np.asarray(group.get_array("values"), float) * scale[1]
    slew_axis = next((k for k in axes if "transition" in k), None)
    load_axis = next((k for k in axes if "capacitance" in k), None)
    if not axes and values.size == 1:          # a scalar table: one value at any slew
        return Table(np.zeros(1), values.reshape(-1))
    if slew_axis is None:
        raise ValueError(f"a table without an input-transition axis ({list(axes)})")
    if load_axis is None:
        return Table(np.asarray(axes[slew_axis], float), np.asarray(values, float).reshape(-1))
    if list(axes).index(load_axis) == 1:         # stored (slew, load): put the load first
        values = np.asarray(values).T
    return Table(np.asarray(axes[slew_axis], float), np.asarray(values, float),
                 np.asarray(axes[load_axis], float) * scale[0])


def _mean_table(tables: list) -> Table:
    # The mean of one arc's tables (one per state of the other pins), where their
    # axes agree; otherwise the first.
    first = tables[0]
    same = all(t.slews.shape == first.slews.shape and np.allclose(t.slews, first.slews)
               and (t.loads is None) == (first.loads is None)
               and (t.loads is None or np.allclose(t.loads, first.loads)) for t in tables)
    if len(tables) == 1 or not same:
        return first
    return Table(first.slews, np.mean([t.values for t in tables], axis=0), first.loads)


#: The capacitance units this module reads, in pF.
_CAPACITANCE_PF = {"pf": 1.0, "ff": 1e-3}


def _capacitance_pf(lib, path: str) -> float:
    # ``capacitive_load_unit (1,ff)``: how many pF the library's unit is.
    if "capacitive_load_unit" not in lib:
        return 1.0
    value = lib["capacitive_load_unit"]
    number, unit = (value if isinstance(value, (list, tuple)) else [1, value])[:2]
    unit = _unquote(unit).lower()
    if unit not in _CAPACITANCE_PF:
        raise ValueError(f"{path}: capacitance unit {unit!r} (this flow reads pf and ff)")
    return float(number) * _CAPACITANCE_PF[unit]


def _unquote(value) -> str:
    return str(value).strip().strip('"')


#: Parsed libraries, by the file's content and this module's source: NanGate45's parse takes
#: seconds, and every process that signs a block off (a test, a command, a Dask worker) needs it.
PARSED = Path(__file__).resolve().parent.parent / ".cache" / "liberty"


@lru_cache(maxsize=4)
def library(path: str) -> Library:
    """The cells of a Liberty file, with their energy tables (parsed once a file,
    kept in ``.cache/liberty/`` as a pickle of this module's own objects)."""
    data = Path(path).read_bytes()
    key = hashlib.sha256(data + Path(__file__).read_bytes()).hexdigest()[:24]
    kept = PARSED / f"{key}.pickle"
    if kept.is_file():
        try:
            lib = pickle.loads(kept.read_bytes())
            return Library(path, lib.voltage, lib.cells, lib.capacitance_pf) if lib.path != path else lib
        except Exception:           # a pickle of another Python or numpy: parse again
            pass
    lib = _parse(path)
    PARSED.mkdir(parents=True, exist_ok=True)
    tmp = kept.with_name(f"{kept.name}.{os.getpid()}.tmp")
    tmp.write_bytes(pickle.dumps(lib))
    os.replace(tmp, kept)
    return lib


def _parse(path: str) -> Library:
    """The cells of a Liberty file, with their energy tables."""
    from liberty.parser import parse_liberty
    text = open(path, errors="replace").read()
    try:
        lib = parse_liberty(text)
    except Exception as exc:         # the parser's own errors name no file
        raise ValueError(f"{path}: not a Liberty file the parser reads ({type(exc).__name__})") from None
    units = {k: _unquote(lib[k]) for k in ("time_unit", "voltage_unit", "leakage_power_unit") if k in lib}
    want = {"time_unit": "1ns", "voltage_unit": "1V", "leakage_power_unit": "1nW"}
    wrong = {k: v for k, v in units.items() if want[k] != v}
    if wrong:
        raise ValueError(f"{path}: units {wrong} (this flow reads ns, V and nW)")
    templates = {}
    for kind in ("power_lut_template", "lu_table_template"):
        for t in lib.get_groups(kind):
            templates[_unquote(t.args[0])] = {
                **{k: _unquote(t[k]) for k in ("variable_1", "variable_2") if k in t},
                **{k: t.get_array(k)[0] for k in ("index_1", "index_2") if k in t}}
    voltage = float(lib["nom_voltage"]) if "nom_voltage" in lib else 1.8
    cap = _capacitance_pf(lib, path)
    timing_scale, energy_scale = (cap, 1.0), (cap, cap)     # energy: capacitance x V^2
    out = {}
    for c in lib.get_groups("cell"):
        name = _unquote(c.args[0])
        pins = {}
        for p in c.get_groups("pin"):
            pin = Pin(_unquote(p.args[0]), _unquote(p["direction"]) if "direction" in p else "",
                      float(p["capacitance"]) * cap if "capacitance" in p else 0.0,
                      _unquote(p["function"]) if "function" in p else None)
            for t in p.get_groups("timing"):
                related = _unquote(t["related_pin"]) if "related_pin" in t else None
                tables = {g.group_name: _table(g, templates, timing_scale) for g in t.groups
                          if g.group_name in ("rise_transition", "fall_transition", "cell_rise", "cell_fall")}
                for kind, (r, f) in (("transition", ("rise_transition", "fall_transition")),
                                     ("delay", ("cell_rise", "cell_fall"))):
                    if related and (r in tables or f in tables):
                        rise = tables.get(r) or tables[f]
                        getattr(pin, kind)[related] = (rise, tables.get(f) or rise)
            arcs = {}                           # related pin -> [(rise, fall)], one per state
            for ip in p.get_groups("internal_power"):
                related = _unquote(ip["related_pin"]) if "related_pin" in ip else None
                tables = {g.group_name: _table(g, templates, energy_scale) for g in ip.groups
                          if g.group_name in ("rise_power", "fall_power")}
                if tables:
                    rise = tables.get("rise_power") or tables["fall_power"]
                    arcs.setdefault(related, []).append((rise, tables.get("fall_power") or rise))
            pin.power = {related: (_mean_table([r for r, _ in pairs]), _mean_table([f for _, f in pairs]))
                         for related, pairs in arcs.items()}
            pins[pin.name] = pin
        sequential = bool(c.get_groups("ff") or c.get_groups("latch")
                          or c.get_groups("ff_bank") or c.get_groups("latch_bank"))
        out[name] = Cell(name, float(c["area"]) if "area" in c else 0.0, sequential,
                         float(c["cell_leakage_power"]) if "cell_leakage_power" in c else 0.0, pins)
    if not out:
        raise ValueError(f"{path}: no cells found; is it a Liberty file?")
    return Library(path, voltage, out, cap)


def cells(path: str) -> dict[str, tuple[float, bool]]:
    """``{cell name: (area, is_sequential)}`` of a Liberty file."""
    return {name: (c.area, c.sequential) for name, c in library(path).cells.items()}
