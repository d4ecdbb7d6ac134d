"""A bitstream for a board: the system top on a board (:class:`hw.board.board.BoardTop`)
synthesized for the ECP5, placed and routed on the board's part with its pins
(:mod:`synth.boards`) at its clock, and packed by ``ecppack``.

What a user gets, in the folder asked for: the bitstream (``.bit``, compressed,
for ``openFPGALoader`` or ``fujprog``), the constraints it was placed with
(``.lpf``), and a report (``.json``): resources, the clock nextpnr closed
against the board's, the serial line's baud rate and the memory the host may
use. A design that does not close at the board's clock is refused: a bitstream
that runs slower than its oscillator would compute wrong answers.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from golden.config import Config
from hw import blocks
from hw.board.board import BOARD_MEM_WORDS, memory_words
from hw.board.uart import MIN_DIVISOR
from hw.system.top import TOP_ROWS, TOP_WORDS

from .boards import BOARDS, Board, lpf
from .fpga import CACHE, FpgaError, ecp5_netlist, ecp5_tool, nextpnr_command, nextpnr_report, run_tool, tools_version

__all__ = ["BAUD", "bitstream", "divisor_for"]

BAUD = 1_000_000            # the FT231X on a ULX3S takes up to 3 Mbaud; 1 Mbaud is 25 clocks a bit at 25 MHz
_BAUD_ERROR = 0.02          # what a serial receiver tolerates, with margin (the receiver's own: ~4 %)


def divisor_for(board: Board, baud: int) -> int:
    """Board clocks a bit for ``baud``; refused when the rate cannot be met within 2 %."""
    clock = board.clock_mhz * 1e6
    divisor = round(clock / baud)
    if divisor < MIN_DIVISOR or abs(clock / divisor - baud) > _BAUD_ERROR * baud:
        raise FpgaError(f"--baud {baud}: the {board.name}'s {board.clock_mhz:g} MHz clock cannot make it within "
                        f"{_BAUD_ERROR:.0%} at {MIN_DIVISOR} or more clocks a bit")
    return divisor


def bitstream(cfg: Config, design: str, board: str, out: Path, device: str | None = None, seed: int = 1,
              baud: int = BAUD, sizes: dict | None = None, mem_words: int = BOARD_MEM_WORDS) -> dict:
    """Write ``<top>-<board>.bit``, ``.lpf`` and ``.json`` for ``design`` at ``cfg`` to ``out``.

    ``sizes`` are the top's buffers (``q_words``, ``k_words``, ``out_rows``; by default
    :mod:`hw.system.top`'s); the memory has ``mem_words`` words, or more if one run of those
    buffers moves more. Returns the report."""
    if board not in BOARDS:
        raise FpgaError(f"board {board!r}: choose one of {', '.join(BOARDS)}")
    spec = BOARDS[board]
    device = device or spec.devices[-1]
    if device not in spec.devices:
        raise FpgaError(f"the {board} comes with the {', '.join(spec.devices)} parts, not the {device}")
    divisor = divisor_for(spec, baud)
    size = sizes or {"q_words": TOP_WORDS, "k_words": TOP_WORDS, "out_rows": TOP_ROWS}
    words = max(mem_words, memory_words(cfg, design, **size))
    text = blocks.board_verilog(cfg, design, divisor, words, **size)
    top = blocks.board_top(design)
    constraints = lpf(spec)
    key = hashlib.sha256(f"{text}\0{constraints}\0{device}\0{spec.package}\0{seed}\0{tools_version()}"
                         .encode()).hexdigest()[:16]
    cached = CACHE / f"{top}-{board}-{key}"
    if not (cached.with_suffix(".bit").exists() and cached.with_suffix(".json").exists()):
        netlist = ecp5_netlist(text, top, "-nolutram")
        report = _place_and_pack(netlist, constraints, spec, device, seed, cached)
        report.update(board=board, device=f"LFE5U-{device.upper()}", package=spec.package, seed=seed,
                      design=design, baud=round(spec.clock_mhz * 1e6 / divisor), divisor=divisor,
                      mem_words=words, **size, tools=tools_version())
        cached.with_suffix(".json").write_text(json.dumps(report, indent=1))
    report = json.loads(cached.with_suffix(".json").read_text())
    if report["fmax_mhz"] < spec.clock_mhz:
        raise FpgaError(f"the {design} board top closes at {report['fmax_mhz']:.1f} MHz, below the {board}'s "
                        f"{spec.clock_mhz:g} MHz clock: no bitstream (a smaller design point, or another seed)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    name = f"{top}-{board}"
    shutil.copyfile(cached.with_suffix(".bit"), out / f"{name}.bit")
    (out / f"{name}.lpf").write_text(constraints)
    (out / f"{name}.json").write_text(json.dumps(report, indent=1))
    return {**report, "files": [str(out / f"{name}.{ext}") for ext in ("bit", "lpf", "json")]}


def _place_and_pack(netlist: str, constraints: str, spec: Board, device: str, seed: int, cached: Path) -> dict:
    cached.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kaleido-bit-") as work:
        # The YoWASP tools see the working folder only: every path is relative to it.
        for name, text in (("board.json", netlist), ("board.lpf", constraints)):
            with open(os.path.join(work, name), "w") as fh:
                fh.write(text)
        run_tool([nextpnr_command(), f"--{device}", "--package", spec.package, "--json", "board.json",
              "--lpf", "board.lpf", "--textcfg", "board.config", "--freq", f"{spec.clock_mhz:g}",
              "--timing-allow-fail", "--seed", str(seed), "--report", "report.json", "--quiet"], work)
        with open(os.path.join(work, "report.json")) as fh:
            r = json.load(fh)
        report = nextpnr_report(r)
        report.update(fmax_mhz=report["fmax_mhz"] or 0.0, clock_mhz=spec.clock_mhz)
        if report["fmax_mhz"] >= spec.clock_mhz:
            run_tool([ecp5_tool("ecppack"), "--compress", "board.config", "board.bit"], work)
            shutil.copyfile(os.path.join(work, "board.bit"), cached.with_suffix(".bit"))
        else:
            cached.with_suffix(".bit").write_bytes(b"")      # the report says why there is none
    return report
