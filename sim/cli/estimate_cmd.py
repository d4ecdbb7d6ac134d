"""``kaleido estimate``: a whole model on the paper's chip (or the user's), Kaleido
against the baseline, from sampled heads run on Dask (:mod:`sim.chip.estimate`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys

from golden.config import KNOBS, Part
from sim.cli.outputs import atomic_output, check_output_dir, json_safe, lock_folder, print_json
from sim.errors import UserError

from .options import (
    HAVING,
    add_knobs,
    add_preset,
    design_knobs,
    knobs_of,
    preset_knobs,
    refuse_unread_by_unit,
    refuse_unused,
)

__all__ = ["register", "add_run_arguments", "prepare", "claimed", "progress_bar", "use_archive", "structure_lines"]


#: The design knobs an estimate takes, for Kaleido's heads and sign-off (the
#: array's rows and columns come from the chip, the clock from the chip too).
DESIGN_KNOBS = knobs_of(Part.REUSE, Part.KALEIDO_PE, Part.PE, Part.DISPATCHER, Part.SCHEDULER, Part.MATCHER,
                        Part.WINDOW,
                        Part.WORKLOAD)

#: The knobs of the synthetic workload's structure: read by every synthetic workload, by no archive.
WORKLOAD_KNOBS = knobs_of(Part.WORKLOAD)


def register(sub, parser_class) -> None:
    p = sub.add_parser("estimate", help="a whole vDiT on the chip: Kaleido against the baseline (sampled, on Dask)",
                       description=__doc__)
    add_run_arguments(p)
    add_record(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="output folder: summary.json, estimate.png and shards/ (kept, so a rerun resumes)")
    p.set_defaults(func=cmd_estimate)


def _record_area(text: str) -> str:
    from sim.experiments.published import area_name
    try:
        return area_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_record(p) -> None:
    p.add_argument("--record", metavar="AREA", type=_record_area,
                   help="also write the headline figures under AREA of docs/figures.json, the source the docs "
                        "quote (make docs renders them)")


def estimate_figures(summary: dict) -> tuple[dict, dict]:
    """What an estimate publishes (:func:`sim.experiments.published.record`): the headline figures
    (each as docs/chip.md's table prints it) and a table of each chip's time, energy
    and area."""
    iso, qk, pv = summary["iso_area"], summary["qk_operation_reduction"], summary["pv"]
    d = summary["designs"]
    rows = [["chip", "arrays", "time s", "energy J", "area mm²"]]
    for name, x in d.items():
        rows.append([name.replace("_", " "), f"{x['arrays']:,}", f"{x['time_s']:.1f}", f"{x['energy_j']:.1f}",
                     f"{x['area_mm2']['total']:.1f}"])
    lo, hi = summary["speedup_interval"]
    elo, ehi = summary["energy_ratio_interval"]
    figures = {
        "speedup": f"{summary['speedup']:.3f}x", "energy": f"{summary['energy_ratio']:.2f}x",
        "area": f"{1 + summary['area_overhead']:.2f}x", "area_overhead": f"{100 * summary['area_overhead']:+.1f} %",
        "iso_speedup": f"{iso['speedup']:.3f}x", "iso_energy": f"{iso['energy_ratio']:.2f}x",
        "qk_operations_saved": f"{100 * qk['hardware']:.1f} %", "qk_oracle": f"{100 * qk['oracle']:.1f} %",
        "linear_slots_saved": f"{100 * (summary['linear']['slot_reduction'] or 0):.1f} %" + (
            f" offered (run dense: {', '.join(summary['linear']['ran_dense'])})"
            if summary["linear"].get("ran_dense") else ""),
        # As a row of docs/chip.md's table prints them:
        "speedup_row": f"{summary['speedup']:.3f} [{lo:.3f}, {hi:.3f}]", "serial": f"{summary['serial_speedup']:.3f}",
        "energy_row": f"{summary['energy_ratio']:.3f} [{elo:.3f}, {ehi:.3f}]",
        "iso_speedup_row": f"{iso['speedup']:.3f}", "iso_energy_row": f"{iso['energy_ratio']:.3f}",
        "times": f"{d['kaleido']['time_s']:.0f} / {d['baseline']['time_s']:.0f} s",
        "pv": f"{100 * pv['key_reduction']:.1f} % ({100 * (pv['shared_heads'] or 0):.0f} %)",
        "model": f"{summary['model']} {summary['resolution']}", "workload": summary["workload"],
    }
    # The area by unit beside the paper's Table 2 (its Kaleido chip at 16 nm; it lists
    # no vector unit and no feature buffers).
    area = [["unit", "Kaleido mm²", "baseline mm²", "paper, Table 2 mm²"]]
    for unit in d["kaleido"]["area_mm2"]:
        area.append([unit.replace("_", " "), f"{d['kaleido']['area_mm2'][unit]:.1f}",
                     f"{d['baseline']['area_mm2'].get(unit, 0.0):.1f}", TABLE_2_MM2.get(unit, "-")])
    return figures, {"chips": rows, "area": area}


#: The paper's Table 2, by this model's units: 128 x 128 PE arrays, 64 x 32
#: dispatchers, 64 MB + 32 MB of buffer, at 16 nm.
TABLE_2_MM2 = {"pe_arrays": "25.1", "dispatcher": "1.3", "sram": "68.4", "total": "94.8"}


def add_run_arguments(p) -> None:
    """What a run of sampled heads on a chip takes (``estimate`` and ``explore``)."""
    from sim.chip.chip import CHIPS
    from sim.chip.vdits import RESOLUTIONS, VDITS

    from ..chip.estimate import DEFAULT_CLIP, WORKLOADS

    p.add_argument("--model", choices=list(VDITS), help="the model whose shape runs (or --activations)")
    p.add_argument("--activations", metavar="DIR",
                   help="a real model's activations (an archive of kaleido capture) in place of --model and a "
                        "synthetic workload: the captured model's shape, steps and heads")
    p.add_argument("--resolution", choices=RESOLUTIONS,
                   help="video resolution (default 480p; with --activations, the archive's grid)")
    p.add_argument("--workload", choices=WORKLOADS,
                   help="video: a real clip noised per step by the sampler's schedule; proxy: the panned "
                        "photograph (default video). With --activations: the synthetic workload on the archive's "
                        "model shape, clip and steps, in place of its tensors (the side-by-side)")
    p.add_argument("--clip", metavar="CLIP|PATH",
                   help=f"for --workload video: a bundled clip or a video file (default {DEFAULT_CLIP}; with "
                        "--activations, the archive's clip)")
    p.add_argument("--chip", default="paper", metavar=f"{'|'.join(CHIPS)}|FILE",
                   help=f"the chip: a preset ({', '.join(CHIPS)}) or a JSON file of its fields (default paper)")
    p.add_argument("--sample", type=int, default=2, metavar="HEADS",
                   help="heads computed per denoising step, drawn at random from its layers and heads (default 2)")
    p.add_argument("--steps", type=int, metavar="K",
                   help="compute K denoising steps spread from first to last, each standing for its nearest "
                        "steps (default: every step)")
    p.add_argument("--tile-samples", type=int, default=20000, metavar="N",
                   help="tile groups computed per head (0: every one, exact; default 20000)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="a Dask scheduler to run the shards on (default: a local cluster of this machine's cores)")
    p.add_argument("--workers", type=int, metavar="N", help="workers of the local cluster (default: one per core)")
    p.add_argument("--seed", type=int, default=0, help="seed of the heads' draw (default 0)")
    p.add_argument("--liberty", metavar="NAME|FILE",
                   help="the cell library every block is signed off on: nangate45 (the default) or osu018, which "
                        "make setup fetches, or a liberty FILE; its blocks are mapped for its own sign-off clock, "
                        "and its node is where the chip's scaling starts")
    p.add_argument("--qk-objective", default="chip", metavar="chip|head|W",
                   help="how each head's Q K^T schedule (paired, in order or dense) is chosen: chip (default), the "
                        "least time of the chip's layer, then the least energy, so a slower schedule that the "
                        "pipeline hides still saves its products; head, each head's fewest engine cycles (the rule "
                        "of sim attention); or a number W >= 0, the least energy x time^W")
    add_knobs(p, *DESIGN_KNOBS, notes={"variant": "Kaleido's dispatcher; the baseline has none"})
    add_preset(p)


def prepare(args, sign: bool = True):
    """Check a run's arguments, then measure the sign-off: ``(model, chip, cfg,
    knobs, out, liberty, signs)``. Every refusal comes before anything is written.
    With ``sign=False`` only the checks run (``signs`` is None)."""
    from sim.chip.chip import ChipError, chip_from
    from sim.chip.vdits import VDiTError, vdit
    from synth.flow import SynthError, check_liberty, default_liberty
    from synth.kits import at_signoff

    from ..chip.cluster import check_scheduler
    from ..chip.estimate import computed_steps, representative_trace, shard_config, signoffs
    from ..chip.qk_schedule import parse_objective
    from .blocks_cmd import liberty_arg

    use_archive(args)
    if args.sample < 1:
        raise UserError(f"--sample {args.sample}: compute at least one head per step")
    try:
        args.objective = parse_objective(args.qk_objective)
    except ValueError as exc:
        raise UserError(f"--qk-objective {exc}") from None
    if args.steps is not None and args.steps < 1:
        raise UserError(f"--steps {args.steps} must be at least 1")
    if args.tile_samples < 0:
        raise UserError(f"--tile-samples {args.tile_samples} must be 0 (every tile group) or more")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers {args.workers} must be at least 1")
    cores = os.cpu_count() or 1
    if args.workers is not None and args.workers > MAX_WORKERS_PER_CORE * cores:
        raise UserError(f"--workers {args.workers}: this machine has {cores} cores, and a local cluster takes at most "
                        f"{MAX_WORKERS_PER_CORE * cores} workers (each holds open files; use --scheduler for more)")
    if args.workers is not None and args.scheduler:
        raise UserError("--workers sizes the local cluster; with --scheduler the cluster's own workers run")
    knobs = preset_knobs(args)
    variant = knobs.get("variant", KNOBS["variant"].default)
    reads = design_knobs("kaleido", variant, knobs.get("issue_window", 0),
                         dispatcher=knobs.get("dispatcher", "")) & set(DESIGN_KNOBS)
    if args.workload != "activations":           # an archive's tensors have the structure they have
        reads |= set(WORKLOAD_KNOBS)
    elif any(getattr(args, name, None) is not None for name in WORKLOAD_KNOBS):
        raise UserError("--common-strength and --common-band shape the synthetic workload: an archive's activations "
                        "have their own structure (give --workload too to run the synthetic one on its shape)")
    refuse_unread_by_unit(args, reads, variant, knobs.get("issue_window", 0))
    refuse_unused(args, reads, f"--variant {variant}", having=HAVING)
    out = check_output_dir(args.out)
    try:
        chip = chip_from(args.chip)
        model = args.archive_model or vdit(args.model)
        model.grid(args.resolution)
    except (ChipError, VDiTError) as exc:
        raise UserError(str(exc)) from None
    if chip.kaleido_arrays == 0:
        # Every array plain: the baseline against itself, and nothing of Kaleido's to price.
        raise UserError(f"--chip {args.chip}: kaleido_share {chip.kaleido_share:g} leaves no Kaleido array; "
                        "give a share above 0")
    cfg = shard_config(model, args.resolution, chip, **knobs)
    if args.workload == "video":
        from golden.video import clip_path
        from golden.workload import WorkloadError
        try:
            clip_path(args.clip)
        except WorkloadError as exc:
            raise UserError(f"--clip {exc}") from None
    liberty = liberty_arg(getattr(args, "liberty", None)) or default_liberty()
    if liberty is None:
        raise UserError("no liberty file for the sign-off figures (make setup fetches NanGate45)")
    try:
        check_liberty(liberty)
    except SynthError as exc:
        raise UserError(str(exc)) from None
    if not sign:
        return model, chip, cfg, knobs, out, liberty, None
    if args.scheduler:
        check_scheduler(args.scheduler)         # before minutes of sign-off, not after
    steps = len(_archive_steps(args) if args.workload == "activations" else computed_steps(model, args.steps))
    print(banner(model, args.resolution, cfg, steps, args.sample), file=sys.stderr)
    trace = (representative_trace(model, cfg, args.workload, args.clip, args.steps)
             if cfg.dispatch.parts[1] and not cfg.issue_window else None)
    # The shards' design point keeps its clock (no cycle depends on it); the
    # blocks are signed off at the library's.
    signs = signoffs(at_signoff(cfg, liberty), liberty, trace)
    return model, chip, cfg, knobs, out, liberty, signs


def structure_lines(summary: dict) -> list[str]:
    """The heads' structure beside their oracle (:func:`sim.chip.estimate.structure_by_step`):
    the model's mean, then each computed step."""
    st = summary.get("structure")
    if not st:
        return []
    knobs = summary["config"].get("workload") or {}
    assumed = (f"token-common strength {knobs.get('common_strength', 0.0):g} ({knobs.get('common_band', 'low')} band)"
               if summary.get("workload") != "activations" else "the archive's own structure")
    m = st["mean"]
    lines = [f"structure ({assumed}; shuffle seed {st['seed']}, {st['seconds']:.1f} s of "
             f"{summary.get('shard_seconds', 0.0):.1f} s of shards): Q K^T oracle {100 * m['oracle']:.1f} %, tokens "
             f"shuffled {100 * m['shuffled']:.1f} %, structured reuse {100 * m['structured']:+.1f} points; common "
             f"share of Q {100 * m['q_common_share']:.1f} %, of K {100 * m['k_common_share']:.1f} %"]
    for step, f in st["by_step"].items():
        lines.append(f"  step {step}: oracle {100 * f['oracle']:.1f} %, shuffled {100 * f['shuffled']:.1f} %, "
                     f"structured {100 * f['structured']:+.1f}")
    return lines


