"""cocotb bench of the softmax unit on a whole head's scores (the middle stage of
``kaleido sim attention --v``).

Inputs, in ``$KALEIDO_WORK``: ``scores.npy`` (int64 ``[N, N]``, what the array
drained) and ``softmax_in.json`` (``mult``, ``shift``). The driver plays every
row three times without a gap and the monitor never stalls, so the cycles are
the unit's own; the checker holds the codes against :func:`golden.softmax.softmax_codes`
and the cycles against :func:`golden.softmax.softmax_cycles`. Outputs:
``probs.npy`` (int8 ``[N, N]``) and ``softmax.json``; ``progress`` follows the beats.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import cocotb
import numpy as np

from golden.softmax import softmax_codes, softmax_cycles, softmax_spec
from tb.harness import design_point, start

from .softmax_agents import run_rows

WORK = Path(os.environ.get("KALEIDO_WORK", "."))
CFG = design_point()


@cocotb.test()
async def softmax_head(dut):
    """Every row of the head's scores to P codes, bit-exact, in the model's cycles."""
    scores = np.load(WORK / "scores.npy")
    setting = json.loads((WORK / "softmax_in.json").read_text())
    mult, shift = setting["mult"], setting["shift"]
    dut.scores__valid.value = 0
    dut.codes__ready.value = 0
    await start(dut)

    def progress(done, total):
        (WORK / "progress").write_text(f"{done} {total}")

    probs, cycles = await run_rows(dut, CFG, scores.tolist(), mult, shift, random.Random(0), progress=progress)
    spec = softmax_spec(CFG.tokens, CFG.acc_bits)
    model = softmax_cycles(spec, CFG.vector_lanes, scores.shape[0])
    np.save(WORK / "probs.npy", probs.astype(np.int8))
    (WORK / "softmax.json").write_text(json.dumps({"cycles": cycles, "model_cycles": model}))
    want = softmax_codes(scores, mult, shift, spec)
    bad = np.argwhere(probs != want)
    assert bad.size == 0, (f"{len(bad)} codes differ from the golden softmax, first at "
                           f"{tuple(int(i) for i in bad[0])}: "
                           f"RTL {probs[tuple(bad[0])]} golden {want[tuple(bad[0])]}")
    assert cycles == model, f"softmax RTL {cycles} cycles, model {model}"
