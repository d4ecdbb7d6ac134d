"""The figures the chip model takes from publications (SRAM, DRAM, wires,
leakage), each with its source, in one table.

No SRAM compiler runs here, so the on-chip buffers are costed from published
figures; where a number is this project's assumption rather than a source's,
the table says so. :data:`TABLE` is what ``kaleido estimate`` prints beside its
results.

* **SRAM area**: TSMC's 16 nm FinFET high-density 6T bit cell is 0.07 um^2
  (S.-Y. Wu et al., "A 16nm FinFET CMOS technology for mobile SoC and computing
  applications", IEDM 2013). A macro adds decoders, sense amplifiers and
  redundancy around its cells; we assume 70 % of a macro is cells. That gives
  0.84 mm^2 per MiB; the paper's Table 2 (68.4 mm^2 for 96 MB) implies 0.71,
  the check the tests hold it to (within 25 %).
* **SRAM access energy**: M. Horowitz, "Computing's energy problem (and what we
  can do about it)", ISSCC 2014: reading 64 bits costs 10 pJ from an 8 KB
  SRAM, 20 pJ from 32 KB and 100 pJ from 1 MB, at 45 nm and 0.9 V. A buffer of
  tens of MB feeding 16,384 arrays is banked; we assume 32 KiB banks (20 pJ per
  64 bits, a write costing as much as a read), brought to the chip's node by
  :mod:`sim.chip.node_scaling`.
* **SRAM bandwidth**: a bank moves one word per port a cycle; the word and
  the ports are the chip's (:class:`sim.chip.chip.Chip`), 64 bits and one
  port in the paper's chip, the access the energy above is for.
* **Feature buffers**: each Kaleido array's matcher reads its tile group's
  token features from the global buffer into a buffer of its own (the
  paper's Sec. 5.3) and feeds the array from there. We assume it costs what
  Horowitz's smallest SRAM costs, 10 pJ per 64 bits from 8 KB at 45 nm.
* **SRAM leakage**: not modelled. We have no cited figure for a 16 nm
  high-density array; at tens of pW per cell, 96 MiB would leak tens of mW,
  under 0.1 % of the chip's power in every estimate here.
* **DRAM energy**: Horowitz (ISSCC 2014) gives 1.3-2.6 nJ per 64-bit DRAM
  access; we take the low end, 20.3 pJ per bit. DDR5 moves a bit for less, so
  DRAM energy here is an upper bound.
* **DRAM bandwidth**: a DDR5-6400 channel moves 8 bytes per transfer at 6400
  MT/s, 51.2 GB/s (JEDEC JESD79-5; the paper models 16 channels from Micron's
  datasheets).
* **DRAM standing power**: a module draws its active-standby current whenever
  the chip runs: IDD3N = 1,134 mA at 1.2 V, 1.36 W, for an 8 GB two-rank DDR4-2133
  module (Transcend TS1GSH72V1H datasheet); we assume one such module a
  channel and take DDR5's to be alike. Refresh comes on top, (IDD5B - IDD3N)
  x VDD x tRFC / tREFI in Micron's method (TN-40-07); with no IDD5B in the
  stored sources we assume 0.15 W a module.
* **Wires**: moving a bit a millimetre over a low-swing on-chip link costs
  40.4 fJ (S. Park et al., DATE 2013, 45 nm SOI). We do not scale it with the
  node (a wire's energy per mm falls little with the transistors), and assume
  an operand crosses the chip's edge (broadcast along a row of the arrays' grid)
  or half of it (to one array).
* **Logic leakage**: FinFET logic leaks a sizeable share of its power
  (A. Muttreja et al., ICCD 2007, doi:10.1109/ICCD.2007.4601953: 31 % in
  power-optimized FinFET circuits), and it does not fall with the dynamic
  power's scaling fit. We found no cited figure per area, and assume 20 mW
  per mm^2 of logic at the chip's node.
"""

from __future__ import annotations

from .node_scaling import scale_energy

__all__ = ["TABLE", "SRAM_BITCELL_UM2", "SRAM_CELL_FRACTION", "SRAM_BANK_KIB", "SRAM_PJ_PER_64B_45NM",
           "DRAM_PJ_PER_BIT", "DDR_BYTES_PER_TRANSFER", "FEATURE_BUFFER_KIB", "DRAM_STANDBY_W", "DRAM_REFRESH_W",
           "WIRE_FJ_PER_BIT_MM", "LOGIC_LEAKAGE_MW_PER_MM2", "sram_mm2_per_mib", "sram_pj_per_byte",
           "feature_pj_per_byte", "sram_bytes_per_cycle", "dram_gbps"]

