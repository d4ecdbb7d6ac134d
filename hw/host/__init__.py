"""Host-side Python: the driver of the system top, its port over the board's link, and the engine's images."""
