"""Running the emitted RTL: simulators, cocotb runs, energy and lint."""
