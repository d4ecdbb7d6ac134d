"""The compute core: the PEs, the arrays, the attention engine (sequencer, operand stage) and the softmax unit."""