def use_archive(args) -> None:
    """With ``--activations DIR``: check the archive, and let it stand for the
    model, the resolution and the workload (``args`` is updated in place; a
    second call changes nothing)."""
    from golden.archive import ArchiveError

    from ..chip.activations import RESOLUTION, archive, archive_model
    from ..chip.estimate import ACTIVATIONS, DEFAULT_CLIP

    if getattr(args, "sourced", False):
        return
    args.sourced = True
    if args.clip and args.workload == "proxy":
        raise UserError("--clip picks the video workload's clip: --workload proxy pans a photograph and has none")
    if not args.activations:
        if not args.model:
            raise UserError("name a model (--model) or bring its activations (--activations DIR)")
        args.archive_model = None
        args.workload, args.clip = args.workload or "video", args.clip or DEFAULT_CLIP
        args.resolution = args.resolution or "480p"
        return
    if args.resolution:
        raise UserError(f"--resolution {args.resolution} and --activations: the archive's grid is the resolution; "
                        f"give one")
    if args.model:
        raise UserError(f"--model {args.model} and --activations: the archive names its own model; give one")
    if args.steps is not None:
        raise UserError("--steps: with --activations the captured steps are the steps computed")
    try:
        a = archive(os.path.abspath(args.activations))
    except ArchiveError as exc:
        raise UserError(f"--activations {exc}") from None
    args.archive_model = archive_model(a)
    args.model, args.resolution = a.family, RESOLUTION
    if args.workload:                # the synthetic stand-in on the archive's shape, clip and steps
        args.clip = args.clip or a.manifest.get("clip") or DEFAULT_CLIP
    else:
        if args.clip:
            raise UserError("--clip: the archive's activations come from its own clip; give --workload too to "
                            "run a synthetic workload on another")
        args.workload, args.clip = ACTIVATIONS, a.path