SRAM_BITCELL_UM2 = 0.07             # 16 nm HD 6T cell (Wu et al., IEDM 2013)
SRAM_CELL_FRACTION = 0.70           # our assumption: cells / macro area
SRAM_BANK_KIB = 32                  # our assumption: the buffers' bank size
SRAM_PJ_PER_64B_45NM = {8: 10.0, 32: 20.0, 1024: 100.0}     # KiB -> pJ, 45 nm 0.9 V (Horowitz 2014)
SRAM_SOURCE_NODE = (45, 0.9)
DRAM_PJ_PER_BIT = 1300.0 / 64       # Horowitz 2014, low end
DDR_BYTES_PER_TRANSFER = 8          # a DDR5 channel's data width (two 32-bit subchannels)
FEATURE_BUFFER_KIB = 8              # our assumption: a matcher's feature buffer costs as Horowitz's 8 KB SRAM
DRAM_STANDBY_W = 1.134 * 1.2        # IDD3N x VDD of an 8 GB DDR4-2133 module (Transcend TS1GSH72V1H)
DRAM_REFRESH_W = 0.15               # our assumption, a module
WIRE_FJ_PER_BIT_MM = 40.4           # Park et al., DATE 2013 (45 nm SOI low-swing link)
LOGIC_LEAKAGE_MW_PER_MM2 = 20.0     # our assumption (FinFET logic; see the module's text)

#: Every figure, its value, unit and source.
TABLE = [
    {"figure": "SRAM bit cell, 16 nm HD 6T", "value": SRAM_BITCELL_UM2, "unit": "um^2",
     "source": "S.-Y. Wu et al., IEDM 2013"},
    {"figure": "SRAM cells / macro area", "value": SRAM_CELL_FRACTION, "unit": "",
     "source": "assumption (the paper's Table 2 implies 0.83)"},
    {"figure": "SRAM bank", "value": SRAM_BANK_KIB, "unit": "KiB", "source": "assumption"},
    {"figure": "SRAM read, 64 bits, 32 KB, 45 nm 0.9 V", "value": SRAM_PJ_PER_64B_45NM[32], "unit": "pJ",
     "source": "M. Horowitz, ISSCC 2014"},
    {"figure": "SRAM bank port", "value": 64, "unit": "bits a cycle",
     "source": "assumption (the paper's chip; Chip.sram_bank_bits and sram_ports)"},
    {"figure": "feature buffer read, 64 bits, 8 KB, 45 nm 0.9 V", "value": SRAM_PJ_PER_64B_45NM[FEATURE_BUFFER_KIB],
     "unit": "pJ", "source": "M. Horowitz, ISSCC 2014 (assumption: a matcher's buffer costs that)"},
    {"figure": "SRAM leakage", "value": None, "unit": "", "source": "not modelled (no cited 16 nm figure)"},
    {"figure": "DRAM access energy", "value": DRAM_PJ_PER_BIT, "unit": "pJ/bit",
     "source": "M. Horowitz, ISSCC 2014 (1.3 nJ per 64 bits, the low end)"},
    {"figure": "DDR5-6400 channel", "value": 6400 * DDR_BYTES_PER_TRANSFER / 1000, "unit": "GB/s",
     "source": "JEDEC JESD79-5"},
    {"figure": "DRAM standby, a module", "value": DRAM_STANDBY_W, "unit": "W",
     "source": "Transcend TS1GSH72V1H (DDR4-2133 8 GB) datasheet, IDD3N x 1.2 V; "
               "assumption: one a channel, DDR5 alike"},
    {"figure": "DRAM refresh, a module", "value": DRAM_REFRESH_W, "unit": "W",
     "source": "assumption (Micron TN-40-07's method, no IDD5B in the sources)"},
    {"figure": "on-chip wire", "value": WIRE_FJ_PER_BIT_MM, "unit": "fJ/bit/mm",
     "source": "S. Park et al., DATE 2013 (45 nm SOI); assumption: not scaled with the node"},
    {"figure": "logic leakage", "value": LOGIC_LEAKAGE_MW_PER_MM2, "unit": "mW/mm^2",
     "source": "assumption (A. Muttreja et al., ICCD 2007: leakage 31 % of FinFET logic's power)"},
    {"figure": "node scaling", "value": None, "unit": "",
     "source": "A. Stillmaker, B. Baas, Integration 58 (2017) 74-81"},
]


def sram_mm2_per_mib() -> float:
    """Macro area of one MiB of SRAM at 16 nm."""
    return 8 * 2 ** 20 * SRAM_BITCELL_UM2 / SRAM_CELL_FRACTION / 1e6


def sram_pj_per_byte(node: tuple[int, float]) -> float:
    """Energy of one byte read or written in a bank of :data:`SRAM_BANK_KIB`, at ``node = (nm, vdd)``."""
    return scale_energy(SRAM_PJ_PER_64B_45NM[SRAM_BANK_KIB] / 8, SRAM_SOURCE_NODE, node)


def feature_pj_per_byte(node: tuple[int, float]) -> float:
    """Energy of one byte read from a matcher's feature buffer, at ``node``."""
    return scale_energy(SRAM_PJ_PER_64B_45NM[FEATURE_BUFFER_KIB] / 8, SRAM_SOURCE_NODE, node)


def sram_bytes_per_cycle(mib: float, bank_bits: int, ports: int) -> float:
    """What a buffer of ``mib`` MiB in :data:`SRAM_BANK_KIB` banks of ``ports``
    ``bank_bits``-bit ports moves a cycle (at least one bank)."""
    banks = max(1, int(mib * 1024 // SRAM_BANK_KIB))
    return banks * bank_bits / 8 * ports


def dram_gbps(channels: int, mtps: float) -> float:
    """Peak bandwidth of ``channels`` DDR channels at ``mtps`` mega-transfers per second, in GB/s."""
    return channels * mtps * DDR_BYTES_PER_TRANSFER / 1000
