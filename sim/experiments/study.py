"""Packing study (issue 9): how many slots passes B-D would take under dispatcher
mechanisms that are **not** built, on the very tile groups the engine runs.

These are estimates, not RTL: nothing here is simulated in hardware, and a
mechanism's cost (ports, buffers, controller) is not counted. They exist to
choose what to build next, and every schedule a mechanism proposes is checked
(:func:`check_pass`): each PE gets at most two lanes and at most two steps a
slot, and every (channel, PE) with work is served exactly once. The built
matcher is one of the mechanisms (``pairs``), and it must reproduce the cycle
model's slot counts exactly, which ties the study to the model the RTL obeys.

Mechanisms, per pass B, C, D of a tile group (pass A is dense and unchanged):

``pairs``
    The built matcher (:func:`golden.matcher.match`) at a given lookahead, with
    its fill slot a pass (the other mechanisms are counted without one).
``steps``
    Up to ``K`` steps a slot (all PEs take all of them), first fit in the window.
``d-partners``
    As ``pairs``, and a slot of B or C may take a step of D as its partner
    (D's products land in T3, which B and C hold in R1): D runs what is left.
``window``
    The row port carries the first ``W`` channels that some PE still needs;
    each group of PEs (``rc``: a column in B and D, a row in C; ``pe``: each PE)
    takes, in window order, up to two of them that fit its lanes, and a channel
    leaves the window once every PE has served it. It needs ``W`` row bytes (or
    column bytes in C), a select per lane, and operand buffers that columns or
    rows address on their own.
``bound``
    No schedule: the fewest slots any packing within a pass could take, the
    busiest PE's lanes (two a slot) or steps (two a slot). What is left
    beyond it would need PEs to run different passes at once.
``nn-order`` (or ``nn-order+NAME``)
    The built matcher (or mechanism ``NAME``), on pairs reordered so neighbouring pairs (hence the
    columns or rows of one tile) have alike reuse states: a greedy
    nearest-neighbour chain by Hamming distance of the need bits.
``weight`` (or ``weight+NAME``)
    The same, on pairs in the order of the scheduler's weight rule (built:
    ``--cluster-rule weight``): heaviest partner work first, within each batch.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

import numpy as np

from golden import Config, proxy_workload, quantize, run_attention
from golden.channel_window import row_groups, window_slots
from golden.cycle_model import baseline_cycles, engine_cycles, kaleido_tables, tile_lane_needs
from golden.matcher import match, paired_pass_slots
from golden.pe_encoding import Mode
from golden.tiling import PairTable

from . import SPEED_CASES

__all__ = ["Step", "check_pass", "pass_bound", "schedule_pairs", "schedule_steps", "schedule_window",
           "schedule_d_partners",
           "nn_order", "study", "MECHANISMS", "main"]

#: One step of a slot: (pass, channel, the PEs it serves, ``[Rv, Cv]`` bool).
Step = tuple[int, int, np.ndarray]
PAIRED = (Mode.B, Mode.C, Mode.D)


def check_pass(work: dict, slots: list[list[Step]]) -> None:
    """Raise ``AssertionError`` unless ``slots`` serve ``work`` ({pass: lanes
    [Dg, Rv, Cv]}) exactly: at most two lanes and two steps per PE and slot,
    every (pass, channel, PE) with work served once, nothing else served."""
    done = {mode: np.zeros(w.shape, np.int64) for mode, w in work.items()}
    for n, slot in enumerate(slots):
        lanes = steps = 0
        for mode, chan, pes in slot:
            need = work[mode][chan]
            assert not np.any(pes & (need == 0)), f"slot {n}: pass {mode} channel {chan} serves a PE with no work"
            lanes = lanes + np.where(pes, need, 0)
            steps = steps + pes.astype(np.int64)
            done[mode][chan] += pes
        assert np.all(np.asarray(lanes) <= 2), f"slot {n}: a PE runs more than two lanes"
        assert np.all(np.asarray(steps) <= 2), f"slot {n}: a PE takes more than two steps"
    for mode, w in work.items():
        assert np.array_equal(done[mode], (w > 0).astype(np.int64)), f"pass {mode}: work missed or repeated"


def _channels(needs: np.ndarray) -> list[int]:
    return [int(c) for c in np.flatnonzero((needs > 0).reshape(needs.shape[0], -1).any(axis=1))]


def schedule_pairs(needs: np.ndarray, mode: int, lookahead: int) -> list[list[Step]]:
    """The built matcher: the head and its first fitting partner in the window."""
    flat = needs.reshape(needs.shape[0], -1)
    return [[(mode, c, needs[c] > 0) for c in (h, p) if c is not None]
            for h, p in match(_channels(needs), flat, lookahead)]


def schedule_steps(needs: np.ndarray, mode: int, lookahead: int, k: int) -> list[list[Step]]:
    """Up to ``k`` steps a slot: the head, then each step of the window that still fits."""
    rem, slots = _channels(needs), []
    while rem:
        head = rem.pop(0)
        used, count, slot, pos = needs[head].copy(), (needs[head] > 0).astype(np.int64), [head], 0
        while len(slot) < k and pos < min(len(rem), lookahead - 1):
            c = rem[pos]
            if np.all(used + needs[c] <= 2) and np.all(count + (needs[c] > 0) <= 2):
                used += needs[c]
                count += needs[c] > 0
                slot.append(rem.pop(pos))
            else:
                pos += 1
        slots.append([(mode, c, needs[c] > 0) for c in slot])
    return slots


def schedule_window(needs: np.ndarray, mode: int, width: int, level: str) -> list[list[Step]]:
    """The row port carries the first ``width`` channels some PE still needs; each
    group of PEs takes up to two of them that fit its lanes, in window order.

    ``level`` ``rc``: the groups are columns (B, D) or rows (C), as built: the
    slots are :func:`golden.channel_window.window_slots`'. ``pe``: every PE
    chooses on its own (a what-if no port could feed)."""
    needs = np.asarray(needs)
    rows, cols = needs.shape[1], needs.shape[2]
    if level == "rc":
        slots = []
        for _, steps in window_slots(needs, mode, width):
            slot = {}
            for g, pair in steps.items():
                group = np.zeros((rows, cols), bool)
                if row_groups(mode):
                    group[g, :] = True
                else:
                    group[:, g] = True
                for c in (c for c in pair if c is not None):
                    slot[int(c)] = slot.get(int(c), np.zeros((rows, cols), bool)) | ((needs[c] > 0) & group)
            slots.append([(mode, c, pes) for c, pes in slot.items()])
        return slots
    left = needs > 0
    slots = []
    while left.any():
        window = np.flatnonzero(left.reshape(left.shape[0], -1).any(axis=1))[:width]
        slot = {}
        for i in range(rows):
            for j in range(cols):
                used, taken = 0, 0
                for c in window:
                    if not left[c, i, j] or taken == 2 or used + needs[c, i, j] > 2:
                        continue
                    used += needs[c, i, j]
                    taken += 1
                    left[c, i, j] = False
                    pes = slot.setdefault(int(c), np.zeros((rows, cols), bool))
                    pes[i, j] = True
        slots.append([(mode, c, pes) for c, pes in slot.items()])
    return slots


def schedule_d_partners(work: dict, lookahead: int) -> dict:
    """``pairs`` in B and C, whose partner may be a step of D (first fit among the
    window of B or C, then among the next ``lookahead - 1`` steps of D); D runs
    the rest. Returns {pass: slots}."""
    d_needs = work[Mode.D]
    d_left = _channels(d_needs)
    out = {}
    for mode in (Mode.B, Mode.C):
        needs = work[mode]
        rem, slots = _channels(needs), []
        while rem:
            head = rem.pop(0)
            slot = [(mode, head, needs[head] > 0)]
            for pos, c in enumerate(rem[:lookahead - 1]):
                if np.all(needs[head] + needs[c] <= 2):
                    slot.append((mode, rem.pop(pos), needs[c] > 0))
                    break
            else:
                for pos, c in enumerate(d_left[:lookahead - 1]):
                    if np.all(needs[head] + d_needs[c] <= 2):
                        slot.append((Mode.D, d_left.pop(pos), d_needs[c] > 0))
                        break
            slots.append(slot)
        out[mode] = slots
    flat = d_needs.reshape(d_needs.shape[0], -1)
    out[Mode.D] = [[(Mode.D, c, d_needs[c] > 0) for c in (h, p) if c is not None]
                   for h, p in match(d_left, flat, lookahead)]
    return out


def nn_order(tables: Sequence[PairTable]) -> list[PairTable]:
    """Pairs reordered as a greedy nearest-neighbour chain of their need bits
    (state != FULL per channel), starting from the first pair."""
    out = []
    for t in tables:
        bits = t.state != 2
        order, left = [0], list(range(1, t.pairs))
        while left:
            dist = (bits[left] != bits[order[-1]]).sum(axis=1)
            order.append(left.pop(int(np.argmin(dist))))
        out.append(t.take(order))
    return out


def pass_bound(needs: np.ndarray) -> int:
    """The fewest slots a pass with ``needs`` (lanes ``[Dg, Rv, Cv]``) can take: its
    busiest PE's lanes, or its steps, two a slot."""
    if not needs.size:
        return 0
    lanes, steps = needs.sum(axis=0), (needs > 0).sum(axis=0)
    return int(max(-(-lanes.max() // 2), -(-steps.max() // 2)))


def _mechanism(name: str, cfg: Config) -> Callable[[dict], dict]:
    la = cfg.lookahead
    if name == "bound":
        return lambda work: {m: [None] * pass_bound(work[m]) for m in PAIRED}
    kind, _, arg = name.partition(":")
    if kind == "pairs":
        if arg and (not arg.isdigit() or int(arg) < 1):
            raise ValueError(name)
        look = int(arg) if arg else la
        return _Built(lambda work: {m: schedule_pairs(work[m], m, look) for m in PAIRED})
    if kind == "steps":
        if not arg.isdigit() or int(arg) < 2:
            raise ValueError(name)
        return lambda work: {m: schedule_steps(work[m], m, la, int(arg)) for m in PAIRED}
    if kind == "d-partners" and not arg:
        return lambda work: schedule_d_partners(work, la)
    if kind == "window":
        width, _, level = arg.partition(",")
        if not width.isdigit() or int(width) < 1 or level not in ("rc", "pe"):
            raise ValueError(name)
        return lambda work: {m: schedule_window(work[m], m, int(width), level) for m in PAIRED}
    raise ValueError(f"unknown mechanism {name!r}")


class _Built:
    """A mechanism that is the built matcher: its passes pay the fill slot of the
    matcher's registered window (:func:`golden.matcher.paired_pass_slots`)."""

    def __init__(self, run: Callable[[dict], dict]):
        self.run = run

    def __call__(self, work: dict) -> dict:
        return self.run(work)


def _slots(run, schedule: list) -> int:
    # Slots a pass takes under mechanism ``run``: its schedule, and the built matcher's fill.
    return paired_pass_slots(len(schedule)) if isinstance(run, _Built) else len(schedule)


#: Orders a mechanism's name may start with (``ORDER+NAME``): see the module doc.
ORDERS = ("nn-order", "weight")


def _parse(name: str, cfg: Config) -> tuple[str | None, Callable[[dict], dict]]:
    """``(how the pairs are reordered, or None; scheduler)`` of a mechanism's name."""
    for order in ORDERS:
        rest = name.removeprefix(order)
        if rest != name:
            if rest and not rest.startswith("+"):
                raise ValueError(f"unknown mechanism {name!r}")
            break
    else:
        order, rest = None, name
    try:
        return order, _mechanism(rest.removeprefix("+") or "pairs", cfg)
    except ValueError:
        raise ValueError(f"unknown mechanism {name!r}") from None


#: What :func:`study` tries by default: today's matcher, then one change at a time.
MECHANISMS = ("pairs", "pairs:8", "steps:4", "d-partners", "nn-order",
              "window:2,rc", "window:4,rc", "window:4,pe", "window:8,rc", "nn-order+window:4,rc", "bound",
              "weight", "weight+window:4,rc", "weight+window:8,rc", "weight+bound")


def study(q: np.ndarray, k: np.ndarray, cfg: Config, mechanisms=MECHANISMS, check: bool = False) -> dict:
    """Slots per pass, engine cycles and speedup over the baseline of passes A-D
    under each mechanism, on the pair tables of ``cfg``'s variant (the scheduler's lead is
    left out: it is the same for every mechanism). ``check`` validates every
    schedule with :func:`check_pass`."""
    base = baseline_cycles(q.shape[0], k.shape[0], cfg).cycles
    runs = {name: _parse(name, cfg) for name in mechanisms}        # a bad name fails before any work
    tables = {None: kaleido_tables(q, k, cfg.with_(cluster_rule="pivots"))}
    out = {}
    for name in mechanisms:
        order = runs[name][0]
        if order not in tables:
            tables[order] = (tuple(map(nn_order, tables[None])) if order == "nn-order" else
                             kaleido_tables(q, k, cfg.with_(cluster_rule="weight", variant="full")))
        qt, kt = tables[order]
        run = runs[name][1]
        rows = []
        for a_slots, work in tile_lane_needs(qt, kt, cfg):
            slots = run(work)
            if check and None not in (s for m in PAIRED for s in slots[m]):      # bound: no schedule
                check_pass(work, [s for m in PAIRED for s in slots[m]])
            rows.append([a_slots] + [_slots(run, slots[m]) for m in PAIRED])
        passes = np.array(rows, np.int64).reshape(-1, 4)
        cycles = engine_cycles(passes, cfg)
        out[name] = {"slots": dict(zip("ABCD", map(int, passes.sum(axis=0)))), "cycles": cycles,
                     "speedup": base / cycles}
    return out


#: The study's cases (issue 9's proxy, F=5 P=3, 4x4 PEs, Wan2.1 splits). The
#: 8x16x16 head is left out by default: a pure-Python schedule of its
#: 196,608 tile groups takes tens of minutes.
CASES = dict(zip(("demo", "d64", "d128", "narrow"), SPEED_CASES.values()))


def plot(result: list, path) -> None:
    """One bar chart per case: each mechanism's share of the oracle bound, both PEs."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = list(dict.fromkeys(r["case"] for r in result))
    fig, axes = plt.subplots(len(cases), 1, figsize=(11, 3.2 * len(cases)), squeeze=False)
    for ax, case in zip(axes[:, 0], cases):
        rows = [r for r in result if r["case"] == case]
        names = list(rows[0]["mechanisms"])
        x = np.arange(len(names))
        width = 0.8 / len(rows)
        for n, r in enumerate(rows):
            ax.bar(x + (n - (len(rows) - 1) / 2) * width, [r["mechanisms"][m]["share_of_bound"] for m in names],
                   width, label=f"{r['accumulators']} accumulators")
        ax.axhline(0.8, color="k", ls="--", lw=1, label="issue 9's target (0.80)")
        ax.set_xticks(x, names, rotation=25, ha="right", fontsize=8)
        ax.set_ylabel("share of the oracle bound")
        ax.set_ylim(0, 1)
        ax.set_title(f"{case}: speedup over the baseline / oracle bound (estimates, not RTL)", fontsize=9)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Packing study (estimates, not RTL): slots of passes B-D "
                                            "under dispatcher mechanisms that are not built.")
    p.add_argument("cases", nargs="*", default=["demo", "d64"], choices=list(CASES))
    p.add_argument("--accumulators", type=int, nargs="+", default=[3, 4], choices=[3, 4])
    p.add_argument("--mechanism", action="append", help=f"repeatable (default: {', '.join(MECHANISMS)})")
    p.add_argument("--check", action="store_true", help="validate every schedule (slower)")
    p.add_argument("--plot", metavar="PNG", help="also draw each mechanism's share of the bound")
    args = p.parse_args(argv)
    if args.plot and not args.plot.endswith(".png"):
        print(f"kaleido study: --plot takes a .png file, not {args.plot!r}", file=sys.stderr)
        return 2
    result = []
    for case in args.cases:
        grid, partition = CASES[case]
        for acc in args.accumulators:
            cfg = Config(grid=grid, partition=partition, full_bits=5, partial_bits=3, accumulators=acc)
            w = proxy_workload(cfg)
            q, k = quantize(w["q"])[0], quantize(w["k"])[0]
            golden = run_attention(q, k, cfg)
            bound = golden.dense_macs / golden.oracle_macs
            try:
                res = study(q, k, cfg, tuple(args.mechanism or MECHANISMS), check=args.check)
            except ValueError as e:
                print(f"kaleido study: {e}", file=sys.stderr)
                return 2
            for name, r in res.items():
                r["share_of_bound"] = r["speedup"] / bound
                print(f"study: {case}, {acc} acc., {name}: {r['speedup']:.3f}x ({r['share_of_bound']:.2f} "
                      f"of the bound)", file=sys.stderr)
            result.append({"case": case, "accumulators": acc, "oracle_bound": bound, "mechanisms": res})
    if args.plot:
        plot(result, args.plot)
        print(f"study: drew {args.plot}", file=sys.stderr)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
