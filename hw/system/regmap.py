"""The system top's register map, written once for the RTL (:mod:`hw.system.top`) and
the host driver (:mod:`hw.host.host_driver`).

Every register is 32 bits at a byte offset of the AXI4-Lite port. docs/system.md,
"Register map", lists them with their fields; this module is what both sides
read, so the two can never disagree.
"""

from __future__ import annotations

import enum as py_enum

from amaranth.lib import data, enum

__all__ = ["Reg", "REG_BYTES", "GROUP_BASE", "GROUP_STRIDE", "GroupReg", "Op", "Error", "Ctrl", "Status", "MAGIC",
           "CTRL", "STATUS", "OP", "SOFTMAX", "DESIGN", "SHAPE", "BEATS", "ERROR_SHIFT",
           "group_reg", "ERROR_TEXT"]

MAGIC = 0x4B4C4431         # "KLD1": ID reads this

#: Bytes of a register: every offset is a multiple of it.
REG_BYTES = 4


class Reg(py_enum.IntEnum):
    """Byte offsets of the registers that are not per channel group."""

    ID = 0x00              # ro: MAGIC
    DESIGN = 0x04          # ro: [0] Kaleido, [1] has a dispatcher that pairs, [15:8] rows, [23:16] cols, [31:24] lanes
    Q_WORDS = 0x08         # ro: words of the Q buffer
    K_WORDS = 0x0C         # ro: words of the K buffer
    OUT_ROWS = 0x10        # ro: drained rows the result scratchpad holds (C scores a row)
    SHAPE = 0x14           # ro: [15:0] channels a pass may stream (head_dim), [31:16] tokens a softmax row holds
    BEATS = 0x18           # ro: bus beats a Q word [7:0], a K word [15:8], a drained row [23:16]
    CTRL = 0x20            # rw: [0] start (reads 0), [1] interrupt enable
    STATUS = 0x24          # ro, [1] write 1 to clear: [0] busy, [1] done, [11:8] error code
    OP = 0x28              # rw: [1:0] Op, [4] dense, [5] unpaired, [6] linear
    SRC_ADDR = 0x2C        # rw: engine: the Q image; softmax: the scores
    K_ADDR = 0x30          # rw: engine: the K image
    DST_ADDR = 0x34        # rw: where the results go
    Q_LEN = 0x38           # rw: engine: words of the Q image
    K_LEN = 0x3C           # rw: engine: words of the K image
    OUT_LEN = 0x40         # rw: engine: rows the engine drains; softmax: rows of scores
    GROUPS = 0x44          # rw: channel groups to run
    SOFTMAX = 0x48         # rw: [15:0] mult, [21:16] shift
    CYCLES_LO = 0x50       # ro: the engine's cycle counter (its last run)
    CYCLES_HI = 0x54
    WORK_LO = 0x58         # ro: lane work done
    WORK_HI = 0x5C
    RUN_CYCLES = 0x60      # ro: cycles from start to done, DMA included
    READ_BEATS = 0x64      # ro: beats read from memory
    WRITE_BEATS = 0x68     # ro: beats written
    BUS_WAIT = 0x6C        # ro: cycles a DMA run waited on the bus (an address, a beat or a response)


GROUP_BASE = 0x80          # the per-group registers start here
GROUP_STRIDE = 0x20        # one channel group's block


class GroupReg(py_enum.IntEnum):
    """Offsets inside one channel group's block (rw)."""

    DG = 0x00              # its channels
    Q_TILES = 0x04
    K_TILES = 0x08
    Q_BASE = 0x0C          # its first word in the Q buffer
    K_BASE = 0x10
    PARTNERS = 0x14        # linear: partners of each window's reference


def group_reg(group: int, reg: GroupReg) -> int:
    """Byte offset of ``reg`` of channel group ``group``."""
    return GROUP_BASE + group * GROUP_STRIDE + reg


class Op(enum.Enum, shape=2):
    """What a start runs."""

    ENGINE = 0             # load Q and K images, run the engine, write the drained rows
    SOFTMAX = 1            # rows of scores through the softmax unit to P codes


class Error(enum.Enum, shape=4):
    """STATUS[11:8] after a run: why it did not run, or why its results are not to be trusted."""

    NONE = 0
    BUSY = 1               # a start came while a run was under way (that run goes on)
    SIZE = 2               # a length or a group's setting the design cannot run
    ADDRESS = 3            # an address not beat-aligned, a region that wraps past 4 GiB, or output overlapping input
    READ = 4               # the bus answered a read with an error
    WRITE = 5              # the bus answered a write with an error
    COUNT = 6              # the engine drained another number of rows than OUT_LEN says
    OP = 7                 # an operation this top does not have


#: The registers of several fields, as layouts: the RTL views its bus words through
#: them, and the driver packs and unpacks with the same ones.
CTRL = data.StructLayout({"start": 1, "irq_enable": 1})
STATUS = data.StructLayout({"busy": 1, "done": 1, "reserved": 6, "error": Error})
OP = data.StructLayout({"op": Op, "reserved": 2, "dense": 1, "unpaired": 1, "linear": 1})
SOFTMAX = data.StructLayout({"mult": 16, "shift": 6})
DESIGN = data.StructLayout({"kaleido": 1, "pairs": 1, "reserved": 6, "rows": 8, "cols": 8, "lanes": 8})
SHAPE = data.StructLayout({"channels": 16, "tokens": 16})
BEATS = data.StructLayout({"q": 8, "k": 8, "out": 8})
ERROR_SHIFT = STATUS["error"].offset


class Ctrl(py_enum.IntFlag):
    START = 1 << CTRL["start"].offset
    IRQ_ENABLE = 1 << CTRL["irq_enable"].offset


class Status(py_enum.IntFlag):
    BUSY = 1 << STATUS["busy"].offset
    DONE = 1 << STATUS["done"].offset


#: What the driver says of each error.
ERROR_TEXT = {
    Error.BUSY: "a start came while a run was under way",
    Error.SIZE: "a length or a channel group's setting exceeds what this top can run",
    Error.ADDRESS: "an address is not 4-byte aligned, a region wraps past 4 GiB, or the output overlaps an input",
    Error.READ: "the bus answered a read with an error response",
    Error.WRITE: "the bus answered a write with an error response",
    Error.COUNT: "the engine drained another number of rows than OUT_LEN says",
    Error.OP: "the operation is not one this top runs",
}