def _archive_steps(args) -> list[int]:
    from ..chip.activations import archive
    return archive(args.clip).steps


def cmd_estimate(args) -> int:
    from ..chip.estimate import run_estimate
    from ..chip.reuse_where import format_steps, plot_reuse, schedule_line

    model, chip, cfg, knobs, out, liberty, signs = prepare(args)
    bar = progress_bar("heads")
    with claimed(out):
        summary = run_estimate(model, args.resolution, chip, args.workload, out, args.sample,
                               args.tile_samples or None, signs, scheduler=args.scheduler, workers=args.workers,
                               seed=args.seed, clip=args.clip, progress=bar, steps=args.steps,
                               objective=args.objective, **knobs)
        bar(None, None)
    summary["clock"] = _clock_at_node(cfg, chip, liberty)
    if not summary["clock"]["met"]:
        slow = min(((d, b, f) for d in ("kaleido", "baseline") for b, f in summary["clock"][d].items()),
                   key=lambda x: x[2])
        print(f"kaleido: warning: {slow[0]}'s {slow[1]} reaches {slow[2]:.0f} MHz at {chip.node_nm} nm, under the "
              f"chip's {chip.clock_mhz:g} MHz; the figures assume the chip clock", file=sys.stderr)
    from synth.kits import at_signoff
    mapped = at_signoff(cfg, liberty).clock_mhz
    summary["energy_measured_at_mhz"] = _measured_at(signs)
    for design, parts in summary["energy_measured_at_mhz"].items():
        for part, mhz in parts.items():
            if mhz < mapped * (1 - 1e-9):
                print(f"kaleido: note: {design}'s {part} misses the {mapped:g} MHz it is mapped for: its energy "
                      f"per action is measured at its own clock, {mhz:.1f} MHz", file=sys.stderr)
    for design, ops in summary["sram_bound_ops"].items():
        if ops:
            print(f"kaleido: warning: on the {design} chip, {', '.join(ops)} wait on the SRAM banks' bandwidth "
                  f"({chip.sram_bank_bits}-bit banks, {chip.sram_ports} port(s)); see resource_s in summary.json",
                  file=sys.stderr)
    with atomic_output(os.path.join(out, "summary.json"), ".json") as tmp:
        with open(tmp, "w") as fh:
            json.dump(json_safe(summary), fh, indent=2, sort_keys=True)
    _plot(summary, os.path.join(out, "estimate.png"))
    if args.record:
        from sim.experiments.published import record
        record(args.record, *estimate_figures(summary))
    label = _source_label(summary)
    plot_reuse(summary["reuse"], f"Where the reuse lives: {model.name} ({label})", os.path.join(out, "reuse.png"))
    if args.json:
        print_json(summary)
    else:
        k, iso = summary["designs"]["kaleido"], summary["iso_area"]
        lo, hi = summary["speedup_interval"]
        elo, ehi = summary["energy_ratio_interval"]
        print(f"{model.name} {args.resolution}: Kaleido {summary['speedup']:.3f}x the baseline's speed "
              f"[{lo:.3f}, {hi:.3f}], {summary['energy_ratio']:.3f}x its energy [{elo:.3f}, {ehi:.3f}], "
              f"{100 * summary['area_overhead']:+.1f} % area; {k['time_s']:.1f} s, {k['energy_j']:.1f} J "
              f"({chip.schedule}; serially {summary['serial_speedup']:.3f}x). Against a baseline chip of its area "
              f"({iso['arrays']:,} arrays): {iso['speedup']:.3f}x the speed, {iso['energy_ratio']:.3f}x the energy; "
              f"{out}/summary.json")
        for line in structure_lines(summary):
            print(line)
        pv = summary["pv"]
        if pv["shared_heads"] is not None:
            print(f"P V~: V's folds run on {100 * pv['shared_heads']:.0f} % of heads, the arrays step through "
                  f"{100 * pv['key_reduction']:.1f} % fewer keys than dense")
        lin = summary["linear"]
        for role, v in lin.get("by_role", {}).items():
            print(f"linear {role}: windows run on {100 * v['windows_heads']:.0f} % of heads' slices, "
                  f"{100 * v['slot_reduction']:.1f} % fewer slots than dense")
        if lin["windows_heads"] is not None:
            print(f"linear layers on the hidden state: windows run on {100 * lin['windows_heads']:.0f} % of heads' "
                  f"slices, {100 * lin['slot_reduction']:.1f} % fewer slots than dense")
        if lin.get("ran_dense"):
            print(f"linear layers the chip runs dense in some step (their windows slower or dearer there): "
                  f"{', '.join(lin['ran_dense'])}")
        print(schedule_line(summary))
        sigmas = (summary.get("activations") or {}).get("sigmas")
        for line in format_steps(summary["reuse"], sigmas):
            print(line)
    return 0


