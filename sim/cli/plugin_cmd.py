"""``kaleido check-plugin``: every dispatcher and PE kind a ``--plugin`` module
registers, run through the simulated engine against golden and the cycle
model (:mod:`sim.rtl.plugin_check`)."""

from __future__ import annotations

import sys

from sim.cli.outputs import print_json
from sim.rtl import runner

__all__ = ["register", "cmd_check_plugin"]


def _line(r: dict) -> str:
    where = f"{r['plugin']}: {'S~' if r['product'] == 'attention' else 'X~ W'}, variant {r['variant']}"
    if not r["ok"]:
        return f"  FAIL {where}: {r['error']}"
    full, partial, compute = (r["states"][s] for s in (2, 1, 0))
    how = "passes A-D" if r["product"] == "attention" else "windows"
    return (f"  ok   {where}: exact, {r['cycles']} cycles = the model's, {how} as {r['ran_as']} "
            f"(reuse states full {full}, partial {partial}, compute {compute})")


def cmd_check_plugin(args) -> int:
    from sim.rtl.plugin_check import check, plan
    from sim.rtl.simulate import pick_simulator

    simulator = pick_simulator(args.simulator)
    runs = plan(getattr(args, "plugin", None) or ())
    print(f"kaleido: {len(runs)} runs on {simulator}, seed {args.seed} (each a build the first time)",
          file=sys.stderr, flush=True)
    results = check(simulator, args.seed, say=(lambda r: None) if args.json else lambda r: print(_line(r), flush=True))
    failed = [r for r in results if not r["ok"]]
    if args.json:
        print_json({"simulator": simulator, "seed": args.seed, "runs": results, "ok": not failed})
    else:
        print(f"{len(results) - len(failed)} of {len(results)} runs exact and on their cycle model"
              + ("" if not failed else f"; {len(failed)} FAILED"))
    return 1 if failed else 0


def register(sub, parser_class) -> None:
    p = sub.add_parser("check-plugin", help="run every dispatcher and PE kind that --plugin registers through the "
                                            "simulated engine: scores against golden, cycles against the model")
    p.add_argument("--simulator", choices=list(runner.SIMULATORS),
                   help="default: verilator when it can run here, else icarus")
    p.add_argument("--seed", type=int, default=1, help="seed of the operands (default 1)")
    p.add_argument("--json", action="store_true", help="print the results as one JSON object")
    p.set_defaults(func=cmd_check_plugin)
