"""``kaleido capture``: run a video transformer from ``diffusers`` through a
denoising loop on a clip's latent and save what the hardware reads (Q, K, V
after the norms and RoPE, and every linear layer's input, int8) into an
activation archive that ``estimate --activations`` and ``explore
--activations`` read (:mod:`sim.capture`, :mod:`golden.archive`).

Without ``--model-path`` the model is the class's tiny configuration with
seeded random weights (the archive says so); with it, the weights in that
local folder (local files only: nothing is downloaded)."""

from __future__ import annotations

import os
import sys

from sim.cli.arguments import three, triple
from sim.cli.outputs import check_output_dir
from sim.errors import UserError

from .estimate_cmd import progress_bar

__all__ = ["register", "cmd_capture", "add_model_args", "add_device_args", "check_model_args", "need_torch"]


def register(sub, parser_class) -> None:
    p = sub.add_parser("capture", help="a real video transformer's activations into an archive (needs torch)",
                       description=__doc__)
    add_model_args(p)
    p.add_argument("--at", default="all", metavar="S[,S...]|all",
                   help="the steps to capture (default all)")
    p.add_argument("--layers", default="all", metavar="L[,L...]|all", help="the layers to capture (default all)")
    p.add_argument("--heads", default="all", metavar="H[,H...]|all", help="the heads to capture (default all)")
    p.add_argument("--loop", default="denoise", choices=("denoise", "noised"),
                   help="denoise: Euler steps on the model's own velocity (inference); noised: each step's input "
                        "is the clip noised to its sigma, as the synthetic video workload (default denoise)")
    add_device_args(p)
    p.add_argument("--out", required=True, metavar="DIR", help="the archive to write (a new folder)")
    p.set_defaults(func=cmd_capture)


def add_model_args(p) -> None:
    """The model, its weights, the clip, the token grid and the loop's length:
    what every command that runs a video transformer takes."""
    from ..capture.families import FAMILIES

    p.add_argument("--model", required=True, choices=list(FAMILIES), help="the model class to run")
    p.add_argument("--model-path", metavar="DIR",
                   help="a local folder of the model's weights (diffusers layout; default: the tiny configuration "
                        "with random weights)")
    p.add_argument("--clip", default="bikes", metavar="CLIP|PATH", help="a bundled clip or a video file "
                   "(default bikes)")
    p.add_argument("--grid", type=three("grid"), default="3,8,8", metavar="T,H,W",
                   help="token grid of the video (default 3,8,8; a real model's 480p is 21,30,52)")
    p.add_argument("--steps", type=int, default=10, metavar="N", help="denoising steps of the loop (default 10)")


def add_device_args(p) -> None:
    """Where and in what precision the model runs, and the seed of its draws."""
    p.add_argument("--device", default="cpu", help="torch device to run on (default cpu; a real model: cuda)")
    p.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"),
                   help="the model's arithmetic (default float32; a real model on a GPU: bfloat16)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random weights, noise and prompt (default 0)")


def check_model_args(args) -> tuple[int, int, int]:
    """:func:`add_model_args`' values checked (one line each), the grid returned."""
    grid = triple(args.grid, "grid")
    if min(grid) < 1:
        raise UserError(f"--grid {','.join(map(str, grid))}: every extent at least 1")
    if args.steps < 1:
        raise UserError(f"--steps {args.steps} must be at least 1")
    if args.model_path and not os.path.isdir(args.model_path):
        raise UserError(f"--model-path {args.model_path}: no such folder")
    return grid


def need_torch(command: str) -> None:
    """One line if torch or diffusers is missing."""
    try:
        import diffusers  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        raise UserError(f"{command} needs torch and diffusers: pip install -e '.[capture]' (make setup does)") from None


def _indices(spec: str, what: str) -> list[int] | None:
    if spec == "all":
        return None
    try:
        vals = [int(v) for v in spec.split(",") if v.strip()]
    except ValueError:
        raise UserError(f"{what} {spec}: a comma list of integers, or all") from None
    if not vals or len(set(vals)) != len(vals):
        raise UserError(f"{what} {spec}: name each index once")
    return sorted(vals)


def cmd_capture(args) -> int:
    from golden.archive import ArchiveError

    grid = check_model_args(args)
    at = _indices(args.at, "--at")
    at = list(range(args.steps)) if at is None else at
    if min(at) < 0 or max(at) >= args.steps:
        raise UserError(f"--at {args.at}: steps run from 0 to {args.steps - 1}")
    layers, heads = _indices(args.layers, "--layers"), _indices(args.heads, "--heads")
    if os.path.lexists(args.out):
        raise UserError(f"--out {args.out}: already exists; an archive goes into a new folder")
    check_output_dir(args.out)
    need_torch("capture")
    from golden.video import clip_path

    from ..capture import CaptureError, capture, family
    clip_path(args.clip)
    bar = progress_bar("steps")
    try:
        m = capture(family(args.model), args.out, grid, args.steps, at, layers, heads, args.clip, args.loop,
                    args.model_path, args.seed, progress=bar, device=args.device,
                    dtype=args.dtype)
    except (CaptureError, ArchiveError) as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        if args.model_path:
            raise UserError(f"--model-path {args.model_path}: {str(exc).splitlines()[0]}") from None
        raise
    finally:
        bar(None, None)
    weights = "trained weights" if m["model"]["trained"] else "RANDOM weights (not a trained model)"
    print(f"{args.out}: {m['model']['class']} ({weights}), grid {'x'.join(map(str, m['grid']))}, "
          f"steps {','.join(str(s['index']) for s in m['steps'])} of {m['total_steps']}, layers "
          f"{','.join(map(str, m['layers']))}, heads {','.join(map(str, m['heads']))}; "
          f"{len(m['tensors'])} int8 files", file=sys.stdout)
    for line in structure_lines(args.out):
        print(line)
    return 0


def structure_lines(path: str) -> list[str]:
    """Per captured step, its heads' structure beside their oracle (``kaleido structure``'s figures)."""
    from golden.structure import SHUFFLE_SEED, structure

    from .structure_cmd import heads_of, summarize_heads

    _, cfg, heads = heads_of(path)
    if min(cfg.grid) < 2:
        return [f"structure: grid {'x'.join(map(str, cfg.grid))} has an axis of one token: not measured"]
    steps = {}
    for (step, _, _), q, k in heads():
        steps.setdefault(step, []).append(structure(q, k, cfg, SHUFFLE_SEED))
    lines = []
    for step, rows in steps.items():
        m = summarize_heads(rows)
        r = m["reuse"]
        lines.append(f"step {step}: Q K^T oracle {100 * r['oracle']:.1f} %, tokens shuffled (seed {SHUFFLE_SEED}) "
                     f"{100 * r['shuffled']:.1f} %, structured reuse {100 * r['structured']:+.1f} points; "
                     f"token-common share of Q {100 * m['q']['derotated']['all']:.1f} %, "
                     f"of K {100 * m['k']['derotated']['all']:.1f} % (RoPE undone; kaleido structure {path})")
    return lines