def _source_label(summary: dict) -> str:
    """What the activations are, for a figure's title: never a trained model's unless they are."""
    a = summary.get("activations")
    if a is None:
        return f"synthetic {summary['workload']} workload, not the model's activations"
    return "captured activations, trained weights" if a["trained"] else "captured activations, RANDOM weights"


def banner(model, resolution: str, cfg, steps: int, sample: int) -> str:
    """The line a run starts with: what it computes (``sample`` heads a step, as
    many as the model has at most)."""
    heads = min(sample, model.layers * model.heads)
    return (f"kaleido: {model.name} {resolution}: {cfg.tokens} tokens a head, grid {'x'.join(map(str, cfg.grid))}; "
            f"{steps} of {model.steps} steps x {heads:,} heads")


#: Local workers a core may carry: each is a process with its own open files.
MAX_WORKERS_PER_CORE = 4


#: What an estimate writes into its folder besides its shards.
OUTPUTS = ("summary.json", "estimate.png", "reuse.png")


@contextlib.contextmanager
def claimed(out: str, outputs: tuple = OUTPUTS):
    """Hold ``out`` for this run: a second estimate into the same folder is refused
    (it would compute every shard again), the last run's ``outputs`` go first,
    and a run that fails before writing anything leaves no folder it made behind."""
    made = not os.path.exists(out)
    os.makedirs(out, exist_ok=True)
    lock_path = os.path.join(out, ".estimate.lock")
    lock = lock_folder(lock_path, f"--out {out}: another kaleido estimate is writing there")
    try:
        # The last run's figures go first (its shards stay, to resume from): an
        # interrupted rerun must not leave them to be read as its own.
        for name in outputs:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(out, name))
        yield
    except BaseException:
        if made and set(os.listdir(out)) <= {".estimate.lock"}:
            shutil.rmtree(out, ignore_errors=True)
        raise
    finally:
        if os.path.exists(lock_path):
            os.unlink(lock_path)
        lock.close()


