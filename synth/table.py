"""``make synth``: every block through the Yosys flow (in parallel, cached), and
the area table as JSON and Markdown in ``--out``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from golden import Config

from .area import area_table, table_markdown
from .flow import SynthError, check_liberty, default_liberty
from .kits import LibraryError, at_signoff, liberty_of


def _inputs(args) -> str | None:
    """The liberty the table is made on, every input checked before any synthesis
    (ValueError, one line)."""
    if args.jobs < 1:
        raise ValueError(f"--jobs {args.jobs} must be 1 or more")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {args.out} is a file; name a folder")
    try:
        liberty = liberty_of(args.liberty) or default_liberty()
        if liberty is not None:
            check_liberty(liberty)
    except (LibraryError, SynthError) as exc:
        raise ValueError(str(exc)) from None
    return liberty


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default="out/synth")
    p.add_argument("--liberty", metavar="NAME|FILE",
                   help="standard cells: nangate45 (the default) or osu018 (make setup fetches both), or a FILE")
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args(argv)
    try:
        liberty = _inputs(args)
    except ValueError as exc:
        print(f"synth: {exc}", file=sys.stderr)
        return 2
    if liberty is None:
        print("synth: no liberty file; areas are transistor-count estimates", file=sys.stderr)
    # Each library's blocks are mapped for its own sign-off clock.
    cfg = at_signoff(Config(), liberty) if liberty else Config()
    table = area_table(cfg, liberty, args.jobs,
                       progress=lambda name: print(f"synth: {name} done", file=sys.stderr))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "area.json").write_text(json.dumps(table, indent=2))
    md = table_markdown(table)
    (out / "area.md").write_text(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
