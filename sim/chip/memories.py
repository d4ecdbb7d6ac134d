"""SRAM and DRAM figures the chip model uses, each with its source, in one table.

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
* **SRAM leakage**: not modelled. We have no cited figure for a 16 nm
  high-density array; at tens of pW per cell, 96 MiB would leak tens of mW,
  under 0.1 % of the chip's power in every estimate here.
* **DRAM energy**: Horowitz (ISSCC 2014) gives 1.3-2.6 nJ per 64-bit DRAM
  access; we take the low end, 20.3 pJ per bit. DDR5 moves a bit for less, so
  DRAM energy here is an upper bound.
* **DRAM bandwidth**: a DDR5-6400 channel moves 8 bytes per transfer at 6400
  MT/s, 51.2 GB/s (JEDEC JESD79-5; the paper models 16 channels from Micron's
  datasheets).
"""

from __future__ import annotations

from .node_scaling import scale_energy

__all__ = ["TABLE", "SRAM_BITCELL_UM2", "SRAM_CELL_FRACTION", "SRAM_BANK_KIB", "SRAM_PJ_PER_64B_45NM",
           "DRAM_PJ_PER_BIT", "DDR_BYTES_PER_TRANSFER", "sram_mm2_per_mib", "sram_pj_per_byte",
           "dram_gbps"]

SRAM_BITCELL_UM2 = 0.07             # 16 nm HD 6T cell (Wu et al., IEDM 2013)
SRAM_CELL_FRACTION = 0.70           # our assumption: cells / macro area
SRAM_BANK_KIB = 32                  # our assumption: the buffers' bank size
SRAM_PJ_PER_64B_45NM = {8: 10.0, 32: 20.0, 1024: 100.0}     # KiB -> pJ, 45 nm 0.9 V (Horowitz 2014)
SRAM_SOURCE_NODE = (45, 0.9)
DRAM_PJ_PER_BIT = 1300.0 / 64       # Horowitz 2014, low end
DDR_BYTES_PER_TRANSFER = 8          # a DDR5 channel's data width (two 32-bit subchannels)

#: Every figure, its value, unit and source.
TABLE = [
    {"figure": "SRAM bit cell, 16 nm HD 6T", "value": SRAM_BITCELL_UM2, "unit": "um^2",
     "source": "S.-Y. Wu et al., IEDM 2013"},
    {"figure": "SRAM cells / macro area", "value": SRAM_CELL_FRACTION, "unit": "",
     "source": "assumption (the paper's Table 2 implies 0.83)"},
    {"figure": "SRAM bank", "value": SRAM_BANK_KIB, "unit": "KiB", "source": "assumption"},
    {"figure": "SRAM read, 64 bits, 32 KB, 45 nm 0.9 V", "value": SRAM_PJ_PER_64B_45NM[32], "unit": "pJ",
     "source": "M. Horowitz, ISSCC 2014"},
    {"figure": "SRAM leakage", "value": None, "unit": "", "source": "not modelled (no cited 16 nm figure)"},
    {"figure": "DRAM access energy", "value": DRAM_PJ_PER_BIT, "unit": "pJ/bit",
     "source": "M. Horowitz, ISSCC 2014 (1.3 nJ per 64 bits, the low end)"},
    {"figure": "DDR5-6400 channel", "value": 6400 * DDR_BYTES_PER_TRANSFER / 1000, "unit": "GB/s",
     "source": "JEDEC JESD79-5"},
    {"figure": "node scaling", "value": None, "unit": "",
     "source": "A. Stillmaker, B. Baas, Integration 58 (2017) 74-81"},
]


def sram_mm2_per_mib() -> float:
    """Macro area of one MiB of SRAM at 16 nm."""
    return 8 * 2 ** 20 * SRAM_BITCELL_UM2 / SRAM_CELL_FRACTION / 1e6


def sram_pj_per_byte(node: tuple[int, float]) -> float:
    """Energy of one byte read or written in a bank of :data:`SRAM_BANK_KIB`, at ``node = (nm, vdd)``."""
    return scale_energy(SRAM_PJ_PER_64B_45NM[SRAM_BANK_KIB] / 8, SRAM_SOURCE_NODE, node)


def dram_gbps(channels: int, mtps: float) -> float:
    """Peak bandwidth of ``channels`` DDR channels at ``mtps`` mega-transfers per second, in GB/s."""
    return channels * mtps * DDR_BYTES_PER_TRANSFER / 1000
