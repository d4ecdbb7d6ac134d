"""The chip model: a whole accelerator of many arrays running a video diffusion
transformer, for Kaleido and for the baseline systolic array.

It stands apart from the bit-exact golden model, on top of it: the golden
model says what one array does, cycle for cycle; this package says what a chip
of thousands of them does with a whole model, from fast models of a head
(:mod:`.fast_cycles`), the model shapes (:mod:`.vdits`), the chip and its
presets (:mod:`.chip`), the memories and the other figures taken from
publications (:mod:`.memories`), node scaling (:mod:`.node_scaling`), and the
Dask runner that prices sampled heads (:mod:`.estimate`).
"""
