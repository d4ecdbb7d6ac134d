"""The board: the serial line, the host link over it, and the board top around the system top."""
