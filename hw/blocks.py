"""The blocks a user can emit, simulate and synthesize, by name.

Each entry builds an Amaranth component from a :class:`Config`; :func:`verilog`
turns it into one self-contained Verilog file with a ``timescale`` (Icarus
needs one) and a header that records the design point it was made for.
"""

from __future__ import annotations

import hashlib
import re
import sys
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import Callable, NamedTuple

from amaranth.back import verilog as amaranth_verilog

from golden import plugins
from golden.config import Config, require_config
from golden.pe_encoding import Mode
from golden.pe_kinds import PEKindModel

from .board.board import BoardTop
from .cache import cached_text
from .core.array import BaselineArray, KaleidoArray
from .core.baseline_pe import BaselinePE
from .core.engine import AttentionEngine
from .core.pe import PE
from .core.softmax import SoftmaxUnit
from .core.window_pe import WindowPE
from .dispatcher import dispatchers as hw_dispatchers
from .dispatcher.channel_window import ChannelWindow
from .dispatcher.matcher import Matcher
from .dispatcher.scheduler import Scheduler
from .system.top import SystemTop


def _windowed(component):
    """``component`` at the design point, with a window of 4 channels if it has none."""
    def build(cfg: Config):
        if isinstance(cfg, Config) and not cfg.issue_window:
            cfg = cfg.with_(issue_window=4)
        return component(cfg)          # which refuses anything but a Config
    return build


__all__ = ["Block", "BLOCKS", "UNITS", "ENGINE_WORDS", "build", "top_name", "verilog", "engine_verilog", "engine_top",
           "board_top", "board_verilog"]

#: Words in each operand buffer of an engine emitted as a block (``engine``,
#: ``baseline-engine``): the whole engine a chip holds, timed as one netlist.
#: The buffers are flip-flop models of this depth, read as an SRAM macro reads
#: (a registered address, then an 8:1 multiplexer in the next cycle); a macro
#: would put its own access time there instead (docs/timing.md, "Timing, power and energy").
ENGINE_WORDS = 8


def _engine(design: str):
    """The attention engine of ``design`` at a design point: controller, the
    dispatcher its variant has (Kaleido), buffers of :data:`ENGINE_WORDS` words, array."""
    def build(cfg: Config):
        require_config(cfg, "AttentionEngine")
        matcher = design == "kaleido" and cfg.dispatch.parts[1]
        return AttentionEngine(cfg, design, ENGINE_WORDS, ENGINE_WORDS, matcher)
    return build

class Block(NamedTuple):
    """A block a user can name: how it is built, what it is, and the knobs of
    :class:`Config` its Verilog depends on (a command refuses any other one given
    for it; ``tests/hw/test_blocks.py`` checks the list against the Verilog); and
    whether it is a whole engine, whose ports face the chip's registers (its loader
    and accumulation buffer), rather than a block that other logic feeds and reads."""
    build: Callable
    description: str
    knobs: frozenset
    whole: bool = False
    system: bool = False     # a system top: emitted, simulated and placed on request, not in every table


def _block(build, description: str, *knobs: str, whole: bool = False, system: bool = False) -> Block:
    return Block(build, description, frozenset(knobs), whole, system)


def _top(design: str):
    """The system top of ``design`` at a design point, its buffers and scratchpad at their defaults."""
    def build(cfg: Config):

        require_config(cfg, "SystemTop")
        return SystemTop(cfg, design)
    return build


#: The Kaleido PE's knobs, and the baseline's dense accumulator.
_KALEIDO_PE = ("accumulators", "pe_kind", "pe_stages")
_DENSE = ("max_channels", "acc_bits")

