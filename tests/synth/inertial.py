"""An inertial-delay simulator of a mapped netlist, written apart from the flow,
as the reference its timed activity is held to (``tests/synth/test_power.py``).

It shares with the flow only the netlist parser, the liberty reader and the
transitions of :func:`synth.gate_energy.slews`. Its own parts:

- every cell's logic from the liberty's ``function`` strings (storage cells
  from their kind);
- every delay from the liberty's ``cell_rise``/``cell_fall`` tables at the
  net's load (pins and the wire model) and the input's transition, not from
  OpenSTA's SDF;
- an event queue in which a cell's new output value cancels the one it had
  scheduled and not yet shown (inertial delay: a pulse shorter than the
  cell's delay does not pass);
- the bench's timeline: a rising edge every period, reset for two, inputs
  ``arrive`` after each edge through the driving cell's delay.

It returns an :class:`synth.gatesim.Activity` to cost with the flow's own
:func:`synth.gate_energy.energy` (which its own tests check by hand).
"""

from __future__ import annotations

import heapq
import re

from synth.gate_energy import loads, slews
from synth.gatesim import Activity
from synth.kits import kit


def _logic(function: str):
    """A liberty ``function`` string as a Python function of a pin dict."""
    tokens = re.findall(r"[A-Za-z_]\w*|[()!+^&|*]", function.strip('"'))
    out, prev = [], None
    for tok in tokens:
        operand_start = tok == "(" or tok == "!" or re.match(r"\w", tok)
        if prev is not None and (prev == ")" or re.match(r"\w", prev)) and operand_start:
            out.append(" and ")                      # juxtaposition is AND
        out.append({"!": " not ", "+": " or ", "|": " or ", "&": " and ", "*": " and ", "^": " != "}
                   .get(tok, f"bool(p[{tok!r}])" if re.match(r"\w", tok) else tok))
        prev = tok
    # ^ binds tighter than and/or in Liberty; each ^ here sits in its own parentheses.
    return eval("lambda p: int(" + "".join(out) + ")")   # noqa: S307 - the library's own text


def simulate(net, lib, stimulus, period, arrive, clock="clk", reset="rst"):
    where = loads(net, lib, wire=True)
    slew = slews(net, lib, where)
    k = kit(lib.path)
    value = {}
    cells = []                     # (kind, pins, output pin, output net, logic)
    fanout = {}
    for kind, name, pins in net.cells:
        cell = lib.cells[kind]
        outs = [p for p in pins if cell.pins[p].direction == "output"]
        for o in outs:
            n = net.root(pins[o])
            logic = None if kind in k.storage else _logic(cell.pins[o].function)
            idx = len(cells)
            cells.append((kind, {p: net.root(x) for p, x in pins.items()}, o, n, logic))
            for p, x in pins.items():
                if cell.pins[p].direction == "input":
                    fanout.setdefault(net.root(x), []).append((idx, p))
    for _, pins, _, n, _ in cells:
        for x in pins.values():
            value.setdefault(x, 0)
    for x in net.inputs:
        value.setdefault(net.root(x), 0)
    for x in list(value):
        if x.startswith("1'b"):
            value[x] = int(x[-1])

    def delay(idx, pin, new):
        kind, pins, out, n, _ = cells[idx]
        tables = lib.cells[kind].pins[out].delay.get(pin)
        if tables is None:
            return 0.0
        return tables[0 if new else 1].at(slew.get(pins[pin], 0.1), where.cap.get(n, 0.0))

    queue, seq, pending, record = [], [0], {}, []
    start = [None]

    def schedule(t, n, v):
        seq[0] += 1
        pending[n] = (t, v, seq[0])
        heapq.heappush(queue, (t, seq[0], n, v))

    def evaluate(idx, pin, t):
        kind, pins, out, n, logic = cells[idx]
        if kind == "LATCH":
            if not value[pins["CLK"]]:
                return
            new = value[pins["D"]]
        elif kind in ("DFFPOSX1", "DFFNEGX1"):
            if pin != "CLK" or value[pins["CLK"]] != (kind == "DFFPOSX1"):
                return
            new = value[pins["D"]]
        else:
            new = logic({p: value[x] for p, x in pins.items()})
        shown = pending[n][1] if n in pending else value[n]
        if new == shown:
            return
        if n in pending:
            del pending[n]              # the pulse it had scheduled does not pass
            if new == value[n]:
                return
        schedule(t + delay(idx, pin, new), n, new)

    def run_until(t_end):
        while queue and queue[0][0] <= t_end:
            t, s, n, v = heapq.heappop(queue)
            if pending.get(n, (None, None, None))[2] != s:
                continue                # cancelled
            del pending[n]
            if value[n] == v:
                continue
            value[n] = v
            if start[0] is not None and t >= start[0]:
                record.append((t, n, v))
            for idx, pin in fanout.get(n, ()):
                evaluate(idx, pin, t)

    def drive(t, n, v):
        n = net.root(n)
        if n in value and value[n] != v:
            drive_cell = lib.cells[k.driving_cell].pins
            out = next(p for p in drive_cell.values() if p.delay)
            rise, fall = next(iter(out.delay.values()))
            d = (rise if v else fall).at(k.slew_ns, where.cap.get(n, 0.0)) if n != clock else 0.0
            schedule(t + d, n, v)

    # Everything settles from 0 first; then the bench's timeline.
    for idx in range(len(cells)):
        evaluate(idx, None, 0.0)
    drive(0.0, reset, 1)
    half, eps = period / 2, 1e-9
    for t, v in ((half, 1), (period, 0)):           # the first edge of reset
        run_until(t - eps)
        drive(t, clock, v)
    last = period + half                            # the second, after which inputs arrive
    run_until(last - eps)
    drive(last, clock, 1)
    start[0] = last + arrive / 2
    run_until(last + arrive - eps)
    drive(last + arrive, reset, 0)
    for n, v in stimulus[0].items():
        drive(last + arrive, n, v)
    for i in range(len(stimulus)):
        e = last + (i + 1) * period
        run_until(e - half - eps)
        drive(e - half, clock, 0)
        run_until(e - eps)
        drive(e, clock, 1)
        if i + 1 < len(stimulus):
            run_until(e + arrive - eps)
            for n, v in stimulus[i + 1].items():
                drive(e + arrive, n, v)
    # The falling edge after reset stands for the last cycle's.
    run_until(last + len(stimulus) * period + period - 1e-3)
    # Changes at one instant are one event, as a VCD's time step is.
    events, times = [], []
    for t, n, v in record:
        t = round(t, 3)
        if not times or times[-1] != t:
            times.append(t)
            events.append({})
        events[-1][n] = v
    return Activity(events, len(stimulus), [], times)
