import sys

from sim.entry import run

sys.exit(run())