#: name -> :class:`Block`
BLOCKS = {
    "pe": _block(PE, "augmented PE: R0-R2, two 4x8 lanes, reuse flags", *_KALEIDO_PE),
    "baseline-pe": _block(BaselinePE, "plain output-stationary 8-bit MAC", *_DENSE, "pe_stages"),
    "array": _block(KaleidoArray, "R x C augmented PEs with input skew and drain chains",
                    *_KALEIDO_PE, "rows", "cols", "issue_window"),
    "baseline-array": _block(BaselineArray, "R x C baseline PEs with input skew and drain chains",
                             *_DENSE, "pe_stages", "rows", "cols"),
    "scheduler": _block(Scheduler, "dispatcher clustering unit: string queue, LFSR pivots, Hamming argmin "
                                   "(or, --cluster-rule weight, a rank by work weight: a ring past one comparator)",
                                   "cluster_rule"),
    "matcher": _block(Matcher, "dispatcher merge unit: per-channel column needs, lookahead window",
                      "accumulators", "pe_kind", "rows", "cols", "lookahead"),
    "window-pe": _block(_windowed(WindowPE), "augmented PE behind a channel window's step select "
                                             "(--issue-window, 4 if unset)", *_KALEIDO_PE, "issue_window"),
    "channel-window": _block(_windowed(ChannelWindow), "dispatcher channel window: each column (B, D) or row (C) "
                                                       "takes its own steps (--issue-window, 4 if unset)",
                             "accumulators", "pe_kind", "rows", "cols", "issue_window"),
    "softmax": _block(SoftmaxUnit, "vector unit: row-wise integer softmax of S~ to 7-bit P codes, streaming",
                      *_DENSE, "vector_lanes", "grid"),
    "engine": _block(_engine("kaleido"), "the whole Kaleido attention engine as a chip holds it: controller, "
                                         "the variant's dispatcher, operand buffers, array",
                     *_KALEIDO_PE, "rows", "cols", "variant", "lookahead", "issue_window", "dispatcher", whole=True),
    "baseline-engine": _block(_engine("baseline"), "the whole baseline attention engine: controller, operand "
                                                   "buffers, array", *_DENSE, "pe_stages", "rows", "cols",
                              whole=True),
    "top": _block(_top("kaleido"), "the Kaleido system top: AXI4-Lite registers, AXI4 DMA, result scratchpad, "
                                   "the engine and the softmax unit", *_KALEIDO_PE, *_DENSE, "rows", "cols", "variant",
                  "lookahead", "issue_window", "dispatcher", "vector_lanes", "grid", whole=True, system=True),
    "baseline-top": _block(_top("baseline"), "the baseline system top: registers, DMA, scratchpad, engine, softmax",
                           *_DENSE, "pe_stages", "rows", "cols", "vector_lanes", "grid", whole=True, system=True),
}


#: The blocks every table, lint and sweep covers: all but the system tops, which are
#: emitted, simulated and placed when asked for by name.
UNITS = [name for name, block in BLOCKS.items() if not block.system]


def _check(name: str) -> None:
    if name not in BLOCKS:
        raise ValueError(f"unknown block {name!r}; choose one of {', '.join(BLOCKS)}")


def build(name: str, cfg: Config):
    """A fresh Amaranth component for block ``name`` at design point ``cfg``."""
    _check(name)
    return BLOCKS[name].build(cfg)


def top_name(name: str) -> str:
    """Verilog module name of a block's top: ``kaleido_`` + name with underscores."""
    return "kaleido_" + name.replace("-", "_")


#: The register Yosys declares in each module to start its ``always @*`` blocks at
#: time zero (``reg \$auto$verilog_backend...  = 0;``, named by Yosys's source line).
_TRIGGER = re.compile(r"^(\s*)reg (\\\$auto\$verilog_backend\S*)\s*= 0;$", re.M)


def _start_combinational(text: str) -> str:
    """Make every ``always @*`` block run once at time zero, under any Verilog standard.

    Yosys starts them by declaring a register ``= 0`` that each block reads: under
    Verilog-2005 the declaration is an event at time zero. Under IEEE 1800 (Icarus
    with ``-g2012``, which cocotb passes) a declaration's value is set before any
    process starts, so there is no event: a block whose inputs never change again
    (a decoder fed only zeros, say) keeps its outputs at X for the whole run. An
    ``initial`` block therefore also sets the register to 1: a change at time zero
    that every block sees (Icarus starts its ``always`` blocks first; no delay, so
    Verilator needs no ``--timing``). Synthesis ignores it.
    """
    return _TRIGGER.sub(lambda m: f"{m[0]}\n{m[1]}initial {m[2]} = 1'b1;", text)


#: Emitted Verilog, one file per design point and block (see :func:`_emitted`).
CACHE = Path(__file__).resolve().parent.parent / ".cache" / "verilog"


