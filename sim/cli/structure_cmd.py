"""``kaleido structure DIR``: the structure a head's reuse rests on, on an activation
archive (``kaleido capture``) or a workload folder (``kaleido workload``).

Per head, and per channel group: the token-common share of Q's and K's energy,
overall and by RoPE band (with RoPE undone, and as given), and the ``Q K^T``
oracle beside the same oracle on the tokens in a seeded random order; their
difference is the *structured reuse* (:mod:`golden.structure`).
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

from golden import Config
from golden.rope import BANDS, GROUPS
from sim.cli.outputs import atomic_output, check_output_dir, json_safe, print_json
from sim.errors import UserError

from .options import add_knobs

__all__ = ["register", "heads_of", "summarize_heads", "plot_structure"]

#: Grid axes by name, for the refusal of an archive too thin to pair along one.
_AXES = ("T", "H", "W")


def register(sub, parser_class) -> None:
    p = sub.add_parser("structure", help="the structure reuse rests on: common share and structured reuse of Q, K",
                       description=__doc__)
    p.add_argument("dir", metavar="DIR", help="an activation archive (kaleido capture) or a workload folder "
                                              "(kaleido workload proxy|video, or q.npy and k.npy with workload.json)")
    p.add_argument("--seed", type=int, default=1, help="seed of the token shuffle (default 1)")
    add_knobs(p, "full_bits", "partial_bits")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    p.add_argument("--out", metavar="DIR", help="also write structure.json and structure.png there")
    p.set_defaults(func=cmd_structure)


def heads_of(path: str):
    """``(source, cfg, heads)`` of a folder: ``heads`` yields ``((step, layer,
    head), q, k)`` int8 ``[N, D]``; ``source`` says what the folder is."""
    from golden.archive import ArchiveError, open_archive

    if not os.path.isdir(path):
        raise UserError(f"{path}: not a folder (an activation archive or a workload folder)")
    if os.path.isfile(os.path.join(path, "manifest.json")):
        try:
            a = open_archive(path)
        except ArchiveError as exc:
            raise UserError(str(exc)) from None
        cfg = Config(partition=a.partition, grid=a.grid)
        source = {"kind": "archive", "model": a.manifest["model"].get("family", a.family),
                  "weights": a.manifest["model"].get("weights"), "trained": a.trained}

        def heads():
            for step in a.steps:
                for layer in a.layers:
                    for head in a.heads:
                        q, _, k, _, _, _ = a.operands(step, layer, head)
                        yield (step, layer, head), q, k
        return source, cfg, heads
    from golden.workload import WorkloadError, load_operand

    from .workload_cmd import WORKLOAD_FILE
    meta_path = os.path.join(path, WORKLOAD_FILE)
    if not os.path.isfile(meta_path):
        raise UserError(f"{path}: neither an activation archive (manifest.json) nor a workload folder "
                        f"({WORKLOAD_FILE})")
    try:
        meta = json.loads(open(meta_path).read())
        cfg = Config(partition=meta["partition"], grid=meta["grid"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{meta_path}: not a workload description ({exc.__class__.__name__})") from None
    try:
        q = load_operand(os.path.join(path, "q.npy"), cfg, "q.npy").data
        k = load_operand(os.path.join(path, "k.npy"), cfg, "k.npy").data
    except WorkloadError as exc:
        raise UserError(str(exc)) from None
    source = {"kind": "workload", **{key: meta[key] for key in meta if key not in ("grid", "partition")}}
    return source, cfg, lambda: iter([((0, 0, 0), q, k)])


def _mean(values):
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def summarize_heads(rows: list[dict]) -> dict:
    """The mean over heads of each figure :func:`golden.structure.structure` gives."""
    def share(op, how):
        groups = {g: {"all": _mean([r[op][how]["groups"][g]["all"] for r in rows]),
                      "bands": {b: _mean([r[op][how]["groups"][g]["bands"][b] for r in rows]) for b in BANDS[:-1]}}
                  for g in GROUPS}
        return {"all": _mean([r[op][how]["all"] for r in rows]), "groups": groups}
    return {"reuse": {k: _mean([r["reuse"][k] for r in rows]) for k in ("oracle", "shuffled", "structured")},
            **{op: {how: share(op, how) for how in ("derotated", "as_given")} for op in ("q", "k")}}


def cmd_structure(args) -> int:
    from golden.structure import structure

    if args.seed < 0:
        raise UserError(f"--seed {args.seed} must be 0 or more")
    source, cfg, heads = heads_of(args.dir)
    short = [f"{_AXES[a]}={n}" for a, n in enumerate(cfg.grid) if n < 2]
    if short:
        raise UserError(f"{args.dir}: grid {'x'.join(map(str, cfg.grid))} has fewer than two tokens along "
                        f"{', '.join(short)}: no pairs to reuse along that axis")
    try:
        cfg = cfg.with_(**{k: v for k, v in (("full_bits", args.full_bits), ("partial_bits", args.partial_bits))
                           if v is not None})
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if args.out:
        check_output_dir(args.out)
    print(f"kaleido: token shuffle seed {args.seed}", file=sys.stderr)
    rows = []
    for where, q, k in heads():
        rows.append({"step": where[0], "layer": where[1], "head": where[2], **structure(q, k, cfg, args.seed)})
    found = {"source": source, "grid": list(cfg.grid), "partition": list(cfg.partition), "seed": args.seed,
             "full_bits": cfg.full_bits, "partial_bits": cfg.partial_bits, "heads": rows,
             "mean": summarize_heads(rows)}
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with atomic_output(os.path.join(args.out, "structure.json"), ".json") as tmp:
            with open(tmp, "w") as fh:
                json.dump(json_safe(found), fh, indent=2, sort_keys=True)
        plot_structure(found, os.path.join(args.out, "structure.png"))
    if args.json:
        print_json(found)
        return 0
    m = found["mean"]
    r = m["reuse"]
    print(f"{args.dir}: {len(rows)} head(s), grid {'x'.join(map(str, cfg.grid))}, partition {cfg.partition}, "
          f"F={cfg.full_bits} P={cfg.partial_bits}")
    print(f"Q K^T oracle {100 * r['oracle']:.1f} %, tokens shuffled {100 * r['shuffled']:.1f} %: structured reuse "
          f"{100 * r['structured']:+.1f} points")
    print("token-common share of energy, RoPE undone (%):")
    print("operand  group     all   " + "  ".join(f"{b:>5}" for b in BANDS[:-1]))
    for op in ("q", "k"):
        d = m[op]["derotated"]
        print(f"{op.upper():>7}  {'all':>5}  {_pct(d['all'])}")
        for g in GROUPS:
            gg = d["groups"][g]
            print(f"{'':>7}  {g:>5}  {_pct(gg['all'])}  " + " ".join(_pct(gg["bands"][b]) for b in BANDS[:-1]))
    if args.out:
        print(f"{args.out}/structure.json, {args.out}/structure.png")
    return 0


def _pct(x) -> str:
    return "     -" if x is None else f"{100 * x:6.1f}"


def plot_structure(found: dict, path: str) -> None:
    """Common share by group and band (Q and K, RoPE undone) beside each head's
    oracle and its shuffled oracle."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    m = found["mean"]
    labels, width = [], 0.38
    for i, op in enumerate(("q", "k")):
        vals = []
        for g in GROUPS:
            for b in BANDS[:-1]:
                v = m[op]["derotated"]["groups"][g]["bands"][b]
                vals.append(0.0 if v is None else 100 * v)
                if i == 0:
                    labels.append(f"{g}:{b}")
        xs = np.arange(len(vals)) + (i - 0.5) * width
        axes[0].bar(xs, vals, width, label=op.upper())
    axes[0].set_xticks(np.arange(len(labels)), labels, rotation=60, fontsize=7)
    axes[0].set_ylabel("token-common share of energy (%)")
    axes[0].set_title("common share, RoPE undone, by group and band", fontsize=9)
    axes[0].legend(fontsize=8)
    heads = found["heads"]
    xs = np.arange(len(heads))
    axes[1].plot(xs, [100 * h["reuse"]["oracle"] for h in heads], "o-", ms=3, label="oracle")
    axes[1].plot(xs, [100 * h["reuse"]["shuffled"] for h in heads], "x--", ms=3, label="tokens shuffled")
    axes[1].set_xlabel("head (step, layer, head in order)")
    axes[1].set_ylabel("Q K^T oracle reduction (%)")
    axes[1].set_title(f"structured reuse {100 * m['reuse']['structured']:+.1f} points (mean); "
                      f"shuffle seed {found['seed']}", fontsize=9)
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    tmp = f"{path}.{os.getpid()}.tmp"
    fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    os.replace(tmp, path)
