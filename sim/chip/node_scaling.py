"""Figures measured at one CMOS node brought to another, by published scaling
equations: A. Stillmaker and B. Baas, "Scaling equations for the accurate
prediction of CMOS device performance from 180 nm to 7 nm", Integration, the
VLSI Journal 58 (2017) 74-81 (with the authors' erratum to their section 4.2
example).

Their equations fit HSPICE results (PTM and ITRS models) per node as
polynomials of the supply voltage: delay as a cubic, energy per operation and
power as quadratics; area scales by a fixed factor per pair of nodes. The
coefficients below are their tables' (facts, reproduced here so the model runs
offline). Nodes 45 nm and below come in high-performance (HP) and low-power
(LP) flavours.

This project signs off at 45 nm (NanGate45, 1.1 V) by default, or at 180 nm
(OSU018, 1.8 V), and scales from there. The paper's chip is at
16 nm; TSMC's 16 nm FinFET runs at 0.8 V nominal, so ``HP16`` at 0.8 V is the
default target. Scaling a whole design by one factor assumes its mix of logic
and wire scales like the fitted circuits; that is the equations' own caveat.
"""

from __future__ import annotations

__all__ = ["NODES", "DENSITY", "delay_factor", "energy_factor", "power_factor", "scale_area", "scale_delay",
           "scale_energy", "scale_power", "node_key"]

#: Area density relative to 180 nm (how many times smaller a design gets), from
#: the area table of Stillmaker and Baas (the 180 nm column).
DENSITY = {180: 1.0, 130: 2.9, 90: 6.6, 65: 12.0, 45: 19.0, 32: 40.0, 20: 88.0, 16: 99.0, 14: 110.0,
           10: 180.0, 7: 320.0}

#: Per node: delay cubic (a3, a2, a1, a0), energy quadratic (b2, b1, b0) and power
#: quadratic (c2, c1, c0) in the supply voltage.
_COEFFS = {
    "180": ((0, 97.09, -356.7, 406.5), (0, 24.64, -17.98), (0, 101000, -79720)),
    "130": ((-76.65, 334.9, -493.4, 275.8), (7.171, -6.709, 2.904), (27020, -15450, 5630)),
    "90": ((-60.34, 262.5, -384.2, 210.9), (4.762, -4.781, 2.092), (17320, -11230, 4328)),
    "65": ((-53.3, 230.4, -333.9, 178.6), (3.755, -4.398, 1.975), (12890, -10510, 4362)),
    "HP45": ((-501.6, 1567, -1619, 566.1), (1.018, -0.3107, 0.1539), (5462, -1760, 522.4)),
    "HP32": ((-1047, 2982, -2797, 873.5), (0.8367, -0.4341, 0.1701), (4001, -1733, 533.6)),
    "HP20": ((0, 34.63, -66.37, 41.15), (0.373, -0.1582, 0.04104), (2922, -1286, 299.9)),
    "HP16": ((0, 24.8, -47.52, 28.87), (0.2958, -0.1241, 0.03024), (2133, -882.6, 197.7)),
    "HP14": ((-40.66, 109.2, -100.6, 35.92), (0.2363, -0.09675, 0.02239), (1675, -711, 159)),
    "HP10": ((-34.95, 93.65, -85.99, 30.4), (0.2068, -0.09311, 0.02375), (1456, -621.6, 143.8)),
    "HP7": ((-28.58, 76.6, -70.26, 24.69), (0.1776, -0.09097, 0.02447), (1179, -515.7, 123.4)),
    "LP45": ((-285.7, 1239, -1795, 898.8), (1.103, -0.362, 0.2767), (6297, -3009, 1124)),
    "LP32": ((-325.9, 1374, -1922, 913.2), (0.9559, -0.7823, 0.471), (4557, -3037, 1323)),
    "LP20": ((-160.5, 514.1, -558.6, 217.5), (0.2632, -0.14, 0.06841), (2096, -962.4, 287.1)),
    "LP16": ((-114.6, 366.7, -397.4, 153.6), (0.2139, -0.1187, 0.05639), (1609, -715.5, 205.7)),
    "LP14": ((-85.37, 271.6, -292.2, 111.4), (0.1556, -0.06472, 0.03066), (1259, -554.1, 152.3)),
    "LP10": ((-71.76, 228.6, -246.3, 93.91), (0.1261, -0.0518, 0.02769), (1046, -422.7, 118.9)),
    "LP7": ((-61.79, 196.1, -210.3, 79.55), (0.09365, -0.03409, 0.02043), (815.2, -307.3, 87.54)),
}

#: The nodes the equations cover, in nm.
NODES = tuple(DENSITY)


def node_key(nm: int, flavour: str = "HP") -> str:
    """The table's name of a node: plain above 45 nm, ``HP`` or ``LP`` from 45 nm down."""
    if nm not in DENSITY:
        raise ValueError(f"no scaling equations for {nm} nm; nodes: {', '.join(map(str, NODES))}")
    if flavour not in ("HP", "LP"):
        raise ValueError(f"flavour must be HP or LP, got {flavour!r}")
    return str(nm) if nm > 45 else f"{flavour}{nm}"


def _poly(coeffs, v: float) -> float:
    out = 0.0
    for c in coeffs:
        out = out * v + c
    return out


def delay_factor(nm: int, vdd: float, flavour: str = "HP") -> float:
    return _poly(_COEFFS[node_key(nm, flavour)][0], vdd)


def energy_factor(nm: int, vdd: float, flavour: str = "HP") -> float:
    return _poly(_COEFFS[node_key(nm, flavour)][1], vdd)


def power_factor(nm: int, vdd: float, flavour: str = "HP") -> float:
    return _poly(_COEFFS[node_key(nm, flavour)][2], vdd)


def scale_area(value: float, src_nm: int, dst_nm: int) -> float:
    """An area at ``src_nm`` brought to ``dst_nm``."""
    node_key(src_nm), node_key(dst_nm)
    return value * DENSITY[src_nm] / DENSITY[dst_nm]


def scale_delay(value: float, src: tuple[int, float], dst: tuple[int, float], flavour: str = "HP") -> float:
    """A delay at ``src = (nm, vdd)`` brought to ``dst``."""
    return value * delay_factor(*dst, flavour) / delay_factor(*src, flavour)


def scale_energy(value: float, src: tuple[int, float], dst: tuple[int, float], flavour: str = "HP") -> float:
    """An energy per operation at ``src = (nm, vdd)`` brought to ``dst``."""
    return value * energy_factor(*dst, flavour) / energy_factor(*src, flavour)


def scale_power(value: float, src: tuple[int, float], dst: tuple[int, float], flavour: str = "HP") -> float:
    """A power at ``src = (nm, vdd)`` brought to ``dst`` (used here for leakage)."""
    return value * power_factor(*dst, flavour) / power_factor(*src, flavour)
