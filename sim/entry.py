"""The ``kaleido`` command's entry point: nothing heavy is imported before it runs.

An interrupt while the command's modules load (Amaranth, numpy, the simulators'
runners: a second or more) would otherwise end in a traceback; here it ends as
any other interrupted run does, with one line and exit 130.
"""

from __future__ import annotations

import sys

__all__ = ["run"]


def run(argv=None) -> int:
    try:
        from sim.cli import main
    except KeyboardInterrupt:
        print("kaleido: interrupted", file=sys.stderr)
        return 130
    return main(argv)
