"""A FuseSoC core (CAPI2) and a plain filelist beside an emitted system top, so the IP
drops into the flows hardware engineers already use.

The core names the one Verilog file and its top module, and two targets: ``lint``
(Verilator's ``--lint-only -Wall``, with the project's waivers of what Amaranth's
Verilog does on purpose) and ``sim`` (Icarus, elaboration only). ``fusesoc --cores-root
DIR run --target lint kaleido:system:kaleido_top`` runs the first.
"""

from __future__ import annotations

from pathlib import Path

from hw import blocks

__all__ = ["VENDOR", "core_name", "write_core"]

VENDOR = "kaleido"
WAIVERS = Path(__file__).with_name("lint_waivers.vlt")


def core_name(top: str, version: str = "0.1.0") -> str:
    """The core's VLNV: vendor, library, name, version."""
    return f"{VENDOR}:system:{top}:{version}"


def write_core(out: Path, block: str, description: str) -> list[Path]:
    """``TOP.core``, ``TOP.f`` and the lint waivers beside ``out/TOP.v``; return their paths."""
    top = blocks.top_name(block)
    out = Path(out)
    waivers = out / f"{top}_lint.vlt"
    waivers.write_text(WAIVERS.read_text())
    core = out / f"{top}.core"
    core.write_text(f"""CAPI=2:
# Emitted by kaleido-rtl with {top}.v; regenerate both together.
name: {core_name(top)}
description: "{description}"

filesets:
  rtl:
    files:
      - {top}.v
    file_type: verilogSource
  lint_waivers:
    files:
      - {waivers.name}
    file_type: vlt

targets:
  default:
    filesets: [rtl]
    toplevel: {top}
  lint:
    default_tool: verilator
    filesets: [rtl, lint_waivers]
    toplevel: {top}
    tools:
      verilator:
        mode: lint-only
        verilator_options: [-Wall]
  sim:
    default_tool: icarus
    filesets: [rtl]
    toplevel: {top}
""")
    filelist = out / f"{top}.f"
    filelist.write_text(f"{top}.v\n")
    return [core, filelist, waivers]