def _measured_at(signs: dict) -> dict:
    """The clock each block's energy per action was measured at, by design and part."""
    parts = ("pe", "softmax", "scheduler", "matcher")
    return {design: {p: getattr(s, p).measured_at_mhz for p in parts
                     if getattr(s, p) is not None and getattr(s, p).measured_at_mhz is not None}
            for design, s in signs.items()}


def _clock_at_node(cfg, chip, liberty: str) -> dict:
    """Each block's fmax on the library's cells (mapped for its sign-off clock) brought to the
    chip's node by the delay equations, and whether every block meets the chip clock."""
    from sim.chip.node_scaling import scale_delay
    from sim.rtl.energy import run_clock
    from synth.kits import at_signoff, signed_at

    out = {"chip_clock_mhz": chip.clock_mhz}
    for design in ("kaleido", "baseline"):
        t = run_clock(at_signoff(cfg, liberty), design, liberty)
        out[design] = {b: v["fmax_mhz"] / scale_delay(1.0, signed_at(liberty), chip.node, chip.flavour)
                       for b, v in t["blocks_timing"].items()}
    out["met"] = all(f >= chip.clock_mhz for d in ("kaleido", "baseline") for f in out[d].values())
    return out


def progress_bar(what: str):
    """A tqdm bar of ``what`` on stderr, as a ``progress(done, total)`` callback
    (``(None, None)`` closes it)."""
    from tqdm import tqdm
    state = {}

    def update(done, total):
        if done is None:
            if "bar" in state:
                state["bar"].close()
            return
        if "bar" not in state:
            state["bar"] = tqdm(total=total, desc=what, unit=what.rstrip("s"), file=sys.stderr, initial=done)
        else:
            state["bar"].update(done - state["bar"].n)
    return update


def _plot(summary: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sim.chip.chip import DESIGNS, OPS

    designs = list(DESIGNS) + ["baseline_iso_area"]
    names = ["Kaleido", "baseline", "baseline,\nKaleido's area"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, key, unit in ((axes[0], "time_by_op_s", "s"), (axes[1], "energy_by_op_j", "J")):
        bottom = [0.0] * len(designs)
        for op in OPS:
            vals = [summary["designs"][d][key][op] for d in designs]
            ax.bar(names, vals, bottom=bottom, label=op)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_ylabel(unit)
        ax.set_title("time by operation (each alone)" if unit == "s" else "energy by operation")
    # The layer's time as the chip runs it (pipelined, its operations overlap).
    axes[0].scatter(names, [summary["designs"][d]["time_s"] for d in designs], marker="_", s=900, color="k",
                    zorder=3, label=summary["chip"]["schedule"])
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{summary['model']} {summary['resolution']} on the {summary['chip']['name']} chip "
                 f"(sampled; {_source_label(summary)})", fontsize=9)
    fig.tight_layout()
    with atomic_output(path, ".png") as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
