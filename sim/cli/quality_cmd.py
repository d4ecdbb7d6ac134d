"""``kaleido quality``: what Kaleido's reuse costs a video transformer's output.

The model's denoising loop runs from the same noise in floating point, with
the arrays' int8 products alone, and with Kaleido's reuse on top of them at
each pair of thresholds (:mod:`sim.capture.quality`). Each run's final latent
and each step's transformer output are compared with the floating-point
run's (PSNR and cosine), beside the operation reduction the reuse run
achieved, measured on its own operands as ``kaleido estimate`` measures a
captured archive.

Without ``--model-path`` the model is the class's tiny configuration with
seeded random weights, and every figure says so: a random model's quality is
not a trained one's."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

from sim.cli.arguments import triple
from sim.cli.options import add_knobs
from sim.cli.outputs import check_output_dir
from sim.errors import UserError

from .capture_cmd import add_device_args, add_model_args, check_model_args, need_torch
from .estimate_cmd import add_record, progress_bar

__all__ = ["register", "cmd_quality", "parse_thresholds"]

#: The paper's thresholds, and a sweep around them (its Fig. 23 in shape).
DEFAULT_THRESHOLDS = ("5,3",)


def register(sub, parser_class) -> None:
    from ..capture.quality import WHERE

    p = sub.add_parser("quality", help="what reuse costs a video transformer's output (needs torch)",
                       description=__doc__)
    add_model_args(p)
    p.add_argument("--where", choices=WHERE, default="attention",
                   help="attention: reuse in Q K^T and P V; all: in every linear layer too (default attention)")
    p.add_argument("--thresholds", nargs="+", action="extend", metavar="F,P",
                   help="full and partial reuse thresholds in bits, one run each (default 5,3)")
    add_knobs(p, "window")
    add_device_args(p)
    p.add_argument("--archive", metavar="DIR",
                   help="also write the first reuse run's operands as an activation archive (a new folder), "
                        "for kaleido estimate --activations")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_record(p)
    p.add_argument("--out", required=True, metavar="DIR", help="folder for quality.json and quality.png")
    p.set_defaults(func=cmd_quality)


def parse_thresholds(specs: list[str]) -> list[tuple[int, int]]:
    """``["F,P", ...]`` as pairs, each ``0 <= P <= F <= 8``, each named once."""
    from golden import Config, ConfigError

    pairs = []
    for spec in specs:
        try:
            f, p = (int(v) for v in spec.split(","))
        except ValueError:
            raise UserError(f"--thresholds {spec}: two integers F,P (full and partial bits)") from None
        try:
            Config(full_bits=f, partial_bits=p)
        except ConfigError as exc:
            raise UserError(f"--thresholds {spec}: {exc}") from None
        if (f, p) in pairs:
            raise UserError(f"--thresholds {spec}: named twice")
        pairs.append((f, p))
    return pairs


def _check(args) -> list[tuple[int, int]]:
    args.thresholds = args.thresholds or list(DEFAULT_THRESHOLDS)
    pairs = parse_thresholds(args.thresholds)
    check_model_args(args)
    if args.window is not None and args.window < 1:
        raise UserError(f"--window {args.window} must be at least 1")
    if args.window is not None and args.where == "attention":
        # The window is the linear layers' (reuse in every layer): attention reads none.
        raise UserError(f"--window {args.window} is the linear layers' issue window: it goes with --where all")
    check_output_dir(args.out)
    if args.archive:
        if os.path.lexists(args.archive):
            raise UserError(f"--archive {args.archive}: already exists; an archive goes into a new folder")
        check_output_dir(args.archive, "--archive")
        out, archive = Path(os.path.abspath(args.out)), Path(os.path.abspath(args.archive))
        if out == archive or archive in out.parents or out in archive.parents:
            # The run writes --out first, and the archive must be a new folder of its own.
            raise UserError(f"--archive {args.archive} and --out {args.out} overlap; the archive goes into a new "
                            "folder of its own")
    need_torch("quality")
    from golden.video import clip_path
    clip_path(args.clip)
    return pairs


def cmd_quality(args) -> int:
    from golden import ConfigError

    from ..capture import CaptureError, family
    from ..capture.quality import (
        Arithmetic,
        archive_manifest,
        measure_reduction,
        output_quality,
        prepared,
        quality_config,
        run_loop,
        write_archive,
    )

    pairs = _check(args)
    grid = triple(args.grid, "grid")
    fam = family(args.model)
    try:
        model, shape, x0, noise, text = prepared(fam, grid, args.clip, args.model_path, args.seed, args.device,
                                                 args.dtype)
        base = quality_config(fam, model, grid, args.window)
    except (CaptureError, ConfigError) as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        if args.model_path:
            raise UserError(f"--model-path {args.model_path}: {str(exc).splitlines()[0]}") from None
        raise
    tokens = int(math.prod(grid))
    runs = [("float", None), ("int8", Arithmetic(None, args.where))]
    runs += [(f"reuse {f},{p}", Arithmetic(base.with_(full_bits=f, partial_bits=p), args.where))
             for f, p in pairs]
    done = {}
    for name, arith in runs:
        bar = progress_bar(f"{name} steps")
        try:
            done[name] = run_loop(fam, model, x0, noise, text, args.steps, tokens, arith, progress=bar)
        except CaptureError as exc:
            raise UserError(str(exc)) from None
        finally:
            bar(None, None)
    trained = bool(args.model_path)
    weights = "trained weights" if trained else f"RANDOM weights (seed {args.seed}; not a trained model)"
    rows = []
    for name, arith in runs[1:]:
        row = {"run": name, "where": args.where, **output_quality(done[name], done["float"])}
        if arith.cfg is not None:
            print(f"quality: measuring {name}'s reduction ...", file=sys.stderr)
            row.update(full_bits=arith.cfg.full_bits, partial_bits=arith.cfg.partial_bits,
                       reduction=measure_reduction(done[name], arith.cfg))
        rows.append(row)
    result = {"model": fam.name, "class": fam.cls, "weights": args.model_path or f"random (seed {args.seed})",
              "trained": trained, "grid": list(grid), "steps": args.steps, "where": args.where,
              "clip": args.clip, "window": base.window, "runs": rows,
              "scope": f"{fam.cls} with {weights}; PSNR and cosine against the floating-point run from the "
                       f"same noise; reduction of the dense MACs, measured on the reuse run's own int8 operands"}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "quality.json"), "w") as fh:
        json.dump(_finite(result), fh, indent=2)
    plot(result, os.path.join(args.out, "quality.png"))
    if args.archive:
        first = next(name for name, arith in runs if arith is not None and arith.cfg is not None)
        write_archive(done[first], args.archive,
                      archive_manifest(fam, model, shape, grid, args.steps, clip=args.clip, seed=args.seed,
                                       dtype=args.dtype, model_path=args.model_path, run=first))
    if args.record:
        from sim.experiments.published import record
        record(args.record, *quality_figures(result))
    print(json.dumps(_finite(result), indent=2) if args.json else table(result))
    return 0


def quality_figures(result: dict) -> tuple[dict, dict]:
    """What a quality run publishes: the int8 and first reuse run's latent PSNR
    and cosine, and the sweep as a table."""
    int8, reuse = result["runs"][0], result["runs"][1]
    figures = {"int8_psnr": _db(int8["latent"]["psnr_db"]), "reuse_psnr": _db(reuse["latent"]["psnr_db"]),
               "reuse_cosine": f"{reuse['latent']['cosine']:.6f}",
               "qk_oracle": _pct(reuse["reduction"]["total"]["qk"]["oracle"]),
               "qk_hardware": _pct(reuse["reduction"]["total"]["qk"]["hardware"])}
    ops = sorted({op for r in result["runs"][1:] for op in r["reduction"]["total"]})
    rows = [["run", "latent PSNR", "cosine", "worst step PSNR", *(f"{op} oracle / hw" for op in ops)]]
    for r in result["runs"]:
        red = r.get("reduction", {}).get("total", {})
        worst = min((s["psnr_db"] for s in r["steps"] if s["psnr_db"] is not None), default=None)
        rows.append([r["run"], _db(r["latent"]["psnr_db"]), f"{r['latent']['cosine']:.6f}", _db(worst),
                     *(f"{_pct(red[op]['oracle'])} / {_pct(red[op]['hardware'])}" if op in red else "-"
                       for op in ops)])
    return figures, {"sweep": rows}


def _finite(x):
    # JSON has no infinity: an exact match's PSNR is written as null.
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def _db(v) -> str:
    return "exact" if v is None or (isinstance(v, float) and math.isinf(v)) else f"{v:.1f} dB"


def _pct(v) -> str:
    return "-" if v is None else f"{100 * v:.1f} %"


def table(result: dict) -> str:
    """The runs as a text table: quality against the float run, and reduction."""
    weights = "trained weights" if result["trained"] else f"RANDOM weights: {result['weights']}"
    lines = [f"{result['class']} ({weights}), grid "
             f"{'x'.join(map(str, result['grid']))}, {result['steps']} steps, reuse in {result['where']}",
             f"{'run':<12} {'latent PSNR':>12} {'cosine':>10} {'worst step':>11}  reduction (oracle / hardware)"]
    for r in result["runs"]:
        worst = min((s["psnr_db"] for s in r["steps"] if s["psnr_db"] is not None), default=None)
        red = r.get("reduction", {}).get("total", {})
        ops = "  ".join(f"{op} {_pct(v['oracle'])} / {_pct(v['hardware'])}" for op, v in red.items()) or "-"
        lines.append(f"{r['run']:<12} {_db(r['latent']['psnr_db']):>12} {r['latent']['cosine']:>10.6f} "
                     f"{_db(worst):>11}  {ops}")
    return "\n".join(lines)


def mean_reduction(row: dict, kind: str = "hardware") -> float:
    """One figure of a reuse run's reduction: the mean over its operations."""
    vals = [v[kind] for v in row["reduction"]["total"].values() if v[kind] is not None]
    return float(sum(vals) / len(vals)) if vals else 0.0


