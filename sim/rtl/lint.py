"""``make lint``: every block's emitted Verilog through ``verilator --lint-only -Wall``,
with the waivers of ``lint_waivers.vlt`` (each named, with its reason)."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from golden import Config
from hw import blocks

WAIVERS = Path(__file__).with_name("lint_waivers.vlt")


def lint(block: str, cfg: Config, out: Path) -> list[str]:
    """Warnings and errors verilator reports for ``block`` (empty: clean)."""
    out.mkdir(parents=True, exist_ok=True)
    src = out / f"{blocks.top_name(block)}.v"
    src.write_text(blocks.verilog(block, cfg))
    exe = shutil.which("verilator") or shutil.which("verilator", path=os.path.dirname(sys.executable))
    proc = subprocess.run([exe, "--lint-only", "-Wall", str(WAIVERS), str(src),
                           "--top-module", blocks.top_name(block)],
                          capture_output=True, text=True)
    return [line for line in proc.stderr.splitlines() if line.startswith("%")]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default="out/lint")
    args = p.parse_args(argv)
    bad = 0
    for block in blocks.UNITS:
        problems = lint(block, Config(), Path(args.out))
        print(f"lint {block}: {'clean' if not problems else f'{len(problems)} problems'}")
        for line in problems:
            print("  " + line)
        bad += bool(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