@lru_cache(maxsize=1)
def _sources() -> str:
    """A hash of our RTL and golden sources and Amaranth's version (read once a
    process: they do not change under it)."""
    h = hashlib.sha256(f"amaranth {version('amaranth')}\n".encode())
    root = Path(__file__).resolve().parent.parent
    for path in sorted([*(root / "hw").rglob("*.py"), *(root / "golden").rglob("*.py")]):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _plugins() -> str:
    """What the RTL is generated from beyond this project: each registered plugin
    (a user's PE kind, dispatcher model or component) by its module's file, and
    each PE kind by its whole step table, which the PE's decode is generated from
    (so a kind edited under the same name is a new key, even one defined in a script)."""
    entries = [entry for _, entry in plugins.added()]
    entries += [unit for unit in hw_dispatchers.DISPATCHERS.values() if unit.__module__.split(".")[0] != "hw"]
    h = hashlib.sha256()
    for entry in sorted(entries, key=lambda e: (e.__module__, e.__qualname__)):
        h.update(f"{entry.__module__}.{entry.__qualname__}\n".encode())
        file = getattr(sys.modules.get(entry.__module__), "__file__", None)
        if file and Path(file).is_file():
            h.update(Path(file).read_bytes())
        if isinstance(entry, type) and issubclass(entry, PEKindModel):
            table = [(mode, sq, sk, entry.step_need(mode, sq, sk))
                     for mode in Mode for sq in range(3) for sk in range(3)]
            h.update(repr((entry.registers, entry.taps, table)).encode())
    return h.hexdigest()


def _emitted(top: str, what: str, cfg: Config, build: Callable[[], object]) -> str:
    """The Verilog of ``build()``, from the cache when nothing it depends on changed.

    Amaranth takes seconds to emit an engine, and a run emits each block several
    times (to simulate it, and to key its mapping, timing and energy); a test
    suite, hundreds of times. The key is everything the text depends on: the
    sources of ``hw`` and ``golden`` (so an edit, a planted bug included, is a
    new key), Amaranth's version, the plugins registered (:func:`_plugins`), the
    top's name and description, and the whole ``Config``.
    """
    key = hashlib.sha256(f"{_sources()}\n{_plugins()}\n{top}\n{what}\n{cfg!r}".encode()).hexdigest()[:24]

    def make() -> str:
        text = _start_combinational(amaranth_verilog.convert(build(), name=top, emit_src=False))
        header = (f"// Kaleido {what}\n"
                  f"// Generated by kaleido-rtl from {cfg!r}\n"
                  "`timescale 1ns/1ps\n")
        return header + text
    return cached_text(CACHE / f"{top}-{key}.v", make)


def verilog(name: str, cfg: Config) -> str:
    """Verilog text of block ``name`` at ``cfg``."""
    _check(name)
    return _emitted(top_name(name), f"block '{name}': {BLOCKS[name].description}", cfg,
                    lambda: build(name, cfg))


def engine_top(design: str) -> str:
    return "kaleido_engine" if design == "kaleido" else "kaleido_baseline_engine"


def system_top(design: str) -> str:
    return "kaleido_top" if design == "kaleido" else "kaleido_baseline_top"


def top_verilog(cfg: Config, design: str, q_words: int, k_words: int, out_rows: int) -> str:
    """Verilog of the system top (registers, DMA, scratchpads, engine, softmax unit)."""

    return _emitted(system_top(design), f"{design} system top: AXI4-Lite registers, AXI4 DMA, buffers of "
                    f"{q_words} and {k_words} words, {out_rows} result rows", cfg,
                    lambda: SystemTop(cfg, design, q_words, k_words, out_rows))


def board_top(design: str) -> str:
    return "kaleido_board" if design == "kaleido" else "kaleido_baseline_board"


def board_verilog(cfg: Config, design: str, divisor: int, mem_words: int, q_words: int, k_words: int,
                  out_rows: int) -> str:
    """Verilog of the system top on a board (:class:`hw.board.board.BoardTop`): serial link, block-RAM memory."""
    return _emitted(board_top(design), f"{design} system top on a board: a serial link at {divisor} clocks a bit, "
                    f"{mem_words} words of memory, buffers of {q_words} and {k_words} words, {out_rows} result rows",
                    cfg, lambda: BoardTop(cfg, design, divisor, mem_words, q_words, k_words, out_rows))


def engine_verilog(cfg: Config, design: str, q_words: int, k_words: int,
                   matcher: bool = False) -> str:
    """Verilog of the attention engine (buffers, controller, array, and the
    matcher when asked): the simulation top."""
    return _emitted(engine_top(design),
                    f"{design} attention engine{' with matcher' if matcher else ''}, "
                    f"buffers of {q_words} and {k_words} words", cfg,
                    lambda: AttentionEngine(cfg, design, q_words, k_words, matcher))