def plot(result: dict, path: str) -> None:
    """Quality against reduction, one point a threshold pair (the paper's Fig. 23
    in shape), the int8 run as a line: what reuse adds to quantization's cost."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    cap = 200.0                      # an exact run has infinite PSNR; drawn at the top
    psnr = lambda r: cap if r["latent"]["psnr_db"] is None or math.isinf(r["latent"]["psnr_db"]) \
        else r["latent"]["psnr_db"]
    reuse = [r for r in result["runs"] if "reduction" in r]
    for kind, marker in (("oracle", "o"), ("hardware", "s")):
        xs = [100 * mean_reduction(r, kind) for r in reuse]
        ax.scatter(xs, [psnr(r) for r in reuse], marker=marker, label=f"reuse ({kind} reduction)")
        if kind == "hardware":
            for x, r in zip(xs, reuse):
                ax.annotate(f"{r['full_bits']},{r['partial_bits']}", (x, psnr(r)), textcoords="offset points",
                            xytext=(4, 4), fontsize=8)
    int8 = next(r for r in result["runs"] if r["run"] == "int8")
    ax.axhline(psnr(int8), color="grey", linestyle="--", label="int8 alone")
    ax.set_xlabel(f"operations saved, mean over the operations reused ({result['where']}), %")
    ax.set_ylabel("final latent PSNR against float, dB")
    ax.set_title(f"{result['class']}, {'trained' if result['trained'] else 'random'} weights", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
