"""The system top: the AXI4 bus, the AXI4-Lite register port, the DMA, the register map and the memory behind it."""
