import sys

from sim.cli.entry import run

sys.exit(run())
